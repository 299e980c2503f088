package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/codemode"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// codeClient is a go-sdk client of a code-mode hub whose person answers
// elicitations with answer ("" declines).
type codeClient struct {
	cs      *mcp.ClientSession
	answer  atomic.Value // string
	elicits atomic.Int32
	asked   chan string
}

func newCodeClient(t *testing.T, url string, elicit bool) *codeClient {
	t.Helper()
	cc := &codeClient{asked: make(chan string, 100)}
	cc.answer.Store("")
	opts := &mcp.ClientOptions{}
	if elicit {
		opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			cc.elicits.Add(1)
			cc.asked <- r.Params.Message
			a := cc.answer.Load().(string)
			if a == "" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": a}}, nil
		}
	}
	cc.cs = sdkSession(t, url, false, opts)
	return cc
}

// script runs code with input and returns the result's text, its
// structured result and isError.
func (cc *codeClient) script(t *testing.T, code string, input any) (string, json.RawMessage, bool) {
	t.Helper()
	args := map[string]any{"code": code}
	if input != nil {
		args["input"] = input
	}
	res, err := cc.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: codeToolName, Arguments: args})
	if err != nil {
		t.Fatalf("hub_run_code: %v", err)
	}
	var text string
	for _, c := range res.Content {
		text += c.(*mcp.TextContent).Text + "\n"
	}
	var sc struct {
		Result json.RawMessage `json:"result"`
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &sc)
	}
	return strings.TrimSpace(text), sc.Result, res.IsError
}

func codePolicy(t *testing.T) *toolpolicy.Policy {
	p, err := toolpolicy.New("", map[string]string{"a/counter": "deny", "a/pid": "ask"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCodeMode runs scripts through a hub over HTTP with a real store and
// a stdio upstream, and checks that every inner call is a call: the same
// answers as hub_call_tool (filters, the tool policy, unknown servers), the
// person asked once per tool per script, the audit log, cancellation, and
// the limits; after each, other sessions are served.
func TestCodeMode(t *testing.T) {
	a := fixtureSpec("a", "-only", "echo,add,fail,rpc_error,sleep_ms,pid,counter,big")
	a.Tools.Deny = []string{"big"}
	h, srv := startHTTPHubOpts(t, &Options{
		ToolPolicy: codePolicy(t),
		CodeMode:   CodeModeOptions{Mode: CodeModeOn, Limits: codemode.Limits{MemoryBytes: 8 << 20, MaxCalls: 10000, Timeout: time.Minute}},
	}, nil, a)
	eventually(t, 10*time.Second, "a's tools", func() bool { return len(h.Catalog().ServerEntries("a")) > 0 })
	cc := newCodeClient(t, srv.URL, true)
	other := newCodeClient(t, srv.URL, false)
	up, _ := h.Manager().Get("a")
	servesOthers := func(t *testing.T) { servedAfter(t, other.cs, up) }
	base := runtime.NumGoroutine()

	t.Run("initialize instructions describe it", func(t *testing.T) {
		if ins := cc.cs.InitializeResult().Instructions; !strings.Contains(ins, "hub_run_code") || !strings.Contains(ins, "Example") {
			t.Errorf("instructions %q", ins)
		}
	})
	t.Run("loop and aggregate", func(t *testing.T) {
		text, result, isErr := cc.script(t, `let sum = 0; for (let i = 1; i <= input.n; i++) sum += callTool("a", "add", {a: i, b: 0}).structuredContent.sum; log("summed", input.n); return {sum}`, map[string]any{"n": 10})
		if isErr || string(result) != `{"sum":55}` || !strings.Contains(text, "summed 10") {
			t.Fatalf("%q %s %v", text, result, isErr)
		}
		servesOthers(t)
	})
	t.Run("branch on isError and protocol errors", func(t *testing.T) {
		_, result, isErr := cc.script(t, `const r = callTool("a", "fail"); let code; try { callTool("a", "rpc_error") } catch (e) { code = e.code } return [r.isError, r.content[0].text, code]`, nil)
		if isErr || string(result) != `[true,"it failed",-32042]` {
			t.Fatalf("%s %v", result, isErr)
		}
	})
	t.Run("refused exactly as directly", func(t *testing.T) {
		for _, tc := range []struct{ server, tool string }{{"a", "counter"}, {"a", "big"}, {"nope", "echo"}, {"a", "no_such_tool"}} {
			direct, directErr := toolCall(t, cc.cs, "hub_call_tool", map[string]any{"server": tc.server, "tool": tc.tool, "arguments": map[string]any{}})
			_, result, isErr := cc.script(t, fmt.Sprintf(`const r = callTool(%q, %q, {}); return [r.isError, r.content[0].text]`, tc.server, tc.tool), nil)
			want, _ := json.Marshal([]any{directErr, direct})
			if isErr || string(result) != string(want) || !directErr {
				t.Errorf("%s/%s: script %s, directly %s", tc.server, tc.tool, result, want)
			}
		}
		if text, isErr := toolCall(t, cc.cs, "counter", nil); !isErr || !strings.Contains(text, "denied by the hub's tool policy") {
			t.Errorf("direct call of the denied tool: %q %v", text, isErr)
		}
	})
	t.Run("ask once per tool per script", func(t *testing.T) {
		cc.answer.Store("in this script")
		n := cc.elicits.Load()
		_, result, isErr := cc.script(t, `const pids = []; for (let i = 0; i < 3; i++) pids.push(callTool("a", "pid").content[0].text); return new Set(pids).size`, nil)
		if isErr || string(result) != "1" || cc.elicits.Load() != n+1 {
			t.Fatalf("%s %v; %d questions, want 1", result, isErr, cc.elicits.Load()-n)
		}
		if msg := <-cc.asked; !strings.Contains(msg, `"pid"`) || !strings.Contains(msg, "code-mode script") || !strings.Contains(msg, `"a/pid"`) {
			t.Errorf("question %q", msg)
		}
		// The next script asks again.
		cc.script(t, `return callTool("a", "pid").isError`, nil)
		if cc.elicits.Load() != n+2 {
			t.Errorf("a second script was not asked")
		}
		<-cc.asked
	})
	t.Run("decline stops the script", func(t *testing.T) {
		cc.answer.Store("")
		text, _, isErr := cc.script(t, `try { callTool("a", "pid") } catch (e) {} log("went on"); return 1`, nil)
		if !isErr || !strings.Contains(text, "the person declined") || strings.Contains(text, "went on") {
			t.Fatalf("%q %v", text, isErr)
		}
		<-cc.asked
		// A client without elicitation is refused as directly.
		direct, _ := toolCall(t, other.cs, "pid", nil)
		_, result, _ := other.script(t, `return callTool("a", "pid").content[0].text`, nil)
		if !strings.Contains(direct, "does not support MCP elicitation") || string(result) != jsonString(direct) {
			t.Errorf("without elicitation: script %s, directly %q", result, direct)
		}
		servesOthers(t)
	})
	t.Run("allowed for the session", func(t *testing.T) {
		cc.answer.Store("for the rest of this session")
		n := cc.elicits.Load()
		cc.script(t, `return callTool("a", "pid").isError`, nil)
		<-cc.asked
		if text, isErr := toolCall(t, cc.cs, "pid", nil); isErr || cc.elicits.Load() != n+1 {
			t.Errorf("direct call after a yes for the session: %q %v, %d questions", text, isErr, cc.elicits.Load()-n)
		}
	})
	t.Run("escapes", func(t *testing.T) {
		for _, code := range []string{`return require("fs")`, `return process.env`, `return fetch("http://127.0.0.1/")`, `return await import("fs")`, `return Function("return this")().process`} {
			text, _, isErr := cc.script(t, code, nil)
			if !isErr || !strings.Contains(text, "the script failed") {
				t.Errorf("%s: %q %v", code, text, isErr)
			}
		}
	})
	t.Run("spin forever", func(t *testing.T) {
		res, err := cc.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: codeToolName, Arguments: map[string]any{"code": "for (;;) {}", "timeoutMs": 300}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "codeMode.timeout") {
			t.Fatalf("%v %+v", err, res)
		}
		servesOthers(t)
	})
	t.Run("allocate without bound", func(t *testing.T) {
		text, _, isErr := cc.script(t, `const a = []; for (;;) a.push({n: a.length, s: "x" + a.length})`, nil)
		if !isErr || !strings.Contains(text, "memory limit of 8 MiB (codeMode.memoryLimit)") {
			t.Fatalf("%q %v", text, isErr)
		}
		servesOthers(t)
	})
	t.Run("return 100 MB", func(t *testing.T) {
		text, _, isErr := cc.script(t, `let s = "x".repeat(1 << 20); while (s.length < 100e6) s += s; return s`, nil)
		if !isErr || !strings.Contains(text, "security.maxToolOutputLength") {
			t.Fatalf("%.300q %v", text, isErr)
		}
		servesOthers(t)
	})
	t.Run("10,000 calls", func(t *testing.T) {
		_, result, isErr := cc.script(t, `let n = 0; for (let i = 0; i < 10000; i++) n += callTool("a", "add", {a: 1, b: 0}).structuredContent.sum; return n`, nil)
		if isErr || string(result) != "10000" {
			t.Fatalf("%s %v", result, isErr)
		}
		servesOthers(t)
	})
	t.Run("cancelled mid-call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := cc.cs.CallTool(ctx, &mcp.CallToolParams{Name: codeToolName, Arguments: map[string]any{"code": `callTool("a", "sleep_ms", {ms: 60000}); return 1`}})
			done <- err
		}()
		eventually(t, 10*time.Second, "the inner call upstream", func() bool {
			c := up.Conn()
			return c != nil && len(c.Tags()) == 1
		})
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled call returned a result")
		}
		servesOthers(t)
	})
	t.Run("audit log", func(t *testing.T) {
		var entries []persist.AuditEntry
		eventually(t, 10*time.Second, "the cancelled script's entry", func() bool {
			entries, _ = h.opts.Store.(testStore).AuditLog(context.Background(), "", 0)
			return entries[len(entries)-1].Action == "code-done"
		})
		var run, done, hashed int
		hash := `"sha256":"` + codemode.Hash(`return callTool("a", "pid").isError`) + `"`
		for _, e := range entries {
			switch e.Action {
			case "code-run":
				run++
				if strings.Contains(string(e.Detail), hash) {
					hashed++
				}
			case "code-done":
				done++
				if strings.Contains(string(e.Detail), `"outcome":"policy_refused"`) && !strings.Contains(string(e.Detail), `"tool":"pid"`) {
					t.Errorf("a declined script's entry lacks its call: %s", e.Detail)
				}
			}
			if strings.HasPrefix(e.Action, "code-") && !strings.HasPrefix(e.Actor, "client:") {
				t.Errorf("actor %q", e.Actor)
			}
		}
		if run < 15 || done != run {
			t.Errorf("%d code-run and %d code-done entries", run, done)
		}
		if hashed != 2 { // the second script of "ask once…" and the one of "allowed for the session"
			t.Errorf("%d code-run entries name the script's hash, want 2", hashed)
		}
	})
	noScriptGoroutines(t)
	t.Logf("goroutines: %d before the scripts, %d after", base, runtime.NumGoroutine())
}

// servedAfter fails unless a call of add from the session cs is answered
// and no request is left in flight at up: what must hold after any script.
func servedAfter(t *testing.T, cs *mcp.ClientSession, up *upstream.Upstream) {
	t.Helper()
	if text, isErr := toolCall(t, cs, "add", map[string]any{"a": 1, "b": 2}); isErr || text != "3" {
		t.Fatalf("another session's call after the script: %q %v", text, isErr)
	}
	eventually(t, 10*time.Second, "no upstream request left", func() bool {
		c := up.Conn()
		return c == nil || len(c.Tags()) == 0
	})
}

// noScriptGoroutines fails when a goroutine of a script (the runtime, an
// inner call, a policy question) is still there.
func noScriptGoroutines(t *testing.T) {
	t.Helper()
	var left string
	eventually(t, 10*time.Second, "no goroutine of a script left", func() bool {
		buf := make([]byte, 1<<22)
		left = ""
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			for _, f := range []string{"codemode.", "hub.(*session).runCode", "hub.(*session).inner", "hub.(*session).policyThen", "hub.(*codeHost)"} {
				if strings.Contains(g, f) {
					left += g + "\n\n"
					break
				}
			}
		}
		return left == ""
	})
	if left != "" {
		t.Logf("left:\n%s", left)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCodeModeOff: without codeMode on, hub_run_code is unknown until the
// person turns it on for their session through hub_enable_code_mode; a
// client that cannot ask is told how to turn it on.
func TestCodeModeOff(t *testing.T) {
	h, srv := startHTTPHubOpts(t, &Options{}, nil, fixtureSpec("a", "-only", "echo,add"))
	eventually(t, 10*time.Second, "a's tools", func() bool { return len(h.Catalog().ServerEntries("a")) > 0 })
	opts, changed := listChanges()
	cc := &codeClient{asked: make(chan string, 10)}
	opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		cc.asked <- r.Params.Message
		if cc.elicits.Add(1) == 1 {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	cc.cs = sdkSession(t, srv.URL, false, opts)
	plain := newCodeClient(t, srv.URL, false)
	if names := sdkTools(t, cc.cs); contains(names, codeToolName) || !contains(names, enableCodeToolName) {
		t.Fatalf("tools %v", names)
	}
	if _, err := cc.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: codeToolName, Arguments: map[string]any{"code": "return 1"}}); err == nil {
		t.Fatal("hub_run_code ran with code mode off")
	}
	if text, isErr := toolCall(t, plain.cs, enableCodeToolName, nil); !isErr || !strings.Contains(text, "codeMode: on") {
		t.Errorf("without elicitation: %q %v", text, isErr)
	}
	if text, isErr := toolCall(t, cc.cs, enableCodeToolName, nil); !isErr || !strings.Contains(text, "declined") {
		t.Errorf("declined: %q %v", text, isErr)
	}
	for len(changed) > 0 {
		<-changed
	}
	if text, isErr := toolCall(t, cc.cs, enableCodeToolName, nil); isErr || !strings.Contains(text, "Code mode is on") {
		t.Fatalf("accepted: %q %v", text, isErr)
	}
	if msg := <-cc.asked; !strings.Contains(msg, "code mode") {
		t.Errorf("question %q", msg)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("no tools/list_changed")
	}
	// In name order, where codeMode on lists it: it came first.
	if names := sdkTools(t, cc.cs); !contains(names, codeToolName) || !slices.IsSorted(names) {
		t.Errorf("tools after turning it on: %v", names)
	}
	if text, _, isErr := cc.script(t, `return callTool("a", "add", {a: 2, b: 3}).structuredContent.sum`, nil); isErr || text != "5" {
		t.Errorf("script: %q %v", text, isErr)
	}
	// Only that session.
	if names := sdkTools(t, plain.cs); contains(names, codeToolName) {
		t.Errorf("another session got hub_run_code: %v", names)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCodeModeQuarantine: a tool quarantined by its pins is refused to a
// script exactly as to hub_call_tool, and a pending (unapproved) server's
// tools are not reachable; a restart is what makes the hub see the change.
func TestCodeModeQuarantine(t *testing.T) {
	h, srv := startHTTPHubOpts(t, &Options{CodeMode: CodeModeOptions{Mode: CodeModeOn}}, nil)
	api := srv.URL + "/api/servers"
	defs := filepath.Join(t.TempDir(), "defs.json")
	if code, out := apiJSON(t, "POST", api, map[string]any{"name": "pinned", "command": fixture, "args": []string{"-only", "echo,add", "-defs", defs}}); code != 201 {
		t.Fatalf("add: %d %v", code, out)
	}
	if code, out := apiJSON(t, "POST", api, map[string]any{"name": "waiting", "command": fixture, "args": []string{"-only", "echo"}}); code != 201 || out["approval"] != "pending" {
		t.Fatalf("add waiting: %d %v", code, out)
	}
	apiApprove(t, api, "pinned")
	cc := newCodeClient(t, srv.URL, false)
	eventually(t, 10*time.Second, "the first listing's pins", func() bool {
		pins, _ := h.opts.Store.Pins(context.Background())
		return len(pins["pinned"]) == 4 // echo, add, reload_defs, instructions
	})
	writeDefs(t, defs, poisonedEcho)
	if code, out := apiJSON(t, "POST", api+"/pinned/restart", nil); code != 200 {
		t.Fatalf("restart: %d %v", code, out)
	}
	eventually(t, 20*time.Second, "echo quarantined", func() bool {
		_, isErr := toolCall(t, cc.cs, "hub_call_tool", map[string]any{"server": "pinned", "tool": "echo", "arguments": map[string]any{}})
		return isErr
	})
	for _, tc := range []struct{ server, tool, want string }{{"pinned", "echo", "mcp-hub approve pinned"}, {"waiting", "echo", `no MCP server named \"waiting\"`}} {
		direct, _ := toolCall(t, cc.cs, "hub_call_tool", map[string]any{"server": tc.server, "tool": tc.tool, "arguments": map[string]any{}})
		_, result, isErr := cc.script(t, fmt.Sprintf(`const r = callTool(%q, %q, {}); return [r.isError, r.content[0].text]`, tc.server, tc.tool), nil)
		want, _ := json.Marshal([]any{true, direct})
		if isErr || string(result) != string(want) || !strings.Contains(string(result), tc.want) {
			t.Errorf("%s/%s: script %s, directly %s", tc.server, tc.tool, result, want)
		}
	}
	if _, result, isErr := cc.script(t, `return callTool("pinned", "add", {a: 1, b: 1}).structuredContent.sum`, nil); isErr || string(result) != "2" {
		t.Errorf("the unchanged tool: %s %v", result, isErr)
	}
}
