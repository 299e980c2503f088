package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// maxStepUps is how many times the client authorizes for the same
// insufficient_scope challenge before a request succeeds again: a server
// that keeps refusing does not get an endless loop of logins.
const maxStepUps = 1

// Transport implements upstream.AuthClient.
func (c *Client) Transport(base http.RoundTripper, owner func([]byte) any, secret *redact.Scrubber) http.RoundTripper {
	c.scrub.store(secret)
	secret.Add(c.Secrets()...)
	c.mu.Lock()
	c.loadedAt = time.Time{} // a new attempt reads the store (a login may have stored a token)
	c.mu.Unlock()
	return &transport{c: c, base: base, owner: owner}
}

// transport sets Authorization on every request of the upstream's link and
// handles the upstream's 401 and 403 insufficient_scope answers: a refused
// token is refreshed (or replaced by one a login stored) and the request
// sent again; otherwise the go-sdk handler authorizes (asking a person
// through Options.Interact) and the request is sent once more. Whatever
// Authorization header the request had is replaced: nothing of the hub's
// own clients reaches an upstream.
type transport struct {
	c     *Client
	base  http.RoundTripper
	owner func([]byte) any
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	tok, gen := t.c.current(ctx)
	resp, err := t.send(req, tok, false)
	if err != nil || !challenged(resp) {
		if err == nil && resp.StatusCode/100 == 2 {
			t.c.succeeded()
		}
		return resp, err
	}
	if req.Method == http.MethodDelete || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
		return resp, nil // ending a session is no reason to log in; a body that cannot be sent again
	}
	if resp.StatusCode == http.StatusUnauthorized && tok != nil {
		// The token was refused: refresh it (or take a newer stored one).
		if nt, ngen := t.c.refresh(ctx, gen, true); nt != nil && ngen != gen {
			drainClose(resp)
			if resp, err = t.send(req, nt, true); err != nil || !challenged(resp) {
				if err == nil && resp.StatusCode/100 == 2 {
					t.c.succeeded()
				}
				return resp, err
			}
		}
		gen = t.c.currentGen()
	}
	if !t.c.a.opts.Login && !bearerChallenge(resp) {
		return resp, nil // not an OAuth server's challenge
	}
	var owner any
	if t.owner != nil && req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			body, _ := io.ReadAll(io.LimitReader(b, 1<<20))
			b.Close()
			owner = t.owner(body)
		}
	}
	if err := t.c.authorize(withOwner(ctx, owner), resp, gen, owner); err != nil {
		return nil, err
	}
	tok, _ = t.c.current(ctx)
	if tok == nil {
		return nil, errors.New("oauth: no token after authorizing")
	}
	resp, err = t.send(req, tok, true)
	if err == nil && resp.StatusCode/100 == 2 {
		t.c.succeeded()
	}
	return resp, err
}

// send sends req with tok's Authorization (none when tok is nil); again
// sends a fresh copy of the body. A request that needs no change (no
// token, no Authorization, first send: every request to a server that asks
// for no login) goes as it is, without a copy.
func (t *transport) send(req *http.Request, tok *token, again bool) (*http.Response, error) {
	if tok == nil && !again && len(req.Header.Values("Authorization")) == 0 {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Del("Authorization")
	if again && req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = b
	}
	if tok != nil {
		tok.oauth.SetAuthHeader(r)
	}
	return t.base.RoundTrip(r)
}

// challenged reports whether resp asks for (more) authorization: 401, or
// 403 with error="insufficient_scope".
func challenged(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		return challengeParam(cs, "error") == "insufficient_scope"
	}
	return false
}

// bearerChallenge reports whether resp challenges for a Bearer token.
func bearerChallenge(resp *http.Response) bool {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return true
		}
	}
	return false
}

func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	for _, c := range cs {
		if c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

type ownerKey struct{}

func withOwner(ctx context.Context, owner any) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

func ownerFrom(ctx context.Context) any { return ctx.Value(ownerKey{}) }

// authorize runs go-sdk's authorization for the challenge resp (which it
// closes), one at a time. A token that arrived meanwhile (generation other
// than gen) ends it at once. Without anyone to ask, the client needs a
// login and the error wraps upstream.ErrNeedsLogin.
func (c *Client) authorize(ctx context.Context, resp *http.Response, gen uint64, owner any) error {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if c.currentGen() != gen {
		drainClose(resp)
		return nil
	}
	if c.setupErr != nil {
		drainClose(resp)
		c.noteError(c.setupErr.Error())
		c.setNeedsLogin("")
		return fmt.Errorf("%w: %s", upstream.ErrNeedsLogin, c.lastError())
	}
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if rm := challengeParam(cs, "resource_metadata"); rm != "" {
		c.mu.Lock()
		c.prmURL = rm
		c.mu.Unlock()
	}
	if resp.StatusCode == http.StatusForbidden {
		scope := challengeParam(cs, "scope")
		c.mu.Lock()
		n := c.stepUps[scope]
		if n < maxStepUps {
			c.stepUps[scope] = n + 1
		}
		c.mu.Unlock()
		if n >= maxStepUps {
			drainClose(resp)
			c.noteError(fmt.Sprintf("the server still answers insufficient_scope (scope %q) after the hub was authorized for it", scope))
			return fmt.Errorf("oauth: %s", c.lastError())
		}
		// Ask for what the token had as well as what is missing (SEP-2350):
		// a token with only the new scope would fail the calls the old
		// one served.
		resp = withScope(resp, cs, unionScopes(c.grantedScopes(), scope))
	}
	interact, can := c.a.interaction()
	if interact == nil || (can != nil && !can(owner)) {
		drainClose(resp)
		server := c.discoverServer(ctx)
		why := "no usable token"
		if resp.StatusCode == http.StatusForbidden {
			why = "the token lacks scope " + challengeParam(cs, "scope")
		}
		c.setNeedsLogin(why)
		return fmt.Errorf("%w to %s (%s): %s", upstream.ErrNeedsLogin, server, why, upstream.LoginHint(c.name))
	}
	// The resource is the upstream's URL (an SSE link posts elsewhere).
	areq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.resource, nil)
	if err != nil {
		drainClose(resp)
		return err
	}
	// The redirect's listener, held from here until the authorization
	// ended (listenRedirect).
	ln, redirect, err := c.listenRedirect()
	if err != nil {
		drainClose(resp)
		c.noteError(err.Error())
		return fmt.Errorf("oauth: %s", c.lastError())
	}
	defer ln.Close()
	h, err := c.newHandler(redirect, func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		return c.fetch(ctx, ln, redirect, args)
	})
	if err != nil {
		drainClose(resp)
		c.noteError(err.Error())
		return fmt.Errorf("oauth: %s", c.lastError())
	}
	if err := h.Authorize(ctx, areq, resp); err != nil {
		if errors.Is(err, errNobody) {
			c.setNeedsLogin("no usable token")
			return fmt.Errorf("%w to %s: %s", upstream.ErrNeedsLogin, c.serverName(), upstream.LoginHint(c.name))
		}
		c.noteError("authorization failed: " + err.Error())
		return fmt.Errorf("oauth: %s", c.lastError())
	}
	return nil
}

func (c *Client) lastError() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

func (c *Client) serverName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server
}

func (c *Client) setServer(s string) {
	if s == "" {
		return
	}
	c.mu.Lock()
	c.server = s
	c.mu.Unlock()
}

// discover finds the upstream's Protected Resource Metadata (where the last
// challenge said, else at the well-known locations) and its authorization
// server's metadata, as go-sdk does; either may be nil. It is for naming
// the server and finding its revocation endpoint, never for authorizing.
func (c *Client) discover(ctx context.Context) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u, err := url.Parse(c.resource)
	if err != nil {
		return nil, nil
	}
	c.mu.Lock()
	candidates := []struct{ url, resource string }{}
	if c.prmURL != "" {
		candidates = append(candidates, struct{ url, resource string }{c.prmURL, c.resource})
	}
	c.mu.Unlock()
	origin := u.Scheme + "://" + u.Host
	candidates = append(candidates,
		struct{ url, resource string }{origin + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), c.resource},
		struct{ url, resource string }{origin + "/.well-known/oauth-protected-resource", origin})
	var prm *oauthex.ProtectedResourceMetadata
	for _, cand := range candidates {
		if p, err := oauthex.GetProtectedResourceMetadata(ctx, cand.url, cand.resource, c.a.opts.HTTPClient); err == nil && p != nil && len(p.AuthorizationServers) > 0 {
			prm = p
			break
		}
	}
	issuer := origin
	if prm != nil {
		issuer = prm.AuthorizationServers[0]
	}
	asm, _ := auth.GetAuthServerMetadata(ctx, issuer, c.a.opts.HTTPClient)
	return prm, asm
}

// discoverServer names the authorization server for a NEEDS_LOGIN message.
func (c *Client) discoverServer(ctx context.Context) string {
	prm, asm := c.discover(ctx)
	switch {
	case asm != nil && asm.Issuer != "":
		c.setServer(asm.Issuer)
	case prm != nil:
		c.setServer(prm.AuthorizationServers[0])
	}
	return c.serverName()
}

func drainClose(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// grantedScopes returns the scopes of the client's current token.
func (c *Client) grantedScopes() []string {
	c.mu.Lock()
	tok := c.tok
	c.mu.Unlock()
	if tok == nil {
		return nil
	}
	if tok.oauth != nil {
		if s := scopesOf(tok.oauth); s != nil {
			return s
		}
	}
	return tok.meta.Scopes
}

// unionScopes returns the granted scopes followed by the challenged ones
// they lack, space-separated.
func unionScopes(granted []string, challenged string) string {
	out := append([]string(nil), granted...)
	for _, s := range strings.Fields(challenged) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// withScope returns resp with its Bearer challenge asking for scope (the
// go-sdk handler takes the scope to request from the challenge).
func withScope(resp *http.Response, cs []oauthex.Challenge, scope string) *http.Response {
	if scope == "" || scope == challengeParam(cs, "scope") {
		return resp
	}
	params := []string{`scope="` + scope + `"`}
	for _, ch := range cs {
		if ch.Scheme != "bearer" {
			continue
		}
		for k, v := range ch.Params {
			if k != "scope" {
				params = append(params, k+`="`+strings.ReplaceAll(v, `"`, `\"`)+`"`)
			}
		}
		break
	}
	slices.Sort(params[1:])
	r := *resp
	r.Header = resp.Header.Clone()
	r.Header.Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	return &r
}
