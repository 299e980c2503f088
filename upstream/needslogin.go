package upstream

import (
	"context"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// The supervisor's side of OAuth: an sse or http upstream whose requests
// fail for want of a usable token goes to StateNeedsLogin (instead of
// FAILED, and without retries) until a login stores a token, which the
// upstream's AuthClient notices (WaitLogin) and which starts an attempt.

// authClient returns the OAuth client for an attempt with spec (nil: none)
// and remembers it for status and the supervisor.
func (u *Upstream) authClient(spec *Spec) AuthClient {
	var ac AuthClient
	if a := u.m.opts.Auth; a != nil && spec.Transport != TransportStdio && !spec.StaticAuthorization() {
		ac = a.Client(spec)
	}
	u.mu.Lock()
	u.auth = ac
	u.mu.Unlock()
	return ac
}

// AuthStatus returns the upstream's login state; ok is false for an
// upstream without an OAuth client (stdio, static headers, not tried yet).
func (u *Upstream) AuthStatus() (st AuthStatus, ok bool) {
	u.mu.Lock()
	ac := u.auth
	u.mu.Unlock()
	if ac == nil {
		return AuthStatus{}, false
	}
	return ac.Status(), true
}

// loginNeeded reports whether the upstream's OAuth client found no usable
// token and nobody to ask for a login.
func (u *Upstream) loginNeeded() (AuthClient, string, bool) {
	u.mu.Lock()
	ac := u.auth
	u.mu.Unlock()
	if ac == nil {
		return nil, "", false
	}
	server, ok := ac.NeedsLogin()
	return ac, server, ok
}

// enterNeedsLogin moves the upstream to StateNeedsLogin after err and
// watches for a login; the supervisor cancels the watch (stopLoginWatch)
// before its next attempt.
func (u *Upstream) enterNeedsLogin(ac AuthClient, server string, err error) {
	msg := "needs a login"
	if server != "" {
		msg += " to " + server
	}
	if err != nil {
		msg += ": " + err.Error()
	}
	u.update(func(s *Status, inv *Inventory) {
		s.State, s.LastError, s.AuthServer, s.Attempts, s.NextRetry, s.PID, s.Settled = StateNeedsLogin, msg, server, 0, time.Time{}, 0, true
		if len(inv.Tools)+len(inv.Prompts)+len(inv.Resources)+len(inv.Templates) > 0 {
			inv.Stale = true // what it listed before: calls answer "log in first"
		}
	})
	u.logger.Warn("upstream needs a login", "auth_server", server, "hint", LoginHint(u.name))
	u.stopLoginWatch()
	ctx, cancel := context.WithCancel(context.Background())
	u.loginWatch = cancel
	go func() {
		defer cancel()
		go func() {
			select {
			case <-u.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		if ac.WaitLogin(ctx) == nil {
			u.logger.Info("a login stored a token; connecting")
			u.send(cmdKick)
		}
	}()
}

// stopLoginWatch ends the watch enterNeedsLogin started. Only the
// supervisor goroutine calls it.
func (u *Upstream) stopLoginWatch() {
	if u.loginWatch != nil {
		u.loginWatch()
		u.loginWatch = nil
	}
}

// callTag returns the tag of the hub request a message body carries, for
// an AuthClient that needs to ask the client waiting on it.
func (c *Conn) callTag(body []byte) any {
	m, err := wire.Parse(body)
	if err != nil || m.ID == nil {
		return nil
	}
	return c.Tag(m.ID)
}
