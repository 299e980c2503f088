package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/singleflight"

	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Logging in to an upstream from the chat (issue 13): when a call or
// hub_connect_server meets an upstream in NEEDS_LOGIN and the client
// supports URL-mode elicitation (MCP 2025-11-25), the hub asks the client
// to open the authorization URL and completes the flow itself through its
// loopback listener (Options.Login, the code path of mcp-hub login). When
// an upstream asks for a wider scope while serving a call (403
// insufficient_scope), the same elicitation goes to the client that made
// the call (OAuthInteract). Clients without URL elicitation are told the
// command to run.

// LoginFunc logs in to an upstream: interact directs the person to the
// authorization URL. cmd/mcp-hub sets it to oauth.Login with the store.
type LoginFunc func(ctx context.Context, spec upstream.Spec, interact func(ctx context.Context, name string, owner any, authURL string) error) (upstream.AuthStatus, error)

// loginWait bounds a login through the client: the person has to act.
const loginWait = 5 * time.Minute

// logins makes concurrent logins to one upstream (of one hub) share one
// flow.
var logins singleflight.Group

// OAuthCanInteract reports whether the client session behind owner (a tag
// of a forwarded call) can be asked to open a URL; the oauth package's
// Options.CanInteract.
func (h *Hub) OAuthCanInteract(owner any) bool {
	ref, ok := owner.(*callRef)
	return ok && ref.s.canElicitURL()
}

// OAuthInteract asks the client session behind owner to open authURL
// (URL-mode elicitation); the oauth package's Options.Interact while the
// hub serves.
func (h *Hub) OAuthInteract(ctx context.Context, name string, owner any, authURL string) error {
	ref, ok := owner.(*callRef)
	if !ok || !ref.s.canElicitURL() {
		return errors.New("no client that supports URL elicitation waits on this request")
	}
	return ref.s.elicitURL(ctx, name, authURL, ref.id)
}

// elicitCaps returns the client's elicitation capabilities, or nil.
func elicitCaps(p *mcp.InitializeParams) *mcp.ElicitationCapabilities {
	if p == nil || p.Capabilities == nil {
		return nil
	}
	return p.Capabilities.Elicitation
}

// canElicitURL reports whether the session's client declared URL-mode
// elicitation.
func (s *session) canElicitURL() bool {
	caps := s.clientCaps()
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// loginMessage is what the person reads in the client.
func loginMessage(name string) string {
	return fmt.Sprintf("mcp-hub needs you to log in to the MCP server %q. Open the page to authorize mcp-hub; it receives the answer itself.", name)
}

// elicitURL sends the session's client an URL-mode elicitation for authURL
// and returns once the person accepted to open it.
func (s *session) elicitURL(ctx context.Context, name, authURL string, related []byte) error {
	params, err := json.Marshal(map[string]any{"mode": "url", "message": loginMessage(name), "url": authURL,
		"elicitationId": uuid.NewString()})
	if err != nil {
		return err
	}
	timeout := loginWait
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), time.Second)
	}
	result, errObj, err := s.ask(nil, telemetry.FromContext(ctx), "elicitation/create", params, related, timeout)
	switch {
	case err != nil:
		return err
	case errObj != nil:
		return fmt.Errorf("the client could not open the login page: %s", (&upstream.RPCError{Raw: errObj}).Error())
	}
	return acceptedElicit(result)
}

// acceptedElicit checks an elicitation result's action.
func acceptedElicit(result []byte) error {
	var r struct {
		Action string `json:"action"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("the client's answer to the login request: %w", err)
	}
	if r.Action != "accept" {
		return fmt.Errorf("the login was %sed in the client", r.Action)
	}
	return nil
}

// chatLogin logs in to the named upstream with interact, then connects it
// and waits for the attempt. Concurrent callers for one upstream share one
// login.
func (h *Hub) chatLogin(ctx context.Context, name string, interact func(ctx context.Context, name string, owner any, authURL string) error) (upstream.AuthStatus, error) {
	u, ok := h.mgr.Get(name)
	if !ok || h.opts.Login == nil {
		return upstream.AuthStatus{}, errors.New("cannot log in here")
	}
	v, err, _ := logins.Do(fmt.Sprintf("%p/%s", h, name), func() (any, error) {
		// The login outlives the request that started it (the person is
		// in their browser), not the hub.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loginWait+time.Minute)
		defer cancel()
		returned := make(chan struct{})
		defer close(returned)
		go func() {
			select {
			case <-h.stop:
				cancel()
			case <-returned:
			}
		}()
		st, err := h.opts.Login(lctx, u.Spec(), interact)
		if err != nil {
			return st, err
		}
		if err := h.mgr.Connect(name); err != nil {
			return st, err
		}
		h.waitAttempt(ctx, name, h.mgrOpts.InitTimeout+h.mgrOpts.ListTimeout)
		return st, nil
	})
	st, _ := v.(upstream.AuthStatus)
	return st, err
}

// needsLogin reports whether err says an upstream needs a login.
func needsLogin(err error) bool {
	var nr *upstream.NotReadyError
	return errors.As(err, &nr) && nr.State == upstream.StateNeedsLogin
}

// loginForCall runs a login through the session's client for a call that
// met an upstream in NEEDS_LOGIN; it reports whether the call should be
// made again.
func (s *session) loginForCall(ctx context.Context, up *upstream.Upstream, related []byte, err error) bool {
	if !needsLogin(err) || s.h.opts.Login == nil || !s.canElicitURL() {
		return false
	}
	_, lerr := s.h.chatLogin(ctx, up.Name(), func(ctx context.Context, name string, _ any, authURL string) error {
		return s.elicitURL(ctx, name, authURL, related)
	})
	if lerr != nil {
		s.logger.Warn("login through the client failed", "upstream", up.Name(), "err", lerr)
		return false
	}
	return true
}

// loginOnConnect is hub_connect_server's login: an upstream in NEEDS_LOGIN
// is logged in to through the calling client when it supports URL
// elicitation. ok is false when this does not apply (connect as usual).
func (h *Hub) loginOnConnect(ctx context.Context, req *mcp.CallToolRequest, name string) (res adminResult, ok bool, err error) {
	u, found := h.mgr.Get(name)
	if !found || u.Status().State != upstream.StateNeedsLogin || h.opts.Login == nil || req == nil || req.Session == nil {
		return adminResult{}, false, nil
	}
	c := elicitCaps(req.Session.InitializeParams())
	if c == nil || c.URL == nil {
		return adminResult{}, false, nil
	}
	st, lerr := h.chatLogin(ctx, name, func(ctx context.Context, name string, _ any, authURL string) error {
		r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: loginMessage(name), URL: authURL, ElicitationID: uuid.NewString()})
		if err != nil {
			return err
		}
		if r.Action != "accept" {
			return fmt.Errorf("the login was %sed in the client", r.Action)
		}
		return nil
	})
	if lerr != nil {
		return adminResult{}, true, &adminError{http.StatusConflict, "LOGIN_FAILED", fmt.Sprintf("logging in to %q failed: %v; or %s", name, lerr, upstream.LoginHint(name))}
	}
	res, err = h.started(ctx, name, "Logged in ("+st.String()+") and connected", adminWait)
	return res, true, err
}

// loginView is what the admin tools show of an upstream's login.
func (h *Hub) loginView(name string) (string, *upstream.AuthStatus) {
	u, ok := h.mgr.Get(name)
	if !ok {
		return "", nil
	}
	st, ok := u.AuthStatus()
	if !ok {
		return "", nil
	}
	if u.Status().State == upstream.StateNeedsLogin {
		st.NeedsLogin = true
	}
	return st.String(), &st
}
