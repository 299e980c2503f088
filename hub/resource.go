package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcp-hub/mcp-hub/internal/jwtauth"
)

// The HTTP front as an OAuth 2.1 resource server (the MCP authorization
// spec, server side): clients bring a JWT access token from the team's
// identity provider; the front checks it (internal/jwtauth), serves the
// Protected Resource Metadata (RFC 9728) that tells clients where to get
// one, and answers 401 and 403 with the WWW-Authenticate challenges clients
// act on. The token says who the client is: admin writes need the admin
// scope, and the audit log names the subject. It is exclusive with the
// static token (HTTPOptions.Token): a team hub accepts only its identity
// provider's tokens; a personal hub keeps its static token. The client's
// token never goes further than the front: upstreams have their own
// credentials.

// AuthOptions makes the HTTP front an OAuth 2.1 resource server.
type AuthOptions struct {
	// Issuer is the authorization server's issuer identifier.
	Issuer string
	// Audience is this hub's resource identifier, which tokens must be
	// issued for (aud): the public URL of its /mcp endpoint, e.g.
	// https://hub.example.com/mcp. The Protected Resource Metadata names
	// it, and the metadata URLs in challenges are derived from it.
	Audience string
	// JWKSURL is the issuer's key set; empty: discovered from the
	// issuer's metadata.
	JWKSURL string
	// RequiredScopes must all be in a token for any request.
	RequiredScopes []string
	// AdminScope must be in a token for admin changes: the hub_* tools
	// that change servers and the admin REST API's writes (empty: none
	// beyond RequiredScopes).
	AdminScope string
	// Leeway is the clock skew allowed on exp and nbf (30s).
	Leeway time.Duration
	// JWKSMinRefresh is the least time between two fetches of the key set
	// for unknown key ids (30s).
	JWKSMinRefresh time.Duration
	// HTTPClient fetches the issuer's metadata and keys.
	HTTPClient *http.Client
}

type tokenKey struct{}

// tokenInfo returns the verified bearer token of a request (the HTTP front
// as an OAuth resource server), or nil.
func tokenInfo(ctx context.Context) *sdkauth.TokenInfo {
	ti, _ := ctx.Value(tokenKey{}).(*sdkauth.TokenInfo)
	return ti
}

// adminScopeKey is where a token's TokenInfo.Extra says which scope admin
// changes need.
const adminScopeKey = "mcp-hub/adminScope"

// resourceServer checks bearer JWTs for the front.
type resourceServer struct {
	opts     AuthOptions
	verify   *jwtauth.Verifier
	base     string // scheme://host of the audience, "" when it is no URL
	resource string // the audience's path ("/mcp")
	meta     http.Handler
}

const prmPath = "/.well-known/oauth-protected-resource"

func newResourceServer(o AuthOptions, f *httpFront) (*resourceServer, error) {
	if o.Issuer == "" || o.Audience == "" {
		return nil, errors.New("auth: issuer and audience are required")
	}
	v, err := jwtauth.New(jwtauth.Config{Issuer: o.Issuer, Audience: o.Audience, JWKSURL: o.JWKSURL,
		Leeway: o.Leeway, MinRefresh: o.JWKSMinRefresh, HTTPClient: o.HTTPClient, Logger: f.logger})
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	rs := &resourceServer{opts: o, verify: v}
	if u, err := url.Parse(o.Audience); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		rs.base, rs.resource = u.Scheme+"://"+u.Host, strings.TrimRight(u.Path, "/")
	}
	scopes := slices.Clone(o.RequiredScopes)
	if o.AdminScope != "" && !slices.Contains(scopes, o.AdminScope) {
		scopes = append(scopes, o.AdminScope)
	}
	rs.meta = sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               o.Audience,
		AuthorizationServers:   []string{o.Issuer},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "mcp-hub",
	})
	return rs, nil
}

// servesMetadata serves the Protected Resource Metadata, at its
// well-known path and at the path-suffixed one of the resource (RFC 9728
// §3.1), to anyone: it is public, and browser-based clients fetch it
// cross-origin.
func (rs *resourceServer) servesMetadata(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if p != prmPath && p != prmPath+"/mcp" && (rs.resource == "" || p != prmPath+rs.resource) {
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		rpcHTTPError(w, http.StatusMethodNotAllowed, "method not allowed")
		return true
	}
	rs.meta.ServeHTTP(w, r)
	return true
}

// metadataURL is the Protected Resource Metadata URL a challenge names:
// the path-suffixed one for the MCP endpoint.
func (rs *resourceServer) metadataURL(r *http.Request) string {
	base := rs.base
	if base == "" {
		scheme := "https"
		if r.TLS == nil && isLoopbackName(strings.Split(r.Host, ":")[0]) {
			scheme = "http"
		}
		base = scheme + "://" + r.Host
	}
	if r.URL.Path == "/mcp" || (rs.resource != "" && r.URL.Path == rs.resource) {
		return base + prmPath + cmpOrString(rs.resource, "/mcp")
	}
	return base + prmPath
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// quoted makes s a quoted-string of a challenge: no quotes, backslashes or
// control characters.
func quoted(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return ' '
		}
		return r
	}, s)
	return `"` + s + `"`
}

// challenge writes a 401 or 403 with its WWW-Authenticate header (RFC 6750
// §3, the MCP authorization spec): errCode is "" for a request without a
// token, invalid_token or insufficient_scope.
func (rs *resourceServer) challenge(w http.ResponseWriter, r *http.Request, status int, errCode, desc string, scopes []string) {
	var params []string
	if errCode != "" {
		params = append(params, "error="+quoted(errCode))
		if desc != "" {
			params = append(params, "error_description="+quoted(desc))
		}
	}
	if len(scopes) > 0 {
		params = append(params, "scope="+quoted(strings.Join(scopes, " ")))
	}
	params = append(params, "resource_metadata="+quoted(rs.metadataURL(r)))
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	msg := desc
	if msg == "" {
		msg = "missing bearer token (Authorization: Bearer <token>)"
	}
	rpcHTTPError(w, status, msg)
}

// authenticate checks a request's bearer token; on success the request
// carries its TokenInfo. It answers the request itself when it fails.
func (rs *resourceServer) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if msg := tokenInQuery(r); msg != "" {
		rs.challenge(w, r, http.StatusUnauthorized, "invalid_request", msg, nil)
		return r, false
	}
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		rs.challenge(w, r, http.StatusUnauthorized, "", "", rs.opts.RequiredScopes)
		return r, false
	}
	ti, err := rs.verify.Verify(r.Context(), tok, r)
	switch {
	case errors.Is(err, jwtauth.ErrUnavailable):
		w.Header().Set("Retry-After", "30")
		rpcHTTPError(w, http.StatusServiceUnavailable, "the hub cannot check tokens now: "+err.Error())
		return r, false
	case err != nil:
		rs.challenge(w, r, http.StatusUnauthorized, "invalid_token", strings.TrimPrefix(err.Error(), sdkauth.ErrInvalidToken.Error()+": "), nil)
		return r, false
	}
	if missing := missingScopes(ti, rs.opts.RequiredScopes); len(missing) > 0 {
		rs.challenge(w, r, http.StatusForbidden, "insufficient_scope", "the token lacks the scope "+strings.Join(missing, " "), rs.opts.RequiredScopes)
		return r, false
	}
	if strings.HasPrefix(r.URL.Path, "/api/") && r.Method != http.MethodGet && r.Method != http.MethodHead && rs.opts.AdminScope != "" &&
		!slices.Contains(ti.Scopes, rs.opts.AdminScope) {
		rs.challenge(w, r, http.StatusForbidden, "insufficient_scope", "admin changes need the scope "+rs.opts.AdminScope, []string{rs.opts.AdminScope})
		return r, false
	}
	if rs.opts.AdminScope != "" {
		if ti.Extra == nil {
			ti.Extra = map[string]any{}
		}
		ti.Extra[adminScopeKey] = rs.opts.AdminScope
	}
	return r.WithContext(context.WithValue(r.Context(), tokenKey{}, ti)), true
}

func missingScopes(ti *sdkauth.TokenInfo, want []string) []string {
	var out []string
	for _, s := range want {
		if !slices.Contains(ti.Scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

// tokenInQuery says why a request with a token in its query string is
// refused, or "".
func tokenInQuery(r *http.Request) string {
	q := r.URL.Query()
	for _, k := range []string{"token", "access_token", "auth", "key", "api_key"} {
		if q.Has(k) {
			return "tokens in the query string are not accepted; send Authorization: Bearer <token>"
		}
	}
	return ""
}

// requestToken returns the verified token of a go-sdk request, or nil.
func requestToken(req *mcp.CallToolRequest) *sdkauth.TokenInfo {
	if req == nil || req.Extra == nil {
		return nil
	}
	return req.Extra.TokenInfo
}

// adminRefusal says why an admin change over MCP is refused (a token
// without the admin scope), or "".
func adminRefusal(req *mcp.CallToolRequest, tool string) string {
	ti := requestToken(req)
	if ti == nil {
		return ""
	}
	need, _ := ti.Extra[adminScopeKey].(string)
	if need == "" || slices.Contains(ti.Scopes, need) {
		return ""
	}
	return fmt.Sprintf("%s changes what this hub runs, and that needs the admin scope %q, which your token (subject %q) lacks; ask for a token with it, or have an admin make the change",
		tool, need, ti.UserID)
}

// principal names a token's subject for the audit log: " sub:<subject>",
// or "".
func principal(ti *sdkauth.TokenInfo) string {
	if ti == nil || ti.UserID == "" {
		return ""
	}
	return " sub:" + ti.UserID
}

// checkAdmin checks that a request carries a valid token with the required
// scopes and the admin scope (for a handler beside the front that makes
// admin changes: the web console's login).
func (rs *resourceServer) checkAdmin(r *http.Request) error {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return &adminError{http.StatusUnauthorized, "UNAUTHENTICATED", "missing bearer token (Authorization: Bearer <token>)"}
	}
	ti, err := rs.verify.Verify(r.Context(), tok, r)
	if err != nil {
		return &adminError{http.StatusUnauthorized, "UNAUTHENTICATED", strings.TrimPrefix(err.Error(), sdkauth.ErrInvalidToken.Error()+": ")}
	}
	need := slices.Clone(rs.opts.RequiredScopes)
	if rs.opts.AdminScope != "" {
		need = append(need, rs.opts.AdminScope)
	}
	if missing := missingScopes(ti, need); len(missing) > 0 {
		return &adminError{http.StatusForbidden, "FORBIDDEN", "the token lacks the scope " + strings.Join(missing, " ")}
	}
	return nil
}
