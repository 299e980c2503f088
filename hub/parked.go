package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// A session-era upstream asks for client input by sending a request of its
// own (sampling, elicitation, roots) while it serves a call. A stateless
// (2026-07-28) client cannot be sent one: it gets an input_required result
// and calls again with the answer. So the hub translates: it answers the
// client's call with an input_required result that carries the upstream's
// request and a request state naming this parked call; the upstream's call
// and request wait; the client's retry (on any request of its, with the
// state) answers the upstream's request, and the hub then answers the
// retry with the call's result, or with the next input_required when the
// upstream asks again. The state is unguessable and single-use, bound to
// the client's principal; a retry must reach the replica that parked the
// call (the one the upstream's connection is on).

// parkedPrefix starts the request states of parked calls.
const parkedPrefix = "mcp-hub/"

// inputKey is the inputRequests key of a parked call's request.
const parkedInputKey = "input"

// parkedCall is a stateless client's forwarded request waiting for its
// client's answer to what the upstream asked.
type parkedCall struct {
	sub    string // the principal that may continue it
	up     *upstream.Upstream
	method string // the client's request
	label  string
	start  time.Time

	mu      sync.Mutex // guards following
	conn    *upstream.Conn
	reqID   []byte // the upstream's request waiting for the answer
	asked   []byte // its input_required result, to ask again
	waiting bool   // a retry is waiting for the outcome
	events  chan parkedEvent
	expiry  *time.Timer
}

// parkedEvent is what happened to a parked call next: it finished, or
// the upstream asked again.
type parkedEvent struct {
	r      upstream.Reply
	err    error
	conn   *upstream.Conn // set for a request
	reqID  []byte
	method string
	params []byte
}

// park answers a stateless session's request related with an
// input_required result for the upstream's request, and parks the call.
// It reports false when the request cannot be parked (no request of the
// session's is waiting): the caller refuses the upstream's request.
func (s *session) park(up *upstream.Upstream, c *upstream.Conn, reqID []byte, method string, params, related []byte) bool {
	key := string(idKey(related))
	s.mu.Lock()
	cl := s.inflight[key]
	if cl == nil || s.parked[key] != nil {
		s.mu.Unlock()
		return false
	}
	p := &parkedCall{sub: s.stateless.sub, up: up, method: s.stateless.method, label: s.stateless.label, start: time.Now(),
		events: make(chan parkedEvent, 4)}
	if s.parked == nil {
		s.parked = map[string]*parkedCall{}
	}
	s.parked[key] = p
	s.mu.Unlock()
	s.reply(related, s.h.parkAsk(p, c, reqID, method, params))
	return true
}

// parkAsk records the upstream's request on p and returns the
// input_required result that asks the client for it under a new state.
func (h *Hub) parkAsk(p *parkedCall, c *upstream.Conn, reqID []byte, method string, params []byte) []byte {
	state := parkedPrefix + rand.Text()
	res := era.NewInputRequired([]era.InputRequest{{Key: parkedInputKey, Method: method, Params: params}}, state)
	timeout := p.up.Spec().CallTimeout.Std()
	if timeout <= 0 {
		timeout = h.mgr.Options().CallTimeout
	}
	p.mu.Lock()
	p.conn, p.reqID, p.asked = c, reqID, res
	if p.expiry != nil {
		p.expiry.Stop()
	}
	p.expiry = time.AfterFunc(timeout, func() { h.expireParked(state, p) })
	p.mu.Unlock()
	h.parked.Store(state, p)
	return res
}

// expireParked ends a parked call whose client did not come back: the
// upstream's request fails, and so does its call.
func (h *Hub) expireParked(state string, p *parkedCall) {
	if _, ok := h.parked.LoadAndDelete(state); !ok {
		return
	}
	p.mu.Lock()
	c, id := p.conn, p.reqID
	p.mu.Unlock()
	_ = c.Respond(context.Background(), id, nil, wire.AppendErrorBody(nil, jsonrpc.CodeInternalError,
		"the client did not answer in time", nil))
}

// isParked reports whether the session's request key is parked.
func (s *session) isParked(key []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parked[string(key)] != nil
}

// toParked delivers what happened to a parked call of the session, and
// reports whether the call was parked.
func (s *session) toParked(related []byte, ev parkedEvent) bool {
	if s.stateless == nil || related == nil {
		return false
	}
	key := string(idKey(related))
	s.mu.Lock()
	p := s.parked[key]
	if p != nil && ev.conn == nil {
		delete(s.parked, key) // the call is over
	}
	s.mu.Unlock()
	if p == nil {
		return false
	}
	if ev.conn == nil {
		p.mu.Lock()
		if p.expiry != nil {
			p.expiry.Stop()
		}
		p.mu.Unlock()
	}
	p.events <- ev
	return true
}

// parkedState returns the parked call a stateless request's params name
// in their requestState, or nil. The check costs one byte search for
// requests without one.
func (h *Hub) parkedState(params []byte) (string, *parkedCall) {
	if !bytes.Contains(params, []byte(parkedPrefix)) {
		return "", nil
	}
	_, state := era.InputResponses(params)
	if v, ok := h.parked.Load(state); ok {
		return state, v.(*parkedCall)
	}
	return "", nil
}

// resumeParked continues a parked call with the client's retry m: the
// client's answer goes to the upstream's request, and m is answered with
// the call's outcome, or asked again.
func (s *session) resumeParked(m wire.Message, state string, p *parkedCall) {
	if p.sub != s.stateless.sub || p.method != m.Method {
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, "requestState: not a request state of this client's call", nil)
		return
	}
	responses, _ := era.InputResponses(m.Params)
	answer, _ := wire.Get(responses, parkedInputKey)
	p.mu.Lock()
	if answer == nil || answer[0] != '{' {
		// No answer: asked again, under the same state.
		asked := p.asked
		p.mu.Unlock()
		s.reply(m.ID, asked)
		return
	}
	if p.waiting {
		p.mu.Unlock()
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, "requestState: this call is already being continued", nil)
		return
	}
	p.waiting = true
	c, id := p.conn, p.reqID
	p.mu.Unlock()
	s.h.parked.Delete(state)
	if err := c.Respond(s.ctx, id, answer, nil); err != nil {
		s.finish(idKey(m.ID), m.ID, p.up, p.method, p.label, nil, upstream.Reply{}, fmt.Errorf("answer the upstream's request: %w", err), p.start, nil)
		return
	}
	select {
	case ev := <-p.events:
		p.mu.Lock()
		p.waiting = false
		p.mu.Unlock()
		if ev.conn != nil {
			// The upstream asks again: this retry gets the next question.
			s.reply(m.ID, s.h.parkAsk(p, ev.conn, ev.reqID, ev.method, ev.params))
			return
		}
		s.finish(idKey(m.ID), m.ID, p.up, p.method, p.label, nil, ev.r, ev.err, p.start, nil)
	case <-s.done:
	}
}
