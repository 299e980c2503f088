package era

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// On streamable HTTP, a stateless-era request mirrors parts of its body
// into headers (SEP-2243): MCP-Protocol-Version (its _meta version),
// Mcp-Method, Mcp-Name (params.name or params.uri of tools/call,
// prompts/get and resources/read), and an Mcp-Param-{Name} header for each
// argument the tool's input schema marks with "x-mcp-header". A value that
// is not plain visible ASCII travels as =?base64?…?=.

// Header names.
const (
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
)

// ParamHeader is one x-mcp-header annotation of a tool's input schema: the
// path of properties keys to the argument, and the header's name part.
type ParamHeader struct {
	Path   []string
	Header string
	Type   string // "string", "integer" or "boolean"
}

// ErrInvalidParamHeader is wrapped by the error of a tool definition whose
// x-mcp-header annotations break the rules; a client excludes such a tool.
var ErrInvalidParamHeader = errors.New("invalid x-mcp-header annotation")

// ParamHeaders returns the x-mcp-header annotations of a tool's input
// schema, in no particular order, or an error wrapping
// ErrInvalidParamHeader that says which rule an annotation breaks: the
// name must be a non-empty HTTP token, unique regardless of case, on a
// property of type string, integer or boolean that is reached from the
// root through properties keys only.
func ParamHeaders(inputSchema []byte) ([]ParamHeader, error) {
	if !strings.Contains(string(inputSchema), `"x-mcp-header"`) {
		return nil, nil // the hot path: no annotation at all
	}
	var out []ParamHeader
	if err := collect(inputSchema, nil, true, &out); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range out {
		k := strings.ToLower(p.Header)
		if seen[k] {
			return nil, fmt.Errorf("%w: %q is used twice (names are compared regardless of case)", ErrInvalidParamHeader, p.Header)
		}
		seen[k] = true
	}
	return out, nil
}

// collect walks schema for annotations. reachable says whether schema is
// reached from the root through properties keys only.
func collect(schema []byte, path []string, reachable bool, out *[]ParamHeader) error {
	if len(schema) == 0 || schema[0] != '{' {
		if len(schema) > 0 && schema[0] == '[' {
			return wire.Elements(schema, func(e []byte) error { return collect(e, path, false, out) })
		}
		return nil
	}
	var header []byte
	var typ []byte
	err := wire.Members(schema, func(k, v []byte) error {
		switch string(k) {
		case "x-mcp-header":
			header = v
		case "type":
			typ = v
		case "properties":
			if len(v) == 0 || v[0] != '{' {
				return nil
			}
			return wire.Members(v, func(name, prop []byte) error {
				return collect(prop, append(path[:len(path):len(path)], string(name)), reachable, out)
			})
		case "const", "enum", "default", "examples", "description", "title":
			// values, not schemas
		default:
			return collect(v, path, false, out)
		}
		return nil
	})
	if err != nil || header == nil {
		return err
	}
	where := strings.Join(path, ".")
	if len(path) == 0 || !reachable {
		return fmt.Errorf("%w on %q: only properties reached through properties keys alone may be mirrored", ErrInvalidParamHeader, where)
	}
	name, err := wire.String(header)
	if err != nil {
		return fmt.Errorf("%w on %q: the value must be a string", ErrInvalidParamHeader, where)
	}
	if name == "" {
		return fmt.Errorf("%w on %q: empty name", ErrInvalidParamHeader, where)
	}
	for i := 0; i < len(name); i++ {
		if !isTchar(name[i]) {
			return fmt.Errorf("%w on %q: %q is not an HTTP token", ErrInvalidParamHeader, where, name)
		}
	}
	t, _ := wire.String(typ)
	switch t {
	case "string", "integer", "boolean":
	default:
		return fmt.Errorf("%w on %q: only string, integer and boolean parameters may be mirrored (type %s)", ErrInvalidParamHeader, where, typeText(typ))
	}
	*out = append(*out, ParamHeader{Path: path, Header: name, Type: t})
	return nil
}

func typeText(raw []byte) string {
	if raw == nil {
		return "missing"
	}
	return string(raw)
}

// isTchar reports whether c may appear in an HTTP token (RFC 9110 5.6.2).
func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// EncodeValue returns a header value for s: s itself when it is plain
// visible ASCII (spaces inside allowed) that does not look encoded, else
// =?base64?…?= of its UTF-8 bytes.
func EncodeValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[len(s)-1] != ' '
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if s == "" {
		plain = true
	}
	if plain && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// DecodeValue decodes a header value that may be =?base64?…?=; ok is false
// for invalid base64.
func DecodeValue(v string) (s string, ok bool) {
	enc, found := strings.CutPrefix(v, "=?base64?")
	if !found {
		return v, true
	}
	enc, found = strings.CutSuffix(enc, "?=")
	if !found {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// NameMember returns the params member Mcp-Name mirrors for method
// ("name" or "uri"), or "" for methods without Mcp-Name.
func NameMember(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

// Headers calls set with each header a stateless-era request carries on
// streamable HTTP besides MCP-Protocol-Version: Mcp-Method, Mcp-Name, and
// for tools/call the Mcp-Param-* headers of the arguments the tool's
// annotations mirror (tool returns them, from ParamHeaders; it may be
// nil). An argument that is absent or null gets no header.
func Headers(method string, params []byte, tool func(name string) []ParamHeader, set func(name, value string)) {
	set(HeaderMethod, method)
	member := NameMember(method)
	if member == "" {
		return
	}
	v, err := wire.Get(params, member)
	if err != nil || v == nil {
		return
	}
	name, err := wire.String(v)
	if err != nil {
		return
	}
	set(HeaderName, EncodeValue(name))
	if method != "tools/call" || tool == nil {
		return
	}
	bindings := tool(name)
	if len(bindings) == 0 {
		return
	}
	args, _ := wire.Get(params, "arguments")
	for _, b := range bindings {
		arg := lookup(args, b.Path)
		if arg == nil || string(arg) == "null" {
			continue
		}
		if s, ok := headerText(arg); ok {
			set(HeaderParamPrefix+b.Header, EncodeValue(s))
		}
	}
}

// lookup returns the raw value at path in the object args, or nil.
func lookup(args []byte, path []string) []byte {
	cur := args
	for _, p := range path {
		if len(cur) == 0 || cur[0] != '{' {
			return nil
		}
		v, err := wire.Get(cur, p)
		if err != nil || v == nil {
			return nil
		}
		cur = v
	}
	return cur
}

// headerText is the text of a primitive argument in a header: a string as
// it is, a number in decimal, a boolean as true or false.
func headerText(arg []byte) (string, bool) {
	switch arg[0] {
	case '"':
		s, err := wire.String(arg)
		return s, err == nil
	case 't':
		return "true", string(arg) == "true"
	case 'f':
		return "false", string(arg) == "false"
	case '{', '[', 'n':
		return "", false
	}
	f, err := strconv.ParseFloat(string(arg), 64)
	if err != nil {
		return "", false
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10), true
	}
	return string(arg), true
}

// CheckParamHeaders checks the Mcp-Param-* headers of a tools/call against
// its arguments (get returns a header's value, "" when absent): a header
// is required for a present argument, refused for an absent or null one,
// and must equal it after decoding (numbers compare as numbers). It
// returns what is wrong, or "".
func CheckParamHeaders(params []byte, bindings []ParamHeader, get func(name string) string) string {
	args, _ := wire.Get(params, "arguments")
	for _, b := range bindings {
		name := HeaderParamPrefix + b.Header
		hv := get(name)
		where := strings.Join(b.Path, ".")
		arg := lookup(args, b.Path)
		if arg == nil || string(arg) == "null" {
			if hv != "" {
				return fmt.Sprintf("%s is set but the argument %q is absent", name, where)
			}
			continue
		}
		if hv == "" {
			return fmt.Sprintf("missing %s header for the argument %q", name, where)
		}
		dec, ok := DecodeValue(hv)
		if !ok || !matches(dec, arg) {
			return fmt.Sprintf("the %s header does not match the argument %q", name, where)
		}
	}
	return ""
}

// matches compares a decoded header value with a primitive argument.
func matches(h string, arg []byte) bool {
	switch arg[0] {
	case '"':
		s, err := wire.String(arg)
		return err == nil && s == h
	case 't', 'f':
		return h == string(arg)
	case '{', '[', 'n':
		return false
	}
	a, err1 := strconv.ParseFloat(string(arg), 64)
	n, err2 := strconv.ParseFloat(h, 64)
	return err1 == nil && err2 == nil && a == n
}
