// Package oauth is mcp-hub's OAuth 2.1 client for sse and http upstreams,
// as the MCP authorization spec describes it. go-sdk's auth package does
// the protocol (Protected Resource Metadata, authorization server metadata
// and the 2025-03-26 fallbacks, Client ID Metadata Document →
// pre-registration → Dynamic Client Registration, PKCE, the RFC 8707
// resource, the RFC 9207 iss check, scope selection and step-up); this
// package adds what a hub needs around it:
//
//   - one [Client] per upstream ([Authenticator] implements
//     upstream.Authenticator), whose transport sets Authorization on every
//     request of the upstream's own HTTP link and, on 401 or 403
//     insufficient_scope, refreshes or authorizes and retries once;
//   - tokens kept in the store (upstream.TokenStore), refreshed before
//     they expire and on 401, one refresh at a time per upstream, sent only
//     to the URL they were issued for, and added to the upstream's scrubber;
//   - the loopback redirect listener (http://127.0.0.1:PORT/callback, one
//     per authorization, held from the moment its port is chosen) and
//     the ways to get a person to the authorization URL: a browser
//     ([Browser]) for mcp-hub login, URL-mode elicitation for a client (the
//     hub's Interact hook);
//   - [Login], [Logout] and [PasteToken], the one code path of the three
//     ways to log in.
//
// Nothing here logs or returns a token, a refresh token or a client secret.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/redirect"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Options configures an [Authenticator].
type Options struct {
	// Store keeps the tokens (required).
	Store upstream.TokenStore
	// Logger receives what the clients do (never a token); nil discards.
	Logger *slog.Logger
	// LookupEnv resolves a client secret's ${VAR} (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Interact gets a person to open an authorization URL: owner is the tag
	// of the call that needs it (upstream.WithTag), nil during a connection
	// attempt. It returns once the person was directed there (the redirect
	// completes the flow); an error means they could not be. Nil, or
	// CanInteract reporting false, means nobody can be asked: the upstream
	// then needs a login.
	Interact func(ctx context.Context, name string, owner any, authURL string) error
	// CanInteract reports whether Interact can reach a person for owner
	// (nil: whenever Interact is set).
	CanInteract func(owner any) bool
	// Fresh ignores stored tokens: every client starts without one (a
	// login starts over).
	Fresh bool
	// Login authorizes on any 401, as a person logging in expects (servers
	// of the 2025-03-26 spec may send no challenge). Otherwise a 401
	// without a Bearer challenge is passed on as it is: the server wants
	// something other than an OAuth login (a wrong API key header), and the
	// upstream fails as it would without OAuth.
	Login bool
	// HTTPClient makes discovery, registration and token requests (nil: a
	// client with go-sdk's protections against server-side request
	// forgery, and a 30s timeout).
	HTTPClient *http.Client
	// AuthTimeout bounds the wait for the authorization redirect (5m).
	AuthTimeout time.Duration
	// Poll is how often a client in NEEDS_LOGIN reads the store for a
	// login's token (1s).
	Poll time.Duration
}

// Authenticator gives every sse and http upstream its [Client]; it
// implements upstream.Authenticator.
type Authenticator struct {
	opts Options

	mu      sync.Mutex
	clients map[string]*Client
}

var _ upstream.Authenticator = (*Authenticator)(nil)

// New returns an Authenticator.
func New(opts Options) *Authenticator {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.HTTPClient == nil {
		// No Transport: go-sdk then discovers through its own transport,
		// which refuses private and link-local addresses.
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	// Token, registration and revocation requests carry a code, a client
	// secret or a token: they follow no redirect to another origin, and
	// discovery none into loopback, private or link-local addresses.
	opts.HTTPClient = redirect.Client(opts.HTTPClient)
	if opts.AuthTimeout <= 0 {
		opts.AuthTimeout = 5 * time.Minute
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	return &Authenticator{opts: opts, clients: map[string]*Client{}}
}

// SetInteract sets Options.Interact and Options.CanInteract; call it before
// any upstream starts (the hub's interaction needs the hub, which needs
// the Authenticator).
func (a *Authenticator) SetInteract(interact func(ctx context.Context, name string, owner any, authURL string) error, can func(owner any) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.opts.Interact, a.opts.CanInteract = interact, can
}

func (a *Authenticator) interaction() (func(context.Context, string, any, string) error, func(any) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.opts.Interact, a.opts.CanInteract
}

// Client implements upstream.Authenticator: the upstream's client, the same
// one for every attempt until its URL or OAuth section changes.
func (a *Authenticator) Client(spec *upstream.Spec) upstream.AuthClient {
	return a.client(spec)
}

func (a *Authenticator) client(spec *upstream.Spec) *Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clients[spec.Name]; c != nil && c.resource == spec.URL && reflect.DeepEqual(c.conf, spec.OAuth) {
		return c
	}
	c := newClient(a, spec)
	a.clients[spec.Name] = c
	return c
}

// Client is one upstream's OAuth client.
type Client struct {
	a        *Authenticator
	name     string
	resource string          // the upstream's URL: the audience of its tokens
	conf     *upstream.OAuth // as configured (nil: none)
	setupErr error           // why the client cannot authorize (a bad client secret reference)
	secret   string

	scrub atomicScrubber // the upstream's scrubber, from Transport

	mu         sync.Mutex // guards following
	tok        *token     // the current token, or nil
	gen        uint64     // increases with every token adopted or dropped
	loadedAt   time.Time  // when the store was last read for a token
	needsLogin bool
	server     string // the authorization server, as far as known
	prmURL     string // resource_metadata of the last challenge
	lastErr    string
	stepUps    map[string]int // step-up authorizations per scope since the last success

	refreshMu sync.Mutex // one refresh at a time
	authMu    sync.Mutex // one authorization at a time
}

func newClient(a *Authenticator, spec *upstream.Spec) *Client {
	c := &Client{a: a, name: spec.Name, resource: spec.URL, stepUps: map[string]int{}}
	if spec.OAuth != nil {
		o := *spec.OAuth
		c.conf = &o
	}
	if u, err := url.Parse(spec.URL); err == nil {
		c.server = u.Scheme + "://" + u.Host
	}
	if o := c.conf; o != nil && o.ClientID != "" && o.ClientSecret != "" {
		v, err := upstream.ResolveValue(o.ClientSecret, a.opts.LookupEnv)
		if err != nil {
			c.setupErr = fmt.Errorf("oauth.clientSecret: %w", err)
			return c
		}
		c.secret = v
	}
	// What the handler of an authorization is built from is checked now,
	// with a redirect URI of the kind every authorization gets.
	_, c.setupErr = c.newHandler("http://127.0.0.1/callback", nil)
	return c
}

// newHandler builds the go-sdk handler of one authorization: its redirect
// comes to redirect (the authorization's own loopback listener, see
// listenRedirect), where fetch waits for it. A handler per authorization,
// because the redirect URI's port is chosen (and held) when the
// authorization starts: Dynamic Client Registration registers that exact
// URI each time (go-sdk registers on every authorization anyway); a Client
// ID Metadata Document or a pre-registered client names its loopback
// redirect URIs once, and the authorization server accepts any port on
// them (RFC 8252 section 7.3) — or the configured redirectPort, the one to
// register with a server that does not. Scopes granted earlier are the
// Client's to add (a step-up asks for them: withScope), not the handler's.
func (c *Client) newHandler(redirect string, fetch auth.AuthorizationCodeFetcher) (*auth.AuthorizationCodeHandler, error) {
	if fetch == nil {
		fetch = func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return nil, errNobody
		}
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{redirect},
				ClientName:    "mcp-hub",
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		},
		// The hub keeps refresh tokens in its store (0600, never shown).
		RequestRefreshToken: true,
		Client:              c.a.opts.HTTPClient,
		NewTokenSource:      c.newTokenSource,
	}
	if o := c.conf; o != nil {
		if o.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
		}
		if o.ClientID != "" {
			cred := &oauthex.ClientCredentials{ClientID: o.ClientID}
			if o.ClientSecret != "" {
				cred.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.secret}
			}
			cfg.PreregisteredClient = cred
		}
		if len(o.Scopes) > 0 {
			extra := slices.Clone(o.Scopes)
			cfg.ScopeFilter = func(discovered []string) []string {
				out := slices.Clone(discovered)
				for _, s := range extra {
					if !slices.Contains(out, s) {
						out = append(out, s)
					}
				}
				return out
			}
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return h, nil
}

// Secrets implements upstream.AuthClient.
func (c *Client) Secrets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []string{c.secret}
	if c.tok != nil {
		out = append(out, c.tok.secrets()...)
	}
	return out
}

// NeedsLogin implements upstream.AuthClient.
func (c *Client) NeedsLogin() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server, c.needsLogin
}

// Status implements upstream.AuthClient.
func (c *Client) Status() upstream.AuthStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	var st upstream.AuthStatus
	if c.tok != nil {
		st = c.tok.meta.Status()
	}
	if st.Server == "" {
		st.Server = c.server
	}
	st.NeedsLogin, st.LastError = c.needsLogin, c.lastErr
	return st
}

// setNeedsLogin records that requests fail for want of a usable token.
func (c *Client) setNeedsLogin(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.needsLogin = true
	if c.lastErr == "" { // keep what said why (a refused refresh)
		c.lastErr = why
	}
}

// noteError records the last OAuth error, in words a person can act on;
// text that came from a server is masked by redact's rules and scrubbed.
func (c *Client) noteError(msg string) {
	msg = redact.Text(c.scrub.load().Scrub(msg))
	c.mu.Lock()
	c.lastErr = msg
	c.mu.Unlock()
	c.a.opts.Logger.Warn("oauth", "upstream", c.name, "err", msg)
}

// succeeded records a request the upstream accepted.
func (c *Client) succeeded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.needsLogin || len(c.stepUps) > 0 {
		c.needsLogin = false
		clear(c.stepUps)
	}
}

// WaitLogin implements upstream.AuthClient: it polls the store until a
// token other than the one the client last had is there (a login's). A
// store that notifies of changes (PostgreSQL, shared by replicas: a login
// on another hub) is read again at once.
func (c *Client) WaitLogin(ctx context.Context) error {
	c.mu.Lock()
	var had string
	if c.tok != nil {
		had = c.tok.meta.AccessToken
	}
	c.mu.Unlock()
	t := time.NewTicker(c.a.opts.Poll)
	defer t.Stop()
	notifier, _ := c.a.opts.Store.(interface{ Notify() <-chan struct{} })
	var note <-chan struct{}
	if notifier != nil {
		note = notifier.Notify()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-note:
			note = notifier.Notify()
		}
		st, err := c.a.opts.Store.Token(ctx, c.name)
		if err != nil || st.Resource != c.resource || st.AccessToken == had {
			continue
		}
		if c.adoptStored(st) {
			return nil
		}
	}
}

// atomicScrubber holds the upstream's scrubber.
type atomicScrubber struct {
	mu sync.Mutex
	s  *redact.Scrubber
}

func (a *atomicScrubber) store(s *redact.Scrubber) {
	a.mu.Lock()
	a.s = s
	a.mu.Unlock()
}

func (a *atomicScrubber) load() *redact.Scrubber {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s
}

// errNobody is the fetcher's error when nobody can be asked to log in.
var errNobody = errors.New("nobody can be asked to log in now")
