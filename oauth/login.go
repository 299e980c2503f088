package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redirect"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// LoginOptions configures [Login].
type LoginOptions struct {
	// Store keeps the token (required).
	Store upstream.TokenStore
	// Interact gets the person to the authorization URL: [Browser] at a
	// terminal, URL-mode elicitation for a client (required).
	Interact func(ctx context.Context, name string, owner any, authURL string) error
	// Logger receives the login's records (nil: discard).
	Logger *slog.Logger
	// LookupEnv resolves ${VAR} values (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Timeout bounds the wait for the person (5m).
	Timeout time.Duration
	// HTTPClient as for Options.
	HTTPClient *http.Client
	// ClientName and ClientVersion identify the hub in initialize.
	ClientName, ClientVersion string
}

// Login logs in to an sse or http upstream: it connects to it exactly the
// way the hub does (its own link, handshake and listing), without any
// stored token, so that the upstream's challenge starts go-sdk's
// authorization; the person is directed to the authorization URL through
// o.Interact, the redirect comes back to the loopback listener, and the
// token is stored, where a running hub picks it up within seconds. It
// returns the login's status (never a token). mcp-hub login and the hub's
// URL-elicitation login both run it.
func Login(ctx context.Context, spec upstream.Spec, o LoginOptions) (upstream.AuthStatus, error) {
	if err := loginable(&spec); err != nil {
		return upstream.AuthStatus{}, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	a := New(Options{Store: o.Store, Logger: o.Logger, LookupEnv: o.LookupEnv, Interact: o.Interact, Fresh: true, Login: true,
		HTTPClient: o.HTTPClient, AuthTimeout: o.Timeout})
	m := upstream.NewManager(&upstream.Options{Logger: o.Logger, Auth: a, LookupEnv: o.LookupEnv,
		ClientName: o.ClientName, ClientVersion: o.ClientVersion,
		InitTimeout: o.Timeout + 30*time.Second, ListTimeout: o.Timeout + 30*time.Second,
		Backoff: upstream.Backoff{MaxAttempts: 1}, KeepAlive: -1, HealthInterval: -1})
	defer m.Close()
	spec.Start = upstream.StartEager
	spec.Tools = upstream.ToolFilter{}
	u, err := m.Add(spec, upstream.AddOptions{})
	if err != nil {
		return upstream.AuthStatus{}, err
	}
	st, err := settle(ctx, u)
	c := a.client(&spec)
	if err != nil {
		return c.Status(), err
	}
	as := c.Status()
	switch {
	case st.State == upstream.StateConnected && !as.LoggedIn:
		return as, fmt.Errorf("%s answered without asking for a login: there is nothing to log in to", spec.Name)
	case st.State == upstream.StateConnected:
		c.recordServer(ctx)
		return c.Status(), nil
	case as.LoggedIn:
		return as, fmt.Errorf("logged in, but the connection failed afterwards: %s", st.LastError)
	}
	msg := st.LastError
	if as.LastError != "" && !strings.Contains(msg, as.LastError) {
		msg += " (" + as.LastError + ")"
	}
	return as, fmt.Errorf("the login failed: %s", msg)
}

// loginable checks that spec can log in with OAuth.
func loginable(spec *upstream.Spec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	switch {
	case spec.Transport == upstream.TransportStdio:
		return fmt.Errorf("%s is a stdio upstream: only sse and http upstreams log in", spec.Name)
	case spec.StaticAuthorization():
		return fmt.Errorf("%s sends an Authorization header of its own (headers.Authorization); remove it to log in with OAuth", spec.Name)
	}
	return nil
}

// settle waits until u's first attempt ended.
func settle(ctx context.Context, u *upstream.Upstream) (upstream.Status, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		st := u.Status()
		if st.Settled && st.State != upstream.StateConnecting {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-t.C:
		}
	}
}

// recordServer stores the authorization server's issuer and revocation
// endpoint with the token (for status lines and logout); best effort.
func (c *Client) recordServer(ctx context.Context) {
	_, asm := c.discover(ctx)
	if asm == nil {
		return
	}
	c.mu.Lock()
	t := c.tok
	if t != nil {
		if asm.Issuer != "" {
			t.meta.Issuer = asm.Issuer
			c.server = asm.Issuer
		}
		t.meta.RevocationURL = asm.RevocationEndpoint
	}
	c.mu.Unlock()
	if t != nil {
		if err := c.a.opts.Store.SaveToken(ctx, t.meta); err != nil {
			c.noteError("store the token: " + err.Error())
		}
	}
}

// ErrNotLoggedIn is returned by [Logout] for an upstream without a token.
var ErrNotLoggedIn = errors.New("not logged in")

// Logout deletes the upstream's token and, when its authorization server
// has an RFC 7009 revocation endpoint, revokes it there (refresh token
// first). revoked reports whether the server accepted the revocation. The
// token is deleted even when revoking fails.
func Logout(ctx context.Context, store upstream.TokenStore, name string, client *http.Client) (revoked bool, err error) {
	t, err := store.Token(ctx, name)
	if errors.Is(err, upstream.ErrNoToken) {
		return false, fmt.Errorf("%s: %w", name, ErrNotLoggedIn)
	}
	if err != nil {
		return false, err
	}
	if err := store.DeleteToken(ctx, name); err != nil {
		return false, err
	}
	if t.RevocationURL == "" || t.Pasted {
		return false, nil
	}
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	client = redirect.Client(client) // the tokens go to the revocation endpoint's origin only
	revoked = true
	for _, v := range []struct{ tok, hint string }{{t.RefreshToken, "refresh_token"}, {t.AccessToken, "access_token"}} {
		if v.tok == "" {
			continue
		}
		if err := revoke(ctx, client, &t, v.tok, v.hint); err != nil {
			return false, fmt.Errorf("the token was deleted, but revoking it failed: %w", err)
		}
	}
	return revoked, nil
}

// revoke posts one RFC 7009 revocation request.
func revoke(ctx context.Context, client *http.Client, t *upstream.Token, tok, hint string) error {
	form := url.Values{"token": {tok}, "token_type_hint": {hint}}
	useBasic := t.ClientSecret != "" && t.AuthStyle != 1 // oauth2.AuthStyleInParams
	if !useBasic {
		form.Set("client_id", t.ClientID)
		if t.ClientSecret != "" {
			form.Set("client_secret", t.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.RevocationURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if useBasic {
		req.SetBasicAuth(url.QueryEscape(t.ClientID), url.QueryEscape(t.ClientSecret))
	}
	resp, err := client.Do(req)
	if err != nil {
		return errors.New("the revocation endpoint did not answer")
	}
	drainClose(resp)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the revocation endpoint answered HTTP %s", resp.Status)
	}
	return nil
}

// PasteToken stores a token a person pasted (a personal access token of a
// server that issues them) as the upstream's: it is sent as a bearer token
// to the upstream's URL only, never refreshed, and dropped when refused.
func PasteToken(ctx context.Context, store upstream.TokenStore, spec upstream.Spec, tok string) error {
	if err := loginable(&spec); err != nil {
		return err
	}
	tok = strings.TrimPrefix(strings.TrimSpace(tok), "Bearer ")
	if tok == "" || strings.ContainsAny(tok, " \t\r\n\x00") {
		return errors.New("the token must be one line without spaces")
	}
	return store.SaveToken(ctx, upstream.Token{Upstream: spec.Name, Resource: spec.URL, AccessToken: tok, TokenType: "Bearer", Pasted: true})
}
