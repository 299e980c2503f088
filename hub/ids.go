package hub

import (
	"errors"
	"math"
	"strconv"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// Request ids. The hub answers every client request under the id bytes the
// client wrote, whatever path the request takes: forwarded requests keep the
// raw id and their answers are built around it; requests go-sdk handles
// (initialize, ping, logging/setLevel, the hub's admin tools) are handed to
// it under an integer id of the hub's own, and its answers are written
// under the client's id again (see sdk.go). An id is in use from the moment
// the hub accepts the request until its answer is sent, on every path; a
// second request with the same id meanwhile is refused, and the first one
// still gets its answer.

// idKey returns a key that is equal for every encoding of the same id ("1",
// "1.0" and "1e0"; "\u0061" and "a") and different for different ids. For
// the usual forms (an integer written plainly, a string of printable ASCII
// without escapes) it is raw itself, so a map lookup by it allocates
// nothing.
func idKey(raw []byte) []byte {
	raw = wire.TrimSpace(raw)
	if len(raw) == 0 {
		return raw
	}
	if raw[0] == '"' {
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c > 0x7e || c == '\\' {
				s, err := wire.String(raw)
				if err != nil {
					return raw
				}
				return wire.AppendString(nil, s)
			}
		}
		return raw
	}
	if plainInt(raw) {
		if string(raw) == "-0" {
			return zeroKey
		}
		return raw
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(nil, int64(f), 10)
	}
	return raw
}

var zeroKey = []byte("0")

// plainInt reports whether raw is a JSON number without fraction or
// exponent.
func plainInt(raw []byte) bool {
	i := 0
	if len(raw) > 0 && raw[0] == '-' {
		i++
	}
	if i == len(raw) {
		return false
	}
	for ; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return false
		}
	}
	return true
}

// canonicalID is idKey as a string (a map key that outlives raw).
func canonicalID(raw []byte) string { return string(idKey(raw)) }

// isNull reports whether a raw id is JSON null.
func isNull(raw []byte) bool { return string(wire.TrimSpace(raw)) == "null" }

// Errors of [session.begin]; the hub answers the first three with -32600
// (Invalid Request), as the MCP TypeScript SDK does.
var (
	errIDInUse          = errors.New("invalid request: id already in use by a request in flight on this session")
	errNotInitialized   = errors.New("invalid request: not initialized (send initialize first)")
	errAlreadyInitiated = errors.New("invalid request: already initialized (initialize is sent once per session)")
	errClosed           = errors.New("the session closed")
)

// lifecycle says where a request may come in a session's lifecycle.
type lifecycle int

const (
	needsInit   lifecycle = iota // only after initialize
	initializes                  // initialize itself: once
	anytime                      // ping; what go-sdk answers by itself
)

// begin registers a client request under its id key. It fails while
// another request with that id is in flight, and for requests out of
// lifecycle order.
func (s *session) begin(key []byte, c *call, when lifecycle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errClosed
	case s.inflight[string(key)] != nil:
		return errIDInUse
	}
	switch when {
	case initializes:
		if s.initialized.Load() {
			return errAlreadyInitiated
		}
		s.initialized.Store(true)
		c.initialize = true
	case needsInit:
		if !s.initialized.Load() {
			return errNotInitialized
		}
	}
	s.inflight[string(key)] = c
	return nil
}

// sessionless reports whether request params carry the per-request protocol
// version of a 2026-07-28 client, which needs no initialize (go-sdk answers
// it, telling the client which versions the hub speaks).
func sessionless(params []byte) bool {
	if params == nil || params[0] != '{' {
		return false
	}
	meta, err := wire.Get(params, "_meta")
	if err != nil || meta == nil || meta[0] != '{' {
		return false
	}
	v, err := wire.Get(meta, "io.modelcontextprotocol/protocolVersion")
	return err == nil && v != nil
}

// end forgets a client request: it was answered (or cancelled, and gets no
// answer), and its id is free again.
func (s *session) end(key []byte) *call {
	s.mu.Lock()
	c := s.inflight[string(key)]
	if c != nil {
		delete(s.inflight, string(key))
		if c.sdk != 0 {
			delete(s.sdkCalls, c.sdk)
		}
	}
	s.mu.Unlock()
	return c
}

// respond sends the answer to the client request id and frees the id;
// code is the JSON-RPC error code of an error answer (0 for a result), for
// the request's span. The answer of a code-mode script's inner request goes
// to the script.
func (s *session) respond(id, data []byte, code int64) {
	c := s.end(idKey(id))
	if c != nil {
		// Before the answer leaves: a client that has it finds the span
		// ended (and, with a synchronous exporter, exported).
		endSpan(c.span, data, code)
	}
	if c != nil && c.sink != nil {
		c.sink(data)
	} else {
		_ = s.out.send(outMsg{data: data, respTo: id})
	}
	s.settled()
}

// refuse answers a message the hub does not accept as a request (a null or
// duplicate id, one before initialize, one it cannot parse) with an error.
// No request is registered under id, so none is freed: a refused duplicate
// leaves the first request with that id in flight.
func (s *session) refuse(id []byte, code int64, msg string) {
	_ = s.out.send(outMsg{data: wire.AppendError(nil, id, code, msg, nil), respTo: id})
}
