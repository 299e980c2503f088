package wire

import (
	"strconv"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// AppendResult appends the response {"jsonrpc":"2.0","id":id,"result":result}
// to dst. id and result are raw JSON and are copied verbatim.
func AppendResult(dst, id, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendErrorObject appends an error response whose error member is the raw
// JSON object errObj, copied verbatim.
func AppendErrorObject(dst, id, errObj []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":`...)
	dst = append(dst, errObj...)
	return append(dst, '}')
}

// AppendError appends an error response with the given code and message.
// data, when non-nil, is raw JSON. A nil id is written as null.
func AppendError(dst, id []byte, code int64, message string, data []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":`...)
	dst = AppendErrorBody(dst, code, message, data)
	return append(dst, '}')
}

// AppendErrorBody appends a JSON-RPC error object. Its message is bounded
// (redact.Bound): every error the hub writes goes through here, and none
// quotes more than a prefix of what a client sent.
func AppendErrorBody(dst []byte, code int64, message string, data []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, code, 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, redact.Bound(message))
	if data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	return append(dst, '}')
}

// AppendRequest appends a request. params may be nil.
func AppendRequest(dst, id []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendNotification appends a notification. params may be nil.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

func appendID(dst, id []byte) []byte {
	if id == nil {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// HubID returns the raw JSON id the hub uses for its own request number n:
// a string "h<n>". Peers (go-sdk included) use integer ids, so responses to
// hub requests are told apart by their string form.
func HubID(dst []byte, n uint64) []byte {
	dst = append(dst, `"h`...)
	dst = strconv.AppendUint(dst, n, 10)
	return append(dst, '"')
}

// ParseHubID returns n when raw is an id made by [HubID].
func ParseHubID(raw []byte) (uint64, bool) {
	if len(raw) < 4 || raw[0] != '"' || raw[1] != 'h' || raw[len(raw)-1] != '"' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[2:len(raw)-1]), 10, 64)
	return n, err == nil
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 is replaced by
// U+FFFD; "<", ">" and "&" are not escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
