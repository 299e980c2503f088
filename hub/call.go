package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// callTool forwards a tools/call to the upstream that owns the tool. It
// reports false when the tool is the hub's own (go-sdk handles those).
//
// This is the hot path: the params are scanned, not decoded; the arguments
// travel byte for byte; the reply's result is spliced under the client's id.
func (s *session) callTool(line []byte, m wire.Message) bool {
	p, err := parseCallParams(m.Params)
	if err != nil {
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, err.Error(), nil)
		return true
	}
	if p.name == codeToolName && s.codeOn() {
		s.traceTarget(m.ID, m.Method, p.name, "", true)
		s.runCode(m)
		return true
	}
	e, ok := s.h.Catalog().Tool(p.name)
	if !ok && s.h.settled() {
		// The catalog looked at above may be the one before the rebuild
		// that settled the hub: look again.
		e, ok = s.h.Catalog().Tool(p.name)
	} else if !ok {
		// Upstreams are still on their first connect attempt: the tool may
		// be theirs. Wait (bounded) instead of failing a client that calls a
		// tool it knows from an earlier session.
		go func() {
			s.h.waitSettled(s.ctx)
			e, ok := s.h.Catalog().Tool(p.name)
			s.traceTarget(m.ID, m.Method, p.name, "", ok)
			switch {
			case !ok:
				s.unknownTool(m, p.name)
			case e.Server == "":
				if !s.ownRawTool(m, p.name) {
					s.toSDKMsg(line, m)
				}
			default:
				s.startCall(m, p, e)
			}
		}()
		return true
	}
	s.traceTarget(m.ID, m.Method, p.name, "", ok)
	if !ok {
		s.h.metrics.call("", "", outcomeUnknownTool, 0) // never a client-chosen label value
		s.unknownTool(m, p.name)
		return true
	}
	if e.Server == "" {
		return s.ownRawTool(m, p.name)
	}
	s.startCall(m, p, e)
	return true
}

// unknownTool answers a call of a tool the catalog lacks: a tool error
// naming `mcp-hub approve` for a quarantined one, else unknown tool.
func (s *session) unknownTool(m wire.Message, name string) {
	if msg, ok := s.h.heldMessage(s, upstream.PinTool, name); ok {
		s.reply(m.ID, toolResultError(msg))
		return
	}
	s.replyError(m.ID, jsonrpc.CodeInvalidParams, s.h.unknownToolText(name), nil)
}

// startCall forwards a tools/call for a catalog entry of an upstream.
func (s *session) startCall(m wire.Message, p callParams, e catalog.Entry) {
	up, ok := s.h.mgr.Get(e.Server)
	if !ok {
		s.reply(m.ID, toolResultError(fmt.Sprintf("upstream %q of tool %q was removed", e.Server, p.name)))
		return
	}
	s.usedTool(e.Name)
	var set []wire.Member
	if e.Original != p.name {
		set = append(set, wire.Member{Key: "name", Value: wire.AppendString(nil, e.Original)})
	}
	s.policyThen(m, e.Server, e.Original, func() []byte { return argsOf(m.Params) }, func() {
		s.forward(m, up, "tools/call", p.name, p.meta, set)
	})
}

// argsOf returns the arguments member of params, or {}.
func argsOf(params []byte) []byte {
	if a, err := wire.Get(params, "arguments"); err == nil && a != nil {
		return a
	}
	return []byte(`{}`)
}

// forward sends a client request to an upstream and relays the outcome.
// meta is the request's raw _meta (nil when absent); set lists members of
// params to replace (a renamed tool or prompt). Every other member of params
// travels byte for byte.
func (s *session) forward(m wire.Message, up *upstream.Upstream, method, label string, meta []byte, set []wire.Member) {
	if s.stateless != nil {
		if state, p := s.h.parkedState(m.Params); p != nil {
			go s.resumeParked(m, state, p) // the retry of a parked call
			return
		}
		s.stateless.label = label
	}
	if up = s.route(m, up, method, label); up == nil {
		return // answered: no instance may serve the session
	}
	var (
		token []byte
		err   error
	)
	params := m.Params
	if meta != nil {
		var newMeta []byte
		if newMeta, token, err = s.rewriteMeta(meta, m.ID, up.Name()); err != nil {
			s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params._meta: "+err.Error(), nil)
			return
		}
		if !bytes.Equal(newMeta, meta) {
			set = append(set, wire.Member{Key: "_meta", Value: newMeta})
		}
	}
	if set != nil {
		if params, err = wire.EditObject(m.Params, set); err != nil {
			s.h.progress.release(token)
			s.replyError(m.ID, jsonrpc.CodeInvalidParams, err.Error(), nil)
			return
		}
	}
	key := idKey(m.ID) // accept registered the request under it
	id := m.ID
	start := time.Now()
	// Fast path: the upstream's reader goroutine delivers the reply
	// straight to this session; no goroutine per call.
	tag := &callRef{s: s, id: s.relatedID(id)}
	tag.inner = !bytes.Equal(tag.id, id)
	if s.h.tracer != nil {
		// A code-mode script's inner request is traced under the
		// script's request (tag.id).
		if tag.span, params, err = s.clientSpan(tag.id, up, method, label, params); err != nil {
			s.h.progress.release(token)
			s.replyError(m.ID, jsonrpc.CodeInvalidParams, err.Error(), nil)
			return
		}
	}
	done := func(r upstream.Reply, err error) {
		if err == nil && r.Error == nil && inputRequired(r.Result) {
			// A 2026-07-28 upstream asks for client input: answer it
			// and call again (off the reader goroutine).
			go s.fulfil(key, id, up, method, label, token, params, r.Result, start, tag)
			return
		}
		s.finish(key, id, up, method, label, token, r, err, start, tag.span)
	}
	if cancel, ok := up.TryStartTag(method, params, tag, done); ok {
		s.setCancel(key, cancel)
		return
	}
	base := s.ctx
	if s.stateless != nil {
		// A stateless session ends with its POST; a call parked for the
		// client's answer (parked.go) outlives it.
		base = context.WithoutCancel(s.ctx)
	}
	ctx, cancel := context.WithCancel(telemetry.ContextWith(upstream.WithTag(base, tag), tag.span))
	if s.stateless != nil {
		context.AfterFunc(s.ctx, func() {
			if !s.isParked(key) {
				cancel()
			}
		})
	}
	s.setCancel(key, cancel)
	go func() {
		defer cancel()
		r, err := up.Call(ctx, method, params)
		if s.loginForCall(ctx, up, id, err) {
			r, err = up.Call(ctx, method, params)
		}
		done(r, err)
	}()
}

// finish relays the outcome of a forwarded request to the client.
func (s *session) finish(key, id []byte, up *upstream.Upstream, method, tool string, token []byte, r upstream.Reply, err error, start time.Time, span *telemetry.Span) {
	s.h.progress.release(token)
	if s.toParked(id, parkedEvent{r: r, err: err}) {
		// The client's retry answers with it (parked.go); the upstream's
		// request is over.
		if span != nil {
			span.End(spanOutcome(outcomeOf(false, r, err), r))
		}
		return
	}
	cancelled := s.cancelledByClient(key)
	label := tool
	if method != "tools/call" {
		label = method // prompt names and uris are not tool labels
	}
	outcome := outcomeOf(cancelled, r, err)
	s.h.metrics.call(up.Name(), label, outcome, time.Since(start))
	if span != nil {
		span.End(spanOutcome(outcome, r))
	}
	switch {
	case cancelled:
		// The client cancelled: it expects no response.
		s.endCancelled(key)
		s.settled()
	case err != nil:
		var (
			nr *upstream.NotReadyError
			wh *upstream.WithheldError
		)
		msg, code := "", int64(jsonrpc.CodeInternalError)
		switch {
		case errors.As(err, &wh):
			// Quarantined in the session's instance: answered as the
			// shared listing's quarantine is.
			msg, code = wh.Message, jsonrpc.CodeInvalidParams
		case errors.As(err, &nr):
			msg = nr.Error()
			if hs := up.Hints(); len(hs) > 0 {
				msg = redact.Text(msg + "; hint: " + strings.Join(hs, "; ") + " (see mcp-hub doctor)")
			}
		case errors.Is(err, upstream.ErrTimeout):
			msg = fmt.Sprintf("upstream %q did not answer %s %q: %v", up.Name(), method, tool, err)
		default:
			msg = fmt.Sprintf("upstream %q failed on %s %q: %v", up.Name(), method, tool, err)
		}
		if method == "tools/call" {
			s.reply(id, toolResultError(msg))
		} else {
			s.replyError(id, code, msg, nil)
		}
	case r.Error != nil:
		s.replyErrorObject(id, r.Error)
	case method == "tools/call":
		s.reply(id, limitOutput(s.fromUpstream(up, r.Result), s.h.opts.MaxToolOutputLength))
	default:
		s.reply(id, s.fromUpstream(up, r.Result))
	}
}

// outcomeOf classifies a call for the metrics.
func outcomeOf(cancelled bool, r upstream.Reply, err error) string {
	var (
		nr *upstream.NotReadyError
		wh *upstream.WithheldError
	)
	switch {
	case cancelled:
		return outcomeCancelled
	case errors.As(err, &wh):
		return outcomeUnknownTool // as a quarantined tool of the catalog
	case errors.As(err, &nr):
		return outcomeUnavailable
	case errors.Is(err, upstream.ErrTimeout):
		return outcomeTimeout
	case err != nil:
		return outcomeFailed
	case r.Error != nil:
		return outcomeRPCError
	case bytes.Contains(r.Result, []byte(`"isError":true`)):
		return outcomeToolError
	}
	return outcomeOK
}

// callParams are the members of tools/call params the hub reads.
type callParams struct {
	name string
	meta []byte // raw _meta object, nil when absent
}

// parseCallParams reads name and _meta. A duplicate "name", or a member
// whose name differs from "name" only in case, is rejected: the hub routes
// by name and must read the same name the upstream will.
func parseCallParams(params []byte) (callParams, error) {
	var p callParams
	if params == nil {
		return p, errors.New("params are required")
	}
	seenName := false
	err := wire.Members(params, func(k, v []byte) error {
		switch {
		case string(k) == "name":
			if seenName {
				return errors.New(`params: duplicate member "name"`)
			}
			seenName = true
			name, err := wire.String(v)
			if err != nil {
				return errors.New("params.name must be a string")
			}
			p.name = name
		case strings.EqualFold(string(k), "name"):
			return fmt.Errorf("params: member %q is not allowed (it differs from \"name\" only in case)", k)
		case string(k) == "_meta":
			if p.meta != nil {
				return errors.New(`params: duplicate member "_meta"`)
			}
			if v[0] != '{' {
				return errors.New("params._meta must be an object")
			}
			p.meta = v
		case string(k) == "arguments":
			if v[0] != '{' && string(v) != "null" {
				return errors.New("params.arguments must be an object")
			}
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	if !seenName || p.name == "" {
		return p, errors.New("params.name is required")
	}
	return p, nil
}

// rewriteMeta returns _meta for upstream up: reserved per-hop keys dropped,
// and a progress token replaced by a hub token (tokens of different clients
// would collide on a shared upstream). It returns the hub token, or nil.
func (s *session) rewriteMeta(meta, reqID []byte, up string) ([]byte, []byte, error) {
	var drop []string
	var orig []byte
	err := wire.Members(meta, func(k, v []byte) error {
		if era.Reserved(k) {
			drop = append(drop, string(k))
		}
		if string(k) == "progressToken" {
			orig = v
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var set []wire.Member
	var token []byte
	if orig != nil {
		if orig[0] != '"' && orig[0] != '-' && (orig[0] < '0' || orig[0] > '9') {
			return nil, nil, errors.New("progressToken must be a string or a number")
		}
		token = s.h.progress.register(s, up, orig, reqID)
		set = append(set, wire.Member{Key: "progressToken", Value: token})
	}
	if len(drop) == 0 && set == nil {
		return meta, nil, nil
	}
	out, err := wire.EditObject(meta, set, drop...)
	return out, token, err
}

// progressTable maps the hub's progress tokens to the session and token of
// the client that asked for progress.
type progressTable struct {
	mu     sync.Mutex // guards following
	next   uint64
	tokens map[string]progressRoute
}

type progressRoute struct {
	s    *session
	up   string // the upstream the request went to: only it may report progress
	orig []byte // the client's token
	req  []byte // raw id of the client's request
}

func (t *progressTable) register(s *session, up string, orig, req []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	tok := []byte(`"p` + strconv.FormatUint(t.next, 10) + `"`)
	if t.tokens == nil {
		t.tokens = map[string]progressRoute{}
	}
	t.tokens[string(tok)] = progressRoute{s: s, up: up, orig: bytes.Clone(orig), req: bytes.Clone(req)}
	return tok
}

func (t *progressTable) release(tok []byte) {
	if tok == nil {
		return
	}
	t.mu.Lock()
	delete(t.tokens, string(tok))
	t.mu.Unlock()
}

func (t *progressTable) lookup(tok []byte) (progressRoute, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.tokens[string(tok)]
	return r, ok
}

func (t *progressTable) dropSession(s *session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, r := range t.tokens {
		if r.s == s {
			delete(t.tokens, k)
		}
	}
}

// Notification implements upstream.Events: it routes what upstreams send on
// their own initiative to the right sessions.
func (h *Hub) Notification(c *upstream.Conn, method string, params []byte, origin []byte) {
	switch method {
	case "notifications/resources/updated":
		if !h.ownResourceUpdated(c, params) {
			h.resourceUpdated(c.Name(), params)
		}
	case "notifications/message":
		h.upstreamLog(c, params, origin)
	case "notifications/cancelled":
		// The upstream withdrew a request it sent (and the hub forwarded).
		if v, err := wire.Get(params, "requestId"); err == nil && v != nil {
			h.fwd.cancel(c, v)
		}
	case "notifications/progress":
		tok, err := wire.Get(params, "progressToken")
		if err != nil || tok == nil {
			return
		}
		r, ok := h.progress.lookup(tok)
		if !ok || r.up != c.Name() {
			return // a call that already ended, or not ours, or another upstream's
		}
		out, err := wire.EditObject(params, []wire.Member{{Key: "progressToken", Value: r.orig}})
		if err == nil {
			r.s.notify("notifications/progress", r.s.withSpanMeta(r.req, out), r.req)
		}
	}
}
