package main

import (
	"bytes"
	"context"
	"database/sql"
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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// adminHub is a hub process driven by a go-sdk client.
type adminHub struct {
	t       *testing.T
	cs      *mcp.ClientSession
	cmd     *exec.Cmd
	changed chan struct{}
	mu      sync.Mutex
	elicits []string // messages of elicitation requests
}

// startAdminHub starts the hub binary on dataDir with a go-sdk client. A nil
// elicit means the client does not support elicitation.
func startAdminHub(t *testing.T, dataDir, cfg string, elicit func(msg string) string, env ...string) *adminHub {
	t.Helper()
	a := &adminHub{t: t, changed: make(chan struct{}, 64)}
	opts := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case a.changed <- struct{}{}:
			default:
			}
		},
	}
	if elicit != nil {
		opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.mu.Lock()
			a.elicits = append(a.elicits, r.Params.Message)
			a.mu.Unlock()
			return &mcp.ElicitResult{Action: elicit(r.Params.Message)}, nil
		}
	}
	args := []string{"--data-dir", dataDir}
	if cfg != "" {
		args = append(args, "--config", cfg)
	} else {
		args = append(args, "--config", writeFile(t, "empty.yaml", ""))
	}
	cmd := exec.Command(hubBin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = testLogWriter{t}
	client := mcp.NewClient(&mcp.Implementation{Name: "admin-test-client", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.cs, a.cmd = cs, cmd
	t.Cleanup(func() { a.close() })
	return a
}

func (a *adminHub) close() {
	if a.cs != nil {
		a.cs.Close()
		a.cs = nil
	}
}

// call calls a tool and returns the result's text and structured content.
func (a *adminHub) call(name string, args map[string]any) (text string, structured map[string]any, isError bool) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: %v", name, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &structured)
	}
	return text, structured, res.IsError
}

// settle returns an admin result's structured content once the server it
// names has connected: admin calls answer CONNECTING after ~800 ms rather
// than wait on a slow start, which a loaded machine can hit, so a result
// in that state is completed from hub_get_server when the server connects.
func (a *adminHub) settle(name string, sc map[string]any) map[string]any {
	a.t.Helper()
	if sc == nil || sc["state"] != "CONNECTING" {
		return sc
	}
	waitFor(a.t, 30*time.Second, name+" CONNECTED", func() bool {
		_, got, _ := a.call("hub_get_server", map[string]any{"name": name})
		view, _ := got["server"].(map[string]any)
		if view == nil || view["state"] != "CONNECTED" {
			return false
		}
		sc["state"], sc["tools"] = "CONNECTED", got["tools"]
		return true
	})
	return sc
}

func (a *adminHub) tools() []string {
	a.t.Helper()
	res, err := a.cs.ListTools(context.Background(), nil)
	if err != nil {
		a.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// waitTool waits until the catalog has (or lacks) a tool.
func (a *adminHub) waitTool(name string, present bool, d time.Duration) {
	a.t.Helper()
	waitFor(a.t, d, fmt.Sprintf("tool %s present=%v", name, present), func() bool {
		return slices.Contains(a.tools(), name) == present
	})
}

func (a *adminHub) drainChanged() {
	for {
		select {
		case <-a.changed:
		default:
			return
		}
	}
}

func (a *adminHub) waitChanged(d time.Duration) {
	a.t.Helper()
	select {
	case <-a.changed:
	case <-time.After(d):
		a.t.Fatalf("no tools/list_changed within %s", d)
	}
}

func openTestStore(t *testing.T, dir string) *persist.Store {
	t.Helper()
	st, err := persist.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func fixtureArgs(dir, name string, extra ...string) []any {
	args := []any{"-only", "pid", "-extra", name + "_tool", "-pid-file", filepath.Join(dir, name+".pid")}
	for _, e := range extra {
		args = append(args, e)
	}
	return args
}

func TestAdminAddApprovedByElicitation(t *testing.T) {
	data := t.TempDir()
	a := startAdminHub(t, data, "", func(string) string { return "accept" })
	a.drainChanged()
	text, sc, isErr := a.call("hub_add_server", map[string]any{
		"name": "added", "command": fixtureBin, "args": fixtureArgs(data, "added"),
		"env": map[string]any{"API_TOKEN": "s3cret-value"}, "description": "added by a test",
	})
	sc = a.settle("added", sc)
	if isErr || sc["state"] != "CONNECTED" || sc["approval"] != "approved" {
		t.Fatalf("hub_add_server = %q %v", text, sc)
	}
	if tools, _ := sc["tools"].([]any); !slices.Contains(tools, any("added_tool")) {
		t.Errorf("result tools %v lack added_tool", sc["tools"])
	}
	a.waitChanged(10 * time.Second)
	if !slices.Contains(a.tools(), "added_tool") {
		t.Errorf("tools/list lacks added_tool: %v", a.tools())
	}
	// The person saw the exact launch spec, never a secret value.
	a.mu.Lock()
	msg := strings.Join(a.elicits, "\n")
	a.mu.Unlock()
	if !strings.Contains(msg, fixtureBin) || !strings.Contains(msg, filepath.Join(data, "added.pid")) || !strings.Contains(msg, "API_TOKEN") {
		t.Errorf("approval message does not show the exact launch spec:\n%s", msg)
	}
	if strings.Contains(msg, "s3cret-value") {
		t.Errorf("approval message shows a secret value:\n%s", msg)
	}
	// hub_get_server masks secrets; hub_list_servers shows the state.
	got, _, _ := a.call("hub_get_server", map[string]any{"name": "added"})
	if strings.Contains(got, "s3cret-value") || !strings.Contains(got, "***") || !strings.Contains(got, "added_tool") {
		t.Errorf("hub_get_server = %s", got)
	}
	list, lsc, _ := a.call("hub_list_servers", nil)
	if !strings.Contains(list, "added (stdio): CONNECTED") || lsc["servers"] == nil {
		t.Errorf("hub_list_servers = %s", list)
	}
	// The audit log names the client (A9).
	st := openTestStore(t, data)
	log, err := st.AuditLog(context.Background(), "added", 0)
	if err != nil || len(log) == 0 || !strings.HasPrefix(log[0].Actor, "admin:admin-test-client") {
		t.Errorf("audit log = %+v, %v; want an entry by admin:admin-test-client", log, err)
	}
	if bytes.Contains(log[0].Detail, []byte("s3cret-value")) {
		t.Error("audit detail holds a secret value")
	}

	pid, err := testbin.ReadPID(filepath.Join(data, "added.pid"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	a.drainChanged()
	if _, _, isErr := a.call("hub_remove_server", map[string]any{"name": "added"}); isErr {
		t.Fatal("hub_remove_server failed")
	}
	a.waitChanged(10 * time.Second)
	if slices.Contains(a.tools(), "added_tool") {
		t.Error("added_tool still listed after remove")
	}
	if alive := testbin.WaitGone(5*time.Second, pid); len(alive) > 0 {
		t.Errorf("removed upstream's process %d is alive", pid)
	}
	if _, err := st.Get(context.Background(), "added"); err == nil {
		t.Error("removed registration still stored")
	}
}

func TestAdminAddDeclined(t *testing.T) {
	data := t.TempDir()
	a := startAdminHub(t, data, "", func(string) string { return "decline" })
	text, sc, isErr := a.call("hub_add_server", map[string]any{"name": "nope", "command": fixtureBin, "args": fixtureArgs(data, "nope")})
	if isErr || sc["stored"] != false || !strings.Contains(text, "declined") {
		t.Fatalf("hub_add_server = %q %v", text, sc)
	}
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(data, "nope.pid")); err == nil {
		t.Error("a declined upstream was spawned")
	}
	if _, err := openTestStore(t, data).Get(context.Background(), "nope"); err == nil {
		t.Error("a declined upstream was stored")
	}
}

// TestAdminPendingUntilCLIApproval covers A2: what a model registers without
// a person in the loop never runs, until `mcp-hub approve`.
func TestAdminPendingUntilCLIApproval(t *testing.T) {
	data := t.TempDir()
	marker := filepath.Join(data, "pwned")
	a := startAdminHub(t, data, "", nil)
	hubPID := a.cmd.Process.Pid

	text, sc, isErr := a.call("hub_add_server", map[string]any{"name": "pwn", "command": "bash", "args": []any{"-c", "touch " + marker}})
	if isErr || sc["approval"] != "pending" || !strings.Contains(text, "mcp-hub approve --data-dir "+data+" pwn") {
		t.Fatalf("hub_add_server = %q %v", text, sc)
	}
	if !strings.Contains(text, "run: bash -c 'touch "+marker+"'") {
		t.Errorf("result does not show the exact command: %s", text)
	}
	text, sc, _ = a.call("hub_add_server", map[string]any{"name": "later", "command": fixtureBin, "args": fixtureArgs(data, "later")})
	if sc["approval"] != "pending" {
		t.Fatalf("second add = %q %v", text, sc)
	}
	time.Sleep(2 * time.Second) // longer than the store poll
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the pending command ran")
	}
	if kids := testbin.Children(hubPID); len(kids) > 0 {
		t.Fatalf("the hub spawned %v for pending registrations", kids)
	}
	out, _ := cli(t, data, "list")
	if !strings.Contains(out, "pwn") || !strings.Contains(out, "pending") || !strings.Contains(out, "bash -c 'touch "+marker+"'") {
		t.Errorf("mcp-hub list:\n%s", out)
	}
	// approve without --yes on a non-terminal refuses and changes nothing.
	if out, code := cli(t, data, "approve", "later"); code == 0 || !strings.Contains(out, "--yes") {
		t.Errorf("approve without --yes: code %d:\n%s", code, out)
	}
	a.drainChanged()
	if out, code := cli(t, data, "approve", "later", "--yes"); code != 0 || !strings.Contains(out, fixtureBin) {
		t.Fatalf("approve: code %d:\n%s", code, out)
	}
	a.waitChanged(10 * time.Second)
	a.waitTool("later_tool", true, 10*time.Second)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the other pending command ran")
	}
	// status shows what the running hub last wrote to the store, which it
	// does after the catalog changed: wait for the report.
	waitFor(t, 10*time.Second, "mcp-hub status to report later CONNECTED", func() bool {
		out, _ = cli(t, data, "status")
		return strings.Contains(out, "later") && strings.Contains(out, "CONNECTED")
	})
	pid1, _ := testbin.ReadPID(filepath.Join(data, "later.pid"), 5*time.Second)

	// A restart restores the registration and reconnects it.
	a.close()
	if alive := testbin.WaitGone(10*time.Second, pid1, hubPID); len(alive) > 0 {
		t.Fatalf("processes %v outlived the hub", alive)
	}
	os.Remove(filepath.Join(data, "later.pid"))
	b := startAdminHub(t, data, "", nil)
	if !slices.Contains(b.tools(), "later_tool") {
		t.Errorf("after restart tools = %v, want later_tool", b.tools())
	}
	// The first list comes from the capability cache (warm start); the
	// upstream connects meanwhile.
	var list string
	waitFor(t, 10*time.Second, "later CONNECTED after the restart", func() bool {
		list, _, _ = b.call("hub_list_servers", nil)
		return strings.Contains(list, "later (stdio): CONNECTED")
	})
	if !strings.Contains(list, "pwn") {
		t.Errorf("hub_list_servers after restart:\n%s", list)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the pending command ran after restart")
	}
	// Reject and remove from the command line.
	if out, code := cli(t, data, "reject", "pwn"); code != 0 {
		t.Errorf("reject: %s", out)
	}
	if out, code := cli(t, data, "remove", "later"); code != 0 {
		t.Errorf("remove: %s", out)
	}
	b.waitTool("later_tool", false, 10*time.Second)
}

// TestAdminToolsOff covers A1.
func TestAdminToolsOff(t *testing.T) {
	data := t.TempDir()
	a := startAdminHub(t, data, "", nil, "MCP_HUB_ADMIN__TOOLS=off")
	// hub_search_tools and hub_call_tool are not admin tools: they stay.
	discovery := []string{"hub_call_tool", "hub_search_tools"}
	for _, n := range a.tools() {
		if strings.HasPrefix(n, "hub_") && !slices.Contains(discovery, n) {
			t.Errorf("admin tool %s offered with admin.tools=off", n)
		}
	}
	_, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hub_add_server", Arguments: map[string]any{"name": "x", "command": "true"}})
	if err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("hub_add_server with admin off: err = %v, want unknown tool", err)
	}
	regs, _ := openTestStore(t, data).List(context.Background())
	if len(regs) != 0 {
		t.Errorf("stored %v", regs)
	}
	ro := startAdminHub(t, t.TempDir(), "", nil, "MCP_HUB_ADMIN__TOOLS=read-only")
	var got []string
	for _, n := range ro.tools() {
		if strings.HasPrefix(n, "hub_") && !slices.Contains(discovery, n) {
			got = append(got, n)
		}
	}
	if !slices.Equal(got, []string{"hub_get_server", "hub_list_servers"}) {
		t.Errorf("read-only admin tools = %v", got)
	}
}

// TestAdminArgvLiteral covers A4: shell metacharacters reach the program as
// literal argv; NUL, CR and LF are refused.
func TestAdminArgvLiteral(t *testing.T) {
	data := t.TempDir()
	weird := []string{"a;b", "$(touch " + filepath.Join(data, "x") + ")", "`id`", "x'y\"z", "*", "&& echo hi", "|", ">out", "ü"}
	args := append([]string{"add", "argv", "--", fixtureBin, "-only", "argv", "--"}, weird...)
	if out, code := cli(t, data, args...); code != 0 {
		t.Fatalf("add: %s", out)
	}
	a := startAdminHub(t, data, "", nil)
	text, _, isErr := a.call("argv", nil)
	var got []string
	if isErr || json.Unmarshal([]byte(text), &got) != nil {
		t.Fatalf("argv = %s", text)
	}
	want := append([]string{"-only", "argv", "--"}, weird...)
	if !slices.Equal(got, want) {
		t.Errorf("argv = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(data, "x")); err == nil {
		t.Error("a shell interpreted the arguments")
	}
	for _, bad := range []string{"a\x00b", "a\nb", "a\rb"} {
		text, _, isErr := a.call("hub_add_server", map[string]any{"name": "bad", "command": fixtureBin, "args": []any{"ok", bad}})
		if !isErr || !strings.Contains(text, "args[1]") {
			t.Errorf("args with %q: %q, want an error naming args[1]", bad, text)
		}
	}
}

// TestAdminTamperedStore covers A6: a launch spec edited in SQLite behind the
// hub's back never runs; the upstream goes back to pending.
func TestAdminTamperedStore(t *testing.T) {
	data := t.TempDir()
	if out, code := cli(t, data, append([]string{"add", "victim", "--", fixtureBin}, anyToStrings(fixtureArgs(data, "victim"))...)...); code != 0 {
		t.Fatalf("add: %s", out)
	}
	a := startAdminHub(t, data, "", nil)
	a.waitTool("victim_tool", true, 10*time.Second)
	pid, _ := testbin.ReadPID(filepath.Join(data, "victim.pid"), 5*time.Second)

	// Edit the stored args directly: a different pid file reveals a spawn.
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "hub.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cfg string
	if err := db.QueryRow(`SELECT config FROM upstreams WHERE name = 'victim'`).Scan(&cfg); err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(cfg, "victim.pid", "tampered.pid", 1)
	if _, err := db.Exec(`UPDATE upstreams SET config = ? WHERE name = 'victim'`, tampered); err != nil {
		t.Fatal(err)
	}
	a.waitTool("victim_tool", false, 10*time.Second)
	if alive := testbin.WaitGone(5*time.Second, pid); len(alive) > 0 {
		t.Errorf("the upstream with a tampered spec still runs (pid %d)", pid)
	}
	r, err := openTestStore(t, data).Get(context.Background(), "victim")
	if err != nil || r.Approval != upstream.ApprovalPending {
		t.Errorf("approval after tampering = %q, %v; want pending", r.Approval, err)
	}
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(data, "tampered.pid")); err == nil {
		t.Error("the tampered launch spec was spawned")
	}
	// A restart does not run it either.
	a.close()
	b := startAdminHub(t, data, "", nil)
	time.Sleep(time.Second)
	if _, err := os.Stat(filepath.Join(data, "tampered.pid")); err == nil || slices.Contains(b.tools(), "victim_tool") {
		t.Error("the tampered launch spec ran after a restart")
	}
}
