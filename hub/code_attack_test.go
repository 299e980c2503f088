package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/codemode"
	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The scripts here are a hostile model's: each subtest would fail if the
// hole it probes were open in the hub's wiring of code mode.

// plantedEnv is a secret in an upstream's environment: a script can read
// it through the upstream's getenv tool (what the tool returns is the
// script's), and it must go no further than the script's own answer.
const plantedEnv = "zq-planted-7f3a9c41"

// plantedArg is a secret-looking argument a script passes to a tool.
const plantedArg = "sk-live-4d1f0a9b77e2c3"

// auditEntries returns the audit log, oldest first.
func auditEntries(t *testing.T, h *Hub) []persist.AuditEntry {
	t.Helper()
	entries, err := h.opts.Store.(testStore).AuditLog(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// auditText returns the whole audit log as text.
func auditText(t *testing.T, h *Hub) string {
	t.Helper()
	b, _ := json.Marshal(auditEntries(t, h))
	return string(b)
}

// run runs code in cc's session and returns the result's text
// (every content) and isError.
func (cc *codeClient) run(t *testing.T, code string) (string, bool) {
	t.Helper()
	text, _, isErr := cc.script(t, code, nil)
	return text, isErr
}

func TestCodeModeAttacks(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	a := fixtureSpec("a", "-only", "echo,add,pid,sleep_ms,getenv", "-events", events)
	a.Env = map[string]string{"PLANTED": plantedEnv}
	b := fixtureSpec("b", "-only", "echo,pid")
	s := scopedSpec("s", upstream.ScopeSession, "-only", "counter")
	policy, err := toolpolicy.New("", map[string]string{"b/echo": "deny", "a/pid": "ask"})
	if err != nil {
		t.Fatal(err)
	}
	logBuf := &testbin.Buffer{}
	h, srv := startHTTPHubOpts(t, &Options{
		Logger:              slog.New(slog.NewTextHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ToolPolicy:          policy,
		MaxMessageBytes:     1 << 20,
		MaxToolOutputLength: 5000,
		CodeMode:            CodeModeOptions{Mode: CodeModeOn, Limits: codemode.Limits{MemoryBytes: 8 << 20, MaxConcurrent: 2}},
	}, nil, a, b, s)
	waitTools(t, h, "counter")
	waitTools(t, h, "getenv")
	cc := newCodeClient(t, srv.URL, true)
	other := newCodeClient(t, srv.URL, true)
	plain := newCodeClient(t, srv.URL, false)
	upA, _ := h.Manager().Get("a")
	servesOthers := func(t *testing.T) { servedAfter(t, plain.cs, upA) }

	t.Run("no tool of the hub's own is reachable", func(t *testing.T) {
		before := len(h.Manager().List())
		auditBefore := len(auditEntries(t, h))
		var own []string
		for _, name := range sdkTools(t, cc.cs) {
			if strings.HasPrefix(name, "hub_") {
				own = append(own, name)
			}
		}
		if len(own) < 10 {
			t.Fatalf("the hub lists %d tools of its own: %v", len(own), own)
		}
		input := map[string]any{"tools": own, "servers": []string{"", "hub", "mcp-hub", "a", "b", "s"}}
		_, result, isErr := cc.script(t, `const reached = [];
for (const server of input.servers) for (const tool of input.tools) {
  const args = {name: "evil", command: "/bin/sh", args: ["-c", "touch /tmp/pwned"], server: "a", tool: "pid", code: "return 1", approve: true};
  try { const r = callTool(server, tool, args); if (!r.isError) reached.push(server + "/" + tool) } catch (e) { if (e.code === undefined) reached.push(server + "/" + tool + " threw " + e.message) }
}
return reached`, input)
		if isErr || string(result) != "[]" {
			t.Fatalf("reached: %s", result)
		}
		if after := len(h.Manager().List()); after != before {
			t.Errorf("%d MCP servers before the script, %d after", before, after)
		}
		for _, e := range auditEntries(t, h)[auditBefore:] {
			// The hub's own entries (pins of a listing) come when they come.
			if e.Actor != "hub" && !strings.HasPrefix(e.Action, "code-") {
				t.Errorf("an audit entry %s:%s after the script", e.Actor, e.Action)
			}
		}
	})

	t.Run("searchTools finds what hub_search_tools finds", func(t *testing.T) {
		_, result, isErr := cc.script(t, `return searchTools("add two numbers", 3).map(t => t.server + "/" + t.tool)`, nil)
		if isErr || !strings.Contains(string(result), `"a/add"`) {
			t.Errorf("%s %v", result, isErr)
		}
	})

	t.Run("names are matched exactly", func(t *testing.T) {
		// b's echo is denied; no spelling of it reaches it, nor any
		// other tool.
		for _, v := range [][2]string{{"B", "echo"}, {"b", "ECHO"}, {"b", "echo "}, {" b", "echo"}, {"b", "ｅｃｈｏ"}, {"b", "echo\u200b"}, {"b\u0000", "echo"}, {"ｂ", "echo"}, {"b", "e*"}, {"*", "echo"}, {"b/echo", ""}} {
			code := fmt.Sprintf(`const r = callTool(%s, %s, {message: "hi"}); return [r.isError, r.content[0].text]`, jsonString(v[0]), jsonString(v[1]))
			_, result, isErr := cc.script(t, code, nil)
			if isErr || !strings.HasPrefix(string(result), "[true,") || !strings.Contains(string(result), "no MCP server named") && !strings.Contains(string(result), "has no tool") && !strings.Contains(string(result), "tool is required") {
				t.Errorf("%q/%q: %s", v[0], v[1], result)
			}
		}
	})

	t.Run("a shadowed tool is reached as hub_call_tool reaches it", func(t *testing.T) {
		// b's echo is hidden by a's in the catalog; b/echo is denied.
		for _, tc := range []struct{ server, tool string }{{"b", "echo"}, {"b", "pid"}, {"a", "echo"}} {
			direct, directErr := toolCall(t, cc.cs, "hub_call_tool", map[string]any{"server": tc.server, "tool": tc.tool, "arguments": map[string]any{"message": "m"}})
			_, result, isErr := cc.script(t, fmt.Sprintf(`const r = callTool(%q, %q, {message: "m"}); return [r.isError === true, r.content[0].text]`, tc.server, tc.tool), nil)
			want, _ := json.Marshal([]any{directErr, direct})
			if isErr || string(result) != string(want) {
				t.Errorf("%s/%s: script %s, hub_call_tool %s", tc.server, tc.tool, result, want)
			}
		}
		if text, _ := toolCall(t, cc.cs, "hub_call_tool", map[string]any{"server": "b", "tool": "echo"}); !strings.Contains(text, "denied by the hub's tool policy") {
			t.Errorf("b/echo directly: %q", text)
		}
	})

	t.Run("a yes for one script is not a yes for another running beside it", func(t *testing.T) {
		cc.answer.Store("in this script")
		n := cc.elicits.Load()
		first := make(chan string, 1)
		go func() {
			_, result, _ := cc.script(t, `callTool("a", "pid"); callTool("a", "sleep_ms", {ms: 3000}); return callTool("a", "pid").isError === true`, nil)
			first <- string(result)
		}()
		eventually(t, 10*time.Second, "the first script asked", func() bool { return cc.elicits.Load() == n+1 })
		<-cc.asked
		if _, result, isErr := cc.script(t, `return callTool("a", "pid").isError === true`, nil); isErr || string(result) != "false" {
			t.Fatalf("second script: %s %v", result, isErr)
		}
		<-cc.asked
		if r := <-first; r != "false" {
			t.Fatalf("first script: %s", r)
		}
		if got := cc.elicits.Load() - n; got != 2 {
			t.Errorf("%d questions, want 2 (one per script)", got)
		}
	})

	t.Run("a yes for the session is not a yes for another session", func(t *testing.T) {
		cc.answer.Store("for the rest of this session")
		cc.run(t, `return callTool("a", "pid").isError`)
		<-cc.asked
		other.answer.Store("")
		n := other.elicits.Load()
		text, isErr := other.run(t, `return callTool("a", "pid").isError`)
		if !isErr || !strings.Contains(text, "the person declined") || other.elicits.Load() != n+1 {
			t.Errorf("the other session: %q %v, %d questions", text, isErr, other.elicits.Load()-n)
		}
		<-other.asked
		if text, isErr := toolCall(t, plain.cs, "pid", nil); !isErr || !strings.Contains(text, "does not support MCP elicitation") {
			t.Errorf("a third session's direct call: %q %v", text, isErr)
		}
	})

	t.Run("a script the person said no to makes no call after", func(t *testing.T) {
		fresh := newCodeClient(t, srv.URL, true) // a counter of its own at s
		text, isErr := fresh.run(t, `(async () => { try { callTool("a", "pid") } catch (e) {} for (;;) {} })(); await null; callTool("s", "counter"); return "went on"`)
		<-fresh.asked
		if !isErr || !strings.Contains(text, "the person declined") {
			t.Errorf("the script: %q %v", text, isErr)
		}
		if n, _ := toolCall(t, fresh.cs, "hub_call_tool", map[string]any{"server": "s", "tool": "counter"}); n != "1" {
			t.Errorf("the session's counter is at %s after one direct call: the script called it after the person said no", n)
		}
	})

	t.Run("a session's script reaches its own instance only", func(t *testing.T) {
		_, mine, _ := cc.script(t, `let r; for (let i = 0; i < 3; i++) r = callTool("s", "counter"); return r.content[0].text`, nil)
		_, theirs, _ := other.script(t, `return callTool("s", "counter").content[0].text`, nil)
		direct, _ := toolCall(t, cc.cs, "hub_call_tool", map[string]any{"server": "s", "tool": "counter"})
		if string(mine) != `"3"` || string(theirs) != `"1"` || direct != "4" {
			t.Errorf("counts: this session's script %s, the other's %s, this session's direct call %q", mine, theirs, direct)
		}
	})

	t.Run("arguments past maxMessageBytes are not sent", func(t *testing.T) {
		text, _ := cc.run(t, `try { callTool("a", "echo", {message: "x".repeat(1.5 * (1 << 20))}) } catch (e) { return e.message }`)
		if !strings.Contains(text, "maxMessageBytes") || strings.Contains(text, "xxxx") {
			t.Errorf("%.300q", text)
		}
	})

	t.Run("the answer's text, log lines included, obeys maxToolOutputLength", func(t *testing.T) {
		text, isErr := cc.run(t, `for (let i = 0; i < 300; i++) log("x".repeat(100)); return "y".repeat(4000)`)
		if isErr || len(text) > 5300 || !strings.Contains(text, "security.maxToolOutputLength") || !strings.Contains(text, strings.Repeat("y", 4000)) {
			t.Errorf("%d characters, isError %v: %.200q…", len(text), isErr, text)
		}
	})

	t.Run("scripts at once from several sessions", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		outcomes := map[string]int{}
		for _, c := range []*codeClient{cc, other, plain} {
			for range 2 {
				wg.Go(func() {
					text, isErr := c.run(t, `callTool("a", "sleep_ms", {ms: 4000}); return "slept"`)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case !isErr && text == `"slept"`:
						outcomes["ran"]++
					case isErr && strings.Contains(text, "codeMode.maxConcurrent"):
						outcomes["refused"]++
					default:
						outcomes[text]++
					}
				})
			}
		}
		time.Sleep(500 * time.Millisecond)
		if text, isErr := toolCall(t, plain.cs, "add", map[string]any{"a": 2, "b": 2}); isErr || text != "4" {
			t.Errorf("a direct call while scripts run: %q %v", text, isErr)
		}
		wg.Wait()
		if outcomes["ran"] != 2 || outcomes["refused"] != 4 || len(outcomes) != 2 {
			t.Errorf("outcomes %v, want 2 ran and 4 refused", outcomes)
		}
	})

	t.Run("a secret goes no further than the script's answer", func(t *testing.T) {
		text, isErr := cc.run(t, fmt.Sprintf(`const v = callTool("a", "getenv", {name: "PLANTED"}).content[0].text;
callTool("a", "echo", {message: "m", api_key: %q, password: v});
try { callTool(v, v, {}) } catch (e) {}
try { callTool("a", v, {}) } catch (e) {}
log("the value", v);
throw new Error("leaking " + v + " and %s")`, plantedArg, plantedArg))
		if !isErr || !strings.Contains(text, plantedEnv) {
			t.Fatalf("the script's answer: %q %v", text, isErr)
		}
		audit := auditText(t, h)
		for _, secret := range []string{plantedEnv, plantedArg} {
			if strings.Contains(audit, secret) {
				t.Errorf("the audit log holds %q: %s", secret, audit)
			}
			if strings.Contains(logBuf.String(), secret) {
				t.Errorf("the hub's log holds %q", secret)
			}
		}
		if !strings.Contains(audit, `"withheld":true`) || !strings.Contains(audit, `"tool":"getenv"`) {
			t.Errorf("the audit entry should name the known call and withhold the made-up ones: %s", audit)
		}
	})

	t.Run("cancelling the script cancels its call upstream", func(t *testing.T) {
		cancelled := len(eventsOf(readEvents(t, events), "cancelled"))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := cc.cs.CallTool(ctx, &mcp.CallToolParams{Name: codeToolName, Arguments: map[string]any{"code": `for (;;) { try { callTool("a", "sleep_ms", {ms: 60000}) } catch (e) {} }`}})
			done <- err
		}()
		eventually(t, 10*time.Second, "the inner call upstream", func() bool {
			c := upA.Conn()
			return c != nil && len(c.Tags()) == 1
		})
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled call returned a result")
		}
		eventually(t, 10*time.Second, "the upstream saw the cancellation", func() bool {
			return len(eventsOf(readEvents(t, events), "cancelled")) == cancelled+1
		})
		servesOthers(t)
	})

	waitCancelled := func(t *testing.T, before int, what string) {
		t.Helper()
		eventually(t, 10*time.Second, what, func() bool {
			return len(eventsOf(readEvents(t, events), "cancelled")) == before+1
		})
	}
	innerUpstream := func(t *testing.T) {
		t.Helper()
		eventually(t, 10*time.Second, "the inner call upstream", func() bool {
			c := upA.Conn()
			return c != nil && len(c.Tags()) == 1
		})
	}
	const sleeper = `for (;;) { try { callTool("a", "sleep_ms", {ms: 60000}) } catch (e) {} }`

	t.Run("a session closed by DELETE cancels its script's call upstream", func(t *testing.T) {
		// The script's time limit is 30 s: the cancellation must come from
		// the session's end, long before.
		cancelled := len(eventsOf(readEvents(t, events), "cancelled"))
		rc := newRawHTTPClient(t, srv.URL)
		go rc.post(context.Background(), fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":{"code":%s}}}`, codeToolName, jsonString(sleeper)))
		innerUpstream(t)
		rc.delete(t)
		waitCancelled(t, cancelled, "the upstream saw the cancellation")
		servesOthers(t)
	})

	t.Run("a legacy SSE session whose stream closes cancels its script's call upstream", func(t *testing.T) {
		cancelled := len(eventsOf(readEvents(t, events), "cancelled"))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "sse-test", Version: "1"}, nil).Connect(ctx, &mcp.SSEClientTransport{Endpoint: srv.URL + "/sse", HTTPClient: authClient()}, sessionEra)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		go func() {
			_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: codeToolName, Arguments: map[string]any{"code": sleeper}})
		}()
		innerUpstream(t)
		cancel() // the stream goes
		waitCancelled(t, cancelled, "the upstream saw the cancellation")
		servesOthers(t)
	})

	t.Run("a dropped POST is no cancellation: the script ends at its time limit, its call cancelled upstream", func(t *testing.T) {
		// As for a direct call (MCP: a disconnect is not a cancellation).
		cancelled := len(eventsOf(readEvents(t, events), "cancelled"))
		rc := newRawHTTPClient(t, srv.URL)
		ctx, cancel := context.WithCancel(context.Background())
		go rc.post(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":{"code":%s,"timeoutMs":1500}}}`, codeToolName, jsonString(sleeper)))
		innerUpstream(t)
		cancel()
		waitCancelled(t, cancelled, "the upstream saw the cancellation")
		servesOthers(t)
		rc.delete(t)
	})
	noScriptGoroutines(t)
}

// rawHTTPClient is a session-era client of the streamable HTTP front made
// of plain requests, so a test can drop a POST or end the session at will.
type rawHTTPClient struct {
	url, sid string
}

func newRawHTTPClient(t *testing.T, url string) *rawHTTPClient {
	t.Helper()
	rc := &rawHTTPClient{url: url}
	resp, err := rc.post(context.Background(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	rc.sid = resp.Header.Get("Mcp-Session-Id")
	if _, err := rc.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	return rc
}

// post sends body and reads the whole answer.
func (rc *rawHTTPClient) post(ctx context.Context, body string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rc.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if rc.sid != "" {
		req.Header.Set("Mcp-Session-Id", rc.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := authClient().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp, err
}

// delete ends the session.
func (rc *rawHTTPClient) delete(t *testing.T) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, rc.url+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", rc.sid)
	resp, err := authClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %s", resp.Status)
	}
}
