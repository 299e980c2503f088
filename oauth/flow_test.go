package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// flowServer is an authorization server and the resource it protects on
// one 127.0.0.1 origin: the whole authorization code flow as go-sdk's
// handler walks it (Protected Resource Metadata, authorization server
// metadata, Dynamic Client Registration or a Client ID Metadata Document,
// /authorize redirecting to the redirect URI with a code and the state,
// /token). It accepts any port on a loopback redirect URI (RFC 8252
// section 7.3).
type flowServer struct {
	srv *httptest.Server

	// resource serves the resource's requests that carry a token with the
	// scopes it grants (nil: "ok" to any such request).
	resource func(w http.ResponseWriter, r *http.Request, body []byte, scopes []string)
	// before, when set, runs before the token is checked; true means it
	// answered.
	before func(w http.ResponseWriter, r *http.Request, body []byte) bool
	// scopes are what a token must have, by resource path.
	scopes map[string]string
	// cimd advertises Client ID Metadata Document support.
	cimd bool
	// refuse makes /authorize answer access_denied.
	refuse bool
	// onRedirect, when set, sees the redirect URI of every registration
	// and authorization request ("register" or "authorize").
	onRedirect func(step, redirect string)

	mu         sync.Mutex
	registered []string          // redirect URIs registered
	authorized []string          // the redirect_uri of each authorization request
	codes      map[string]string // code → its scope
	tokens     map[string]string // access token → its scope
	methods    []string          // JSON-RPC methods the resource got, with their MCP-Protocol-Version header
}

func newFlowServer(t *testing.T, configure func(*flowServer)) *flowServer {
	t.Helper()
	f := &flowServer{codes: map[string]string{}, tokens: map[string]string{}, scopes: map[string]string{}}
	if configure != nil {
		configure(f)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSONBody(w, http.StatusOK, map[string]any{"resource": f.srv.URL + "/mcp", "authorization_servers": []string{f.srv.URL}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSONBody(w, http.StatusOK, map[string]any{
			"issuer": f.srv.URL, "authorization_endpoint": f.srv.URL + "/authorize", "token_endpoint": f.srv.URL + "/token",
			"registration_endpoint": f.srv.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "client_id_metadata_document_supported": f.cimd,
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var md struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
			writeJSONBody(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
			return
		}
		if f.onRedirect != nil {
			f.onRedirect("register", md.RedirectURIs[0])
		}
		f.mu.Lock()
		f.registered = append(f.registered, md.RedirectURIs...)
		id := fmt.Sprintf("client-%d", len(f.registered))
		f.mu.Unlock()
		writeJSONBody(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		redirect, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || redirect.Scheme != "http" || redirect.Hostname() != "127.0.0.1" || !f.knows(q.Get("client_id"), redirect) {
			http.Error(w, "unknown redirect_uri", http.StatusBadRequest)
			return
		}
		if f.onRedirect != nil {
			f.onRedirect("authorize", redirect.String())
		}
		f.mu.Lock()
		f.authorized = append(f.authorized, redirect.String())
		code := fmt.Sprintf("code-%d", len(f.authorized))
		f.codes[code] = q.Get("scope")
		f.mu.Unlock()
		back := url.Values{"state": {q.Get("state")}}
		if f.refuse {
			back.Set("error", "access_denied")
		} else {
			back.Set("code", code)
		}
		redirect.RawQuery = back.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		scope, ok := f.codes[r.PostForm.Get("code")]
		delete(f.codes, r.PostForm.Get("code"))
		tok := fmt.Sprintf("at-%d", len(f.tokens)+1)
		if ok {
			f.tokens[tok] = scope
		}
		f.mu.Unlock()
		if !ok {
			writeJSONBody(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		writeJSONBody(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": scope})
	})
	mux.HandleFunc("/mcp/", f.serveResource)
	mux.HandleFunc("/mcp", f.serveResource)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// knows reports whether redirect may receive client_id's code: a
// registered URI, any port of it (RFC 8252 section 7.3); a client id that
// is a URL (a metadata document) or was not registered here names a
// loopback redirect the document or the registration lists.
func (f *flowServer) knows(clientID string, redirect *url.URL) bool {
	if !strings.HasPrefix(clientID, "client-") {
		return redirect.Path == "/callback"
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.ContainsFunc(f.registered, func(s string) bool {
		u, err := url.Parse(s)
		return err == nil && u.Hostname() == redirect.Hostname() && u.Path == redirect.Path
	})
}

func (f *flowServer) serveResource(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
		f.mu.Lock()
		f.methods = append(f.methods, msg.Method+" "+r.Header.Get("Mcp-Protocol-Version"))
		f.mu.Unlock()
	}
	if f.before != nil && f.before(w, r, body) {
		return
	}
	prm := f.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	f.mu.Lock()
	scope, ok := f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	f.mu.Unlock()
	need := f.scopes[r.URL.Path]
	switch {
	case !ok:
		challenge := fmt.Sprintf(`Bearer resource_metadata=%q`, prm)
		if need != "" {
			challenge += fmt.Sprintf(`, scope=%q`, need)
		}
		w.Header().Set("WWW-Authenticate", challenge)
		writeJSONBody(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
		return
	case need != "" && !slices.Contains(strings.Fields(scope), need):
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, need, prm))
		writeJSONBody(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope"})
		return
	}
	if f.resource != nil {
		f.resource(w, r, body, strings.Fields(scope))
		return
	}
	fmt.Fprint(w, "ok")
}

// seen returns the JSON-RPC methods the resource got, each with its
// MCP-Protocol-Version header.
func (f *flowServer) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.methods)
}

// authorizations returns the redirect_uri of every authorization request.
func (f *flowServer) authorizations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.authorized)
}

func (f *flowServer) registrations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.registered)
}

func writeJSONBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// browse is a browser that a person uses to log in: it opens the
// authorization URL and follows the authorization server's redirect to the
// loopback listener.
func browse(ctx context.Context, _ string, _ any, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// mcpServer returns go-sdk's streamable HTTP handler of a server with one
// tool; stateless serves the 2026-07-28 era, otherwise sessions.
func mcpServer(stateless bool) http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "flow", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}
