package era

import (
	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// Caps are the client capabilities a request declares to a stateless-era
// server: what the server may ask the client for in an input_required
// result. A proxy declares what its client can answer and the proxy lets
// the server ask.
type Caps struct {
	Sampling        bool
	SamplingTools   bool // sampling with tools and toolChoice
	SamplingContext bool // sampling with includeContext
	Elicitation     bool
	ElicitForm      bool
	ElicitURL       bool
	Roots           bool
}

// AppendJSON appends caps as a 2026-07-28 ClientCapabilities object.
func (c Caps) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	n := 0
	member := func(k string) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, `":`...)
	}
	if c.Elicitation {
		member("elicitation")
		switch {
		case c.ElicitForm && c.ElicitURL:
			dst = append(dst, `{"form":{},"url":{}}`...)
		case c.ElicitURL:
			dst = append(dst, `{"url":{}}`...)
		default: // form only, implicit or not
			dst = append(dst, `{"form":{}}`...)
		}
	}
	if c.Roots {
		member("roots")
		dst = append(dst, `{}`...)
	}
	if c.Sampling {
		member("sampling")
		switch {
		case c.SamplingTools && c.SamplingContext:
			dst = append(dst, `{"context":{},"tools":{}}`...)
		case c.SamplingTools:
			dst = append(dst, `{"tools":{}}`...)
		case c.SamplingContext:
			dst = append(dst, `{"context":{}}`...)
		default:
			dst = append(dst, `{}`...)
		}
	}
	return append(dst, '}')
}

// ParseCaps reads a ClientCapabilities object of either era (roots is
// {"listChanged":…} in the session era, {} in the stateless one; an
// elicitation capability of {} means form). Unknown members are ignored.
func ParseCaps(raw []byte) (Caps, error) {
	var c Caps
	if len(wire.TrimSpace(raw)) == 0 {
		return c, nil
	}
	err := wire.Members(raw, func(k, v []byte) error {
		if len(v) == 0 || v[0] != '{' {
			return nil // null or junk: not declared
		}
		switch string(k) {
		case "sampling":
			c.Sampling = true
			c.SamplingTools = hasObject(v, "tools")
			c.SamplingContext = hasObject(v, "context")
		case "elicitation":
			c.Elicitation = true
			c.ElicitForm = hasObject(v, "form")
			c.ElicitURL = hasObject(v, "url")
			if !c.ElicitForm && !c.ElicitURL {
				c.ElicitForm = true // {} is form (2025-11-25 compatibility)
			}
		case "roots":
			c.Roots = true
		}
		return nil
	})
	return c, err
}

func hasObject(obj []byte, key string) bool {
	v, err := wire.Get(obj, key)
	return err == nil && len(v) > 0 && v[0] == '{'
}

// Client is who a stateless-era server sees making a request: the
// per-request _meta a session-era client sent once, in initialize.
type Client struct {
	// Version is the protocol version of the request.
	Version string
	// Info is the client's Implementation object (raw JSON), or nil.
	Info []byte
	// Caps is what the client can be asked for.
	Caps Caps
	// LogLevel is the least severe log level the client wants messages
	// at, or "" for none (the server then sends no log messages).
	LogLevel string
}

// Meta returns the _meta members that say c for a stateless-era request.
func (c *Client) Meta() []wire.Member {
	m := make([]wire.Member, 0, 4)
	m = append(m, wire.Member{Key: MetaProtocolVersion, Value: wire.AppendString(nil, c.Version)})
	if c.Info != nil {
		m = append(m, wire.Member{Key: MetaClientInfo, Value: c.Info})
	}
	m = append(m, wire.Member{Key: MetaClientCaps, Value: c.Caps.AppendJSON(nil)})
	if c.LogLevel != "" {
		m = append(m, wire.Member{Key: MetaLogLevel, Value: wire.AppendString(nil, c.LogLevel)})
	}
	return m
}

// Request returns a request's params for the next hop. The reserved _meta
// keys the params carry (they described the previous hop) are dropped;
// for a stateless-era hop (c non-nil) c's are written instead, and extra
// is set either way (a proxy's own progress token, trace context). When
// nothing changes, params is returned as it is, without a copy.
func Request(params []byte, c *Client, extra ...wire.Member) ([]byte, error) {
	set := extra
	if c != nil {
		set = append(c.Meta(), extra...)
	}
	return wire.EditMeta(params, set, Reserved)
}
