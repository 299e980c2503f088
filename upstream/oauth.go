package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// OAuth configures how the hub logs in to an sse or http upstream that
// answers 401 (the MCP authorization spec: OAuth 2.1 with Protected
// Resource Metadata, authorization server metadata, PKCE and resource
// indicators). Every field is optional: without any, the hub discovers
// everything and registers itself (Client ID Metadata Document when the
// authorization server supports it and ClientMetadataURL is set, else
// Dynamic Client Registration). Every HTTP upstream gets an OAuth client,
// with or without this section, unless it sends a static Authorization
// header.
type OAuth struct {
	// ClientID and ClientSecret are credentials registered with the
	// authorization server beforehand. ClientSecret must be "${VAR}" or
	// "file:PATH" (a literal would end up in every export).
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scopes are requested on top of what the server asks for.
	Scopes []string `json:"scopes,omitempty"`
	// ClientMetadataURL is the https URL of the hub's Client ID Metadata
	// Document, used as its client id where the server supports that.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
	// RedirectPort is the port of the loopback redirect listener
	// (http://127.0.0.1:PORT/callback); 0 picks a free one.
	RedirectPort int `json:"redirectPort,omitempty"`
}

// validate checks the section of a spec with transport t.
func (o *OAuth) validate(s *Spec) error {
	if s.Transport == TransportStdio {
		return fieldErr("oauth", "only allowed with the sse and http transports")
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return fieldErr("oauth", "not allowed with a static Authorization header: use one or the other")
		}
	}
	if o.ClientSecret != "" {
		if o.ClientID == "" {
			return fieldErr("oauth.clientSecret", "needs oauth.clientId")
		}
		if !redact.IsReference(o.ClientSecret) || strings.ContainsAny(o.ClientSecret, " \t") {
			return fieldErr("oauth.clientSecret", `must be "${VAR}" (a variable of the hub's environment) or "file:PATH", not the secret itself`)
		}
	}
	for _, f := range []struct{ name, v string }{{"oauth.clientId", o.ClientID}, {"oauth.clientSecret", o.ClientSecret}, {"oauth.clientMetadataUrl", o.ClientMetadataURL}} {
		if err := noControl(f.name, f.v); err != nil {
			return err
		}
	}
	for i, sc := range o.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\r\n\"\\") {
			return fieldErr(fmt.Sprintf("oauth.scopes[%d]", i), "must be one scope token (no spaces or quotes)")
		}
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return fieldErr("oauth.clientMetadataUrl", "must be an https URL with a path (the client id metadata document)")
		}
	}
	if o.RedirectPort < 0 || o.RedirectPort > 65535 {
		return fieldErr("oauth.redirectPort", "must be a port number (0 picks a free one)")
	}
	return nil
}

// review describes the section for a person about to approve it.
func (o *OAuth) review() string {
	var parts []string
	if o.ClientID != "" {
		parts = append(parts, "client id "+o.ClientID)
	}
	if o.ClientSecret != "" {
		parts = append(parts, "client secret from "+describeValue(o.ClientSecret, false))
	}
	if o.ClientMetadataURL != "" {
		parts = append(parts, "client metadata document "+o.ClientMetadataURL)
	}
	if len(o.Scopes) > 0 {
		parts = append(parts, "scopes "+strings.Join(o.Scopes, " "))
	}
	if o.RedirectPort != 0 {
		parts = append(parts, fmt.Sprintf("redirect to http://127.0.0.1:%d/callback", o.RedirectPort))
	}
	if len(parts) == 0 {
		return "discovered; the hub registers itself"
	}
	return strings.Join(parts, ", ")
}

// StaticAuthorization reports whether the spec sends an Authorization
// header of its own (a pasted personal token, a key): such an upstream
// gets no OAuth client.
func (s *Spec) StaticAuthorization() bool {
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// Token is an upstream's OAuth token as the store keeps it. AccessToken,
// RefreshToken and ClientSecret are secrets: they are never shown, logged
// or exported; [Token.Status] is what may be shown.
type Token struct {
	// Upstream is the upstream's name.
	Upstream string
	// Resource is the URL of the upstream the token was issued for: it is
	// sent only there (its audience).
	Resource     string
	AccessToken  string
	RefreshToken string
	TokenType    string
	// Expiry is when AccessToken expires; zero when the server did not say.
	Expiry time.Time
	// Scopes are the scopes granted (or requested, when the server did not
	// say).
	Scopes []string
	// Issuer names the authorization server.
	Issuer string
	// TokenURL, AuthStyle, ClientID and ClientSecret are what refreshing
	// needs.
	TokenURL     string
	AuthStyle    int
	ClientID     string
	ClientSecret string
	// RevocationURL is the server's RFC 7009 endpoint, when it has one.
	RevocationURL string
	// Pasted is set for a token a person pasted (mcp-hub login --token).
	Pasted bool
	// Updated is when the token was stored.
	Updated time.Time
}

// Secrets returns the token's secret values.
func (t *Token) Secrets() []string {
	return []string{t.AccessToken, t.RefreshToken, t.ClientSecret}
}

// Status returns what may be shown of the token.
func (t *Token) Status() AuthStatus {
	return AuthStatus{LoggedIn: t.AccessToken != "", Server: t.Issuer, ClientID: t.ClientID, Expires: t.Expiry,
		Refreshable: t.RefreshToken != "", Scopes: t.Scopes, Pasted: t.Pasted}
}

// ErrNoToken is wrapped by [TokenStore.Token]'s error when no token is
// stored for the upstream.
var ErrNoToken = errors.New("no token stored")

// TokenStore keeps upstreams' OAuth tokens (persist.Store implements it).
type TokenStore interface {
	Token(ctx context.Context, name string) (Token, error)
	SaveToken(ctx context.Context, t Token) error
	DeleteToken(ctx context.Context, name string) error
}

// AuthStatus is what the hub shows of an upstream's login: never a token.
type AuthStatus struct {
	LoggedIn bool `json:"loggedIn"`
	// Server names the authorization server.
	Server   string `json:"server,omitempty"`
	ClientID string `json:"clientId,omitempty"`
	// Expires is when the access token expires (zero: unknown).
	Expires     time.Time `json:"expires,omitzero"`
	Refreshable bool      `json:"refreshable,omitempty"`
	Scopes      []string  `json:"scopes,omitempty"`
	Pasted      bool      `json:"pasted,omitempty"`
	// NeedsLogin is set when requests fail for want of a usable token.
	NeedsLogin bool `json:"needsLogin,omitempty"`
	// LastError is the last OAuth error, in words.
	LastError string `json:"lastError,omitempty"`
}

// String renders the login state for people: "logged in to X (client C),
// expires in 52m, refreshable, scopes a b", "needs login to X", "not
// logged in".
func (a AuthStatus) String() string {
	var b strings.Builder
	switch {
	case a.NeedsLogin:
		b.WriteString("needs login")
		if a.Server != "" {
			b.WriteString(" to " + a.Server)
		}
	case a.LoggedIn && a.Pasted:
		b.WriteString("logged in with a pasted token")
	case a.LoggedIn:
		b.WriteString("logged in")
		if a.Server != "" {
			b.WriteString(" to " + a.Server)
		}
		if a.ClientID != "" {
			b.WriteString(" as client " + a.ClientID)
		}
	default:
		b.WriteString("not logged in")
	}
	if a.LoggedIn && !a.NeedsLogin {
		switch d := time.Until(a.Expires); {
		case a.Expires.IsZero():
		case d <= 0:
			b.WriteString(", expired")
		default:
			fmt.Fprintf(&b, ", expires in %s", d.Round(time.Second))
		}
		if a.Refreshable {
			b.WriteString(", refreshable")
		}
		if len(a.Scopes) > 0 {
			b.WriteString(", scopes " + strings.Join(a.Scopes, " "))
		}
	}
	if a.LastError != "" {
		b.WriteString("; last OAuth error: " + a.LastError)
	}
	return b.String()
}

// Authenticator gives sse and http upstreams their OAuth client
// ([Options.Auth]).
type Authenticator interface {
	// Client returns the OAuth client for an attempt with spec, or nil
	// when the upstream gets none (a static Authorization header). It may
	// return the same client for every attempt of an upstream.
	Client(spec *Spec) AuthClient
}

// AuthClient is one upstream's OAuth client.
type AuthClient interface {
	// Transport wraps the link's transport: it sets Authorization on every
	// request and, on 401 or 403 insufficient_scope, refreshes or
	// re-authorizes and retries once. owner returns the tag of the call a
	// request body carries ([WithTag]), so that authorizing can ask the
	// client that waits. secret receives every token the client sends.
	Transport(base http.RoundTripper, owner func(body []byte) any, secret *redact.Scrubber) http.RoundTripper
	// Secrets returns the secret values the client holds now (tokens,
	// client secret), for the upstream's scrubber.
	Secrets() []string
	// NeedsLogin reports whether the last request failed because no usable
	// token exists and nobody could be asked to log in; server names the
	// authorization server.
	NeedsLogin() (server string, ok bool)
	// WaitLogin returns when a login (by mcp-hub login or a client) stored
	// a token that may end NEEDS_LOGIN, or with ctx's error.
	WaitLogin(ctx context.Context) error
	// Status returns what may be shown of the login.
	Status() AuthStatus
}

// ErrNeedsLogin is wrapped by errors of requests to an upstream that needs a
// person to log in.
var ErrNeedsLogin = errors.New("needs login")

// LoginHint is how a person logs in to upstream name, for messages.
func LoginHint(name string) string {
	return fmt.Sprintf(`run "mcp-hub login %s" in a terminal (or call hub_connect_server from a client that supports URL elicitation)`, name)
}
