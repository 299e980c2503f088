package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/redact"
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
	u.insts.mu.Unlock()
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

func (u *Upstream) send(c command) {
	if c == cmdKick {
		// On-demand requests coalesce: one pending kick serves every caller
		// that asked before the attempt it starts (they wait for any
		// attempt to end), and kicks left over when an attempt ends are
		// dropped, so callers in a loop cannot queue back-to-back attempts.
		select {
		case u.kick <- struct{}{}:
		default:
		}
		return
	}
	u.sent.Add(1)
	select {
	case u.cmds <- c:
	case <-u.stopped:
		return
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

	conn, err := u.ready(ctx)
	if err != nil {
		return Reply{}, err
	}
	select {
	case u.inflight <- struct{}{}:
	default:
		select {
		case u.inflight <- struct{}{}:
		case <-ctx.Done():
			return Reply{}, u.timeoutErr(ctx, timeout, "waiting for a free slot")
		}
	}
	defer u.release()
	r, err := conn.Call(ctx, method, params)
	if errors.Is(err, ErrSessionMissing) {
		// The upstream forgot the session and refused the request unrun:
		// retry it once on the new session.
		if conn, err = u.readyAfter(ctx, conn); err == nil {
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
	if conn == nil || conn.Err() != nil {
		return nil, false
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
			go func() {
				ctx, stop := context.WithTimeout(WithTag(context.Background(), tag), timeout)
				defer stop()
				if c, rerr := u.readyAfter(ctx, conn); rerr == nil {
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

// readyAfter is ready for the retry of a request old refused unrun: the
// refusal reaches the caller a moment before old itself is failed, so it
// waits for a connection other than old.
func (u *Upstream) readyAfter(ctx context.Context, old *Conn) (*Conn, error) {
	for {
		c, err := u.ready(ctx)
		if err != nil || c != old {
			return c, err
		}
		select {
		case <-old.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
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

// run is the supervisor loop. It exits when u.stop is closed, after closing
// the connection.
func (u *Upstream) run(start State) {
	defer close(u.stopped)
	defer u.stopLoginWatch()
	b := u.m.opts.Backoff
	var (
		wantUp     = start == StateConnecting
		retryAt    time.Time
		attempts   int
		lastExpiry time.Time // last immediate reconnect after a session expiry
	)
	if start == StateDisabled || start == StatePending {
		u.update(func(s *Status, _ *Inventory) { s.State, s.Settled = start, true })
	}
	for {
		if !wantUp || !retryAt.IsZero() || len(u.cmds) > 0 {
			var timer *time.Timer
			var fire <-chan time.Time
			if wantUp && !retryAt.IsZero() {
				timer = time.NewTimer(time.Until(retryAt))
				fire = timer.C
			}
			var c command = -1
			select {
			case <-u.stop:
			case <-fire:
			case c = <-u.cmds:
				u.cmdsIn++
			case <-u.kick:
				c = cmdKick
			case <-u.relist: // nothing to list while disconnected
			}
			if timer != nil {
				timer.Stop()
			}
			select {
			case <-u.stop:
				return
			default:
			}
			switch c {
			case -1:
				if !wantUp {
					continue // woken by a relist
				}
			case cmdConnect, cmdRestart:
				wantUp, attempts = true, 0
			case cmdKick:
				wantUp = true // keep the attempt count: on-demand does not reset backoff
			case cmdEnable:
				if u.Status().State != StateDisabled {
					u.update(func(s *Status, _ *Inventory) { s.Applied = u.cmdsIn })
					continue
				}
				wantUp, attempts = true, 0
			case cmdDisconnect:
				wantUp, retryAt = false, time.Time{}
				u.update(func(s *Status, _ *Inventory) {
					s.State, s.Manual, s.NextRetry, s.Settled, s.Applied = StateDisconnected, true, time.Time{}, true, u.cmdsIn
				})
				continue
			case cmdDisable:
				wantUp, retryAt = false, time.Time{}
				u.update(func(s *Status, _ *Inventory) {
					s.State, s.NextRetry, s.Settled, s.Applied = StateDisabled, time.Time{}, true, u.cmdsIn
				})
				continue
			}
			retryAt = time.Time{}
		}

		u.stopLoginWatch()
		conn, err := u.attemptOnce()
		select { // every kick sent so far is answered by this attempt
		case <-u.kick:
		default:
		}
		if errors.Is(err, errAbandoned) {
			retryAt = time.Time{} // the queued command decides
			continue
		}
		if ac, server, ok := u.loginNeeded(); err != nil && ok {
			wantUp, retryAt, attempts = false, time.Time{}, 0
			u.enterNeedsLogin(ac, server, err)
			continue
		}
		if err != nil {
			attempts++
			next := time.Time{}
			if b.MaxAttempts < 0 || attempts < b.MaxAttempts {
				next = time.Now().Add(b.Delay(attempts))
				retryAt = next
			} else {
				wantUp = false
			}
			u.update(func(s *Status, _ *Inventory) {
				s.State, s.LastError, s.Attempts, s.NextRetry, s.PID, s.Settled = StateFailed, err.Error(), attempts, next, 0, true
			})
			u.logger.Warn("upstream connect failed", "attempt", attempts, "err", err, "retry_in", time.Until(next).Round(time.Millisecond),
				"hint", strings.Join(u.hints(err.Error()), "; "))
			continue
		}

		connectedAt := time.Now()
		outcome, err := u.serve(conn)
		conn.Close()
		u.conn.Store(nil)
		switch outcome {
		case outcomeStopped:
			return
		case outcomeDisconnect:
			wantUp, retryAt = false, time.Time{}
			u.update(func(s *Status, _ *Inventory) {
				s.State, s.Manual, s.PID, s.NextRetry, s.Applied = StateDisconnected, true, 0, time.Time{}, u.cmdsIn
			})
			continue
		case outcomeDisable:
			wantUp, retryAt = false, time.Time{}
			u.update(func(s *Status, _ *Inventory) {
				s.State, s.PID, s.NextRetry, s.Applied = StateDisabled, 0, time.Time{}, u.cmdsIn
			})
			continue
		case outcomeRestart:
			attempts, retryAt = 0, time.Time{}
			continue
		case outcomeListed:
			wantUp, retryAt, attempts = false, time.Time{}, 0
			u.update(func(s *Status, _ *Inventory) { listedStatus(s) })
			u.logger.Info("upstream listed; it runs one instance per client session")
			continue
		case outcomeIdle:
			// Stopped for want of use; the next call starts it again.
			wantUp, retryAt, attempts = false, time.Time{}, 0
			u.update(func(s *Status, _ *Inventory) {
				s.State, s.Idle, s.PID, s.NextRetry, s.LastError = StateDisconnected, true, 0, time.Time{}, ""
			})
			u.logger.Info("upstream stopped after being idle", "idle_timeout", u.Spec().IdleTimeout.Std())
			continue
		}
		// The connection died.
		if ac, server, ok := u.loginNeeded(); ok {
			wantUp, retryAt, attempts = false, time.Time{}, 0
			u.enterNeedsLogin(ac, server, err)
			continue
		}
		if time.Since(connectedAt) > b.Max {
			attempts = 0 // it was stable: start the schedule over
		}
		if errors.Is(err, errSessionExpired) && time.Since(lastExpiry) > time.Second {
			lastExpiry = time.Now()
			// The upstream (restarted, or expiring idle sessions) forgot the
			// session: that is not a failure, initialize again at once.
			u.logger.Info("upstream session expired; reconnecting")
			retryAt = time.Time{}
			u.update(func(s *Status, _ *Inventory) { s.State, s.LastError, s.PID = StateConnecting, err.Error(), 0 })
			continue
		}
		attempts++
		state := StateFailed
		if errors.Is(err, ErrExited) {
			state = StateCrashed
		}
		next := time.Time{}
		if b.MaxAttempts < 0 || attempts < b.MaxAttempts {
			next = time.Now().Add(b.Delay(attempts))
			retryAt = next
		} else {
			wantUp = false
		}
		u.update(func(s *Status, _ *Inventory) {
			s.State, s.LastError, s.Attempts, s.NextRetry, s.PID = state, err.Error(), attempts, next, 0
		})
		u.logger.Warn("upstream connection lost", "err", err, "attempt", attempts, "retry_in", time.Until(next).Round(time.Millisecond))
	}
}

type outcome int

const (
	outcomeLost outcome = iota
	outcomeStopped
	outcomeDisconnect
	outcomeDisable
	outcomeRestart
	outcomeIdle
	outcomeListed // listed, and serves its sessions through instances
)

// attemptOnce makes one connection attempt: gate, spawn slot, dial,
// initialize, list. On success the connection is live and published.
//
// A command that ends the attempt (restart, disconnect, disable) abandons
// it: the attempt's context is cancelled, what it started is stopped
// without grace, and it returns errAbandoned, so the command takes effect
// at once instead of after the init timeout.
func (u *Upstream) attemptOnce() (_ *Conn, err error) {
	select { // a signal left by a command already handled
	case <-u.abandon:
	default:
	}
	if len(u.cmds) > 0 {
		return nil, errAbandoned // handle the commands first
	}
	u.update(func(s *Status, _ *Inventory) {
		// Every command received so far is in effect once an attempt starts.
		s.State, s.Manual, s.Idle, s.NextRetry, s.Applied = StateConnecting, false, false, time.Time{}, u.cmdsIn
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var abandoned atomic.Bool
	go func() {
		select {
		case <-u.stop:
			cancel()
		case <-u.abandon:
			abandoned.Store(true)
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() {
		if err != nil && abandoned.Load() {
			err = errAbandoned // not a failure of the upstream's
			return
		}
		u.mu.Lock()
		u.attempt++
		u.lastTry = time.Now()
		u.mu.Unlock()
	}()
	spec := u.Spec()
	if g := u.m.opts.Gate; g != nil {
		if err := g(ctx, spec); err != nil {
			return nil, err
		}
	}
	select {
	case u.m.spawnSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	conn, err := u.dial(ctx, &spec)
	<-u.m.spawnSlots
	if err != nil {
		return nil, err
	}
	lctx, lcancel := context.WithTimeout(ctx, pick(spec.ListTimeout.Std(), u.m.opts.ListTimeout))
	inv, err := listInventory(lctx, conn)
	lcancel()
	if err != nil {
		if ctx.Err() != nil {
			conn.closeNow() // abandoned, or the upstream is being removed
		} else {
			conn.Close()
		}
		return nil, err
	}
	init := conn.InitializeResult()
	u.conn.Store(conn)
	u.update(func(s *Status, cur *Inventory) {
		inv.Version = cur.Version + 1
		*cur = inv
		s.State, s.LastError, s.Attempts, s.PID, s.Settled, s.AuthServer = StateConnected, "", 0, conn.PID(), true, ""
		if init != nil {
			if init.ServerInfo != nil {
				s.ServerName, s.ServerVersion = init.ServerInfo.Name, init.ServerInfo.Version
			}
			s.ProtocolVersion = init.ProtocolVersion
		}
	})
	if u.parent != nil {
		u.parent.instanceListed(u, inv)
	}
	return conn, nil
}

// serve watches a live connection until it ends or a command ends it.
func (u *Upstream) serve(conn *Conn) (outcome, error) {
	if u.listsOnly() {
		return outcomeListed, nil
	}
	interval := u.m.opts.HealthInterval
	if u.Spec().Transport != TransportStdio && u.m.opts.KeepAlive > 0 && (interval <= 0 || u.m.opts.KeepAlive < interval) {
		// A dead HTTP upstream without an event stream is only noticed by
		// asking; keep asking often.
		interval = u.m.opts.KeepAlive
	}
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	// A stdio upstream with an idle timeout is stopped when no call used it
	// for that long (and none is in flight).
	var idleTick <-chan time.Time
	idle := u.Spec().IdleTimeout.Std()
	since := time.Now()
	if idle > 0 && u.Spec().Transport == TransportStdio {
		t := time.NewTicker(min(max(idle/4, 10*time.Millisecond), 5*time.Second))
		defer t.Stop()
		idleTick = t.C
	}
	failures := 0
	for {
		select {
		case <-idleTick:
			last := time.Unix(0, u.lastUse.Load())
			if last.Before(since) {
				last = since
			}
			if len(u.inflight) == 0 && time.Since(last) >= idle {
				return outcomeIdle, nil
			}
		case <-u.stop:
			return outcomeStopped, nil
		case <-conn.Done():
			return outcomeLost, conn.Err()
		case <-u.kick: // already connected
		case c := <-u.cmds:
			u.cmdsIn++
			switch c {
			case cmdDisconnect:
				return outcomeDisconnect, nil
			case cmdDisable:
				return outcomeDisable, nil
			case cmdRestart:
				return outcomeRestart, nil
			}
			// cmdConnect, cmdEnable: already connected.
			u.update(func(s *Status, _ *Inventory) { s.Applied = u.cmdsIn })
		case <-u.relist:
			spec := u.Spec()
			ctx, cancel := context.WithTimeout(context.Background(), pick(spec.ListTimeout.Std(), u.m.opts.ListTimeout))
			inv, err := listInventory(ctx, conn)
			cancel()
			if err != nil {
				u.logger.Warn("upstream re-list failed", "err", err)
				continue
			}
			u.update(func(_ *Status, cur *Inventory) {
				inv.Version = cur.Version + 1
				*cur = inv
			})
			if u.parent != nil {
				u.parent.instanceListed(u, inv)
			}
		case <-tick:
			if time.Since(time.Unix(0, u.lastUse.Load())) < interval {
				continue // busy upstreams prove their health with calls
			}
			ctx, cancel := context.WithTimeout(context.Background(), max(min(interval, 10*time.Second), 2*time.Second))
			r, err := conn.Call(ctx, "ping", nil)
			cancel()
			if _, _, ok := u.loginNeeded(); err != nil && ok {
				return outcomeLost, err // a refresh failed: the token is gone
			}
			if errors.Is(err, ErrUnreachable) || errors.Is(err, ErrSessionMissing) || conn.Err() != nil {
				if cerr := conn.Err(); cerr != nil {
					err = cerr
				}
				return outcomeLost, err
			}
			if err == nil && r.Error == nil {
				if failures > 0 {
					failures = 0
					u.update(func(s *Status, _ *Inventory) { s.State = StateConnected })
				}
				continue
			}
			if err == nil {
				err = &RPCError{Raw: r.Error}
			}
			failures++
			u.logger.Warn("upstream health ping failed", "failures", failures, "err", err)
			if failures >= u.m.opts.HealthFailures {
				u.update(func(s *Status, _ *Inventory) { s.State, s.LastError = StateUnhealthy, "health ping: "+err.Error() })
				return outcomeLost, fmt.Errorf("unhealthy: %d health pings failed, last: %w", failures, err)
			}
		}
	}
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
