package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/telemetry"
)

// Upstream is one registered upstream server. Its supervisor goroutine owns
// the connection: it connects, lists, watches, reconnects with backoff and
// shuts down. Other goroutines read snapshots and make calls.
type Upstream struct {
	m      *Manager
	name   string
	logger *slog.Logger // masks secrets, and scrubs secret's values
	stderr *stderrLog
	// secret holds the values the hub passed to the upstream in its last
	// attempt; what the upstream writes back is scrubbed of them.
	secret *redact.Scrubber

	// An instance (see Manager.StartInstance) is a copy of the registered
	// upstream parent run for one owner, labelled label; parent is nil for
	// a registered upstream, whose own instances are insts.
	parent *Upstream
	owner  any
	label  string
	insts  instanceList
	// withheld is what an instance may not serve (see Withhold); nil for
	// one that withholds nothing, and always for a registered upstream.
	withheld atomic.Pointer[Withheld]

	conn     atomic.Pointer[Conn] // the live connection, or nil
	lastUse  atomic.Int64         // unix nanos of the last call
	inflight chan struct{}        // semaphore: calls in flight
	qmu      sync.Mutex           // guards queue
	queue    []*queued            // calls waiting for a slot (see queue.go)

	cmds    chan command
	sent    atomic.Uint64 // commands sent on cmds
	cmdsIn  uint64        // commands received; only the supervisor goroutine uses it
	kick    chan struct{} // capacity 1: coalesces on-demand connect requests
	abandon chan struct{} // capacity 1: a command that ends the current attempt was sent
	relist  chan struct{} // capacity 1: coalesces list_changed bursts
	stop    chan struct{} // closed to stop the supervisor
	stopped chan struct{} // closed when the supervisor has exited
	// held is the last disconnect or disable an admin sent, or nil once a
	// later connect, restart or enable lifted it (see holdFor).
	held atomic.Pointer[hold]

	mu      sync.Mutex // guards following
	spec    Spec
	status  Status
	inv     Inventory
	changed chan struct{} // closed and replaced on every change
	attempt uint64        // completed attempts, for on-demand waiters
	lastTry time.Time     // when the last attempt ended
	auth    AuthClient    // the OAuth client of the last attempt, or nil

	// loginWatch ends the wait for a login of an upstream in
	// StateNeedsLogin; only the supervisor goroutine uses it.
	loginWatch func()
}

type command int

const (
	cmdConnect    command = iota // connect now (admin): resets the backoff
	cmdKick                      // connect now (on demand): keeps the backoff
	cmdDisconnect                // stop and stay down (admin)
	cmdRestart                   // reconnect now (spec may have changed)
	cmdEnable                    // leave DISABLED
	cmdDisable                   // stop, DISABLED
)

// Name returns the upstream's name.
func (u *Upstream) Name() string { return u.name }

// Spec returns the upstream's current spec.
func (u *Upstream) Spec() Spec {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.spec
}

// Status returns a snapshot of the upstream's state.
func (u *Upstream) Status() Status {
	u.mu.Lock()
	s := u.status
	u.mu.Unlock()
	u.insts.mu.Lock()
	s.Instances = len(u.insts.list)
	for _, i := range u.insts.list {
		s.Sessions = append(s.Sessions, i.label)
	}
	u.insts.mu.Unlock()
	slices.Sort(s.Sessions)
	return s
}

// Inventory returns what the upstream offers (possibly from a cache; see
// Inventory.Stale). Callers must not modify it.
func (u *Upstream) Inventory() Inventory {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.inv
}

// StderrTail returns the last lines the upstream wrote to stderr.
func (u *Upstream) StderrTail() []string { return u.stderr.Tail() }

// Conn returns the live connection, or nil.
func (u *Upstream) Conn() *Conn { return u.conn.Load() }

// update changes state under the lock and wakes waiters and the manager.
func (u *Upstream) update(f func(s *Status, inv *Inventory)) {
	u.mu.Lock()
	u.m.gen.Add(1) // before the change is visible: see Manager.Generation
	before := u.status.State
	f(&u.status, &u.inv)
	u.status.LastError = redact.Text(u.secret.Scrub(u.status.LastError))
	if u.status.State != before {
		u.status.Since = time.Now()
	}
	u.status.Tools = len(u.inv.Tools)
	u.status.Stale = u.inv.Stale
	close(u.changed)
	u.changed = make(chan struct{})
	st := u.status
	u.mu.Unlock()
	if st.State != before {
		u.logger.Info("upstream state", "state", st.State, "err", st.LastError)
	}
	u.m.changed(u.name)
}

// send sends a command to the supervisor and returns its number (the
// [Upstream.CommandsSent] it made), or 0 for a kick, which is not counted.
func (u *Upstream) send(c command) uint64 {
	if c == cmdKick {
		// On-demand requests coalesce: one pending kick serves every caller
		// that asked before the attempt it starts (they wait for any
		// attempt to end), and kicks left over when an attempt ends are
		// dropped, so callers in a loop cannot queue back-to-back attempts.
		select {
		case u.kick <- struct{}{}:
		default:
		}
		return 0
	}
	n := u.sent.Add(1)
	select {
	case u.cmds <- c:
	case <-u.stopped:
		return n
	}
	switch c {
	case cmdRestart, cmdDisconnect, cmdDisable:
		// A connection attempt under way is abandoned: the command decides
		// what comes next, now rather than when the attempt times out.
		select {
		case u.abandon <- struct{}{}:
		default:
		}
	}
	return n
}

// errAbandoned ends an attempt abandoned for a command.
var errAbandoned = errors.New("connection attempt abandoned for a command")

// CommandsSent returns how many commands were sent to the upstream's
// supervisor. Once Status().Applied reaches the value read after sending
// one, the status shows that command's effect (an attempt started, or the
// upstream stopped).
func (u *Upstream) CommandsSent() uint64 { return u.sent.Load() }

// Call sends a request to the upstream and returns its raw reply. When the
// upstream is not connected, Call waits for an attempt under way, or starts
// one (on demand) when none is scheduled. The call's deadline is the
// upstream's call timeout unless ctx ends sooner; at most MaxInFlight calls
// run at once, the rest wait their turn.
func (u *Upstream) Call(ctx context.Context, method string, params []byte) (Reply, error) {
	u.lastUse.Store(time.Now().UnixNano())
	spec := u.Spec()
	timeout := pick(spec.CallTimeout.Std(), u.m.opts.CallTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	conn, err := u.readyTraced(ctx)
	if err != nil {
		return Reply{}, err
	}
	// After ready: an instance's listing, and what it withholds of it, is
	// known once it is connected.
	if err := u.withholds(method, params); err != nil {
		return Reply{}, err
	}
	select {
	case u.inflight <- struct{}{}:
	default:
		since := time.Now()
		select {
		case u.inflight <- struct{}{}:
			telemetry.FromContext(ctx).Queued(since)
		case <-ctx.Done():
			return Reply{}, u.timeoutErr(ctx, timeout, "waiting for a free slot")
		}
	}
	defer u.release()
	conn = u.eraConn(ctx, conn, method, params)
	r, err := conn.Call(ctx, method, params)
	if errors.Is(err, ErrSessionMissing) {
		// The upstream forgot the session and refused the request unrun:
		// retry it once on the new session.
		telemetry.FromContext(ctx).Retry("session expired")
		if conn, err = u.retryConn(ctx, conn, method, params); err == nil {
			r, err = conn.Call(ctx, method, params)
		}
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return Reply{}, u.timeoutErr(ctx, timeout, "waiting for the reply")
	}
	return r, err
}

// TryStart is Call's fast path: when the upstream is connected, it sends
// the request (or, with every in-flight slot busy, queues it until one is
// free) and returns at once; done runs (on the connection's reader
// goroutine; it must not block) with the reply, an error, or ErrTimeout
// after the call timeout. ok is false when the call has to take the slow
// path, Call: the upstream is not connected.
func (u *Upstream) TryStart(method string, params []byte, done func(Reply, error)) (cancel func(), ok bool) {
	return u.TryStartTag(method, params, nil, done)
}

// TryStartTag is TryStart with a tag, as for [WithTag].
func (u *Upstream) TryStartTag(method string, params []byte, tag any, done func(Reply, error)) (cancel func(), ok bool) {
	conn := u.conn.Load()
	if conn == nil || conn.Err() != nil || u.withheld.Load() != nil {
		return nil, false // an instance that withholds anything: Call checks
	}
	if conn, ok = u.connFor(conn, method, params, tag); !ok {
		return nil, false // the session-era connection needs work: Call does it
	}
	u.lastUse.Store(time.Now().UnixNano())
	timeout := u.m.opts.CallTimeout
	if t := u.Spec().CallTimeout.Std(); t > 0 {
		timeout = t
	}
	select {
	case u.inflight <- struct{}{}:
	default:
		q := &queued{u: u, method: method, params: params, tag: tag, done: done, timeout: timeout, since: time.Now()}
		u.enqueue(q)
		return q.withdraw, true
	}
	cancel, err := u.start(conn, method, params, timeout, tag, done)
	if err != nil {
		u.release()
		return nil, false
	}
	return cancel, true
}

// start sends a call on conn, holding a slot that the call's end releases.
func (u *Upstream) start(conn *Conn, method string, params []byte, timeout time.Duration, tag any, done func(Reply, error)) (cancel func(), err error) {
	return conn.Start(method, params, timeout, tag, func(r Reply, err error) {
		u.release()
		if errors.Is(err, ErrSessionMissing) {
			// Refused unrun by an upstream that forgot the session: retry
			// once on the next session (off the reader goroutine).
			sp := spanOf(tag)
			sp.Retry("session expired")
			go func() {
				ctx, stop := context.WithTimeout(telemetry.ContextWith(WithTag(context.Background(), tag), sp), timeout)
				defer stop()
				if c, rerr := u.retryConn(ctx, conn, method, params); rerr == nil {
					r, err = c.Call(ctx, method, params)
				}
				done(r, err)
			}()
			return
		}
		done(r, err)
	})
}

// ErrTimeout is wrapped by errors of calls that ran out of time.
var ErrTimeout = errors.New("timed out")

func (u *Upstream) timeoutErr(ctx context.Context, timeout time.Duration, doing string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w after %s %s (the request was cancelled upstream)", ErrTimeout, timeout, doing)
	}
	return ctx.Err()
}

// NotReadyError says why an upstream cannot take a call right now.
type NotReadyError struct {
	Name      string
	State     State
	LastError string
	NextRetry time.Time
	// AuthServer names the authorization server of an upstream in
	// StateNeedsLogin.
	AuthServer string
}

func (e *NotReadyError) Error() string {
	if e.State == StateNeedsLogin {
		msg := fmt.Sprintf("upstream %q needs a login", e.Name)
		if e.AuthServer != "" {
			msg += " to " + e.AuthServer
		}
		return msg + "; log in first: " + LoginHint(e.Name)
	}
	msg := fmt.Sprintf("upstream %q is %s", e.Name, e.State)
	if e.LastError != "" {
		msg += " (last error: " + e.LastError + ")"
	}
	if !e.NextRetry.IsZero() {
		msg += fmt.Sprintf("; next attempt in %s", time.Until(e.NextRetry).Round(time.Second))
	}
	return msg
}

// onDemandGap is the minimum time between the end of one attempt and an
// on-demand attempt, so a client calling in a loop cannot turn a crashing
// upstream into a spawn storm.
const onDemandGap = time.Second

// ready returns the live connection, waiting for or starting an attempt.
func (u *Upstream) ready(ctx context.Context) (*Conn, error) {
	if u.listsOnly() {
		return nil, u.errPerSession()
	}
	kicked := false
	var kickedAt uint64
	for {
		if c := u.conn.Load(); c != nil && c.Err() == nil {
			return c, nil
		}
		u.mu.Lock()
		st, ch, attempt, lastTry := u.status, u.changed, u.attempt, u.lastTry
		u.mu.Unlock()
		notReady := &NotReadyError{Name: u.name, State: st.State, LastError: st.LastError, NextRetry: st.NextRetry, AuthServer: st.AuthServer}
		switch {
		case st.State == StateDisabled || st.Manual:
			return nil, notReady
		case st.State == StateNeedsLogin && !kicked:
			// Nothing to retry until a person logs in (which starts an
			// attempt): asking again would only register again.
			return nil, notReady
		case st.State == StateConnecting, st.State == StateConnected, st.State == StateUnhealthy:
			// An attempt is under way (or the connection is being swapped).
		case kicked && attempt > kickedAt:
			return nil, notReady // the attempt we asked for failed
		case !kicked:
			soon := !st.NextRetry.IsZero() && time.Until(st.NextRetry) <= onDemandGap
			if soon {
				break // a retry is imminent: wait for it
			}
			if !lastTry.IsZero() && time.Since(lastTry) < onDemandGap && st.State != StatePending && !st.Idle {
				return nil, notReady
			}
			kicked, kickedAt = true, attempt
			u.send(cmdKick)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (%v)", notReady, ctx.Err())
		case <-u.stopped:
			return nil, fmt.Errorf("upstream %q was removed", u.name)
		}
	}
}

// readyTraced is ready, with a span for the wait when the request is
// traced and the upstream is not connected: a lazy upstream's start, a
// per-session instance's start, a reconnect.
func (u *Upstream) readyTraced(ctx context.Context) (*Conn, error) {
	sp := telemetry.FromContext(ctx)
	if c := u.conn.Load(); sp == nil || c != nil && c.Err() == nil {
		return u.ready(ctx)
	}
	name := "upstream start"
	if u.parent != nil {
		name = "instance start"
	}
	w := sp.Wait(name, u.name, u.label)
	c, err := u.ready(ctx)
	w.Finish(err)
	return c, err
}

// retryConn returns the connection for the retry of a request old refused
// unrun (its session expired): the refusal reaches the caller a moment
// before old itself is failed, so it waits for that, then for a live
// connection (old's successor, or for a session-era connection beside a
// stateless one, the stateless one), and picks as the first try did.
func (u *Upstream) retryConn(ctx context.Context, old *Conn, method string, params []byte) (*Conn, error) {
	select {
	case <-old.Done():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c, err := u.ready(ctx)
	if err != nil {
		return nil, err
	}
	return u.eraConn(ctx, c, method, params), nil
}

// Notification implements Events for the upstream's connections: list
// changes trigger a re-list, everything else goes to the manager's Events.
func (u *Upstream) Notification(c *Conn, method string, params []byte, origin []byte) {
	switch method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		select {
		case u.relist <- struct{}{}:
		default:
		}
	}
	if ev := u.m.opts.Events; ev != nil {
		ev.Notification(c, method, params, origin)
	}
}

// Request implements Events: server→client requests go to the manager's
// Events, or are refused when there is none.
func (u *Upstream) Request(c *Conn, id []byte, method string, params []byte, origin []byte) {
	if ev := u.m.opts.Events; ev != nil {
		ev.Request(c, id, method, params, origin)
		return
	}
	_ = c.Respond(context.Background(), id, nil, []byte(`{"code":-32601,"message":"the hub does not forward `+method+` requests"}`))
}

// ServerCapabilities returns the live connection's server capabilities, or
// nil.
func (u *Upstream) ServerCapabilities() *mcp.ServerCapabilities {
	if c := u.conn.Load(); c != nil && c.init != nil {
		return c.init.Capabilities
	}
	return nil
}

// sortedNames returns the names of the upstreams, sorted.
func sortedNames(m map[string]*Upstream) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
