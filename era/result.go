package era

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// Result types.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
)

// Cache scopes of a cacheable result.
const (
	// Public: the answer is the same for every client, and any cache may
	// serve it across authorization contexts.
	Public = "public"
	// Private: the answer may differ by client; it may be cached within
	// one authorization context only.
	Private = "private"
)

// Cache is the caching hint of a cacheable result (SEP-2549).
type Cache struct {
	TTLMs int64  // how long the answer may be considered fresh; 0: re-fetch each time
	Scope string // Public or Private
}

// Cacheable reports whether the results of method carry ttlMs and
// cacheScope in the stateless era.
func Cacheable(method string) bool {
	switch method {
	case "server/discover", "tools/list", "prompts/list", "resources/list",
		"resources/templates/list", "resources/read":
		return true
	}
	return false
}

// Complete returns result completed for a stateless-era client: a
// resultType when missing (a session-era server's results have none):
// "complete", or "input_required" for a result that lists inputRequests
// (a dual-era SDK's handler asking again after the round it fulfilled
// with requests of its own: go-sdk hands that to a session-era client as
// it is), and for a cacheable method ttlMs and cacheScope from c when
// missing. What the result already says is kept (an input_required result
// passes as it is), and the result's other members keep their bytes and
// order. When nothing is missing, result itself is returned: no copy.
//
// The check is one scan of the result's top-level members; the values are
// skipped, not decoded, so a large tool result costs little.
func Complete(method string, result []byte, c Cache) ([]byte, error) {
	r := wire.TrimSpace(result)
	if len(r) == 0 || r[0] != '{' {
		return result, nil // not an object: nothing a client could read anyway
	}
	cacheable := Cacheable(method)
	var hasType, hasTTL, hasScope, asks bool
	err := wire.Members(r, func(k, v []byte) error {
		switch string(k) {
		case "inputRequests":
			asks = len(v) > 2 && v[0] == '{' && len(wire.TrimSpace(v[1:len(v)-1])) > 0
		case "resultType":
			hasType = true
		case "ttlMs":
			hasTTL = true
		case "cacheScope":
			hasScope = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if hasType && (!cacheable || (hasTTL && hasScope)) {
		return result, nil
	}
	add := make([]byte, 0, 64)
	switch {
	case !hasType && asks:
		add = append(add, `"resultType":"input_required",`...)
	case !hasType:
		add = append(add, `"resultType":"complete",`...)
	}
	if cacheable && !hasTTL {
		add = append(add, `"ttlMs":`...)
		add = strconv.AppendInt(add, max(c.TTLMs, 0), 10)
		add = append(add, ',')
	}
	if cacheable && !hasScope {
		scope := c.Scope
		if scope != Public {
			scope = Private
		}
		add = append(add, `"cacheScope":"`...)
		add = append(add, scope...)
		add = append(add, `",`...)
	}
	// Insert after the opening brace: {"resultType":…,<the rest>}.
	out := make([]byte, 0, len(r)+len(add))
	out = append(out, '{')
	rest := wire.TrimSpace(r[1:])
	if rest[0] == '}' {
		add = add[:len(add)-1] // an empty object: no member follows
	}
	out = append(out, add...)
	return append(out, r[1:]...), nil
}

// ToSession returns a stateless-era server's result for a session-era
// client: without the members its revision does not have (resultType,
// ttlMs, cacheScope) and without the reserved _meta keys that describe the
// server's hop (its serverInfo). An input_required result is returned as
// it is: it is for the proxy to fulfil, not for the client. Everything
// else keeps its bytes and order; a result with nothing to drop is
// returned as it is, after a byte search.
func ToSession(result []byte) []byte {
	if !bytes.Contains(result, []byte(`"resultType"`)) && !bytes.Contains(result, []byte(ReservedPrefix)) &&
		!bytes.Contains(result, []byte(`"ttlMs"`)) {
		return result
	}
	if InputRequired(result) {
		return result
	}
	out, err := wire.RebuildObject(result, func(k, v []byte) ([]byte, bool) {
		switch string(k) {
		case "resultType", "ttlMs", "cacheScope":
			return nil, false
		case "_meta":
			if len(v) == 0 || v[0] != '{' {
				return v, true
			}
			m, err := wire.RebuildObject(v, func(mk, mv []byte) ([]byte, bool) { return mv, !Reserved(mk) })
			if err != nil {
				return v, true
			}
			return m, string(m) != "{}" || string(wire.TrimSpace(v)) == "{}"
		}
		return v, true
	})
	if err != nil {
		return result
	}
	return out
}

// InputRequired reports whether a result asks for client input. A result
// that does not mention input_required at all costs one byte search.
func InputRequired(result []byte) bool {
	if !bytes.Contains(result, []byte(`"input_required"`)) {
		return false
	}
	v, err := wire.Get(result, "resultType")
	return err == nil && string(v) == `"input_required"`
}

// InputRequest is one entry of an input_required result's inputRequests.
type InputRequest struct {
	Key    string // its key: the retry answers it under the same key
	Method string // sampling/createMessage, elicitation/create or roots/list
	Params []byte // raw, may be nil
}

// ErrNoInputRequests is returned for an input_required result whose
// inputRequests member is missing or not an object.
var ErrNoInputRequests = errors.New("an input_required result without inputRequests")

// InputRequests returns the requests of an input_required result, in
// order, and its requestState (raw JSON string, or nil).
func InputRequests(result []byte) (reqs []InputRequest, state []byte, err error) {
	var raw []byte
	err = wire.Members(result, func(k, v []byte) error {
		switch string(k) {
		case "inputRequests":
			raw = v
		case "requestState":
			state = v
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil, ErrNoInputRequests
	}
	err = wire.Members(raw, func(k, v []byte) error {
		key := string(k)
		m, err := wire.Get(v, "method")
		if err != nil || m == nil {
			return fmt.Errorf("input request %q has no method", key)
		}
		method, err := wire.String(m)
		if err != nil {
			return fmt.Errorf("input request %q: the method is not a string", key)
		}
		params, _ := wire.Get(v, "params")
		reqs = append(reqs, InputRequest{Key: key, Method: method, Params: params})
		return nil
	})
	return reqs, state, err
}

// Retry returns the params of the retry of a request that got an
// input_required result: the original params with inputResponses (each
// answer under its request's key) and, when the result had one, the
// requestState it carried, exactly as it was.
func Retry(params []byte, answers []wire.Member, state []byte) ([]byte, error) {
	responses, err := wire.EditObject([]byte(`{}`), answers)
	if err != nil {
		return nil, err
	}
	set := []wire.Member{{Key: "inputResponses", Value: responses}}
	drop := []string{}
	if state != nil {
		set = append(set, wire.Member{Key: "requestState", Value: state})
	} else {
		drop = append(drop, "requestState")
	}
	if len(wire.TrimSpace(params)) == 0 || string(wire.TrimSpace(params)) == "null" {
		params = []byte(`{}`)
	}
	return wire.EditObject(params, set, drop...)
}

// NewInputRequired returns an input_required result asking reqs, with
// requestState state (a string; "" for none).
func NewInputRequired(reqs []InputRequest, state string) []byte {
	b := []byte(`{"resultType":"input_required","inputRequests":{`)
	for i, r := range reqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, r.Key)
		b = append(b, `:{"method":`...)
		b = wire.AppendString(b, r.Method)
		if r.Params != nil {
			b = append(b, `,"params":`...)
			b = append(b, r.Params...)
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	if state != "" {
		b = append(b, `,"requestState":`...)
		b = wire.AppendString(b, state)
	}
	return append(b, '}')
}

// InputResponses returns the inputResponses of a retried request's params
// (raw object, or nil) and its requestState (decoded, or "").
func InputResponses(params []byte) (responses []byte, state string) {
	_ = wire.Members(params, func(k, v []byte) error {
		switch string(k) {
		case "inputResponses":
			if len(v) > 0 && v[0] == '{' {
				responses = v
			}
		case "requestState":
			state, _ = wire.String(v)
		}
		return nil
	})
	return responses, state
}

// Response returns a result from the next hop for the previous one: the
// reserved keys of its _meta (the upstream's serverInfo, …) describe that
// hop, not the proxy, so they are dropped. A result without any costs one
// byte search and is returned as it is.
func Response(result []byte) []byte {
	if !bytes.Contains(result, []byte(ReservedPrefix)) {
		return result
	}
	out, err := wire.EditMeta(result, nil, Reserved)
	if err != nil {
		return result
	}
	return out
}
