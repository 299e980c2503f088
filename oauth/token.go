package oauth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// token is a token in use: its stored form and what refreshing it needs.
type token struct {
	meta     upstream.Token
	oauth    *oauth2.Token
	cfg      *oauth2.Config // nil: it cannot be refreshed
	obtained time.Time
}

func (t *token) secrets() []string { return t.meta.Secrets() }

// tokenFromStored rebuilds a token from the store.
func tokenFromStored(st upstream.Token) *token {
	t := &token{meta: st, obtained: st.Updated,
		oauth: &oauth2.Token{AccessToken: st.AccessToken, RefreshToken: st.RefreshToken, TokenType: st.TokenType, Expiry: st.Expiry}}
	if st.TokenURL != "" && st.RefreshToken != "" {
		t.cfg = &oauth2.Config{ClientID: st.ClientID, ClientSecret: st.ClientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)}}
	}
	return t
}

// margin is how long before it expires the token is refreshed: a quarter
// of its lifetime, at most 30s.
func (t *token) margin() time.Duration {
	life := t.meta.Expiry.Sub(t.obtained)
	if t.obtained.IsZero() || life <= 0 {
		return 10 * time.Second
	}
	return min(30*time.Second, life/4)
}

// fresh reports whether the token can be sent without refreshing it first.
func (t *token) fresh() bool {
	return t.meta.Expiry.IsZero() || time.Now().Add(t.margin()).Before(t.meta.Expiry)
}

func (t *token) expired() bool {
	return !t.meta.Expiry.IsZero() && !time.Now().Before(t.meta.Expiry)
}

// current returns the token to send (refreshing it when it is about to
// expire) and the generation it belongs to; nil when there is none.
func (c *Client) current(ctx context.Context) (*token, uint64) {
	c.mu.Lock()
	tok, gen := c.tok, c.gen
	c.mu.Unlock()
	if tok == nil && !c.a.opts.Fresh {
		// Read the store (at most once per Poll), one reader at a time:
		// requests that come meanwhile wait for its token.
		c.refreshMu.Lock()
		c.mu.Lock()
		load := c.tok == nil && time.Since(c.loadedAt) >= c.a.opts.Poll
		if load {
			c.loadedAt = time.Now()
		}
		c.mu.Unlock()
		if load {
			if st, err := c.a.opts.Store.Token(ctx, c.name); err == nil && st.Resource == c.resource {
				c.adoptStored(st)
			}
		}
		c.refreshMu.Unlock()
		c.mu.Lock()
		tok, gen = c.tok, c.gen
		c.mu.Unlock()
	}
	if tok != nil && !tok.fresh() {
		return c.refresh(ctx, gen, false)
	}
	return tok, gen
}

func (c *Client) currentGen() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// adoptStored makes a stored token (a login's) the current one.
func (c *Client) adoptStored(st upstream.Token) bool {
	if st.AccessToken == "" || st.Resource != c.resource {
		return false
	}
	c.adopt(context.Background(), tokenFromStored(st), false)
	return true
}

// adopt makes t the current token, adds its secrets to the upstream's
// scrubber and, with save, stores it.
func (c *Client) adopt(ctx context.Context, t *token, save bool) uint64 {
	t.meta.Upstream, t.meta.Resource = c.name, c.resource
	c.scrub.load().Add(t.secrets()...)
	c.mu.Lock()
	c.tok = t
	c.gen++
	gen := c.gen
	if t.meta.Issuer == "" {
		t.meta.Issuer = c.server
	}
	c.mu.Unlock()
	if save {
		if err := c.a.opts.Store.SaveToken(context.WithoutCancel(ctx), t.meta); err != nil {
			c.noteError("store the token: " + err.Error())
		}
	}
	return gen
}

// drop forgets the current token, which the server refused for good, and
// deletes it from the store unless a login replaced it there meanwhile.
func (c *Client) drop(ctx context.Context, dead *token, why string) {
	c.mu.Lock()
	if c.tok == dead {
		c.tok = nil
		c.gen++
	}
	c.loadedAt = time.Now()
	c.mu.Unlock()
	c.noteError(why)
	if c.a.opts.Fresh {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if st, err := c.a.opts.Store.Token(ctx, c.name); err == nil && st.AccessToken == dead.meta.AccessToken {
		if err := c.a.opts.Store.DeleteToken(ctx, c.name); err != nil {
			c.noteError("delete the refused token: " + err.Error())
		}
	}
}

// refresh replaces the token of generation seen: by one another process
// stored (a login, another hub's refresh) when that is fresh, else with
// the refresh token. force refreshes a token that still looks fresh (the
// server refused it). One refresh runs at a time; callers that waited for
// it get its token. A refresh the server refuses drops the token.
func (c *Client) refresh(ctx context.Context, seen uint64, force bool) (*token, uint64) {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	c.mu.Lock()
	tok, gen := c.tok, c.gen
	c.mu.Unlock()
	if gen != seen && tok != nil && tok.fresh() {
		return tok, gen // refreshed while we waited
	}
	if !c.a.opts.Fresh {
		st, err := c.a.opts.Store.Token(ctx, c.name)
		if err == nil && st.Resource == c.resource && (tok == nil || st.AccessToken != tok.meta.AccessToken) {
			if nt := tokenFromStored(st); nt.fresh() {
				return nt, c.adopt(ctx, nt, false)
			}
		}
	}
	if tok == nil {
		return nil, gen
	}
	if tok.cfg == nil || tok.meta.RefreshToken == "" {
		if !force && !tok.expired() {
			return tok, gen
		}
		c.drop(ctx, tok, "the access token expired or was refused, and there is no refresh token")
		return nil, c.currentGen()
	}
	rctx := context.WithValue(ctx, oauth2.HTTPClient, c.a.opts.HTTPClient)
	// Under the span of the request that needed the token, when traced.
	_, sp := telemetry.Start(rctx, "oauth token refresh", telemetry.AttrUpstream.String(c.name))
	ot, err := tok.cfg.TokenSource(rctx, &oauth2.Token{RefreshToken: tok.meta.RefreshToken}).Token()
	sp.Finish(err)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode/100 == 4 {
			c.drop(ctx, tok, "the authorization server refused to refresh the token ("+describeRetrieve(re)+")")
			return nil, c.currentGen()
		}
		if re != nil {
			err = errors.New(describeRetrieve(re))
		}
		c.noteError("refreshing the token failed: " + err.Error())
		return tok, gen // try again with the next request
	}
	nt := &token{meta: tok.meta, oauth: ot, cfg: tok.cfg, obtained: time.Now()}
	nt.meta.AccessToken, nt.meta.Expiry = ot.AccessToken, ot.Expiry
	if ot.RefreshToken != "" {
		nt.meta.RefreshToken = ot.RefreshToken
	}
	if ot.TokenType != "" {
		nt.meta.TokenType = ot.TokenType
	}
	if s := scopesOf(ot); s != nil {
		nt.meta.Scopes = s
	}
	c.a.opts.Logger.Debug("oauth: token refreshed", "upstream", c.name, "expires", ot.Expiry)
	return nt, c.adopt(ctx, nt, true)
}

// newTokenSource is go-sdk's hook after a code exchange: the token becomes
// the upstream's, in the store too.
func (c *Client) newTokenSource(ctx context.Context, cfg *oauth2.Config, ot *oauth2.Token) (oauth2.TokenSource, error) {
	cc := *cfg
	t := &token{oauth: ot, obtained: time.Now(), meta: upstream.Token{
		AccessToken: ot.AccessToken, RefreshToken: ot.RefreshToken, TokenType: ot.TokenType, Expiry: ot.Expiry,
		Scopes: scopesOf(ot), TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle),
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
	}}
	if t.meta.Scopes == nil {
		t.meta.Scopes = cfg.Scopes
	}
	if ot.RefreshToken != "" {
		t.cfg = &cc
	}
	c.mu.Lock()
	c.needsLogin = false
	c.lastErr = ""
	c.mu.Unlock()
	c.adopt(ctx, t, true)
	c.a.opts.Logger.Info("oauth: logged in", "upstream", c.name, "server", c.Status().Server, "expires", ot.Expiry)
	return tokenSource{c}, nil
}

// tokenSource gives go-sdk the client's current token.
type tokenSource struct{ c *Client }

func (s tokenSource) Token() (*oauth2.Token, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.c.tok == nil {
		return nil, errors.New("no token")
	}
	return s.c.tok.oauth, nil
}

// scopesOf returns the scopes a token response granted, or nil.
func scopesOf(t *oauth2.Token) []string {
	if s, ok := t.Extra("scope").(string); ok && s != "" {
		return strings.Fields(s)
	}
	return nil
}

// describeRetrieve says what a token endpoint answered, without its body
// (which may echo what was sent).
func describeRetrieve(re *oauth2.RetrieveError) string {
	if re.ErrorCode != "" {
		s := re.ErrorCode
		if re.ErrorDescription != "" {
			s += ": " + re.ErrorDescription
		}
		return s
	}
	if re.Response != nil {
		return fmt.Sprintf("HTTP %s", re.Response.Status)
	}
	return "no answer"
}
