package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestLoginLogout runs login and logout in-process against the fixture's
// OAuth mode (an MCP server with an authorization server of its own on
// 127.0.0.1). login prints the authorization URL and opens it with the
// $BROWSER of the command's environment (this test binary, a browser that
// follows redirects), stores the token, and list then shows it; logout
// deletes the token and revokes it at the server, and a second logout says
// there is nothing to log out of; login --token stores the token read from
// stdin, which logout deletes without revoking; an upstream nobody
// declared is refused. Both commands audit what they did, and no output
// holds a token.
func TestLoginLogout(t *testing.T) {
	log := filepath.Join(t.TempDir(), "oauth.log")
	url := testbin.Listen(t, os.Stderr, fixtureBin, "-transport", "http", "-oauth", "-oauth-log", log, "-only", "echo")
	s := newSetup(t, fmt.Sprintf("mcpServers:\n  secure:\n    url: %s\n", url))
	s.environ = []string{"BROWSER=" + browserCommand(t, "")}
	var outputs []string
	run := func(f func(context.Context, *Env) int, name string, args ...string) outcome {
		t.Helper()
		o := s.run(t, f, name, args...)
		outputs = append(outputs, o.stdout, o.stderr)
		return o
	}
	ctx := context.Background()

	o := run(Login, "login", "secure")
	if o.code != ExitOK || !strings.Contains(o.stdout, `Logged in to "secure"`) ||
		!regexp.MustCompile(`(?m)^http://127\.0\.0\.1:\d+/\S*authorize\S*$`).MatchString(o.stdout) {
		t.Fatalf("login: %s", o)
	}
	tok, err := s.store(t).Token(ctx, "secure")
	if err != nil || tok.AccessToken == "" || tok.RefreshToken == "" || tok.Pasted {
		t.Fatalf("the stored token after login: %v (access %t, refresh %t, pasted %t)", err, tok.AccessToken != "", tok.RefreshToken != "", tok.Pasted)
	}
	if o := run(List, "list"); o.code != ExitOK || !regexp.MustCompile(`(?m)^secure\b.*logged in`).MatchString(o.stdout) {
		t.Errorf("list after login: %s", o)
	}

	o = run(Logout, "logout", "secure")
	if o.code != ExitOK || o.stdout != `Logged out of "secure": the token was deleted (revoked at its authorization server). A running hub stops using it at its next refresh or restart.`+"\n" {
		t.Errorf("logout: %s", o)
	}
	if _, err := s.store(t).Token(ctx, "secure"); !errors.Is(err, upstream.ErrNoToken) {
		t.Errorf("a token is stored after logout: %v", err)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "revoked ") {
		t.Errorf("the authorization server revoked nothing:\n%s", b)
	}
	if o := run(Logout, "logout", "secure"); o.code != ExitOK || o.stdout != `"secure" is not logged in.`+"\n" {
		t.Errorf("logout again: %s", o)
	}

	s.stdin = strings.NewReader("pasted-token-0123456789\n")
	o = run(Login, "login", "--token", "secure")
	s.stdin = nil
	if o.code != ExitOK || o.stdout != `Stored the token for "secure". A running hub picks it up within seconds.`+"\n" {
		t.Errorf("login --token: %s", o)
	}
	if tok, err := s.store(t).Token(ctx, "secure"); err != nil || tok.AccessToken != "pasted-token-0123456789" || !tok.Pasted {
		t.Errorf("the stored token after login --token: %v (pasted %t)", err, tok.Pasted)
	}
	if o := run(Logout, "logout", "secure"); o.code != ExitOK || !strings.Contains(o.stdout, "(its authorization server offers no revocation)") {
		t.Errorf("logout of a pasted token: %s", o)
	}

	if o := run(Login, "login", "ghost"); o.code != ExitFail || !strings.HasPrefix(o.stderr, "mcp-hub login: ") || !strings.Contains(o.stderr, "ghost") {
		t.Errorf("login of an upstream nobody declared: %s", o)
	}
	if o := run(Login, "login"); o.code != ExitConfig || !strings.HasPrefix(o.stderr, "mcp-hub login: missing NAME\n") {
		t.Errorf("login without a name: %s", o)
	}

	entries, err := s.store(t).AuditLog(ctx, "secure", 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, en := range entries {
		actions = append(actions, en.Actor+":"+en.Action)
	}
	if got, want := strings.Join(actions, " "), "cli:login cli:logout cli:login cli:logout"; !strings.Contains(got, want) {
		t.Errorf("audit = %q, want %q in it", got, want)
	}
	for _, out := range outputs {
		if strings.Contains(out, tok.AccessToken) || strings.Contains(out, tok.RefreshToken) || strings.Contains(out, "pasted-token-0123456789") {
			t.Errorf("an output holds a token:\n%s", out)
		}
	}
}
