package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// apiJSON sends body (marshalled) to the admin API with the test token.
func apiJSON(t *testing.T, method, url string, body any) (int, map[string]any) {
	t.Helper()
	s := ""
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		s = string(b)
	}
	return apiDo(t, method, url, s, testToken)
}

// reviewed GETs name over REST and returns the body of POST …/approve
// that approves what GET showed: its digest.
func reviewed(t *testing.T, api, name string) map[string]any {
	t.Helper()
	code, out := apiJSON(t, "GET", api+"/"+name, nil)
	d, _ := out["digest"].(string)
	if code != 200 || d == "" {
		t.Fatalf("GET %s: %d %v, want its approval digest", name, code, out)
	}
	return map[string]any{"digest": d}
}

// apiApprove approves name over REST, as GET shows it, and waits until it
// is connected.
func apiApprove(t *testing.T, api, name string) map[string]any {
	t.Helper()
	code, out := apiJSON(t, "POST", api+"/"+name+"/approve", reviewed(t, api, name))
	if code != 200 || apiSettled(t, api, name, out)["state"] != "CONNECTED" {
		t.Fatalf("approve %s: %d %v", name, code, out)
	}
	return out
}

// lines reads a marker file's lines.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// storePolls waits long enough for the hub to have acted on the store many
// times (its StorePoll is 50 ms in these tests).
func storePolls() { time.Sleep(time.Second) }

// Issue 12 (A20): an approved stdio upstream whose value of a variable that
// changes what code loads is changed through PUT /api/servers/{name} goes
// back to pending; nothing runs with the new value until POST …/approve, and
// every answer on the way shows the new value in full.
func TestAPIEnvValueEditNeedsApproval(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, v, before, after string }{
		{"nodeopts", "NODE_OPTIONS", "--max-old-space-size=256", "--require " + filepath.Join(dir, "evil.js")},
		{"preload", "LD_PRELOAD", "", filepath.Join(dir, "evil.so")},
		{"pypath", "PYTHONPATH", "/opt/ok", filepath.Join(dir, "evil")},
		{"path", "PATH", "/usr/bin:/bin", filepath.Join(dir, "evil-bin") + ":/usr/bin:/bin"},
	} {
		t.Run(tc.v, func(t *testing.T) {
			h, srv := startHTTPHub(t, nil) // each its own: admin changes are rate-limited
			api := srv.URL + "/api/servers"
			// The upstream appends the variable's value to a marker file
			// each time it starts.
			marker := filepath.Join(dir, tc.name+".log")
			script := fmt.Sprintf(`printf '%%s\n' "$%s" >> '%s'; exec '%s' -only echo`, tc.v, marker, fixture)
			// Registered by POST without a scope: the default of new registrations.
			spec := upstream.Spec{Name: tc.name, Command: "sh", Args: []string{"-c", script}, Env: map[string]string{tc.v: tc.before}, Scope: upstream.DefaultScope}
			if code, out := apiJSON(t, "POST", api, map[string]any{"name": spec.Name, "command": spec.Command, "args": spec.Args, "env": spec.Env}); code != 201 || out["approval"] != "pending" {
				t.Fatalf("add: %d %v", code, out)
			}
			apiApprove(t, api, tc.name)
			if got := lines(t, marker); !slices.Equal(got, []string{tc.before}) {
				t.Fatalf("marker after the approved start = %q", got)
			}

			spec.Env = map[string]string{tc.v: tc.after}
			code, out := apiJSON(t, "PUT", api+"/"+tc.name, map[string]any{"env": spec.Env})
			if code != 200 || out["approval"] != "pending" || out["state"] != "PENDING" {
				t.Fatalf("PUT %s=%q: %d %v, want pending", tc.v, tc.after, code, out)
			}
			shown := fmt.Sprintf("  %s = %q (literal, shown in full)", tc.v, tc.after)
			warning := fmt.Sprintf("⚠ environment variable %s changes what code the program loads", tc.v)
			review, _ := out["review"].(string)
			if review != spec.Review() || !strings.Contains(review, shown) || !strings.Contains(review, warning) {
				t.Errorf("PUT answer's review:\n%s\nwant:\n%s", review, spec.Review())
			}
			if msg, _ := out["message"].(string); !strings.Contains(msg, shown) || !strings.Contains(msg, "mcp-hub approve "+tc.name) {
				t.Errorf("PUT answer's message does not show the value:\n%s", msg)
			}
			if _, ok := h.mgr.Get(tc.name); ok {
				t.Error("the upstream still runs after its change went pending")
			}
			_, got := apiJSON(t, "GET", api+"/"+tc.name, nil)
			view, _ := got["server"].(map[string]any)
			if view["approval"] != "pending" || view["state"] != "PENDING" || got["review"] != review {
				t.Errorf("GET: %v (review %q)", view, got["review"])
			}
			storePolls()
			if got := lines(t, marker); !slices.Equal(got, []string{tc.before}) {
				t.Fatalf("the upstream ran with the unapproved value: marker = %q", got)
			}

			out = apiApprove(t, api, tc.name)
			if out["review"] != review {
				t.Errorf("approve answer's review = %q, want the PUT's", out["review"])
			}
			if got := lines(t, marker); !slices.Equal(got, []string{tc.before, tc.after}) {
				t.Errorf("marker after approving the change = %q", got)
			}
		})
	}
}

// recorder is a streamable HTTP MCP server on 127.0.0.1 that records the
// headers of every request it gets.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	s := mcp.NewServer(&mcp.Implementation{Name: "rec", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "rec_tool", Description: "d", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Header.Clone())
		rec.mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// carried counts the requests with a header value containing s.
func (rec *recorder) carried(s string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, h := range rec.seen {
		for _, vs := range h {
			if slices.ContainsFunc(vs, func(v string) bool { return strings.Contains(v, s) }) {
				n++
			}
		}
	}
	return n
}

// Issue 12 (A21): an approved URL upstream whose header value is changed to
// a file or a hub variable goes back to pending, and the server it points
// to gets neither the file's contents nor the variable's value before a
// person approves; the prompt says what would be sent.
func TestAPIHeaderValueEditNeedsApproval(t *testing.T) {
	const fileSecret, varSecret = "file-secret-0815", "var-secret-4711"
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte(fileSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		if k == "SOME_VAR" {
			return varSecret, true
		}
		return os.LookupEnv(k)
	}
	h, srv := startHTTPHubOpts(t, &Options{Upstream: upstream.Options{LookupEnv: lookup}}, nil)
	api := srv.URL + "/api/servers"
	rec := newRecorder(t)
	if code, out := apiJSON(t, "POST", api, map[string]any{"name": "remote", "url": rec.URL, "headers": map[string]string{"X-Key": "plain-value"}}); code != 201 {
		t.Fatalf("add: %d %v", code, out)
	}
	apiApprove(t, api, "remote")
	if rec.carried("plain-value") == 0 {
		t.Fatal("the approved header never reached the server")
	}
	for _, tc := range []struct{ value, secret, line, warning string }{
		{"file:" + secretFile, fileSecret, "  X-Key: contents of " + secretFile, "⚠ header X-Key sends the contents of " + secretFile + " to 127.0.0.1"},
		{"${SOME_VAR}", varSecret, "  X-Key: the hub's environment variable SOME_VAR", "⚠ header X-Key sends the hub's environment variable SOME_VAR to 127.0.0.1"},
	} {
		code, out := apiJSON(t, "PUT", api+"/remote", map[string]any{"headers": map[string]string{"X-Key": tc.value}})
		if code != 200 || out["approval"] != "pending" {
			t.Fatalf("PUT X-Key=%s: %d %v, want pending", tc.value, code, out)
		}
		review, _ := out["review"].(string)
		for _, want := range []string{tc.line, tc.warning, "⚠ 127.0.0.1 is this machine (loopback): requests reach services that trust local callers"} {
			if !slices.Contains(strings.Split(review, "\n"), want) {
				t.Errorf("PUT X-Key=%s: no line %q in the review:\n%s", tc.value, want, review)
			}
		}
		if _, ok := h.mgr.Get("remote"); ok {
			t.Errorf("PUT X-Key=%s: still connected", tc.value)
		}
		storePolls()
		if n := rec.carried(tc.secret); n > 0 {
			t.Fatalf("PUT X-Key=%s: %d request(s) carried the secret before approval", tc.value, n)
		}
	}
	apiApprove(t, api, "remote")
	if rec.carried(varSecret) == 0 {
		t.Error("after approval the header does not carry the variable (the recorder would miss a leak)")
	}
}

// Issue 12: every change to what runs or what is sent is pending again,
// and its answer, GET and the approval show what the approval covers.
func TestAPILaunchEditsNeedApproval(t *testing.T) {
	rec := newRecorder(t)
	stdio := upstream.Spec{Name: "local", Command: fixture, Args: []string{"-only", "echo"}, Cwd: t.TempDir(), Env: map[string]string{"A": "1", "B": "2"}}
	remote := upstream.Spec{Name: "remote", URL: rec.URL + "/?region=eu"}
	for _, tc := range []struct {
		what string
		base upstream.Spec
		edit map[string]any
		line string // a line the review must have
	}{
		{"cwd", stdio, map[string]any{"cwd": t.TempDir()}, "in directory: "},
		{"env added", stdio, map[string]any{"env": map[string]string{"A": "1", "B": "2", "C": "${HOME}"}}, "  C = the hub's environment variable HOME"},
		{"env removed", stdio, map[string]any{"env": map[string]string{"A": "1"}}, "  A = <literal value, masked>"},
		{"query", remote, map[string]any{"url": rec.URL + "/?region=us&key=k3y"}, "with query parameters (values masked): region, key"},
	} {
		_, srv := startHTTPHub(t, nil) // each its own: admin changes are rate-limited
		api := srv.URL + "/api/servers"
		s := tc.base
		if code, out := apiJSON(t, "POST", api, map[string]any{"name": s.Name, "command": s.Command, "args": s.Args, "cwd": s.Cwd, "env": s.Env, "url": s.URL}); code != 201 {
			t.Fatalf("add %s: %d %v", s.Name, code, out)
		}
		apiApprove(t, api, tc.base.Name)
		code, out := apiJSON(t, "PUT", api+"/"+tc.base.Name, tc.edit)
		review, _ := out["review"].(string)
		if code != 200 || out["approval"] != "pending" || !slices.ContainsFunc(strings.Split(review, "\n"), func(l string) bool { return strings.HasPrefix(l, tc.line) }) {
			t.Errorf("%s: %d %v, want pending with %q in the review", tc.what, code, out, tc.line)
		}
		if strings.Contains(review, "k3y") {
			t.Errorf("%s: the review shows a query value:\n%s", tc.what, review)
		}
		if _, got := apiJSON(t, "GET", api+"/"+tc.base.Name, nil); got["review"] != review {
			t.Errorf("%s: GET review %q, want the PUT's", tc.what, got["review"])
		}
	}
}

// Issue 12: the REST list and show say why the hub took an approval back.
func TestAPIShowsApprovalNote(t *testing.T) {
	h, srv := startHTTPHub(t, nil)
	api := srv.URL + "/api/servers"
	spec := upstream.Spec{Name: "old", Command: fixture, Env: map[string]string{"API_KEY": "k-123"}}
	if _, err := h.opts.Store.Create(context.Background(), upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true,
		Source: upstream.SourceAdmin, Approval: upstream.ApprovalPending, ApprovalNote: upstream.NotePredatesValueReview}); err != nil {
		t.Fatal(err)
	}
	_, list := apiJSON(t, "GET", api, nil)
	if msg, _ := list["message"].(string); !strings.Contains(msg, "old (stdio): PENDING, 0 tools, source admin, pending (approval predates value review)") {
		t.Errorf("GET /api/servers: %v", list)
	}
	_, got := apiJSON(t, "GET", api+"/old", nil)
	view, _ := got["server"].(map[string]any)
	if view["approvalNote"] != upstream.NotePredatesValueReview || got["review"] != spec.Review() || strings.Contains(fmt.Sprint(got), "k-123") {
		t.Errorf("GET /api/servers/old: %v", got)
	}
}

// TestApproveCommandInMessages: the command the hub's messages tell a
// person to run approves in this hub's store: Options.ApproveCommand
// (mcp-hub serve sets the program as run and its data dir), not a bare
// "mcp-hub approve" that would look in the default store.
func TestApproveCommandInMessages(t *testing.T) {
	const approve = "./bin/mcp-hub approve --data-dir /srv/hub"
	_, srv := startHTTPHubOpts(t, &Options{ApproveCommand: approve}, nil)
	api := srv.URL + "/api/servers"
	code, out := apiJSON(t, "POST", api, map[string]any{"name": "later", "command": fixture, "args": []string{"-only", "echo"}})
	if msg, _ := out["message"].(string); code != 201 || !strings.Contains(msg, "\n    "+approve+" later\n") {
		t.Errorf("POST: %d, message:\n%s\nwant the line %q", code, msg, approve+" later")
	}
	_, got := apiJSON(t, "GET", api+"/later", nil)
	if view, _ := got["server"].(map[string]any); view["lastError"] != "awaiting approval: run `"+approve+" later`" {
		t.Errorf("GET: lastError %q", view["lastError"])
	}
}
