package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthServe: serve --http with an auth section is a resource server of
// that identity provider: it serves the Protected Resource Metadata, answers
// a request without a token with the challenge naming it, and generates no
// static token; auth with http.token is a config error.
func TestAuthServe(t *testing.T) {
	idp := httptest.NewServer(http.NotFoundHandler()) // never asked here: no token is sent
	defer idp.Close()
	data := t.TempDir()
	cfg := fmt.Sprintf("auth:\n  issuer: %s\n  audience: https://hub.example/mcp\n  requiredScopes: [mcp]\nservers:\n  fx:\n    command: %s\n    args: [-only, echo]\n", idp.URL, fixtureBin)
	_, base := startHTTPProc(t, data, cfg)

	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var prm struct {
		Resource string   `json:"resource"`
		AS       []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&prm)
	resp.Body.Close()
	if err != nil || prm.Resource != "https://hub.example/mcp" || len(prm.AS) != 1 || prm.AS[0] != idp.URL {
		t.Errorf("metadata: %+v %v", prm, err)
	}
	resp, err = http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if wa := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 ||
		!strings.Contains(wa, `resource_metadata="https://hub.example/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("no token: %d %q %s", resp.StatusCode, wa, body)
	}
	if _, err := os.Stat(filepath.Join(data, "http-token")); err == nil {
		t.Error("a static token was generated beside auth")
	}

	out, code := cli(t, t.TempDir(), "serve", "--http", "127.0.0.1:0", "--config",
		writeFile(t, "both.yaml", fmt.Sprintf("auth: {issuer: %q, audience: a}\nhttp: {token: %q}\n", idp.URL, strings.Repeat("t", 32))))
	if code != exitConfig || !strings.Contains(out, "excludes http.token") {
		t.Errorf("auth with http.token: exit %d: %s", code, out)
	}
}
