// Package wire reads and writes JSON-RPC 2.0 messages as bytes.
//
// The hub forwards requests and results without decoding them into Go
// structs: it scans a message once to find the members of its envelope (id,
// method, params, result, error), validates the JSON on the way, and builds
// the outgoing message by splicing the original bytes around a new id. This
// keeps results byte-faithful and costs a fraction of a decode/encode cycle.
//
// Why not encoding/json: forwarding a 100 KiB tools/call result (scan the
// envelope, splice a new id around the original bytes) takes 40 µs and no
// allocation here, against 1.06 ms and 214 KB in 13 allocations to decode
// the envelope with encoding/json and encode it again (26 times slower;
// BenchmarkForwardResult*, 2 cores, Go 1.26). encoding/json/v2's jsontext
// is still an experiment behind GOEXPERIMENT.
//
// The package is pure: no I/O, no goroutines, no global state.
package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays the scanner accepts.
const MaxDepth = 1000

// Errors returned by the scanner.
var (
	ErrSyntax   = errors.New("wire: invalid JSON")
	ErrTooDeep  = fmt.Errorf("wire: JSON nested deeper than %d", MaxDepth)
	ErrBatch    = errors.New("wire: JSON-RPC batches are not supported")
	ErrEnvelope = errors.New("wire: invalid JSON-RPC envelope")
)

func syntaxErr(b []byte, i int, what string) error {
	if i >= len(b) {
		return fmt.Errorf("%w: unexpected end of input (%s)", ErrSyntax, what)
	}
	return fmt.Errorf("%w: unexpected %q at offset %d (%s)", ErrSyntax, b[i], i, what)
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// TrimSpace returns b without leading and trailing JSON whitespace.
func TrimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isWS(b[i]) {
		i++
	}
	for j > i && isWS(b[j-1]) {
		j--
	}
	return b[i:j]
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialMask has the high bit set in every byte lane of v that holds '"',
// '\\' or a control character. Only the lowest set lane is exact (borrows may
// mark lanes above a real match), which is all the caller uses.
func specialMask(v uint64) uint64 {
	q := v ^ (lsb * '"')
	s := v ^ (lsb * '\\')
	return ((q-lsb) & ^q | (s-lsb) & ^s | (v-lsb*0x20) & ^v) & msb
}

// skipString returns the index just past the string that starts with the
// quote at b[i]. It validates escapes and rejects raw control characters.
func skipString(b []byte, i int) (int, error) {
	i++ // opening quote
	for {
		// Fast path: eight bytes at a time until a special byte shows up.
		for i+8 <= len(b) {
			if m := specialMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) {
			c := b[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		if i >= len(b) {
			return i, syntaxErr(b, i, "unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return i, syntaxErr(b, i, "control character in string")
		}
		// Backslash escape.
		if i+1 >= len(b) {
			return i, syntaxErr(b, i+1, "escape")
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) {
				return i, syntaxErr(b, len(b), "\\u escape")
			}
			for k := i + 2; k < i+6; k++ {
				if !isHex(b[k]) {
					return k, syntaxErr(b, k, "\\u escape")
				}
			}
			i += 6
		default:
			return i + 1, syntaxErr(b, i+1, "escape")
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func skipNumber(b []byte, i int) (int, error) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, syntaxErr(b, i, "number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, syntaxErr(b, i, "number fraction")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, syntaxErr(b, i, "number exponent")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, nil
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, syntaxErr(b, i, "literal")
	}
	return i + len(lit), nil
}

// skipValue returns the index just past the JSON value starting at b[i]
// (after optional whitespace), validating it. It is iterative, so deep nesting
// cannot exhaust the stack; nesting beyond MaxDepth is an error.
func skipValue(b []byte, i int) (int, error) {
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '[' per open container
	var err error
	for {
		// Parse one value.
		i = skipWS(b, i)
		if i >= len(b) {
			return i, syntaxErr(b, i, "value")
		}
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) >= MaxDepth {
				return i, ErrTooDeep
			}
			i = skipWS(b, i+1)
			closer := byte('}')
			if c == '[' {
				closer = ']'
			}
			if i < len(b) && b[i] == closer {
				i++
				break // empty container is a complete value
			}
			stack = append(stack, c)
			if c == '{' {
				if i, err = skipKeyColon(b, i); err != nil {
					return i, err
				}
			}
			continue // parse the first element
		case '"':
			if i, err = skipString(b, i); err != nil {
				return i, err
			}
		case 't':
			if i, err = skipLiteral(b, i, "true"); err != nil {
				return i, err
			}
		case 'f':
			if i, err = skipLiteral(b, i, "false"); err != nil {
				return i, err
			}
		case 'n':
			if i, err = skipLiteral(b, i, "null"); err != nil {
				return i, err
			}
		default:
			if c == '-' || isDigit(c) {
				if i, err = skipNumber(b, i); err != nil {
					return i, err
				}
			} else {
				return i, syntaxErr(b, i, "value")
			}
		}
		// A value is complete; close containers or move to the next element.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, syntaxErr(b, i, "',' or closing bracket")
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i++
				if top == '{' {
					if i, err = skipKeyColon(b, skipWS(b, i)); err != nil {
						return i, err
					}
				}
				break // parse the next element
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return i, syntaxErr(b, i, "',' or closing bracket")
		}
	}
}

// skipKeyColon skips an object key and the following colon.
func skipKeyColon(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return i, syntaxErr(b, i, "object key")
	}
	i, err := skipString(b, i)
	if err != nil {
		return i, err
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, syntaxErr(b, i, "':'")
	}
	return i + 1, nil
}

// Valid reports whether b holds exactly one valid JSON value.
func Valid(b []byte) bool {
	i, err := skipValue(b, 0)
	return err == nil && skipWS(b, i) == len(b)
}

// Members calls fn for each member of the JSON object obj, in order, with the
// member's decoded key and its raw value. It validates the whole object.
// Iteration stops at the first error fn returns, which Members returns.
func Members(obj []byte, fn func(key []byte, val []byte) error) error {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return syntaxErr(obj, i, "object")
	}
	i = skipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		if skipWS(obj, i+1) != len(obj) {
			return syntaxErr(obj, skipWS(obj, i+1), "end of input")
		}
		return nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return syntaxErr(obj, i, "object key")
		}
		ks := i
		ke, err := skipString(obj, i)
		if err != nil {
			return err
		}
		key, err := decodeKey(obj[ks:ke])
		if err != nil {
			return err
		}
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return syntaxErr(obj, i, "':'")
		}
		vs := skipWS(obj, i+1)
		ve, err := skipValue(obj, vs)
		if err != nil {
			return err
		}
		if err := fn(key, obj[vs:ve]); err != nil {
			return err
		}
		i = skipWS(obj, ve)
		if i < len(obj) && obj[i] == ',' {
			i = skipWS(obj, i+1)
			continue
		}
		if i < len(obj) && obj[i] == '}' {
			if j := skipWS(obj, i+1); j != len(obj) {
				return syntaxErr(obj, j, "end of input")
			}
			return nil
		}
		return syntaxErr(obj, i, "',' or '}'")
	}
}

// decodeKey returns the decoded content of a quoted JSON string. Keys without
// escapes are returned as a sub-slice of q (no allocation). Invalid UTF-8 is
// an error: decoders disagree on it (some keep the bytes, some substitute
// U+FFFD), and the hub must never read a name differently from its peer.
func decodeKey(q []byte) ([]byte, error) {
	inner := q[1 : len(q)-1]
	if !utf8.Valid(inner) {
		return nil, fmt.Errorf("%w: invalid UTF-8 in string", ErrSyntax)
	}
	for _, c := range inner {
		if c == '\\' {
			var s string
			if err := json.Unmarshal(q, &s); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
			}
			return []byte(s), nil
		}
	}
	return inner, nil
}

// Get returns the raw value of the member key of the JSON object obj, or nil
// when absent. Duplicate keys are an error.
func Get(obj []byte, key string) ([]byte, error) {
	var out []byte
	found := false
	err := Members(obj, func(k, v []byte) error {
		if string(k) == key {
			if found {
				return fmt.Errorf("%w: duplicate key %q", ErrSyntax, key)
			}
			found = true
			out = v
		}
		return nil
	})
	return out, err
}

// String decodes a raw JSON string value. It returns an error when raw is not
// a string.
func String(raw []byte) (string, error) {
	raw = TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", fmt.Errorf("%w: want a string", ErrSyntax)
	}
	k, err := decodeKey(raw)
	if err != nil {
		return "", err
	}
	return string(k), nil
}

// Message is a JSON-RPC message scanned from its bytes. The byte slices point
// into the scanned input.
type Message struct {
	ID     []byte // raw id (string, number or null); nil when absent
	Method string // empty for responses
	Params []byte // nil when absent
	Result []byte // nil when absent
	Error  []byte // nil when absent
}

// IsRequest reports whether m is a request (it has a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m is a response (a result or an error).
func (m *Message) IsResponse() bool { return m.Method == "" }

// envelope members, for duplicate and case-variant detection.
const (
	fJSONRPC = 1 << iota
	fID
	fMethod
	fParams
	fResult
	fError
)

var envelopeKeys = [...]struct {
	name string
	flag int
}{{"jsonrpc", fJSONRPC}, {"id", fID}, {"method", fMethod}, {"params", fParams}, {"result", fResult}, {"error", fError}}

// Parse scans one JSON-RPC message. It validates the JSON and the envelope:
// "jsonrpc" must be "2.0"; a message is a request/notification (method) or a
// response (result xor error, with an id); duplicate envelope members, and
// members whose names differ from envelope members only in case, are
// rejected, so the hub and the peer cannot disagree about what a message says.
func Parse(b []byte) (Message, error) {
	var m Message
	b = TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return m, ErrBatch
	}
	seen := 0
	var version []byte
	err := Members(b, func(k, v []byte) error {
		flag := 0
		for _, e := range envelopeKeys {
			if string(k) == e.name {
				flag = e.flag
				break
			}
			if len(k) == len(e.name) && strings.EqualFold(string(k), e.name) {
				return fmt.Errorf("%w: member %q differs from %q only in case", ErrEnvelope, k, e.name)
			}
		}
		if flag == 0 {
			return nil // unknown members are tolerated
		}
		if seen&flag != 0 {
			return fmt.Errorf("%w: duplicate member %q", ErrEnvelope, k)
		}
		seen |= flag
		switch flag {
		case fJSONRPC:
			version = v
		case fID:
			switch v[0] {
			case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			default:
				return fmt.Errorf("%w: id must be a string, number or null", ErrEnvelope)
			}
			m.ID = v
		case fMethod:
			if v[0] != '"' {
				return fmt.Errorf("%w: method must be a string", ErrEnvelope)
			}
			s, err := decodeKey(v)
			if err != nil {
				return err
			}
			if len(s) == 0 {
				return fmt.Errorf("%w: empty method", ErrEnvelope)
			}
			m.Method = string(s)
		case fParams:
			if v[0] != '{' && v[0] != '[' {
				return fmt.Errorf("%w: params must be an object or array", ErrEnvelope)
			}
			m.Params = v
		case fResult:
			m.Result = v
		case fError:
			if v[0] != '{' {
				return fmt.Errorf("%w: error must be an object", ErrEnvelope)
			}
			m.Error = v
		}
		return nil
	})
	if err != nil {
		return Message{}, err
	}
	if string(version) != `"2.0"` {
		return Message{}, fmt.Errorf("%w: jsonrpc must be \"2.0\"", ErrEnvelope)
	}
	switch {
	case seen&fMethod != 0:
		if seen&(fResult|fError) != 0 {
			return Message{}, fmt.Errorf("%w: a request cannot carry result or error", ErrEnvelope)
		}
	case seen&fResult != 0 && seen&fError != 0:
		return Message{}, fmt.Errorf("%w: a response cannot carry both result and error", ErrEnvelope)
	case seen&(fResult|fError) != 0:
		if seen&fID == 0 {
			return Message{}, fmt.Errorf("%w: a response needs an id", ErrEnvelope)
		}
	default:
		return Message{}, fmt.Errorf("%w: neither method nor result nor error", ErrEnvelope)
	}
	return m, nil
}

// Elements calls fn for each element of the JSON array arr, in order, with
// the element's raw bytes. It validates the whole array.
func Elements(arr []byte, fn func(elem []byte) error) error {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return syntaxErr(arr, i, "array")
	}
	i = skipWS(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		if j := skipWS(arr, i+1); j != len(arr) {
			return syntaxErr(arr, j, "end of input")
		}
		return nil
	}
	for {
		end, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if err := fn(arr[i:end]); err != nil {
			return err
		}
		i = skipWS(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipWS(arr, i+1)
			continue
		}
		if i < len(arr) && arr[i] == ']' {
			if j := skipWS(arr, i+1); j != len(arr) {
				return syntaxErr(arr, j, "end of input")
			}
			return nil
		}
		return syntaxErr(arr, i, "',' or ']'")
	}
}

// Values calls fn for each JSON value of b, a sequence of values that
// whitespace may separate (JSON lines, or values written back to back), in
// order. It validates every value; an error stops it.
func Values(b []byte, fn func(v []byte) error) error {
	i := skipWS(b, 0)
	for i < len(b) {
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := fn(b[i:end]); err != nil {
			return err
		}
		i = skipWS(b, end)
	}
	return nil
}
