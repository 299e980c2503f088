package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 13: remote upstreams behind OAuth 2.1, against the fixture's -oauth
// mode (an MCP server and an authorization server of its own, real HTTP on
// 127.0.0.1).

// oauthFixture is a running -oauth fixture.
type oauthFixture struct {
	url, log string
}

func startOAuthFixture(t *testing.T, ttl time.Duration, args ...string) oauthFixture {
	t.Helper()
	log := filepath.Join(t.TempDir(), "oauth.log")
	u := testbin.Listen(t, testLogWriter{t}, fixtureBin, append([]string{"-transport", "http", "-oauth", "-oauth-token-ttl", ttl.String(), "-oauth-log", log}, args...)...) // a later -transport wins
	return oauthFixture{url: u, log: log}
}

// events returns the fixture's log lines of a kind ("access", "refresh",
// "grant", "revoked", "foreign").
func (f oauthFixture) events(t *testing.T, kind string) []string {
	t.Helper()
	b, err := os.ReadFile(f.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, kind+" "); ok {
			out = append(out, v)
		}
	}
	return out
}

// revokeAll revokes every token the fixture issued (its /admin/revoke).
func (f oauthFixture) revokeAll(t *testing.T) {
	t.Helper()
	resp, err := http.Post(strings.TrimSuffix(strings.TrimSuffix(f.url, "/mcp"), "/sse")+"/admin/revoke", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// outputs collects everything the hub showed, for the secret search.
type outputs struct {
	mu  sync.Mutex
	all []string
}

func (o *outputs) add(what, s string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all = append(o.all, what+":\n"+s)
	return s
}

// oauthHub is a hub over stdio with a go-sdk client; with follow set the
// client supports URL elicitation and opens what it is asked to open like
// a browser that follows redirects.
type oauthHub struct {
	t       *testing.T
	cs      *mcp.ClientSession
	base    string // the HTTP front, when it serves one
	stderr  *testbin.Buffer
	out     *outputs
	mu      sync.Mutex
	elicits []string
}

func startOAuthHub(t *testing.T, data, cfg string, out *outputs, follow bool, args ...string) *oauthHub {
	t.Helper()
	h := &oauthHub{t: t, stderr: &testbin.Buffer{}, out: out}
	opts := &mcp.ClientOptions{}
	if follow {
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
		opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.mu.Lock()
			h.elicits = append(h.elicits, r.Params.Mode+": "+r.Params.Message)
			h.mu.Unlock()
			if r.Params.Mode != "url" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			go func() {
				resp, err := http.Get(r.Params.URL)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			return &mcp.ElicitResult{Action: "accept"}, nil
		}
	}
	cmd := exec.Command(hubBin, append([]string{"--data-dir", data, "--config", cfg, "--log-level", "debug"}, args...)...)
	cmd.Env = append(os.Environ(), "MCP_HUB_CONFIG=")
	cmd.Stderr = h.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "oauth-test-client", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.cs = cs
	if slices.Contains(args, "--http") {
		waitFor(t, 10*time.Second, "the HTTP address in the log", func() bool {
			if m := streamableRE.FindStringSubmatch(h.stderr.String()); m != nil {
				h.base = m[1]
				return true
			}
			return false
		})
	}
	t.Cleanup(func() {
		cs.Close()
		out.add("hub stderr", h.stderr.String())
	})
	return h
}

// call calls a tool; every result goes to the outputs.
func (h *oauthHub) call(name string, args map[string]any) (string, map[string]any, bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		h.out.add(name+" structured", string(b))
		_ = json.Unmarshal(b, &sc)
	}
	h.out.add(name, text)
	return text, sc, res.IsError
}

// state returns an upstream's state as hub_get_server reports it.
func (h *oauthHub) state(name string) string {
	_, sc, _ := h.call("hub_get_server", map[string]any{"name": name})
	v, _ := sc["server"].(map[string]any)
	s, _ := v["state"].(string)
	return s
}

func (h *oauthHub) waitState(name, want string, d time.Duration) {
	h.t.Helper()
	waitFor(h.t, d, name+" "+want, func() bool { return h.state(name) == want })
}

func (h *oauthHub) tools() []string {
	h.t.Helper()
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// get reads a path of the hub's HTTP front (REST, metrics) with its token;
// the answer goes to the outputs.
func (h *oauthHub) get(path, token string) string {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return h.out.add("GET "+path, string(b))
}

// hubCLI runs an mcp-hub command with $BROWSER set to a browser that
// follows redirects (the conformance client's -browse mode).
func hubCLI(t *testing.T, out *outputs, data, cfg string, args ...string) (string, int) {
	t.Helper()
	o, code := runCLI(t, data, cfg, "", []string{"BROWSER=" + ccBin + " -browse"}, args...)
	return out.add("mcp-hub "+strings.Join(args, " "), o), code
}

// TestOAuthLoginRefreshRevoke is issue 13's end-to-end test: an upstream
// behind OAuth starts in NEEDS_LOGIN (its tools not in the catalog, the
// state and the command to run shown), mcp-hub login logs in through a
// browser that follows redirects and the running hub picks the token up;
// the token expires and is refreshed without the client noticing; the
// refresh token is revoked and the upstream goes to NEEDS_LOGIN while the
// other upstreams keep serving; a call then says to log in; logging in
// again brings it back; logout deletes and revokes the token. No output of
// the hub, the command line or the admin tools holds an access or refresh
// token, no upstream ever sees another's token, and the data dir and
// database are 0700/0600.
func TestOAuthLoginRefreshRevoke(t *testing.T) {
	secure := startOAuthFixture(t, 3*time.Second, "-only", "add", "-extra", "secure_tool")
	other := startOAuthFixture(t, time.Hour, "-only", "cwd", "-extra", "other_tool")
	data := filepath.Join(t.TempDir(), "data")
	httpToken := strings.Repeat("h", 40)
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf(`http:
  token: %s
mcpServers:
  secure:
    url: %s
  other:
    url: %s
  plain:
    command: %s
    args: [-only, pid, -extra, plain_tool]
`, httpToken, secure.url, other.url, fixtureBin))
	out := &outputs{}
	h := startOAuthHub(t, data, cfg, out, false, "--http", "127.0.0.1:0", "--stdio")

	// Before any login: NEEDS_LOGIN, with the command to run.
	h.waitState("secure", "NEEDS_LOGIN", 20*time.Second)
	text, sc, _ := h.call("hub_get_server", map[string]any{"name": "secure"})
	if !strings.Contains(text, "mcp-hub login secure") || !strings.Contains(text, "needs a login to "+strings.TrimSuffix(secure.url, "/mcp")) || sc["auth"] == nil {
		t.Errorf("hub_get_server before login:\n%s\n%v", text, sc)
	}
	if tools := h.tools(); slices.Contains(tools, "secure_tool") || !slices.Contains(tools, "plain_tool") {
		t.Errorf("tools before login = %v: want plain_tool and not secure_tool", tools)
	}
	waitFor(t, 15*time.Second, "status shows needs login", func() bool {
		s, _ := hubCLI(t, out, data, cfg, "status")
		return lineHas(s, "secure", "NEEDS_LOGIN", "needs login: mcp-hub login secure")
	})

	// mcp-hub login: the running hub picks the token up within seconds.
	for _, name := range []string{"secure", "other"} {
		s, code := hubCLI(t, out, data, cfg, "login", name)
		if code != 0 || !strings.Contains(s, "Logged in to \""+name+"\"") || !strings.Contains(s, "http://127.0.0.1:") {
			t.Fatalf("mcp-hub login %s: exit %d\n%s", name, code, s)
		}
	}
	h.waitState("secure", "CONNECTED", 15*time.Second)
	h.waitState("other", "CONNECTED", 15*time.Second)
	waitFor(t, 10*time.Second, "secure_tool in the catalog", func() bool { return slices.Contains(h.tools(), "secure_tool") })
	if text, _, isErr := h.call("secure_tool", map[string]any{"message": "one"}); isErr || !strings.Contains(text, "one") {
		t.Fatalf("secure_tool after login: %q (error %v)", text, isErr)
	}
	text, _, _ = h.call("hub_get_server", map[string]any{"name": "secure"})
	if !strings.Contains(text, "login: logged in to "+strings.TrimSuffix(secure.url, "/mcp")) || !strings.Contains(text, "expires in") {
		t.Errorf("hub_get_server after login:\n%s", text)
	}
	if s, _ := hubCLI(t, out, data, cfg, "list"); !lineHas(s, "secure", "logged in", "refreshable") {
		t.Errorf("list after login:\n%s", s)
	}

	// The access token lives 3s: calls keep working across several
	// lifetimes, the hub refreshing before expiry.
	refreshes := len(secure.events(t, "refresh"))
	for end := time.Now().Add(7 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if text, _, isErr := h.call("secure_tool", map[string]any{"message": "two"}); isErr || !strings.Contains(text, "two") {
			t.Fatalf("secure_tool while the token expires: %q (error %v)", text, isErr)
		}
	}
	if n := len(secure.events(t, "refresh")); n < refreshes+2 {
		t.Errorf("%d refreshes over 7s of a 3s token, want at least 2", n-refreshes)
	}

	// Revoked: NEEDS_LOGIN, and only this upstream is affected.
	secure.revokeAll(t)
	h.waitState("secure", "NEEDS_LOGIN", 15*time.Second)
	for _, tool := range []string{"plain_tool", "other_tool"} {
		if text, _, isErr := h.call(tool, map[string]any{"message": "still"}); isErr || !strings.Contains(text, "still") {
			t.Errorf("%s while secure needs a login: %q (error %v)", tool, text, isErr)
		}
	}
	if h.state("other") != "CONNECTED" {
		t.Errorf("other is %s while secure needs a login", h.state("other"))
	}
	if text, _, isErr := h.call("secure_tool", map[string]any{"message": "x"}); !isErr || !strings.Contains(text, "mcp-hub login secure") {
		t.Errorf("a call while secure needs a login: %q (error %v), want an error naming the command", text, isErr)
	}

	// Log in again: back.
	if s, code := hubCLI(t, out, data, cfg, "login", "secure"); code != 0 {
		t.Fatalf("second login: exit %d\n%s", code, s)
	}
	h.waitState("secure", "CONNECTED", 15*time.Second)
	if text, _, isErr := h.call("secure_tool", map[string]any{"message": "three"}); isErr || !strings.Contains(text, "three") {
		t.Fatalf("secure_tool after logging in again: %q (error %v)", text, isErr)
	}

	// Every output a person or a model can see.
	hubCLI(t, out, data, cfg, "status")
	hubCLI(t, out, data, cfg, "list")
	hubCLI(t, out, data, cfg, "export")
	hubCLI(t, out, data, cfg, "export", "--reveal")
	hubCLI(t, out, data, cfg, "export", "--format", "yaml", "--reveal")
	if s, _ := hubCLI(t, out, data, cfg, "doctor", "--log-level", "debug"); !lineHas(s, "secure", "ok") || !strings.Contains(s, "login: logged in") {
		t.Errorf("doctor:\n%s", s)
	}
	h.call("hub_list_servers", nil)
	h.call("hub_get_server", map[string]any{"name": "other"})
	if s := h.get("/api/servers/secure", httpToken); !strings.Contains(s, `"loggedIn":true`) {
		t.Errorf("GET /api/servers/secure: %s", s)
	}
	h.get("/api/servers", httpToken)
	h.get("/metrics", httpToken)

	// Logout deletes the token and revokes it: the hub needs a login again.
	revokedBefore := len(secure.events(t, "revoked"))
	if s, code := hubCLI(t, out, data, cfg, "logout", "secure"); code != 0 || !strings.Contains(s, "revoked at its authorization server") {
		t.Fatalf("logout: exit %d\n%s", code, s)
	}
	if n := len(secure.events(t, "revoked")); n != revokedBefore+2 {
		t.Errorf("logout revoked %d tokens, want the refresh and the access token", n-revokedBefore)
	}
	h.waitState("secure", "NEEDS_LOGIN", 15*time.Second)
	if s, _ := hubCLI(t, out, data, cfg, "logout", "secure"); !strings.Contains(s, "not logged in") {
		t.Errorf("second logout: %s", s)
	}

	for _, f := range []oauthFixture{secure, other} {
		if foreign := f.events(t, "foreign"); len(foreign) > 0 {
			t.Errorf("%s was sent %d token(s) it never issued", f.url, len(foreign))
		}
	}
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(data, "hub.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("hub.db mode: %v %v", fi.Mode(), err)
	}

	h.cs.Close()
	time.Sleep(200 * time.Millisecond) // the hub's last log lines
	out.add("hub stderr", h.stderr.String())
	var tokens []string
	for _, f := range []oauthFixture{secure, other} {
		tokens = append(tokens, f.events(t, "access")...)
		tokens = append(tokens, f.events(t, "refresh")...)
	}
	if len(tokens) < 8 {
		t.Fatalf("only %d tokens issued", len(tokens))
	}
	searchSecrets(t, out, tokens)
}

// searchSecrets fails for every secret that shows in an output.
func searchSecrets(t *testing.T, out *outputs, secrets []string) {
	t.Helper()
	out.mu.Lock()
	defer out.mu.Unlock()
	for _, o := range out.all {
		for _, s := range secrets {
			if strings.Contains(o, s) {
				what, _, _ := strings.Cut(o, "\n")
				t.Errorf("%s shows the token %s…", what, s[:10])
			}
		}
	}
}

// TestOAuthLoginThroughElicitation: a client that supports URL-mode
// elicitation logs in from the chat. hub_connect_server on an upstream in
// NEEDS_LOGIN asks the client to open the authorization URL and completes
// the flow through the hub's loopback listener; later, a call that meets
// NEEDS_LOGIN (the tokens were revoked) does the same and then runs.
func TestOAuthLoginThroughElicitation(t *testing.T) {
	secure := startOAuthFixture(t, time.Hour, "-only", "add", "-extra", "secure_tool")
	data := filepath.Join(t.TempDir(), "data")
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf("mcpServers:\n  secure:\n    url: %s\n", secure.url))
	out := &outputs{}
	h := startOAuthHub(t, data, cfg, out, true)
	h.waitState("secure", "NEEDS_LOGIN", 20*time.Second)

	text, _, isErr := h.call("hub_connect_server", map[string]any{"name": "secure"})
	if isErr || !strings.Contains(text, "Logged in") {
		t.Fatalf("hub_connect_server: %q (error %v)", text, isErr)
	}
	h.waitState("secure", "CONNECTED", 15*time.Second)
	if text, _, isErr := h.call("secure_tool", map[string]any{"message": "chat"}); isErr || !strings.Contains(text, "chat") {
		t.Fatalf("secure_tool after logging in from the chat: %q (error %v)", text, isErr)
	}

	secure.revokeAll(t)
	h.waitState("secure", "NEEDS_LOGIN", 15*time.Second)
	if text, _, isErr := h.call("secure_tool", map[string]any{"message": "again"}); isErr || !strings.Contains(text, "again") {
		t.Fatalf("a call that meets NEEDS_LOGIN: %q (error %v), want a login through the client and the result\n%s", text, isErr, h.stderr.String())
	}
	h.mu.Lock()
	elicits := slices.Clone(h.elicits)
	h.mu.Unlock()
	if len(elicits) != 2 || !strings.HasPrefix(elicits[0], "url: ") || !strings.Contains(elicits[0], `"secure"`) {
		t.Errorf("elicitations = %q, want two URL-mode ones naming the server", elicits)
	}
	if n := len(slices.DeleteFunc(secure.events(t, "grant"), func(g string) bool { return g != "authorization_code" })); n != 2 {
		t.Errorf("%d authorization code grants, want 2 (two logins)", n)
	}
	h.cs.Close()
	searchSecrets(t, out, append(secure.events(t, "access"), secure.events(t, "refresh")...))
}

// TestOAuthSSE: a legacy SSE upstream logs in the same way; its stream and
// its posts carry the token. The redirect listener is on the configured
// oauth.redirectPort.
func TestOAuthSSE(t *testing.T) {
	f := startOAuthFixture(t, time.Hour, "-transport", "sse", "-only", "add", "-extra", "sse_tool")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	data := filepath.Join(t.TempDir(), "data")
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf("mcpServers:\n  legacy:\n    url: %s\n    oauth:\n      redirectPort: %d\n", f.url, port))
	out := &outputs{}
	s, code := hubCLI(t, out, data, cfg, "login", "legacy")
	if code != 0 {
		t.Fatalf("login: exit %d\n%s", code, s)
	}
	if want := url.QueryEscape(fmt.Sprintf("http://127.0.0.1:%d/callback", port)); !strings.Contains(s, "redirect_uri="+want) {
		t.Errorf("the authorization URL does not redirect to the configured port %d:\n%s", port, s)
	}
	h := startOAuthHub(t, data, cfg, out, false)
	h.waitState("legacy", "CONNECTED", 20*time.Second)
	if text, _, isErr := h.call("sse_tool", map[string]any{"message": "over sse"}); isErr || !strings.Contains(text, "over sse") {
		t.Fatalf("sse_tool: %q (error %v)", text, isErr)
	}
	h.cs.Close()
	searchSecrets(t, out, append(f.events(t, "access"), f.events(t, "refresh")...))
}
