package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// A server that speaks both protocol eras over streamable HTTP serves each
// client in the era that client opens with (the 2026-07-28 versioning
// page: "an initialize request selects legacy semantics, scoped to the
// session"). What it does in each can differ: a tool written against the
// session era's API asks its client with requests of the server's own
// (sampling, elicitation, roots), which the stateless era forbids, and
// the reference SDKs' stateless paths then fail the ask (go-sdk refuses
// to send it; the TypeScript conformance server's in-memory bridge answers
// -32601), so the tool reports an error where a session-era client
// talking to that server directly gets its answer. Measured with the
// conformance suite's own TypeScript everything-server behind the hub:
// the hub asked it in the newest era, and the 2025-11-25 scenarios that
// sample or elicit (4 of 30) failed through the hub only.
//
// So the hub talks to such a server the way each of its clients would:
// the stateless-era connection serves the catalog and stateless clients,
// and a session-era client's calls (tools/call, prompts/get: the requests
// during which a server asks its client) go over a session-era connection
// to the same server, opened on demand beside the stateless one and
// closed with it. That connection carries a call only when it lists the
// tool or prompt exactly as the catalog has it (what a person pinned and
// approved came from the stateless listing); anything it does not list
// (tools a server offers only to current clients) stays on the stateless
// connection, where the hub turns an input_required result into requests
// of its own to the client. When the server refuses the session era, the
// stateless connection serves everything, as before, and the hub tries
// again after a while.

// SessionClient is implemented by the tag of a request ([WithTag],
// [Conn.Start]) to tell a session-era client's requests apart.
type SessionClient interface {
	// SessionEra reports whether the request is made for a client that
	// speaks the session era, and the log level that client wants ("" for
	// none).
	SessionEra() (logLevel string, ok bool)
}

// Bounds on trying the session era again after a failed attempt.
const (
	sessionEraRetryMin = 30 * time.Second
	sessionEraRetryMax = 10 * time.Minute
)

// sessionEra is the session-era connection of a dual-era upstream, owned
// by the stateless-era connection it stands beside.
type sessionEra struct {
	u    *Upstream
	spec Spec // what the stateless connection was dialed (and approved) with

	mu      sync.Mutex // guards following
	conn    *Conn      // nil until dialed
	busy    chan struct{}
	closed  bool
	never   bool          // the server's session era has no sessions
	retryAt time.Time     // no attempt before (after a failed one)
	backoff time.Duration // the wait after the next failure
	version uint64        // the upstream's inventory version same was compared with
	same    eraNames      // what conn lists as the catalog has it
	level   string        // the log level set on conn
}

// eraNames are the tools and prompts a session-era connection may serve.
type eraNames struct {
	tools, prompts map[string]bool
}

// newSessionEra returns the session-era side of c, a stateless-era
// connection dialed with spec, when its upstream may have one: an HTTP
// server the hub negotiated the newest era with (a pinned version is the
// person's choice).
func newSessionEra(u *Upstream, spec *Spec, c *Conn) *sessionEra {
	if !c.Stateless() || spec.Transport != TransportHTTP || spec.ProtocolVersion != "" {
		return nil
	}
	return &sessionEra{u: u, spec: *spec, backoff: sessionEraRetryMin}
}

// sessionEraCall reports whether a call is one a session-era connection
// takes: a tools/call or prompts/get made for a session-era client. It
// returns the name called, and the log level the client wants.
func sessionEraCall(method string, params []byte, tag any) (name []byte, level string, ok bool) {
	if method != "tools/call" && method != "prompts/get" {
		return nil, "", false
	}
	sc, isSC := tag.(SessionClient)
	if !isSC {
		return nil, "", false
	}
	if level, ok = sc.SessionEra(); !ok {
		return nil, "", false
	}
	retry := false
	_ = wire.Members(params, func(k, v []byte) error {
		switch string(k) {
		case "name":
			name = v
		case "inputResponses", "requestState":
			retry = true // the retry of an input_required answer: where it came from
		}
		return nil
	})
	if retry || len(name) < 2 || name[0] != '"' {
		return nil, "", false
	}
	if bytes.IndexByte(name, '\\') < 0 {
		return name[1 : len(name)-1], level, true
	}
	s, err := wire.String(name)
	if err != nil {
		return nil, "", false
	}
	return []byte(s), level, true
}

// connFor returns the connection a call goes on: main, or the session-era
// connection beside it (see sessionEraCall). ready is false when that
// connection first needs work (a dial, a listing, a log level): the
// caller takes the slow path, [Upstream.Call], which does it.
func (u *Upstream) connFor(main *Conn, method string, params []byte, tag any) (c *Conn, ready bool) {
	d := main.dual
	if d == nil {
		return main, true
	}
	name, level, ok := sessionEraCall(method, params, tag)
	if !ok {
		return main, true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sc, slow := d.pickLocked(method, name, level, u.inventoryVersion())
	if slow {
		return nil, false
	}
	if sc == nil {
		return main, true
	}
	return sc, true
}

// eraConn is connFor with the work done, within ctx: on any failure the
// call goes on main.
func (u *Upstream) eraConn(ctx context.Context, main *Conn, method string, params []byte) *Conn {
	d := main.dual
	if d == nil {
		return main
	}
	name, level, ok := sessionEraCall(method, params, ctx.Value(tagKey{}))
	if !ok {
		return main
	}
	for {
		version := u.inventoryVersion()
		d.mu.Lock()
		sc, slow := d.pickLocked(method, name, level, version)
		switch {
		case !slow:
			d.mu.Unlock()
			if sc == nil {
				return main
			}
			return sc
		case d.busy != nil:
			busy := d.busy
			d.mu.Unlock()
			select {
			case <-busy:
				continue
			case <-ctx.Done():
				return main
			}
		}
		busy := make(chan struct{})
		d.busy = busy
		d.mu.Unlock()
		d.refresh(ctx, level, version)
		d.mu.Lock()
		d.busy = nil
		d.mu.Unlock()
		close(busy)
		if ctx.Err() != nil {
			return main
		}
	}
}

// inventoryVersion is the version of the upstream's inventory.
func (u *Upstream) inventoryVersion() uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.inv.Version
}

// pickLocked returns the session-era connection for a call of name, nil
// for main, or slow when the connection first needs a dial, a listing
// against the current inventory, or a more verbose log level.
func (d *sessionEra) pickLocked(method string, name []byte, level string, version uint64) (c *Conn, slow bool) {
	if d.closed || d.never {
		return nil, false
	}
	if d.conn == nil || d.conn.Err() != nil {
		return nil, time.Now().After(d.retryAt)
	}
	if d.version != version || moreVerbose(level, d.level) && d.logs() {
		return nil, true
	}
	set := d.same.tools
	if method == "prompts/get" {
		set = d.same.prompts
	}
	if !set[string(name)] {
		return nil, false
	}
	return d.conn, false
}

// logs reports whether the session-era connection's server logs.
func (d *sessionEra) logs() bool {
	//lint:ignore SA1019 logging is deprecated in 2026-07-28; the session era has it
	return d.conn != nil && d.conn.init != nil && d.conn.init.Capabilities != nil && d.conn.init.Capabilities.Logging != nil
}

// refresh dials the session-era connection when it is not up, lists what
// it serves against the inventory of version, and sets level on it. A
// failure leaves the stateless connection serving everything until the
// retry time.
func (d *sessionEra) refresh(ctx context.Context, level string, version uint64) {
	d.mu.Lock()
	c := d.conn
	d.mu.Unlock()
	if c == nil || c.Err() != nil {
		if c != nil {
			c.Close()
		}
		var err error
		if c, err = d.dial(ctx); err != nil {
			if errors.Is(err, errNoSession) {
				d.mu.Lock()
				d.never = true
				d.mu.Unlock()
				d.u.logger.Info("upstream's session era has no sessions: session-era clients' calls stay on the stateless-era connection")
				return
			}
			d.failed(ctx, "connect", err)
			return
		}
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			c.Close()
			return
		}
		d.conn, d.version, d.level = c, 0, ""
		d.mu.Unlock()
		d.u.logger.Info("upstream speaks both protocol eras: calls of session-era clients go over a session-era connection of their own",
			"version", c.ProtocolVersion())
	}
	d.mu.Lock()
	stale := d.version != version
	d.mu.Unlock()
	if stale {
		same, err := d.compare(ctx, c)
		if err != nil {
			d.failed(ctx, "list", err)
			c.Close()
			return
		}
		d.mu.Lock()
		d.same, d.version = same, version
		d.mu.Unlock()
	}
	d.mu.Lock()
	setLevel := moreVerbose(level, d.level) && d.logs()
	d.mu.Unlock()
	if setLevel {
		r, err := c.Call(ctx, "logging/setLevel", []byte(`{"level":`+string(wire.AppendString(nil, level))+`}`))
		if err != nil || r.Error != nil {
			d.u.logger.Debug("set the session-era connection's log level", "err", err, "rpc_error", string(r.Error))
		}
		d.mu.Lock()
		d.level = level // not again for this level, whatever the answer
		d.mu.Unlock()
	}
	d.mu.Lock()
	d.backoff = sessionEraRetryMin
	d.mu.Unlock()
}

// dial opens the session-era connection: the spec the stateless one was
// approved with, past the same gate, asking for the newest session-era
// version; its POSTs carry the standard headers (Mcp-Method, Mcp-Name) as
// the stateless one's do, since the server's transport (and whatever
// routes on them in front of it) wants them on every POST.
func (d *sessionEra) dial(ctx context.Context) (*Conn, error) {
	if g := d.u.m.opts.Gate; g != nil {
		if err := g(ctx, d.spec); err != nil {
			return nil, err
		}
	}
	spec := d.spec
	spec.ProtocolVersion = era.Session
	c, err := d.u.dialWith(ctx, &spec, true)
	if err != nil {
		return nil, err
	}
	if c.Stateless() {
		c.Close()
		return nil, errNotSessionEra
	}
	if l, ok := c.link.(*streamLink); ok && !l.hasSession() {
		// A stateless server of the session era (go-sdk's stateless
		// handler): no session to ask a client on, and every request
		// forgets what the one before set; nothing a session-era client
		// would gain.
		c.Close()
		return nil, errNoSession
	}
	return c, nil
}

var (
	// errNotSessionEra is the failure of a session-era dial that a server
	// answered in the stateless era.
	errNotSessionEra = errors.New("the server answered initialize in the stateless era")
	// errNoSession is the outcome of a session-era dial that the server
	// answered without a session.
	errNoSession = errors.New("the server answered initialize without a session")
)

// failed records a failed attempt: the next one waits, longer each time.
// An attempt cut short by its caller's context is no failure of the
// server's.
func (d *sessionEra) failed(ctx context.Context, doing string, err error) {
	if ctx.Err() != nil {
		return
	}
	d.mu.Lock()
	wait := d.backoff
	d.retryAt = time.Now().Add(wait)
	d.backoff = min(2*d.backoff, sessionEraRetryMax)
	d.mu.Unlock()
	d.u.logger.Info("upstream's session era unavailable: session-era clients' calls go over the stateless-era connection",
		"doing", doing, "err", err, "retry_in", wait)
}

// compare lists c's tools and prompts and returns those it lists exactly
// as the upstream's inventory (the stateless connection's listing) does.
func (d *sessionEra) compare(ctx context.Context, c *Conn) (eraNames, error) {
	inv := d.u.Inventory()
	var names eraNames
	caps := c.init.Capabilities
	if caps == nil || caps.Tools != nil {
		tools, err := list(ctx, c, "tools/list", "tools")
		if err != nil {
			return names, err
		}
		names.tools = sameDefinitions(tools, inv.Tools)
	}
	if caps != nil && caps.Prompts != nil {
		prompts, err := list(ctx, c, "prompts/list", "prompts")
		if err != nil {
			return names, err
		}
		names.prompts = sameDefinitions(prompts, inv.Prompts)
	}
	return names, nil
}

// sameDefinitions returns the names of the items of a that b has with
// the same definition (the same canonical JSON, as pins hash it: member
// order and spacing aside).
func sameDefinitions(a, b []json.RawMessage) map[string]bool {
	want := map[string]string{}
	for _, item := range b {
		if name, canon, ok := definition(item); ok {
			want[name] = canon
		}
	}
	same := map[string]bool{}
	for _, item := range a {
		if name, canon, ok := definition(item); ok && want[name] == canon {
			same[name] = true
		}
	}
	return same
}

// definition returns an item's name and its canonical JSON; ok is false
// for an item without either (a definition with duplicate members has no
// canonical form).
func definition(item json.RawMessage) (name, canon string, ok bool) {
	c, err := wire.Canonical(item)
	if err != nil {
		return "", "", false
	}
	v, err := wire.Get(c, "name")
	if err != nil || v == nil {
		return "", "", false
	}
	if name, err = wire.String(v); err != nil {
		return "", "", false
	}
	return name, string(c), true
}

// close closes the session-era connection for good (its stateless-era
// connection closed).
func (d *sessionEra) close() {
	d.mu.Lock()
	d.closed = true
	c := d.conn
	d.conn = nil
	d.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// moreVerbose reports whether level a asks for more than b does ("" asks
// for nothing).
func moreVerbose(a, b string) bool {
	ra := era.LogLevelRank(a)
	if ra < 0 {
		return false
	}
	rb := era.LogLevelRank(b)
	return rb < 0 || ra < rb
}
