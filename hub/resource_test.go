package hub

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// testIdP is a small authorization server on 127.0.0.1: RFC 8414 metadata
// naming its JWKS, the key set it publishes now, and tokens it signs.
type testIdP struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []*signKey // published
	fetches atomic.Int32
}

type signKey struct {
	kid    string
	method jwt.SigningMethod
	priv   crypto.Signer
}

func newRSAKey(t *testing.T, kid string) *signKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &signKey{kid: kid, method: jwt.SigningMethodRS256, priv: k}
}

func newECKey(t *testing.T, kid string) *signKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &signKey{kid: kid, method: jwt.SigningMethodES256, priv: k}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk is the public JWK of k.
func (k *signKey) jwk(t *testing.T) map[string]any {
	switch pub := k.priv.Public().(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": k.kid, "use": "sig", "alg": "RS256", "n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes())}
	case *ecdsa.PublicKey:
		ek, err := pub.ECDH()
		if err != nil {
			t.Fatal(err)
		}
		b := ek.Bytes() // 0x04 || X || Y
		return map[string]any{"kty": "EC", "crv": "P-256", "kid": k.kid, "use": "sig", "alg": "ES256", "x": b64(b[1:33]), "y": b64(b[33:])}
	}
	t.Fatalf("key type %T", k.priv)
	return nil
}

func newIdP(t *testing.T, keys ...*signKey) *testIdP {
	t.Helper()
	p := &testIdP{keys: keys}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.srv.URL, "jwks_uri": p.srv.URL + "/jwks",
			"authorization_endpoint": p.srv.URL + "/authorize", "token_endpoint": p.srv.URL + "/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		var set []map[string]any
		for _, k := range p.keys {
			set = append(set, k.jwk(t))
		}
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": set})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *testIdP) publish(keys ...*signKey) {
	p.mu.Lock()
	p.keys = keys
	p.mu.Unlock()
}

// sign makes a token with k; claims override the defaults (a valid token
// for aud with scope "mcp", subject alice).
func (p *testIdP) sign(t *testing.T, k *signKey, aud string, claims jwt.MapClaims) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"iss": p.srv.URL, "aud": aud, "sub": "alice", "scope": "mcp", "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	tok := jwt.NewWithClaims(k.method, c)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const hubResource = "https://hub.example/mcp"

// startAuthHub serves a hub whose front takes the IdP's tokens, with its
// log at debug level in logs.
func startAuthHub(t *testing.T, idp *testIdP, logs *testbin.Buffer, minRefresh time.Duration, specs ...upstream.Spec) (*Hub, *httptest.Server) {
	t.Helper()
	opts := &Options{Approval: ApprovalAuto}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return startHTTPHubOpts(t, opts, &HTTPOptions{Auth: &AuthOptions{
		Issuer: idp.srv.URL, Audience: hubResource, RequiredScopes: []string{"mcp"}, AdminScope: "mcp-hub:admin", JWKSMinRefresh: minRefresh,
	}}, specs...)
}

func bearerHdr(tok string, kv ...string) map[string][]string {
	m := map[string][]string{"Authorization": {"Bearer " + tok}}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = append(m[kv[i]], kv[i+1])
	}
	return m
}

const prmURL = "https://hub.example/.well-known/oauth-protected-resource/mcp"

// TestResourceServer: the front takes tokens of its identity provider
// (RS256 and ES256, keys from the JWKS its metadata names) and refuses the
// others with the challenge the MCP authorization spec asks for; a key
// rotation is picked up on the first token signed with the new key, and
// tokens with made-up key ids do not make the hub fetch the key set more
// than once per interval.
func TestResourceServer(t *testing.T) {
	rsa1, ec1 := newRSAKey(t, "rsa1"), newECKey(t, "ec1")
	idp := newIdP(t, rsa1, ec1)
	_, srv := startAuthHub(t, idp, nil, time.Hour, fixtureSpec("a", "-only", "echo"))
	forged := &signKey{kid: "rsa1", method: jwt.SigningMethodRS256, priv: newRSAKey(t, "x").priv}
	hs := jwt.New(jwt.SigningMethodHS256)
	hs.Header["kid"] = "rsa1"
	hsTok, _ := hs.SignedString([]byte("a shared secret the hub does not have"))
	list := statelessBody("1", "tools/list", "")
	now := time.Now()
	tests := []struct {
		name   string
		tok    string
		status int
		want   []string // in WWW-Authenticate
	}{
		{"RS256", idp.sign(t, rsa1, hubResource, nil), 200, nil},
		{"ES256", idp.sign(t, ec1, hubResource, nil), 200, nil},
		{"audience with a trailing slash", idp.sign(t, rsa1, hubResource+"/", nil), 200, nil},
		{"no token", "", 401, []string{`resource_metadata="` + prmURL + `"`, `scope="mcp"`}},
		{"wrong audience", idp.sign(t, rsa1, "https://other.example/mcp", nil), 401, []string{`error="invalid_token"`, "not issued for this resource", `resource_metadata="` + prmURL + `"`}},
		{"expired", idp.sign(t, rsa1, hubResource, jwt.MapClaims{"exp": now.Add(-5 * time.Minute).Unix()}), 401, []string{`error="invalid_token"`, "expired"}},
		{"not valid yet", idp.sign(t, rsa1, hubResource, jwt.MapClaims{"nbf": now.Add(5 * time.Minute).Unix()}), 401, []string{`error="invalid_token"`, "not valid yet"}},
		{"no expiry", idp.sign(t, rsa1, hubResource, jwt.MapClaims{"exp": nil}), 401, []string{`error="invalid_token"`}},
		{"bad signature", idp.sign(t, forged, hubResource, nil), 401, []string{`error="invalid_token"`, "signature"}},
		{"HS256", hsTok, 401, []string{`error="invalid_token"`}},
		{"other issuer", idp.sign(t, rsa1, hubResource, jwt.MapClaims{"iss": "https://evil.example"}), 401, []string{`error="invalid_token"`, "issuer"}},
		{"no subject", idp.sign(t, rsa1, hubResource, jwt.MapClaims{"sub": nil}), 401, []string{`error="invalid_token"`, "subject"}},
		{"not a JWT", "abc.def", 401, []string{`error="invalid_token"`}},
		{"missing scope", idp.sign(t, rsa1, hubResource, jwt.MapClaims{"scope": "other"}), 403, []string{`error="insufficient_scope"`, `scope="mcp"`, `resource_metadata="` + prmURL + `"`}},
		{"scope as scp list", idp.sign(t, rsa1, hubResource, jwt.MapClaims{"scope": nil, "scp": []string{"mcp"}}), 200, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string][]string{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}
			if tt.tok != "" {
				hdr["Authorization"] = []string{"Bearer " + tt.tok}
			}
			resp := raw(t, "POST", srv.URL+"/mcp", list, hdr)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			wa := resp.Header.Get("WWW-Authenticate")
			if tt.status == 200 {
				if !strings.Contains(string(body), `"name":"echo"`) {
					t.Errorf("body %s", body)
				}
				return
			}
			if !strings.HasPrefix(wa, "Bearer ") {
				t.Fatalf("WWW-Authenticate %q", wa)
			}
			for _, w := range tt.want {
				if !strings.Contains(wa, w) {
					t.Errorf("WWW-Authenticate %q lacks %q", wa, w)
				}
			}
			if tt.tok == "" && strings.Contains(wa, "error=") {
				t.Errorf("a request without a token gets no error code: %q", wa)
			}
		})
	}

	// The issuer rotates its keys: the first token with the new key makes
	// the hub fetch the key set again.
	before := idp.fetches.Load()
	rsa2 := newRSAKey(t, "rsa2")
	idp.publish(rsa2, ec1)
	resp := raw(t, "POST", srv.URL+"/mcp", list, bearerHdr(idp.sign(t, rsa2, hubResource, nil), "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"))
	if resp.StatusCode != 200 {
		t.Fatalf("a token signed with the rotated key: status %d", resp.StatusCode)
	}
	if n := idp.fetches.Load() - before; n != 1 {
		t.Errorf("the rotation took %d key set fetches, want 1", n)
	}
	// Tokens naming keys the issuer never published are refused, and do
	// not make the hub fetch the key set again within the interval.
	before = idp.fetches.Load()
	for i := range 20 {
		ghost := newECKey(t, fmt.Sprintf("ghost%d", i))
		resp := raw(t, "POST", srv.URL+"/mcp", list, bearerHdr(idp.sign(t, ghost, hubResource, nil), "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"))
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Fatalf("unknown kid: status %d, %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if n := idp.fetches.Load() - before; n > 1 {
		t.Errorf("20 tokens with unknown key ids made %d key set fetches, want at most 1", n)
	}
	// The old key is gone from the set: its tokens are refused.
	resp = raw(t, "POST", srv.URL+"/mcp", list, bearerHdr(idp.sign(t, rsa1, hubResource, nil), "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"))
	if resp.StatusCode != 401 {
		t.Errorf("a token of the retired key: status %d", resp.StatusCode)
	}
	// A token in the query string never counts.
	resp = raw(t, "POST", srv.URL+"/mcp?access_token="+idp.sign(t, rsa2, hubResource, nil), list, map[string][]string{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}})
	if resp.StatusCode != 401 {
		t.Errorf("query token: status %d", resp.StatusCode)
	}
}

// TestResourceMetadata: the Protected Resource Metadata is served to
// anyone (any origin, no token) at its well-known path and the one
// suffixed with the resource's path, and names the resource, the issuer
// and the scopes.
func TestResourceMetadata(t *testing.T) {
	idp := newIdP(t, newRSAKey(t, "k"))
	_, srv := startAuthHub(t, idp, nil, 0)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp := raw(t, "GET", srv.URL+path, "", map[string][]string{"Origin": {"https://client.example"}})
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: status %d, CORS %q: %s", path, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body)
		}
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			Scopes               []string `json:"scopes_supported"`
			Bearer               []string `json:"bearer_methods_supported"`
		}
		if err := json.Unmarshal(body, &prm); err != nil {
			t.Fatal(err)
		}
		if prm.Resource != hubResource || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != idp.srv.URL ||
			strings.Join(prm.Scopes, " ") != "mcp mcp-hub:admin" || strings.Join(prm.Bearer, " ") != "header" {
			t.Errorf("%s: %+v", path, prm)
		}
	}
}

// TestResourceAdminScope: admin changes need the admin scope, over MCP
// (hub_* write tools refuse with a clear error, the read ones answer) and
// REST (403 with the scope); the audit log names the token's subject; a
// session belongs to the subject that opened it.
func TestResourceAdminScope(t *testing.T) {
	k := newRSAKey(t, "k")
	idp := newIdP(t, k)
	h, srv := startAuthHub(t, idp, nil, 0, fixtureSpec("a", "-only", "echo"))
	user := idp.sign(t, k, hubResource, nil)
	admin := idp.sign(t, k, hubResource, jwt.MapClaims{"sub": "root-person", "scope": "mcp mcp-hub:admin"})
	connect := func(tok string, version string) *mcp.ClientSession {
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "scoped", Version: "1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	addArgs := func(name string) map[string]any {
		return map[string]any{"name": name, "command": fixture, "args": []string{"-only", "echo"}}
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cs := connect(user, version)
			if got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: "hub_list_servers"}); isErr || !strings.Contains(got, `"a"`) {
				t.Errorf("hub_list_servers without the admin scope = %q", got)
			}
			got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: "hub_add_server", Arguments: addArgs("by-user")})
			if !isErr || !strings.Contains(got, `admin scope "mcp-hub:admin"`) || !strings.Contains(got, `"alice"`) {
				t.Errorf("hub_add_server without the admin scope = %q (error %v)", got, isErr)
			}
			name := "by-admin-" + strings.ReplaceAll(version, "-", "")
			if got, isErr := slCall(t, connect(admin, version), &mcp.CallToolParams{Name: "hub_add_server", Arguments: addArgs(name)}); isErr {
				t.Errorf("hub_add_server with the admin scope = %q", got)
			}
			log, err := h.opts.Store.(testStore).AuditLog(context.Background(), name, 0)
			if err != nil || len(log) == 0 || !strings.Contains(log[0].Actor, "sub:root-person") {
				t.Errorf("audit log of %s: %+v %v", name, log, err)
			}
			if log, _ := h.opts.Store.(testStore).AuditLog(context.Background(), "by-user", 0); len(log) != 0 {
				t.Errorf("the refused change is in the audit log: %+v", log)
			}
		})
	}

	// REST: reads need the required scopes, writes the admin scope.
	resp := raw(t, "GET", srv.URL+"/api/servers", "", bearerHdr(user))
	if resp.StatusCode != 200 {
		t.Errorf("GET /api/servers: %d", resp.StatusCode)
	}
	body := `{"name":"rest-one","command":"` + fixture + `"}`
	resp = raw(t, "POST", srv.URL+"/api/servers", body, bearerHdr(user))
	if wa := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.Contains(wa, `error="insufficient_scope"`) || !strings.Contains(wa, `scope="mcp-hub:admin"`) {
		t.Errorf("POST /api/servers without the admin scope: %d %q", resp.StatusCode, wa)
	}
	resp = raw(t, "POST", srv.URL+"/api/servers", body, bearerHdr(admin))
	if resp.StatusCode != 201 {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("POST /api/servers with the admin scope: %d %s", resp.StatusCode, b)
	}
	if log, _ := h.opts.Store.(testStore).AuditLog(context.Background(), "rest-one", 0); len(log) == 0 || log[0].Actor != "api sub:root-person" {
		t.Errorf("audit log of the REST change: %+v", log)
	}

	// A session is its opener's: another subject's token gets 404.
	resp = raw(t, "POST", srv.URL+"/mcp", initBody, bearerHdr(user))
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	resp = raw(t, "POST", srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, bearerHdr(admin, "Mcp-Session-Id", sid))
	if resp.StatusCode != 404 {
		t.Errorf("another subject's request on the session: %d", resp.StatusCode)
	}

	// A handler beside the front that makes admin changes (the web
	// console's login) takes the provider's tokens with the admin scope.
	fr, err := h.HTTPFront(&HTTPOptions{Auth: &AuthOptions{Issuer: idp.srv.URL, Audience: hubResource, RequiredScopes: []string{"mcp"}, AdminScope: "mcp-hub:admin"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ tok, code string }{{"", "UNAUTHENTICATED"}, {user, "FORBIDDEN"}, {admin, ""}} {
		req := httptest.NewRequest("POST", "/ui/login-codes", nil)
		if tt.tok != "" {
			req.Header.Set("Authorization", "Bearer "+tt.tok)
		}
		if err := fr.CheckBearer(req); (err == nil) != (tt.code == "") || (err != nil && ErrorCode(err) != tt.code) {
			t.Errorf("CheckBearer: %v, want %q", err, tt.code)
		}
	}
}

// TestResourceTokenStaysHere: a client's JWT never reaches an upstream
// (streamable HTTP upstream recording its request headers), the hub's log
// at debug level, a tool result, a REST answer or the audit log.
func TestResourceTokenStaysHere(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	upSrv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	upSrv.AddTool(&mcp.Tool{Name: "who", Description: "d", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args, _ := json.Marshal(req.Params)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "params " + string(args)}}}, nil
		})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upSrv }, nil)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	defer up.Close()
	k := newRSAKey(t, "k")
	idp := newIdP(t, k)
	logs := &testbin.Buffer{}
	h, srv := startAuthHub(t, idp, logs, 0, upstream.Spec{Name: "remote", URL: up.URL, Headers: map[string]string{"X-Upstream-Key": "k-for-upstream"}})
	tok := idp.sign(t, k, hubResource, jwt.MapClaims{"scope": "mcp mcp-hub:admin"})
	sig := tok[strings.LastIndexByte(tok, '.')+1:] // the part no log may carry
	var outputs []string
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"who", "hub_get_server"} {
			got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"name": "remote"}})
			if isErr {
				t.Errorf("%s: %s", name, got)
			}
			outputs = append(outputs, got)
		}
		cs.Close()
	}
	// An invalid copy of the token (its signature altered) is refused
	// without being logged either.
	resp := raw(t, "POST", srv.URL+"/mcp", initBody, bearerHdr(tok[:len(tok)-4]+"AAAA"))
	b, _ := io.ReadAll(resp.Body)
	outputs = append(outputs, string(b), resp.Header.Get("WWW-Authenticate"))
	resp = raw(t, "GET", srv.URL+"/api/servers/remote", "", bearerHdr(tok))
	b, _ = io.ReadAll(resp.Body)
	outputs = append(outputs, string(b))
	entries, _ := h.opts.Store.(testStore).AuditLog(context.Background(), "", 0)
	for _, e := range entries {
		outputs = append(outputs, e.Actor+" "+string(e.Detail))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the upstream saw no request")
	}
	for _, hdr := range seen {
		for name, vs := range hdr {
			for _, v := range vs {
				if strings.Contains(v, sig) {
					t.Errorf("the client's token reached the upstream in %s", name)
				}
			}
		}
		if hdr.Get("X-Upstream-Key") != "k-for-upstream" {
			t.Errorf("an upstream request without its own header: %v", hdr)
		}
	}
	if strings.Contains(logs.String(), sig) {
		t.Error("the hub's log holds the client's token")
	}
	for _, o := range outputs {
		if strings.Contains(o, sig) {
			t.Errorf("an output holds the client's token: %s", o)
		}
	}
}

// TestResourceIdPDown: while the identity provider cannot be reached and
// its keys were never fetched, requests get 503 with Retry-After (and
// /healthz still answers); once it answers, tokens are taken.
func TestResourceIdPDown(t *testing.T) {
	k := newRSAKey(t, "k")
	var down atomic.Bool
	down.Store(true)
	idp := newIdP(t, k)
	inner := idp.srv.Config.Handler
	idp.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down for maintenance", http.StatusBadGateway)
			return
		}
		inner.ServeHTTP(w, r)
	})
	_, srv := startAuthHub(t, idp, nil, 20*time.Millisecond, fixtureSpec("a", "-only", "echo"))
	list := statelessBody("1", "tools/list", "")
	tok := idp.sign(t, k, hubResource, nil)
	hdr := bearerHdr(tok, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list")
	resp := raw(t, "POST", srv.URL+"/mcp", list, hdr)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || strings.Contains(string(body), tok) {
		t.Fatalf("provider down: status %d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp := raw(t, "GET", srv.URL+"/healthz", "", nil); resp.StatusCode != 200 {
		t.Errorf("/healthz while the provider is down: %d", resp.StatusCode)
	}
	down.Store(false)
	eventually(t, 10*time.Second, "the token taken once the provider answers", func() bool {
		return raw(t, "POST", srv.URL+"/mcp", list, hdr).StatusCode == 200
	})
}
