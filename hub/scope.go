package hub

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Per-session upstreams. An upstream's scope says which client sessions
// one instance of it serves:
//
//   - shared (the default of stored and config-file registrations): one
//     instance serves every session, and what it sends on its own initiative
//     is attributed as route.go says;
//   - session: each session gets an instance of its own (upstream
//     package: Manager.StartInstance), started on the session's first
//     request to it (or when the session is initialized, with start:
//     eager) and stopped when the session ends; everything that instance
//     sends is its session's, so it is always attributable;
//   - auto: shared, until the shared instance sends a request the hub
//     cannot attribute because several sessions are waiting on it;
//     sessions that start after that get instances of their own (logged
//     once). Sessions that started before keep the shared one: nothing in
//     flight moves. A request made while no session waits (at start, on a
//     timer) is refused as for any shared upstream and switches nothing:
//     sharing did not cause it, and many servers ask for roots once at
//     start.
//
// The catalog comes from the registered upstream's listing either way.

// sessionInstances is a session's instances of per-session upstreams.
type sessionInstances struct {
	seq   uint64                        // the session's place in the order sessions started
	insts map[string]*upstream.Upstream // by upstream name; guarded by session.mu
}

// autoSwitch records the upstreams of scope auto that switched to
// per-session instances.
type autoSwitch struct {
	seq      sync.Mutex // orders a switch against sessions starting
	next     uint64     // the seq of the next session; guarded by seq
	switched sync.Map   // upstream name → the last session seq before its switch
}

// nextSession numbers a new session.
func (a *autoSwitch) nextSession() uint64 {
	a.seq.Lock()
	defer a.seq.Unlock()
	a.next++
	return a.next
}

// switchNow switches name and reports whether it was not switched yet.
func (a *autoSwitch) switchNow(name string) bool {
	a.seq.Lock()
	defer a.seq.Unlock()
	_, loaded := a.switched.LoadOrStore(name, a.next)
	return !loaded
}

// switchedFor reports whether the session numbered seq gets instances of
// the auto-scoped upstream name.
func (a *autoSwitch) switchedFor(name string, seq uint64) bool {
	v, ok := a.switched.Load(name)
	return ok && seq > v.(uint64)
}

// label names the session in logs, status and admin answers: a prefix of
// its id (enough to tell sessions apart, not enough to use one), or
// "stdio-N" for a stdio session.
func (s *session) label() string {
	if s.stateless != nil {
		return "stateless-" + strconv.FormatUint(s.scoped.seq, 10)
	}
	if s.id == "" {
		return "stdio-" + strconv.FormatUint(s.scoped.seq, 10)
	}
	return shortID(s.id)
}

// upstreamFor returns what serves this session's requests to the registered
// upstream up: up itself when it is shared, else the session's instance of
// it, started now when the session has none. It fails when no instance may
// start (the caps, an upstream an admin disconnected) or the session ended.
func (s *session) upstreamFor(up *upstream.Upstream) (*upstream.Upstream, error) {
	scope := up.Scope()
	if scope == upstream.ScopeShared {
		return up, nil
	}
	if s.stateless != nil {
		// A stateless client has no session to give an instance of its
		// own: the shared instance serves it, and a server that keeps
		// per-session state serves only session-era clients.
		if scope == upstream.ScopeSession {
			return nil, fmt.Errorf("upstream %q runs one instance per client session (scope: session), and this client is a stateless 2026-07-28 client with no session; "+
				"connect with a session-era protocol version (2025-11-25) to use it", up.Name())
		}
		return up, nil
	}
	name := up.Name()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.scoped.insts[name]; i != nil {
		if i.Parent() == up && !i.Stopping() {
			return i, nil
		}
		// Stopped by an admin, or an instance of an upstream since
		// replaced: a new one serves the session from now on.
		s.h.mgr.StopInstance(i)
		delete(s.scoped.insts, name)
	}
	if scope == upstream.ScopeAuto && !s.h.auto.switchedFor(name, s.scoped.seq) {
		return up, nil
	}
	if s.closed {
		return nil, fmt.Errorf("upstream %q: the client session ended", name)
	}
	i, err := s.h.mgr.StartInstance(name, s, s.label())
	if err != nil {
		s.logger.Warn("per-session instance not started", "upstream", name, "err", err)
		return nil, err
	}
	if s.scoped.insts == nil {
		s.scoped.insts = map[string]*upstream.Upstream{}
	}
	s.scoped.insts[name] = i
	s.logger.Info("per-session instance started", "upstream", name)
	return i, nil
}

// route returns the upstream that serves this session's request m to up
// (see upstreamFor), or answers m with the reason there is none (a tool
// error for tools/call) and returns nil.
func (s *session) route(m wire.Message, up *upstream.Upstream, method, label string) *upstream.Upstream {
	u, err := s.upstreamFor(up)
	if err == nil {
		return u
	}
	if method != "tools/call" {
		label = method // as finish labels them
	}
	s.h.metrics.call(up.Name(), label, outcomeUnavailable, 0)
	if method == "tools/call" {
		s.reply(m.ID, toolResultError(err.Error()))
	} else {
		s.replyError(m.ID, jsonrpc.CodeInternalError, err.Error(), nil)
	}
	return nil
}

// scopeNote is what an admin answer adds about an upstream that runs
// per-session instances: its own state only says it listed.
func (h *Hub) scopeNote(name string) string {
	if u, ok := h.mgr.Get(name); ok && u.Scope() == upstream.ScopeSession {
		return "; it runs one instance per client session, started on the session's first use (its own process only lists its tools)"
	}
	return ""
}

// instanceOf returns the session's live instance of the upstream name, or
// nil.
func (s *session) instanceOf(name string) *upstream.Upstream {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.scoped.insts[name]; i != nil && !i.Stopping() {
		return i
	}
	return nil
}

// instances returns the session's instances.
func (s *session) instances() []*upstream.Upstream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.scoped.insts))
}

// dropInstances stops the instances of a session that ended. Their
// shutdown (kill and reap, for stdio) runs in the background; the
// manager's Close waits for it.
func (h *Hub) dropInstances(s *session) {
	s.mu.Lock()
	insts := s.scoped.insts
	s.scoped.insts = nil
	s.mu.Unlock()
	for _, i := range insts {
		h.mgr.StopInstance(i)
	}
	if len(insts) > 0 {
		s.logger.Info("per-session instances stopped", "count", len(insts))
	}
}

// clientNotified handles what a client's notifications mean for its
// instances: its roots changed (each instance is told, so it can list them
// again), or it is initialized (instances of upstreams with start: eager
// start now).
func (s *session) clientNotified(method string) {
	switch method {
	case "notifications/roots/list_changed":
		for _, i := range s.instances() {
			c := i.Conn()
			if c == nil {
				continue // it asks for the roots when it needs them
			}
			go func() {
				ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
				defer cancel()
				if err := c.Notify(ctx, method, nil); err != nil {
					s.logger.Debug("forward roots/list_changed", "upstream", c.Name(), "err", err)
				}
			}()
		}
	case "notifications/initialized":
		for _, up := range s.h.mgr.List() {
			if up.Scope() != upstream.ScopeShared && up.Spec().Start == upstream.StartEagerSessions {
				_, _ = s.upstreamFor(up) // a failure is logged; the first call says it again
			}
		}
	}
}

// ownedAttribution attributes what an instance's connection c sends: to
// the instance's session, always, and to the one request of it in flight
// when there is one (or the request whose stream carried it).
func ownedAttribution(c *upstream.Conn, s *session, origin []byte) attribution {
	a := attribution{s: s, sessions: 1}
	if origin != nil {
		if ref, ok := c.Tag(origin).(*callRef); ok {
			a.related, a.span = ref.id, ref.span
			return a
		}
	}
	var only *callRef
	for _, t := range c.Tags() {
		if ref, ok := t.(*callRef); ok {
			if only != nil {
				return a // several: the session, not the request
			}
			only = ref
		}
	}
	if only != nil {
		a.related, a.span = only.id, only.span
	}
	return a
}

// unattributed is told of each request the upstream behind c sent that the
// hub could not attribute, and of how many sessions were waiting on it.
// When several were, an upstream of scope auto switches: client sessions
// that start from now on get instances of their own. It is logged once per
// upstream.
func (h *Hub) unattributed(c *upstream.Conn, method string, sessions int) {
	if c.Owner() != nil || sessions < 2 {
		return
	}
	up, ok := h.mgr.Get(c.Name())
	if !ok || up.Scope() != upstream.ScopeAuto || !h.auto.switchNow(c.Name()) {
		return
	}
	h.logger.Warn("upstream made a request while several client sessions waited on it, which the hub cannot attribute; client sessions that start from now on get an instance of their own (scope auto)",
		"upstream", c.Name(), "method", method, "sessions_waiting", sessions)
	h.upstreamChanged(c.Name())
}

// subscribeOwn handles resources/subscribe for an upstream that serves the
// session through its own instance: the subscription is made on that
// instance, and what it reports reaches this session alone. It reports
// false for a shared upstream, whose subscriptions are shared.
func (s *session) subscribeOwn(m wire.Message, up *upstream.Upstream, uri string) bool {
	target, err := s.upstreamFor(up)
	if err != nil {
		s.replyError(m.ID, jsonrpc.CodeInternalError, err.Error(), nil)
		return true
	}
	if target == up {
		return false
	}
	s.h.subs.add(subKey{up.Name(), uri}, s)
	go func() {
		r, err := target.Call(s.ctx, "resources/subscribe", uriParams(uri))
		switch {
		case err != nil:
			s.h.subs.remove(s, uri)
			s.replyError(m.ID, jsonrpc.CodeInternalError, fmt.Sprintf("upstream %q: subscribe %q: %v", up.Name(), uri, err), nil)
		case r.Error != nil:
			s.h.subs.remove(s, uri)
			s.replyErrorObject(m.ID, r.Error)
		default:
			s.reply(m.ID, []byte(`{}`))
		}
	}()
	return true
}

// ownResourceUpdated delivers an instance's notifications/resources/updated
// to its session, if the session subscribed to that resource. It reports
// false for a registered upstream's connection.
func (h *Hub) ownResourceUpdated(c *upstream.Conn, params []byte) bool {
	s, ok := c.Owner().(*session)
	if !ok {
		return false
	}
	v, err := wire.Get(params, "uri")
	if err != nil || v == nil {
		return true
	}
	uri, err := wire.String(v)
	if err != nil {
		return true
	}
	if slices.Contains(h.subs.sessions(subKey{c.Name(), uri}), s) {
		s.notify("notifications/resources/updated", params, nil)
	}
	return true
}

// instanceLogs tracks the log level the hub set on each instance's
// connection: its session's.
type instanceLogs struct {
	mu  sync.Mutex
	set map[*upstream.Conn]int32
}

// applyInstanceLogLevels sets, on every connected instance that logs, the
// level its session asked for, where it is not set yet.
func (h *Hub) applyInstanceLogLevels() {
	type job struct {
		c     *upstream.Conn
		level int32
	}
	var todo []job
	h.ilogs.mu.Lock()
	live := map[*upstream.Conn]int32{}
	for _, up := range h.mgr.List() {
		for _, i := range up.Instances() {
			c := i.Conn()
			s, ok := i.Owner().(*session)
			if c == nil || !ok {
				continue
			}
			l := s.logLevel.Load()
			//lint:ignore SA1019 logging is deprecated in 2026-07-28; the protocol versions the hub speaks have it
			if caps := i.ServerCapabilities(); l == noLevel || caps == nil || caps.Logging == nil {
				continue
			}
			live[c] = l
			if set, ok := h.ilogs.set[c]; !ok || set != l {
				todo = append(todo, job{c, l})
			}
		}
	}
	h.ilogs.set = live
	h.ilogs.mu.Unlock()
	for _, j := range todo {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			params := []byte(`{"level":"` + levelNames[j.level] + `"}`)
			if r, err := j.c.Call(ctx, "logging/setLevel", params); err != nil || r.Error != nil {
				h.logger.Debug("set instance log level", "upstream", j.c.Name(), "err", err, "rpc_error", string(r.Error))
			}
		}()
	}
}

// instanceView fills in what a server view says of an upstream's scope and
// per-session instances (u is nil when it does not run).
func (h *Hub) instanceView(v *serverView, spec upstream.Spec, u *upstream.Upstream) {
	if spec.Scope == upstream.ScopeShared {
		return
	}
	v.Scope = spec.Scope.String()
	_, switched := h.auto.switched.Load(spec.Name)
	v.PerSession = spec.Scope == upstream.ScopeSession || switched
	if u == nil {
		return
	}
	for _, i := range u.Instances() {
		st := i.Status()
		v.Instances = append(v.Instances, instanceInfo{Session: i.Label(), State: string(st.State), PID: st.PID})
	}
	slices.SortFunc(v.Instances, func(a, b instanceInfo) int { return strings.Compare(a.Session, b.Session) })
}

// instanceInfo is one per-session instance in a server view.
type instanceInfo struct {
	Session string `json:"session"` // the session's label
	State   string `json:"state"`
	PID     int    `json:"pid,omitempty"`
}

// scopeText says, for people and models, how an upstream serves sessions:
// "" for a shared one.
func scopeText(v serverView) string {
	if v.Scope == "" {
		return ""
	}
	var b strings.Builder
	switch {
	case v.Scope == string(upstream.ScopeSession):
		b.WriteString("one instance per client session")
	case v.PerSession:
		b.WriteString("scope auto, switched to one instance per client session for sessions started since")
	default:
		b.WriteString("scope auto, shared until it asks a client something while several sessions wait on it")
	}
	fmt.Fprintf(&b, ", %d running", len(v.Instances))
	for i, in := range v.Instances {
		if i == 0 {
			b.WriteString(" (sessions ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", in.Session, in.State)
		if i == len(v.Instances)-1 {
			b.WriteByte(')')
		}
	}
	return b.String()
}
