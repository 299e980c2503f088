package hub

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"

	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Tracing (package telemetry) hooks into the session at four places: a
// client request's server span starts when the request is accepted and
// ends with its answer (respond, fromSDK, a cancel, the session's end);
// a forwarded request's client span starts in forward, rides on the
// request's callRef (which upstream reads for its queue wait, retries and
// HTTP headers) and ends in finish; requests the hub sends the client
// (ask) carry the span of what asked; progress carries the span of the
// request it reports on. With tracing off h.tracer is nil and each hook is
// a nil check.

// serverSpan starts the span of the client request m, the child of its
// _meta.traceparent, else of the HTTP request's traceparent header h.
func (s *session) serverSpan(m wire.Message, h http.Header) *telemetry.Span {
	var meta []byte
	if len(m.Params) > 0 && m.Params[0] == '{' {
		meta, _ = wire.Get(m.Params, "_meta")
	}
	return s.h.tracer.Server(meta, h, nil, telemetry.Request{Method: m.Method, ID: m.ID, Session: s.label(), Transport: s.transport()})
}

// transport names the client's transport for spans.
func (s *session) transport() string {
	switch o := s.out.(type) {
	case lineOutbox:
		return "stdio"
	case *httpSession:
		if o.legacy {
			return "sse"
		}
		return "http"
	case *statelessOut:
		return "http"
	}
	return ""
}

// spanOf returns the server span of the client request id, or nil.
func (s *session) spanOf(id []byte) *telemetry.Span {
	if s.h.tracer == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.inflight[string(idKey(id))]; c != nil {
		return c.span
	}
	return nil
}

// traceTarget names the tool, prompt or resource of the client request id
// on its span; known says whether the catalog has that tool or prompt
// (only then is it in the span's name: a client may send any name).
func (s *session) traceTarget(id []byte, method, target, uri string, known bool) {
	if s.h.tracer != nil {
		s.spanOf(id).SetTarget(method, target, uri, known)
	}
}

// outcome is how a client request's answer ends its span: the JSON-RPC
// error code of an error, a tool error, or a result.
func endSpan(sp *telemetry.Span, data []byte, code int64) {
	if sp == nil {
		return
	}
	o := telemetry.Outcome{Code: code}
	if code == 0 && bytes.Contains(data, []byte(`"isError":true`)) {
		o.Error = outcomeToolError
	}
	sp.End(o)
}

// rpcErrorCode reads the code of a JSON-RPC error object (0 when unreadable).
func rpcErrorCode(errObj []byte) int64 {
	v, err := wire.Get(errObj, "code")
	if err != nil || v == nil {
		return 0
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// clientSpan starts the client span of a request forwarded to up for the
// client request id (nil when tracing is off) and returns params with the
// span's context in its _meta.
func (s *session) clientSpan(id []byte, up *upstream.Upstream, method, label string, params []byte) (*telemetry.Span, []byte, error) {
	parent := s.spanOf(id)
	if parent == nil {
		return nil, params, nil
	}
	parent.SetUpstream(up.Name())
	spec := up.Spec()
	target := label
	if n, _ := wire.Get(params, "name"); n != nil {
		target, _ = wire.String(n)
	}
	r := telemetry.Request{Method: method}
	if method == "tools/call" || method == "prompts/get" {
		r.Target = target
	}
	if method == "resources/read" {
		r.URI = label
	}
	cs := s.h.tracer.Client(parent, r, &telemetry.Upstream{Name: up.Name(), Transport: string(spec.Transport), URL: spec.URL, Instance: up.Label()})
	params, err := cs.InjectMeta(params)
	if err != nil {
		cs.End(telemetry.Outcome{Error: "invalid_params"})
		return nil, nil, err
	}
	return cs, params, nil
}

// Span implements the interface upstream reads a tag's span through.
func (r *callRef) Span() *telemetry.Span {
	if r == nil {
		return nil
	}
	return r.span
}

// askSpan starts the client span of a request the hub sends the client
// on behalf of parent (an upstream's request, or a call waiting for
// input), and returns params with its context in _meta.
func (s *session) askSpan(parent *telemetry.Span, id []byte, method string, params []byte) (*telemetry.Span, []byte) {
	if parent == nil {
		return nil, params
	}
	cs := s.h.tracer.Client(parent, telemetry.Request{Method: method, ID: id, Session: s.label(), Transport: s.transport()}, nil)
	if p, err := cs.InjectMeta(params); err == nil {
		params = p
	}
	return cs, params
}

// withSpanMeta returns params of a notification with the context of the
// client request's span in _meta (progress), or params as they are.
func (s *session) withSpanMeta(req, params []byte) []byte {
	sp := s.spanOf(req)
	if sp == nil {
		return params
	}
	if p, err := sp.InjectMeta(params); err == nil {
		return p
	}
	return params
}

// endSpans ends the spans of requests still in flight when the session
// closes.
func (s *session) endSpans() {
	if s.h.tracer == nil {
		return
	}
	o := telemetry.Outcome{Error: "session_closed"}
	if s.stateless != nil && s.stateless.listen != nil {
		// A 2026-07-28 client's subscriptions/listen lasts until the
		// client closes it: that is its normal end, not a failure.
		o = telemetry.Outcome{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.inflight {
		c.span.End(o)
		c.span = nil
	}
}

// spanOutcome is the outcome of a forwarded request for its client span.
func spanOutcome(label string, r upstream.Reply) telemetry.Outcome {
	o := telemetry.Outcome{Label: label}
	switch label {
	case outcomeOK:
	case outcomeRPCError:
		o.Code = rpcErrorCode(r.Error)
	default:
		o.Error = label
	}
	return o
}

// upstreamRequestSpan starts the server span of a request an upstream
// sends the hub (sampling, elicitation, roots): the child of its
// _meta.traceparent, else of the client span of the call it is attributed
// to.
func (h *Hub) upstreamRequestSpan(c *upstream.Conn, id []byte, method string, params []byte, a attribution) *telemetry.Span {
	var meta []byte
	if len(params) > 0 && params[0] == '{' {
		meta, _ = wire.Get(params, "_meta")
	}
	sp := h.tracer.Server(meta, nil, a.span, telemetry.Request{Method: method, ID: id})
	sp.SetUpstream(c.Name())
	return sp
}

// errorType is error.type for an ask that failed without an answer.
func errorType(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, errUpstreamCancelled) {
		return outcomeCancelled
	}
	return outcomeFailed
}

// endCancelled forgets a client request the client cancelled (it gets no
// answer) and ends its span.
func (s *session) endCancelled(key []byte) {
	if c := s.end(key); c != nil {
		c.span.End(telemetry.Outcome{Error: outcomeCancelled})
	}
}
