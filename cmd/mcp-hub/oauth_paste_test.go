package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// pat gets a personal access token from the fixture (its /admin/pat, as a
// provider's settings page hands one out).
func (f oauthFixture) pat(t *testing.T) string {
	t.Helper()
	resp, err := http.Post(strings.TrimSuffix(strings.TrimSuffix(f.url, "/mcp"), "/sse")+"/admin/pat", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /admin/pat: %d %s %v", resp.StatusCode, b, err)
	}
	return strings.TrimSpace(string(b))
}

// hubCLIStdin runs an mcp-hub command with stdin.
func hubCLIStdin(t *testing.T, out *outputs, data, cfg, stdin string, args ...string) (string, int) {
	t.Helper()
	o, code := runCLI(t, data, cfg, stdin, nil, args...)
	return out.add("mcp-hub "+strings.Join(args, " "), o), code
}

// TestOAuthPastedToken is issue 13's third way to log in: a personal
// access token pasted on stdin (mcp-hub login NAME --token) is sent as a
// bearer token to that server, shown as "logged in with a pasted token",
// never refreshed, and dropped when the server refuses it (NEEDS_LOGIN);
// a line that is not a token is refused and nothing is stored; a server
// with a static Authorization header keeps working as before and cannot be
// logged in to. Neither token shows in any output.
func TestOAuthPastedToken(t *testing.T) {
	paste := startOAuthFixture(t, time.Hour, "-only", "add", "-extra", "pasted_tool")
	static := startOAuthFixture(t, time.Hour, "-only", "add", "-extra", "static_tool")
	pasted, header := paste.pat(t), static.pat(t)
	t.Setenv("MCPHUB_TEST_PAT", header)
	data := filepath.Join(t.TempDir(), "data")
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf(`mcpServers:
  pasted:
    url: %s
  static:
    url: %s
    headers:
      Authorization: "Bearer ${MCPHUB_TEST_PAT}"
`, paste.url, static.url))
	out := &outputs{}

	if s, code := hubCLIStdin(t, out, data, cfg, "two words\n", "login", "pasted", "--token"); code == 0 || !strings.Contains(s, "one line without spaces") {
		t.Errorf("a pasted line with a space: exit %d\n%s", code, s)
	}
	if s, _ := hubCLI(t, out, data, cfg, "logout", "pasted"); !strings.Contains(s, "not logged in") {
		t.Errorf("logout after a refused paste (want nothing stored): %s", s)
	}
	if s, code := hubCLIStdin(t, out, data, cfg, header+"\n", "login", "static", "--token"); code == 0 || !strings.Contains(s, "Authorization header of its own") {
		t.Errorf("a paste for a server with a static Authorization header: exit %d\n%s", code, s)
	}
	if s, code := hubCLIStdin(t, out, data, cfg, "Bearer "+pasted+"\n", "login", "pasted", "--token"); code != 0 || !strings.Contains(s, `Stored the token for "pasted"`) {
		t.Fatalf("mcp-hub login pasted --token: exit %d\n%s", code, s)
	}

	h := startOAuthHub(t, data, cfg, out, false)
	h.waitState("pasted", "CONNECTED", 20*time.Second)
	h.waitState("static", "CONNECTED", 20*time.Second)
	for _, tool := range []string{"pasted_tool", "static_tool"} {
		if text, _, isErr := h.call(tool, map[string]any{"message": "pat"}); isErr || !strings.Contains(text, "pat") {
			t.Fatalf("%s: %q (error %v)", tool, text, isErr)
		}
	}
	if text, _, _ := h.call("hub_get_server", map[string]any{"name": "pasted"}); !strings.Contains(text, "logged in with a pasted token") {
		t.Errorf("hub_get_server pasted:\n%s", text)
	}
	// status shows what the running hub last wrote to the store, which it
	// does off the request path: wait for the report.
	waitFor(t, 10*time.Second, "mcp-hub status to report pasted CONNECTED, logged in with a pasted token", func() bool {
		s, _ := hubCLI(t, out, data, cfg, "status")
		return lineHas(s, "pasted", "CONNECTED", "logged in with a pasted token")
	})
	hubCLI(t, out, data, cfg, "list")
	hubCLI(t, out, data, cfg, "export", "--reveal")

	// Refused: dropped (there is nothing to refresh it with), NEEDS_LOGIN.
	paste.revokeAll(t)
	h.call("pasted_tool", map[string]any{"message": "refused"})
	h.waitState("pasted", "NEEDS_LOGIN", 15*time.Second)
	if text, _, isErr := h.call("pasted_tool", map[string]any{"message": "x"}); !isErr || !strings.Contains(text, "mcp-hub login pasted") {
		t.Errorf("a call after the pasted token was refused: %q (error %v), want an error naming the command", text, isErr)
	}
	if grants := paste.events(t, "grant"); len(grants) > 0 {
		t.Errorf("grants at the token endpoint for a pasted token: %q", grants)
	}
	if s, _ := hubCLI(t, out, data, cfg, "logout", "pasted"); !strings.Contains(s, "not logged in") {
		t.Errorf("logout after the refused token was dropped: %s", s)
	}
	if text, _, isErr := h.call("static_tool", map[string]any{"message": "still"}); isErr || !strings.Contains(text, "still") {
		t.Errorf("static_tool while pasted needs a login: %q (error %v)", text, isErr)
	}
	for _, f := range []oauthFixture{paste, static} {
		if foreign := f.events(t, "foreign"); len(foreign) > 0 {
			t.Errorf("%s was sent %d token(s) it never issued", f.url, len(foreign))
		}
	}

	h.cs.Close()
	time.Sleep(200 * time.Millisecond) // the hub's last log lines
	out.add("hub stderr", h.stderr.String())
	if tools := slices.Concat(paste.events(t, "access"), static.events(t, "access")); len(tools) != 2 {
		t.Fatalf("tokens issued: %d, want the 2 personal tokens", len(tools))
	}
	searchSecrets(t, out, []string{pasted, header})
}
