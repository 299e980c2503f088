package upstream

// The supervisor goroutine of an upstream: the loop that connects, serves,
// reconnects with backoff and stops (run), one connection attempt
// (attemptOnce), and a live connection until it ends (serve).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

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
		if err != nil {
			select {
			case <-u.stop:
				// Cut short because the upstream is stopping (the hub
				// shuts down while it starts): no failure of the
				// server's to report, retry or diagnose.
				u.logger.Debug("connection attempt ended: the upstream is stopping", "err", err)
				return
			default:
			}
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
	u.vetInstance(inv) // before a request can reach it
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
			u.vetInstance(inv)
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
			r, err := conn.Call(ctx, conn.healthMethod(), nil)
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
