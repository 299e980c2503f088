// Package jwtauth verifies OAuth 2.1 bearer tokens that are JWTs signed by
// an authorization server (an identity provider), for a resource server:
// the signature against the issuer's JSON Web Key Set, the issuer, the
// audience (the resource, RFC 8707), the expiry and not-before times with a
// small leeway, and a subject.
//
// The JWKS URL comes from the configuration or from the issuer's metadata
// (RFC 8414 / OpenID Connect discovery, through go-sdk's auth package). The
// key set is fetched on first use, refreshed periodically, and fetched again
// when a token names a key it does not hold (the issuer rotated its keys) —
// at most once per MinRefresh, so tokens with made-up key ids cannot make
// the verifier hammer the issuer. JWT parsing and claim checks are
// github.com/golang-jwt/jwt/v5's; the key set is
// github.com/MicahParks/jwkset's.
package jwtauth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/time/rate"
)

// Config configures a [Verifier]. A zero duration selects the default in
// its comment.
type Config struct {
	// Issuer is the authorization server's issuer identifier; tokens must
	// carry it as iss.
	Issuer string
	// Audience is the resource the tokens must be issued for (aud): the
	// hub's resource URL.
	Audience string
	// JWKSURL is the issuer's key set; empty: the jwks_uri of the
	// issuer's metadata.
	JWKSURL string
	// Leeway is the clock skew allowed on exp, nbf and iat (30s).
	Leeway time.Duration
	// MinRefresh is the least time between two fetches of the key set for
	// a key id it lacks, and between two failed discoveries (30s).
	MinRefresh time.Duration
	// Refresh is how often the key set is fetched anyway (1h).
	Refresh time.Duration
	// HTTPClient fetches metadata and keys (a client with a 10s timeout).
	HTTPClient *http.Client
	// Logger receives fetch failures (nil: discard).
	Logger *slog.Logger
}

// ErrUnavailable is wrapped by the error of a token that could not be
// checked because the issuer's metadata or keys cannot be fetched.
var ErrUnavailable = errors.New("the authorization server's keys cannot be fetched")

// Verifier checks bearer tokens. It is safe for concurrent use; Close
// stops its refreshing.
type Verifier struct {
	cfg    Config
	parser *jwt.Parser
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex // guards following
	keys    jwkset.Storage
	tried   time.Time // the last failed discovery
	lastErr error
}

// algs are the signature algorithms accepted: asymmetric ones only (an
// HMAC token would be signed with a secret the hub does not have, and
// "none" signs nothing).
var algs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// New returns a verifier; it fetches nothing until the first token.
func New(c Config) (*Verifier, error) {
	if c.Issuer == "" || c.Audience == "" {
		return nil, errors.New("an issuer and an audience are required")
	}
	if err := fetchable(c.Issuer); err != nil {
		return nil, fmt.Errorf("issuer: %w", err)
	}
	if c.JWKSURL != "" {
		if err := fetchable(c.JWKSURL); err != nil {
			return nil, fmt.Errorf("jwksUrl: %w", err)
		}
	}
	if c.Leeway <= 0 {
		c.Leeway = 30 * time.Second
	}
	if c.MinRefresh <= 0 {
		c.MinRefresh = 30 * time.Second
	}
	if c.Refresh <= 0 {
		c.Refresh = time.Hour
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Verifier{
		cfg: c, ctx: ctx, cancel: cancel,
		parser: jwt.NewParser(jwt.WithValidMethods(algs), jwt.WithLeeway(c.Leeway), jwt.WithExpirationRequired(), jwt.WithIssuedAt()),
	}, nil
}

// fetchable accepts https URLs, and http ones on loopback hosts (tests,
// an identity provider on the same machine).
func fetchable(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("%q must use https (http only on a loopback address)", raw)
}

// Close stops refreshing the key set.
func (v *Verifier) Close() { v.cancel() }

// claims are the claims the verifier reads.
type claims struct {
	jwt.RegisteredClaims
	Scope    string `json:"scope"`
	Scp      any    `json:"scp"` // a list or a string, as some providers write it
	ClientID string `json:"client_id"`
	Azp      string `json:"azp"`
}

// Verify checks token; it has the shape of go-sdk's auth.TokenVerifier. A
// token that fails a check gets an error wrapping auth.ErrInvalidToken
// that says which check, never the token; one that cannot be checked now
// wraps ErrUnavailable.
func (v *Verifier) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	var c claims
	var unavailable error
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if err := checkCrit(t.Header); err != nil {
			return nil, err
		}
		k, err := v.key(ctx, t)
		if errors.Is(err, ErrUnavailable) {
			unavailable = err
		}
		return k, err
	})
	switch {
	case unavailable != nil:
		return nil, unavailable
	case err != nil:
		return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, describe(err))
	case strings.TrimSuffix(c.Issuer, "/") != strings.TrimSuffix(v.cfg.Issuer, "/"):
		return nil, fmt.Errorf("%w: the token was issued by another issuer", auth.ErrInvalidToken)
	case !oauthex.MatchesResource(c.Audience, v.cfg.Audience):
		return nil, fmt.Errorf("%w: the token was not issued for this resource (audience %s)", auth.ErrInvalidToken, v.cfg.Audience)
	case c.Subject == "":
		return nil, fmt.Errorf("%w: the token has no subject (sub)", auth.ErrInvalidToken)
	}
	extra := map[string]any{"iss": c.Issuer}
	if id := cmpOr(c.ClientID, c.Azp); id != "" {
		extra["client_id"] = id
	}
	return &auth.TokenInfo{Scopes: scopes(c), Expiration: c.ExpiresAt.Time, UserID: c.Subject, Extra: extra}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// describe turns a parse error into a short reason.
func describe(err error) string {
	for _, e := range []struct {
		err error
		msg string
	}{
		{jwt.ErrTokenMalformed, "the token is not a well-formed JWT"},
		{jwt.ErrTokenExpired, "the token is expired"},
		{jwt.ErrTokenNotValidYet, "the token is not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, "the token was issued in the future"},
		{jwt.ErrTokenSignatureInvalid, "the token's signature is invalid"},
		{jwt.ErrTokenRequiredClaimMissing, "the token lacks a required claim"},
	} {
		if errors.Is(err, e.err) {
			return e.msg
		}
	}
	var ke *keyError
	if errors.As(err, &ke) {
		return ke.msg
	}
	return "the token cannot be verified"
}

// checkCrit refuses a token whose header has "crit" (RFC 7515 §4.1.11):
// it lists extensions the recipient must understand and process, or
// reject the token, and the hub implements none. (golang-jwt ignores it.)
func checkCrit(h map[string]any) error {
	v, ok := h["crit"]
	if !ok {
		return nil
	}
	list, _ := v.([]any)
	var names []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			names = append(names, s)
		}
	}
	if len(names) == 0 || len(names) != len(list) {
		return &keyError{"the token's header has a malformed crit (RFC 7515: a non-empty list of names)"}
	}
	return &keyError{fmt.Sprintf("the token's header requires extensions the hub does not implement (crit: %s)", limit(strings.Join(names, ", "), 100))}
}

// limit cuts s (which comes from the token) to at most n bytes.
func limit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// keyError is why no key verifies a token.
type keyError struct{ msg string }

func (e *keyError) Error() string { return e.msg }

// scopes reads scope (a space-separated string) or scp (a list, or a
// string).
func scopes(c claims) []string {
	out := strings.Fields(c.Scope)
	switch s := c.Scp.(type) {
	case string:
		out = append(out, strings.Fields(s)...)
	case []any:
		for _, x := range s {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
	}
	return out
}

// key returns the public key that should have signed t.
func (v *Verifier) key(ctx context.Context, t *jwt.Token) (any, error) {
	keys, err := v.keyset(ctx)
	if err != nil {
		return nil, err
	}
	kid, _ := t.Header["kid"].(string)
	var k jwkset.JWK
	if kid == "" {
		all, err := keys.KeyReadAll(ctx)
		if err != nil {
			return nil, &keyError{"the token names no signing key (kid)"}
		}
		var sig []jwkset.JWK
		for _, j := range all {
			if u := j.Marshal().USE; u == "" || u == jwkset.UseSig {
				sig = append(sig, j)
			}
		}
		if len(sig) != 1 {
			return nil, &keyError{"the token names no signing key (kid), and the issuer has several"}
		}
		k = sig[0]
	} else if k, err = keys.KeyRead(ctx, kid); err != nil {
		return nil, &keyError{"the token is signed with a key the issuer does not publish"}
	}
	m := k.Marshal()
	if m.USE != "" && m.USE != jwkset.UseSig {
		return nil, &keyError{"the token's key is not a signing key"}
	}
	if m.ALG != "" && string(m.ALG) != t.Method.Alg() {
		return nil, &keyError{"the token's algorithm is not its key's"}
	}
	pub := k.Key()
	if s, ok := pub.(crypto.Signer); ok { // a key set that (wrongly) holds private keys
		pub = s.Public()
	}
	return pub, nil
}

// keyset returns the issuer's key set, discovering and fetching it first.
func (v *Verifier) keyset(ctx context.Context) (jwkset.Storage, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys != nil {
		return v.keys, nil
	}
	if v.lastErr != nil && time.Since(v.tried) < v.cfg.MinRefresh {
		return nil, v.lastErr
	}
	keys, err := v.fetch(ctx)
	if err != nil {
		v.tried, v.lastErr = time.Now(), fmt.Errorf("%w: %v", ErrUnavailable, err)
		v.cfg.Logger.Warn("the authorization server's keys cannot be fetched; tokens are refused until they can", "issuer", v.cfg.Issuer, "err", err)
		return nil, v.lastErr
	}
	v.keys, v.lastErr = keys, nil
	return keys, nil
}

// fetch discovers the key set's URL (unless configured) and fetches it.
func (v *Verifier) fetch(ctx context.Context) (jwkset.Storage, error) {
	u := v.cfg.JWKSURL
	if u == "" {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		asm, err := auth.GetAuthServerMetadata(dctx, v.cfg.Issuer, v.cfg.HTTPClient)
		switch {
		case err != nil:
			return nil, fmt.Errorf("the issuer's metadata: %w", err)
		case asm == nil:
			return nil, fmt.Errorf("the issuer %s publishes no authorization server metadata (set jwksUrl)", v.cfg.Issuer)
		case asm.JWKSURI == "":
			return nil, fmt.Errorf("the issuer's metadata has no jwks_uri (set jwksUrl)")
		}
		if err := fetchable(asm.JWKSURI); err != nil {
			return nil, fmt.Errorf("the issuer's jwks_uri: %w", err)
		}
		u = asm.JWKSURI
	}
	store, err := jwkset.NewStorageFromHTTP(u, jwkset.HTTPClientStorageOptions{
		Client:          v.cfg.HTTPClient,
		Ctx:             v.ctx,
		HTTPTimeout:     10 * time.Second,
		RefreshInterval: v.cfg.Refresh,
		RefreshErrorHandler: func(_ context.Context, err error) {
			v.cfg.Logger.Warn("refreshing the authorization server's keys failed; the keys fetched before stay in use", "url", u, "err", err)
		},
	})
	if err != nil {
		return nil, err
	}
	return jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{u: store},
		// An unknown kid fetches the set again (the issuer rotated its
		// keys), at most once per MinRefresh; a token that would have to
		// wait longer than the fetch may take is refused at once.
		RefreshUnknownKID: rate.NewLimiter(rate.Every(v.cfg.MinRefresh), 1),
		RateLimitWaitMax:  10 * time.Second,
	})
}
