package hub

import (
	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The hub speaks both protocol eras on both sides; package era translates
// between them. This file wires it into the client side: a stateless
// (2026-07-28) client's answers are completed to its revision whatever era
// the upstream that produced them speaks.

// listTTLMs is how long a stateless client may consider a list the hub
// served from its catalog fresh. The hub hears of changes at once (list
// changed notifications, its own registry) and tells clients that listen
// for them; the TTL bounds staleness for clients that do not.
const listTTLMs = 60_000

// cacheHint says what the hub knows about how an answer to method may be
// cached. Lists come from the catalog: the same for every client, so
// public, unless a per-session upstream contributes (its instances may
// list differently for each session); while upstreams are still on their
// first connect the catalog is about to change, so its TTL is 0. Anything
// forwarded (resources/read) is the upstream's to say: when it does not,
// the hub knows nothing, so 0 and private.
func (h *Hub) cacheHint(method string) era.Cache {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
	default:
		return era.Cache{Scope: era.Private}
	}
	c := era.Cache{TTLMs: listTTLMs, Scope: era.Public}
	if !h.settled() {
		c.TTLMs = 0
	}
	for _, u := range h.mgr.List() {
		if u.Scope() == upstream.ScopeSession {
			c.Scope = era.Private
			break
		}
	}
	return c
}

// completeAnswer completes the answer to a stateless client's request for
// its revision (resultType, caching hints); errors and complete results
// pass as they are.
func (h *Hub) completeAnswer(method string, data []byte) []byte {
	m, err := wire.Parse(data)
	if err != nil || m.Result == nil {
		return data
	}
	res, err := era.Complete(method, m.Result, h.cacheHint(method))
	if err != nil || len(res) == len(m.Result) {
		return data // unchanged (Complete only ever adds)
	}
	return wire.AppendResult(make([]byte, 0, len(res)+len(m.ID)+40), m.ID, res)
}

// EraClient implements upstream.Requester: a stateless-era upstream sees
// the hub asking, with the capabilities of the client whose call it is
// (those the hub's policy lets that upstream ask for: the hub asks the
// client, or passes the request through) and the log level that client
// wants.
func (r *callRef) EraClient(c *upstream.Conn) *era.Client {
	cl := c.Client()
	up, ok := r.s.h.mgr.Get(c.Name())
	cl.Caps = r.s.eraCaps(up, ok)
	cl.LogLevel = r.s.wantedLogLevel()
	return &cl
}

// SessionEra implements upstream.SessionClient: a session-era client's
// calls to an upstream that speaks both eras go over a session-era
// connection, where the upstream may ask that client as it would asked
// directly (upstream/sessionera.go).
func (r *callRef) SessionEra() (logLevel string, ok bool) {
	if r.s.stateless != nil {
		return "", false
	}
	return r.s.wantedLogLevel(), true
}

// eraCaps returns what an upstream may ask the session's client for: what
// the client declared, less what the hub's policy keeps that upstream from
// asking.
func (s *session) eraCaps(up *upstream.Upstream, ok bool) era.Caps {
	caps := s.clientCaps()
	var c era.Caps
	if caps == nil {
		return c
	}
	allowed := func(p *bool) bool { return p == nil || *p }
	var spec upstream.Spec
	if ok {
		spec = up.Spec()
	}
	//lint:ignore SA1019 sampling is deprecated in 2026-07-28; the protocol versions the hub serves have it
	if sc := caps.Sampling; sc != nil && allowed(spec.AllowSampling) {
		c.Sampling, c.SamplingTools, c.SamplingContext = true, sc.Tools != nil, sc.Context != nil
	}
	if ec := caps.Elicitation; ec != nil && allowed(spec.AllowElicitation) {
		c.Elicitation, c.ElicitForm, c.ElicitURL = true, ec.Form != nil || ec.URL == nil, ec.URL != nil
	}
	//lint:ignore SA1019 roots are deprecated in 2026-07-28; the protocol versions the hub serves have them
	if caps.RootsV2 != nil && allowed(spec.AllowRoots) {
		c.Roots = true
	}
	if s.stateless == nil && ok && allowed(spec.AllowRoots) {
		// The hub answers roots/list itself for a client that has no
		// roots (the server's configured ones: roots.go), as it does
		// for a session-era upstream.
		c.Roots = true
	}
	return c
}

// wantedLogLevel is the least severe log level the session's client wants
// messages at (logging/setLevel in the session era, _meta per request in
// the stateless one), or "".
func (s *session) wantedLogLevel() string {
	if s.stateless != nil {
		return s.stateless.logLevel
	}
	if l := s.logLevel.Load(); l != noLevel {
		return levelNames[l]
	}
	return ""
}

// fromUpstream returns a result of a stateless-era upstream for the
// session's client: without the reserved _meta keys that describe the
// upstream's hop (its serverInfo), and for a session-era client in that
// client's revision (no resultType, no caching hints). A session-era
// upstream's results pass as they are, unscanned.
func (s *session) fromUpstream(up *upstream.Upstream, result []byte) []byte {
	if c := up.Conn(); c == nil || !c.Stateless() {
		return result
	}
	if s.stateless != nil {
		return era.Response(result)
	}
	return era.ToSession(result)
}
