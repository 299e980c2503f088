package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// threeUpstreams writes a config with three fixture upstreams. alpha and beta
// both offer "echo" (alpha wins); beta and gamma both offer "pid" (beta
// wins). Each writes its pid to dir.
func threeUpstreams(t *testing.T, dir, gammaFailFlag string) string {
	t.Helper()
	cfg := fmt.Sprintf(`
logLevel: debug
mcpServers:
  alpha:
    command: %[1]s
    args: ["-name", "alpha", "-only", "echo,add,content_zoo,raw_result,add_tool", "-pid-file", "%[2]s/alpha.pid"]
  beta:
    command: %[1]s
    args: ["-name", "beta", "-only", "echo,pid,fail,rpc_error", "-pid-file", "%[2]s/beta.pid", "-grandchild", "%[2]s/beta-grandchild.pid"]
  gamma:
    command: %[1]s
    args: ["-name", "gamma", "-only", "pid,sleep_ms,crash", "-pid-file", "%[2]s/gamma.pid", "-fail-if-exists", "%[3]s"]
`, fixtureBin, dir, gammaFailFlag)
	return writeFile(t, "hub.yaml", cfg)
}

func TestStdioEndToEnd(t *testing.T) {
	dir := t.TempDir()
	gammaFail := filepath.Join(dir, "gamma-fail")
	cfg := threeUpstreams(t, dir, gammaFail)
	c := startRaw(t, nil, hubBin, "--config", cfg, "--data-dir", t.TempDir())

	init := c.initialize()
	if init.Result == nil {
		t.Fatalf("initialize failed: %s", init.Error)
	}
	var ir struct {
		Capabilities struct {
			Tools struct {
				ListChanged bool `json:"listChanged"`
			} `json:"tools"`
		} `json:"capabilities"`
		ServerInfo struct{ Name string } `json:"serverInfo"`
	}
	if err := json.Unmarshal(init.Result, &ir); err != nil || !ir.Capabilities.Tools.ListChanged || ir.ServerInfo.Name != "mcp-hub" {
		t.Errorf("initialize result %s: want tools.listChanged and serverInfo mcp-hub", init.Result)
	}

	// The first list waits for upstreams still connecting.
	list := c.call("tools/list", "")
	names := toolNames(t, list.Result)
	want := []string{"add", "add_tool", "content_zoo", "crash", "echo", "fail", "pid", "raw_result", "rpc_error", "sleep_ms"}
	if names = withoutHubTools(names); !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	for _, shadow := range []string{`msg="tools shadowed" upstream=beta winner=alpha reason=collision count=1 names=echo`,
		`msg="tools shadowed" upstream=gamma winner=beta reason=collision count=1 names=pid`} {
		waitFor(t, 5*time.Second, "the shadow report "+shadow, func() bool { return strings.Contains(c.stderr.String(), shadow) })
		if n := strings.Count(c.stderr.String(), shadow); n != 1 {
			t.Errorf("shadow %q logged %d times, want once", shadow, n)
		}
	}

	pids := map[string]int{}
	for _, n := range []string{"alpha", "beta", "gamma", "beta-grandchild"} {
		pid, err := testbin.ReadPID(filepath.Join(dir, n+".pid"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pids[n] = pid
	}

	t.Run("calls reach each upstream", func(t *testing.T) {
		if got := textOf(t, c.call("tools/call", `{"name":"add","arguments":{"a":40,"b":2}}`).Result); got != "42" {
			t.Errorf("add = %q, want 42", got)
		}
		if got := textOf(t, c.call("tools/call", `{"name":"pid","arguments":{}}`).Result); got != fmt.Sprint(pids["beta"]) {
			t.Errorf("pid = %q, want beta's pid %d (beta shadows gamma)", got, pids["beta"])
		}
		if got := textOf(t, c.call("tools/call", `{"name":"sleep_ms","arguments":{"ms":1}}`).Result); got != "slept 1 ms" {
			t.Errorf("sleep_ms = %q", got)
		}
		args := `{"message":"ü \"q\" \u00e9","n":[1,2.50,{"z":null}]}`
		if got := textOf(t, c.call("tools/call", `{"name":"echo","arguments":`+args+`}`).Result); got != args {
			t.Errorf("echo arguments arrived as %s, want byte for byte %s", got, args)
		}
	})

	t.Run("results are byte-faithful", func(t *testing.T) {
		direct := startRaw(t, nil, fixtureBin, "-only", "content_zoo,raw_result")
		direct.initialize()
		viaHub := c.call("tools/call", `{"name":"content_zoo","arguments":{}}`)
		straight := direct.call("tools/call", `{"name":"content_zoo","arguments":{}}`)
		if string(viaHub.Result) != string(straight.Result) {
			t.Errorf("content_zoo through the hub:\n%s\ndirect:\n%s", viaHub.Result, straight.Result)
		}
		for _, kind := range []string{`"type":"text"`, `"type":"image"`, `"type":"audio"`, `"type":"resource_link"`, `"type":"resource"`, `"structuredContent"`, `"_meta"`, `"blob"`} {
			if !strings.Contains(string(viaHub.Result), kind) {
				t.Errorf("content_zoo result lacks %s", kind)
			}
		}
		payload := `{"content":[{"type":"video","uri":"v://1","futureField":{"b":1,"a":2}}],"isError":false,"zzz":[],"_meta":{"io.example/x":1}}`
		got := c.call("tools/call", `{"name":"raw_result","arguments":{"json":`+string(wire.AppendString(nil, payload))+`}}`)
		if string(got.Result) != payload {
			t.Errorf("raw result through the hub:\n%s\nwant\n%s", got.Result, payload)
		}
	})

	t.Run("errors pass through", func(t *testing.T) {
		fail := c.call("tools/call", `{"name":"fail","arguments":{}}`)
		if !strings.Contains(string(fail.Result), `"isError":true`) {
			t.Errorf("fail = %s, want isError", fail.Result)
		}
		rpc := c.call("tools/call", `{"name":"rpc_error","arguments":{}}`)
		if string(rpc.Error) != `{"code":-32042,"message":"custom failure","data":{"why":"test"}}` {
			t.Errorf("rpc_error = %s, want the upstream's error verbatim", rpc.Error)
		}
		unknown := c.call("tools/call", `{"name":"no_such_tool","arguments":{}}`)
		if !strings.Contains(string(unknown.Error), `"code":-32602`) || !strings.Contains(string(unknown.Error), `no_such_tool`) {
			t.Errorf("unknown tool = %s, want -32602 naming the tool", unknown.Error)
		}
		bad := c.call("tools/call", `{"name":"echo","Name":"fail"}`)
		if !strings.Contains(string(bad.Error), `"code":-32602`) {
			t.Errorf("case-variant name member = %s, want -32602", bad.Error)
		}
	})

	t.Run("list_changed when an upstream's tools change", func(t *testing.T) {
		before := c.countNotifications("notifications/tools/list_changed")
		c.call("tools/call", `{"name":"add_tool","arguments":{"name":"fresh_tool"}}`)
		c.waitNotification("notifications/tools/list_changed", before, 10*time.Second)
		if names := toolNames(t, c.call("tools/list", "").Result); !slices.Contains(names, "fresh_tool") {
			t.Errorf("tools after add_tool = %v, want fresh_tool", names)
		}
	})

	t.Run("upstream down", func(t *testing.T) {
		if err := os.WriteFile(gammaFail, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		// crash kills gamma; it cannot come back while the flag exists.
		c.call("tools/call", `{"name":"crash","arguments":{}}`)
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := c.call("tools/call", `{"name":"sleep_ms","arguments":{"ms":1}}`)
			text := textOf(t, got.Result)
			if strings.Contains(string(got.Result), `"isError":true`) && strings.Contains(text, `upstream "gamma" is`) &&
				strings.Contains(text, "exit status") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sleep_ms on a dead upstream = %s, want isError naming gamma, its state and last error", got.Result)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if testbin.Alive(pids["gamma"]) {
			t.Errorf("crashed gamma (pid %d) was not reaped", pids["gamma"])
		}
	})

	t.Run("every stdout line is JSON-RPC", func(t *testing.T) {
		for i, l := range c.allLines() {
			if _, err := wire.Parse(l); err != nil {
				t.Errorf("stdout line %d is not JSON-RPC (%v): %.200s", i, err, l)
			}
		}
	})

	t.Run("stdin close stops everything", func(t *testing.T) {
		code, took := c.closeStdin(10 * time.Second)
		if code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		t.Logf("exited %s after stdin closed", took)
		var all []int
		for _, p := range pids {
			all = append(all, p)
		}
		if alive := testbin.WaitGone(2*time.Second, all...); len(alive) > 0 {
			t.Errorf("processes %v outlived the hub", alive)
		}
	})
}

// TestGoSDKClient drives the hub with go-sdk's own client: what a real MCP
// client sees, list_changed included.
func TestGoSDKClient(t *testing.T) {
	cfg := writeFile(t, "hub.json", fmt.Sprintf(`{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "one": {"command": %q, "args": ["-only", "echo,add_tool,progress"]},
    "two": {"command": %q, "args": ["-only", "add"], "env": {"UNUSED": "x"}}
  }
}`, fixtureBin, fixtureBin))
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(hubBin, "--config", cfg, "--data-dir", t.TempDir())
	cmd.Stderr = testLogWriter{t}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"add", "add_tool", "echo", "progress"}; !slices.Equal(withoutHubTools(names), want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"sum":3}` {
		t.Errorf("structuredContent = %s, want {\"sum\":3}", sc)
	}
	// Progress notifications reach the caller with its own token.
	var (
		mu  sync.Mutex
		got []float64
	)
	progressClient := mcp.NewClient(&mcp.Implementation{Name: "p", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.ProgressToken == "mine" {
				mu.Lock()
				got = append(got, r.Params.Progress)
				mu.Unlock()
			}
		},
	})
	cmd2 := exec.Command(hubBin, "--config", cfg, "--data-dir", t.TempDir())
	cmd2.Stderr = testLogWriter{t}
	ps, err := progressClient.Connect(ctx, &mcp.CommandTransport{Command: cmd2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	p := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3, "delay_ms": 1}}
	p.SetProgressToken("mine")
	if _, err := ps.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	// The hub writes the notifications before the result, but go-sdk runs
	// notification handlers apart from the call's return: wait for them.
	waitFor(t, 10*time.Second, "a progress notification with the client's token", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(got); i++ {
		if got[i] < got[i-1] {
			t.Errorf("progress out of order: %v", got)
		}
	}

	drain(changed)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_tool", Arguments: map[string]any{"name": "late"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after add_tool")
	}
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// withoutHubTools drops the hub's own hub_* tools from a list of names.
func withoutHubTools(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return strings.HasPrefix(n, "hub_") })
}

// TestOutputLimitConfig: security.maxToolOutputLength reaches the hub; the
// default leaves a short result alone.
func TestOutputLimitConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		kib  int
		want string
	}{
		{"security:\n  maxToolOutputLength: 100\n", 1, "output truncated: 100 of 1024 characters shown"},
		{"", 1, ""},
		{"", 60, "output truncated: 50000 of 61440 characters shown"},
	} {
		cfg := writeFile(t, "hub.yaml", tc.cfg+fmt.Sprintf("mcpServers:\n  fx:\n    command: %s\n    args: [-only, big]\n", fixtureBin))
		c := startRaw(t, nil, hubBin, "--config", cfg, "--data-dir", t.TempDir())
		c.initialize()
		m := c.call("tools/call", fmt.Sprintf(`{"name":"big","arguments":{"kib":%d}}`, tc.kib))
		got := string(m.Result)
		if tc.want == "" && strings.Contains(got, "truncated") || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("config %q, %d KiB: %.200s; want %q", tc.cfg, tc.kib, got, tc.want)
		}
	}
}

// TestStdinClosedAfterRequests: a client that writes its requests and
// closes stdin at once (a script piping into the hub) still gets every
// answer — initialize (which go-sdk answers), ping, tools/list and a
// forwarded call that takes a while — before the hub exits 0.
func TestStdinClosedAfterRequests(t *testing.T) {
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf("mcpServers:\n  fx:\n    command: %s\n    args: [\"-only\", \"sleep_ms\"]\n", fixtureBin))
	data := t.TempDir()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"p","method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sleep_ms","arguments":{"ms":300}}}`,
	}, "\n") + "\n"
	cmd := exec.Command(hubBin, "--config", cfg, "--data-dir", data)
	cmd.Stdin = strings.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hub: %v\n%s", err, stderr.String())
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		m, err := wire.Parse([]byte(line))
		if err != nil {
			t.Fatalf("stdout line is not JSON-RPC: %q", line)
		}
		if m.ID != nil {
			got[string(m.ID)] = line
		}
	}
	for _, id := range []string{`1`, `"p"`, `3`} {
		if got[id] == "" {
			t.Errorf("no answer to request %s; stdout:\n%s", id, out)
		}
	}
	// The call needs its upstream connected; the drain is short, so the
	// answer is its result or an error that says why — never nothing.
	if got["4"] == "" {
		t.Errorf("no answer to the tools/call; stdout:\n%s\nstderr:\n%s", out, stderr.String())
	} else {
		t.Logf("tools/call answered: %s", got["4"])
	}
}
