package hub

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// One shared upstream process serves every client session, so what it sends
// on its own initiative (log messages, sampling, elicitation and roots
// requests) must be attributed to the session whose call it serves. The hub
// tags every forwarded request with its callRef; an upstream message is
// attributed:
//
//   - to the instance's session, when it comes from a per-session instance
//     (scope.go);
//   - exactly, when it arrived on the response stream of one forwarded
//     request (streamable HTTP upstreams);
//   - to the one session with requests in flight to that upstream;
//   - to nobody otherwise: several sessions are waiting on the upstream and
//     the hub does not guess. Requests are then refused with an error that
//     says so; log messages go only to the hub's own log.

// callRef tags a request the hub forwarded: the session that made it and
// the raw id the client gave it.
type callRef struct {
	s     *session
	id    []byte
	span  *telemetry.Span // the forwarded request's client span, nil when not traced
	inner bool            // a code-mode script's request (id is the script's)
}

// attribution is the outcome of attributing an upstream message.
type attribution struct {
	s        *session        // nil: none or ambiguous
	related  []byte          // the client request it belongs to, when known
	span     *telemetry.Span // the client span of that request, when traced
	sessions int             // sessions with requests in flight to the upstream
}

func attribute(c *upstream.Conn, origin []byte) attribution {
	if s, ok := c.Owner().(*session); ok {
		return ownedAttribution(c, s, origin) // a per-session instance
	}
	if origin != nil {
		if ref, ok := c.Tag(origin).(*callRef); ok {
			return attribution{s: ref.s, related: ref.id, span: ref.span, sessions: 1}
		}
	}
	var (
		only  *session
		calls []*callRef
		n     int
	)
	for _, t := range c.Tags() {
		ref, ok := t.(*callRef)
		if !ok {
			continue
		}
		if ref.s != only {
			if only == nil {
				only, n = ref.s, 1
			} else {
				n = 2 // more than one: that is all we need to know
			}
		}
		calls = append(calls, ref)
	}
	switch {
	case n == 1 && len(calls) == 1:
		return attribution{s: only, related: calls[0].id, span: calls[0].span, sessions: 1}
	case n == 1:
		return attribution{s: only, sessions: 1}
	}
	return attribution{sessions: n}
}

// Request implements upstream.Events: a sampling, elicitation or roots
// request from an upstream goes to the client session whose call the
// upstream is serving, and the client's answer goes back upstream. Anything
// else, or a request the hub cannot attribute or may not forward, gets a
// JSON-RPC error.
func (h *Hub) Request(c *upstream.Conn, id []byte, method string, params []byte, origin []byte) {
	var sp *telemetry.Span // the server span of the upstream's request
	fail := func(code int64, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		h.logger.Info("upstream request refused", "upstream", c.Name(), "method", method, "reason", msg)
		sp.End(telemetry.Outcome{Code: code}) // before the answer: the upstream's work goes on at once
		_ = c.Respond(context.Background(), id, nil, wire.AppendErrorBody(nil, code, msg, nil))
	}
	up, ok := h.mgr.Get(c.Name())
	if !ok {
		fail(jsonrpc.CodeInternalError, "upstream %q was removed", c.Name())
		return
	}
	switch method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		fail(jsonrpc.CodeMethodNotFound, "mcp-hub does not forward %s requests from upstreams", method)
		return
	}
	a := attribute(c, origin)
	if h.tracer != nil {
		sp = h.upstreamRequestSpan(c, id, method, params, a)
	}
	if a.s == nil {
		h.unattributed(c, method, a.sessions)
		if method == "roots/list" && rootsAllowed(up) {
			h.answerRoots(c, up, id, "no single client session waits on it") // roots.go
			return
		}
		if a.sessions == 0 {
			fail(jsonrpc.CodeInvalidRequest, "mcp-hub forwards %s only while the upstream serves a client's request, and upstream %q serves none", method, c.Name())
		} else {
			fail(jsonrpc.CodeInvalidRequest, "%s", ambiguousText(up, method, parkedAmong(c)))
		}
		return
	}
	if a.s.toParked(a.related, parkedEvent{conn: c, reqID: id, method: method, params: params}) {
		return // the parked call's client is asked with its retry
	}
	if msg := a.s.mayAsk(up, method, params); msg != "" {
		if method == "roots/list" && rootsAllowed(up) {
			h.answerRoots(c, up, id, msg) // the client has no roots: roots.go
			return
		}
		fail(jsonrpc.CodeInvalidRequest, "%s", msg)
		return
	}
	if a.s.stateless != nil {
		// A stateless client cannot be sent a request: it gets an
		// input_required result (parked.go).
		if !a.s.park(up, c, id, method, params, a.related) {
			fail(jsonrpc.CodeInvalidRequest, "mcp-hub cannot tell which request of the stateless client this %s is for", method)
		}
		return
	}
	spec := up.Spec()
	timeout := spec.CallTimeout.Std()
	if timeout <= 0 {
		timeout = h.mgr.Options().CallTimeout
	}
	go func() {
		fr := h.fwd.add(c, id)
		defer h.fwd.remove(c, id)
		result, errObj, err := a.s.ask(fr, sp, method, params, a.related, timeout)
		switch {
		case errors.Is(err, errUpstreamCancelled):
			sp.End(telemetry.Outcome{Error: outcomeCancelled})
			return // the upstream withdrew it: no answer is due
		case err != nil:
			fail(jsonrpc.CodeInternalError, "%v", err)
		default:
			sp.End(telemetry.Outcome{Code: rpcErrorCode(errObj)})
			_ = c.Respond(context.Background(), id, result, errObj)
		}
	}()
}

// ambiguousText is the refusal of an upstream's request that more than one
// client session may be waiting on, shared upstream up being busy for
// several: what the hub does, and what the person can do. parked says
// that one of the calls is parked (parked.go).
//
// A parked call counts as waiting: its client was answered input_required
// and may come back with the answer until the call's timeout, and the
// upstream may send it another request meanwhile (one per round, or
// several at once). Counting it out would send such a request to the
// other session: a guess, which this rule exists never to make.
func ambiguousText(up *upstream.Upstream, method string, parked bool) string {
	msg := fmt.Sprintf("mcp-hub cannot tell which client session this %s is for: more than one client session is waiting on upstream %q, which they share, "+
		"and the hub forwards such requests only while one session is", method, up.Name())
	if parked {
		msg += " (one of them is a client's call answered with input_required: it waits for the client to come back with the answer, " +
			"until its call timeout passes)"
	}
	if up.Scope() == upstream.ScopeAuto {
		return msg + "; new client sessions get an instance of their own (scope auto), while the sessions open now keep sharing this one: " +
			"reconnect the client, or set the server's scope to session so that every session gets its own"
	}
	return msg + "; to let it ask, set the server's scope to session (each client session then gets an instance of its own), or auto"
}

// parkedAmong reports whether one of the calls in flight on c is parked:
// a stateless client's call the hub answered with input_required, whose
// retry has not come.
func parkedAmong(c *upstream.Conn) bool {
	for _, t := range c.Tags() {
		if ref, ok := t.(*callRef); ok && ref.s.stateless != nil && ref.s.isParked(idKey(ref.id)) {
			return true
		}
	}
	return false
}

// cannot says why the session may not be sent this request, or "".
func (s *session) cannot(method string, params []byte) string {
	caps := s.clientCaps()
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	switch method {
	case "sampling/createMessage":
		//lint:ignore SA1019 sampling is deprecated in 2026-07-28; the protocol versions the hub serves have it
		if caps.Sampling == nil {
			return "the client did not declare the sampling capability"
		}
	case "elicitation/create":
		if caps.Elicitation == nil {
			return "the client did not declare the elicitation capability"
		}
		if f := secretField(params); f != "" {
			return fmt.Sprintf("mcp-hub refuses elicitations that ask for a secret (field %q): MCP servers must not collect passwords or tokens through forms", f)
		}
	case "roots/list":
		//lint:ignore SA1019 roots are deprecated in 2026-07-28; the protocol versions the hub serves have them
		if caps.RootsV2 == nil {
			return "the client did not declare the roots capability"
		}
	}
	return ""
}

var secretName = regexp.MustCompile(`(?i)password|passphrase|passwd|(^|[_-])pass$|^pin$|secret|token|api[_-]?key|credential|private[_-]?key`)

// secretField returns the name of a requested form field that asks for a
// secret (by name, or by format "password"), or "".
func secretField(params []byte) string {
	schema, err := wire.Get(params, "requestedSchema")
	if err != nil || schema == nil {
		return ""
	}
	props, err := wire.Get(schema, "properties")
	if err != nil || props == nil || props[0] != '{' {
		return ""
	}
	found := ""
	_ = wire.Members(props, func(k, v []byte) error {
		name, err := wire.String(append(append([]byte{'"'}, k...), '"'))
		if err != nil {
			name = string(k)
		}
		format, _ := wire.Get(v, "format")
		if secretName.MatchString(name) || string(format) == `"password"` {
			found = name
			return errStop
		}
		return nil
	})
	return found
}

var errStop = errors.New("stop")

// errUpstreamCancelled ends a forwarded request the upstream cancelled.
var errUpstreamCancelled = errors.New("cancelled by the upstream")

// fwdRequest is a server→client request the hub forwarded to a session.
type fwdRequest struct {
	cancelled chan struct{} // closed when the upstream cancels it
	once      sync.Once
}

type fwdKey struct {
	c  *upstream.Conn
	id string // canonical upstream request id
}

// forwards tracks the server→client requests in flight, so that an
// upstream's notifications/cancelled reaches the client.
type forwards struct {
	mu sync.Mutex
	m  map[fwdKey]*fwdRequest
}

func (f *forwards) add(c *upstream.Conn, id []byte) *fwdRequest {
	fr := &fwdRequest{cancelled: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[fwdKey]*fwdRequest{}
	}
	f.m[fwdKey{c, canonicalID(id)}] = fr
	return fr
}

func (f *forwards) remove(c *upstream.Conn, id []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, fwdKey{c, canonicalID(id)})
}

// cancel marks the request the upstream cancelled.
func (f *forwards) cancel(c *upstream.Conn, id []byte) {
	f.mu.Lock()
	fr := f.m[fwdKey{c, canonicalID(id)}]
	f.mu.Unlock()
	if fr != nil {
		fr.once.Do(func() { close(fr.cancelled) })
	}
}

// outReply is a client's answer to a request the hub sent it.
type outReply struct {
	result, err []byte
}

// ask sends a request to the client and waits for its answer, the
// upstream's cancellation, the session's end or the timeout. related is the
// client request it belongs to (nil: none known).
//
// parent is the span the request is asked for (nil: not traced): the
// request carries the context of a client span under it.
func (s *session) ask(fr *fwdRequest, parent *telemetry.Span, method string, params, related []byte, timeout time.Duration) (result, errObj []byte, err error) {
	id := []byte(`"hub-` + strconv.FormatUint(s.h.askSeq.Add(1), 10) + `"`)
	if s.stateless != nil {
		// Its answer comes in a POST of its own, with no session to
		// find it by: the id is unguessable and indexes the hub's table.
		id = []byte(`"hub-` + rand.Text() + `"`)
	}
	ch := make(chan outReply, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil, errors.New("the client session closed")
	}
	s.asks[string(id)] = ch
	s.mu.Unlock()
	if s.stateless != nil {
		s.h.statelessAsks.Store(string(id), s)
		defer s.h.statelessAsks.Delete(string(id))
	}
	defer func() {
		s.mu.Lock()
		delete(s.asks, string(id))
		s.mu.Unlock()
	}()
	sp, params := s.askSpan(parent, id, method, params)
	defer func() {
		if sp != nil {
			sp.End(telemetry.Outcome{Code: rpcErrorCode(errObj), Error: errorType(err)})
		}
	}()
	if err := s.out.send(outMsg{data: wire.AppendRequest(nil, id, method, params), related: related}); err != nil {
		return nil, nil, fmt.Errorf("send %s to the client: %w", method, err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	cancelClient := func(reason string) {
		p := append([]byte(`{"requestId":`), id...)
		p = append(p, `,"reason":`...)
		p = wire.AppendString(p, reason)
		p = append(p, '}')
		s.notify("notifications/cancelled", p, related)
	}
	var fc <-chan struct{}
	if fr != nil {
		fc = fr.cancelled
	}
	select {
	case r := <-ch:
		return r.result, r.err, nil
	case <-fc:
		cancelClient("the MCP server withdrew the request")
		return nil, nil, errUpstreamCancelled
	case <-t.C:
		cancelClient("no answer in time")
		return nil, nil, fmt.Errorf("the client did not answer %s within %s", method, timeout)
	case <-s.done:
		return nil, nil, errors.New("the client session closed before answering")
	}
}

// answer delivers a client's response to a request the hub sent it. It
// reports false for responses to someone else's requests (go-sdk's).
func (s *session) answer(m wire.Message) bool {
	if len(m.ID) == 0 || m.ID[0] != '"' {
		return false
	}
	s.mu.Lock()
	ch := s.asks[string(m.ID)]
	s.mu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case ch <- outReply{result: m.Result, err: m.Error}:
	default:
	}
	return true
}

// cancelAsk handles a client's notifications/cancelled for a request the
// hub sent it: the request fails.
func (s *session) cancelAsk(params []byte) bool {
	v, err := wire.Get(params, "requestId")
	if err != nil || v == nil {
		return false
	}
	s.mu.Lock()
	ch := s.asks[string(v)]
	s.mu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case ch <- outReply{err: wire.AppendErrorBody(nil, jsonrpc.CodeInternalError, "the client cancelled the request", nil)}:
	default:
	}
	return true
}

// logLevels ranks the levels of notifications/message, least severe first
// (era.LogLevels).
var logLevels = func() map[string]int32 {
	m := make(map[string]int32, len(era.LogLevels))
	for i, l := range era.LogLevels {
		m[l] = int32(i)
	}
	return m
}()

// levelNames is logLevels inverted.
var levelNames = era.LogLevels

// noLevel is a session's level before it sets one: it gets no upstream log
// messages.
const noLevel = -1

// setLogLevel records a session's logging/setLevel and makes the upstreams
// log at the most verbose level any session wants.
func (s *session) setLogLevel(params []byte) {
	v, err := wire.Get(params, "level")
	if err != nil || v == nil {
		return
	}
	name, err := wire.String(v)
	if err != nil {
		return
	}
	l, ok := logLevels[name]
	if !ok {
		return // go-sdk answers with the error
	}
	s.logLevel.Store(l)
	s.h.applyLogLevel()
}

// upstreamLogs tracks the level the hub asked its upstreams to log at.
type upstreamLogs struct {
	mu    sync.Mutex
	level int32                     // noLevel until a session sets one
	conns map[string]*upstream.Conn // the connection each upstream's level was set on
}

// applyLogLevel sets the most verbose level of any session on every
// connected upstream that logs, where it is not set yet.
func (h *Hub) applyLogLevel() {
	defer h.applyInstanceLogLevels()
	want := int32(noLevel)
	h.mu.Lock()
	for s := range h.sessions {
		if l := s.logLevel.Load(); l != noLevel && (want == noLevel || l < want) {
			want = l
		}
	}
	h.mu.Unlock()
	h.logs.mu.Lock()
	if want != h.logs.level {
		h.logs.level = want
		h.logs.conns = map[string]*upstream.Conn{} // every upstream again
	}
	if want == noLevel {
		h.logs.mu.Unlock()
		return
	}
	var todo []*upstream.Conn
	for _, u := range h.mgr.List() {
		c := u.Conn()
		if c == nil || h.logs.conns[u.Name()] == c {
			continue
		}
		//lint:ignore SA1019 logging is deprecated in 2026-07-28; the protocol versions the hub speaks have it
		if caps := u.ServerCapabilities(); caps == nil || caps.Logging == nil {
			continue
		}
		h.logs.conns[u.Name()] = c
		todo = append(todo, c)
	}
	h.logs.mu.Unlock()
	params := []byte(`{"level":"` + levelNames[want] + `"}`)
	for _, c := range todo {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if r, err := c.Call(ctx, "logging/setLevel", params); err != nil || r.Error != nil {
				h.logger.Debug("set upstream log level", "upstream", c.Name(), "err", err, "rpc_error", string(r.Error))
			}
		}()
	}
}

// upstreamLog routes an upstream's notifications/message: to the session
// whose call produced it, to every session when no call was in flight, to
// nobody when several sessions were waiting on the upstream; each session
// only at or above the level it set.
func (h *Hub) upstreamLog(c *upstream.Conn, params, origin []byte) {
	level := int32(0)
	if v, err := wire.Get(params, "level"); err == nil && v != nil {
		if name, err := wire.String(v); err == nil {
			if l, ok := logLevels[name]; ok {
				level = l
			}
		}
	}
	deliver := func(s *session, related []byte) {
		if l := s.logLevel.Load(); l != noLevel && level >= l {
			s.notify("notifications/message", params, related)
		}
	}
	a := attribute(c, origin)
	switch {
	case a.s != nil:
		deliver(a.s, a.related)
	case a.sessions == 0:
		h.mu.Lock()
		sessions := make([]*session, 0, len(h.sessions))
		for s := range h.sessions {
			sessions = append(sessions, s)
		}
		h.mu.Unlock()
		for _, s := range sessions {
			deliver(s, nil)
		}
	default:
		h.logger.Debug("upstream log message not forwarded: several sessions are waiting on the upstream",
			"upstream", c.Name(), "sessions", a.sessions)
	}
}
