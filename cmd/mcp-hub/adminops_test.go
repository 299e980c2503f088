package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func anyToStrings(a []any) []string {
	var s []string
	for _, v := range a {
		s = append(s, fmt.Sprint(v))
	}
	return s
}

// TestAdminValidation covers A8 and argument validation.
func TestAdminValidation(t *testing.T) {
	a := startAdminHub(t, t.TempDir(), "", nil)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"name": "../../x", "command": "x"}, "name"},
		{map[string]any{"name": "hub", "command": "x"}, "reserved"},
		{map[string]any{"name": "hub_x", "command": "x"}, "reserved"},
		{map[string]any{"name": "", "command": "x"}, "name"},
		{map[string]any{"name": strings.Repeat("a", 300), "command": "x"}, "name"},
		{map[string]any{"name": "ｈｕｂ", "command": "x"}, "name"},
		{map[string]any{"name": "ok"}, "command"},
		{map[string]any{"name": "ok", "command": "x", "url": "http://127.0.0.1/"}, "url"},
		{map[string]any{"name": "ok", "command": 3}, "command: must be a string"},
		{map[string]any{"name": "ok", "command": "x", "args": "-y"}, "args: must be an array of strings"},
		{map[string]any{"name": "ok", "command": "x", "env": map[string]any{"A": 1}}, "env: must be an object of strings"},
		{map[string]any{"name": "ok", "command": "x", "transport": "ftp"}, "transport: must be one of"},
		{map[string]any{"name": "ok", "command": "x", "comand": "y"}, "comand: unknown field"},
		{map[string]any{"command": "x"}, "name: required"},
		{map[string]any{"name": "ok", "url": "ftp://x"}, "url"},
		{map[string]any{"name": "ok", "command": "x", "env": map[string]any{"BAD-NAME": "1"}}, "env"},
	}
	for _, tt := range tests {
		text, _, isErr := a.call("hub_add_server", tt.args)
		if !isErr || !strings.Contains(text, tt.want) {
			t.Errorf("hub_add_server(%v) = %q (isError %v), want an error containing %q", tt.args, text, isErr, tt.want)
		}
	}
	if text, _, isErr := a.call("hub_add_server", map[string]any{"name": "hub", "command": "x"}); !isErr || !strings.Contains(text, `invalid name "hub": "hub" and names starting "hub_" are reserved for the hub (its own tools are hub_*)`) || strings.Contains(text, upstream.NamePattern) {
		t.Errorf("name error %q does not say in words why", text)
	}
}

// TestAdminConfigEntries: the config file is the operator's truth.
func TestAdminConfigEntries(t *testing.T) {
	data := t.TempDir()
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf("mcpServers:\n  fromfile:\n    command: %s\n    args: [\"-only\", \"pid\", \"-extra\", \"file_tool\"]\n", fixtureBin))
	a := startAdminHub(t, data, cfg, nil)
	for _, op := range []string{"hub_remove_server", "hub_update_server"} {
		text, _, isErr := a.call(op, map[string]any{"name": "fromfile"})
		if !isErr || !strings.Contains(text, "defined in "+cfg+"; edit it there") {
			t.Errorf("%s on a config entry = %q", op, text)
		}
	}
	out, code := cliConfig(t, data, cfg, "remove", "fromfile")
	if code == 0 || !strings.Contains(out, "edit it there") {
		t.Errorf("mcp-hub remove of a config entry: %d %s", code, out)
	}
	// Disconnect and connect work on config entries.
	a.drainChanged()
	text, sc, _ := a.call("hub_disconnect_server", map[string]any{"name": "fromfile"})
	if sc["state"] != "DISCONNECTED" {
		t.Errorf("disconnect = %q", text)
	}
	a.waitTool("file_tool", false, 5*time.Second)
	text, sc, _ = a.call("hub_connect_server", map[string]any{"name": "fromfile"})
	if sc = a.settle("fromfile", sc); sc["state"] != "CONNECTED" {
		t.Errorf("connect = %q", text)
	}
	a.waitTool("file_tool", true, 5*time.Second)
	if _, sc, _ := a.call("hub_restart_server", map[string]any{"name": "fromfile"}); a.settle("fromfile", sc)["state"] != "CONNECTED" {
		t.Errorf("restart = %v", sc)
	}
}

// TestAdminUpdate: a change to what runs needs approval again; other
// changes do not restart anything.
func TestAdminUpdate(t *testing.T) {
	data := t.TempDir()
	answer := "accept"
	a := startAdminHub(t, data, "", func(string) string { return answer })
	if _, sc, _ := a.call("hub_add_server", map[string]any{"name": "up", "command": fixtureBin, "args": fixtureArgs(data, "up")}); a.settle("up", sc)["state"] != "CONNECTED" {
		t.Fatalf("add = %v", sc)
	}
	pid1, _ := testbin.ReadPID(filepath.Join(data, "up.pid"), 5*time.Second)
	if _, sc, isErr := a.call("hub_update_server", map[string]any{"name": "up", "description": "new words"}); isErr || sc["state"] != "CONNECTED" {
		t.Fatalf("description update = %v", sc)
	}
	a.mu.Lock()
	asked := len(a.elicits)
	a.mu.Unlock()
	if asked != 1 {
		t.Errorf("a description change asked for approval (%d requests)", asked)
	}
	if pid, _ := testbin.ReadPID(filepath.Join(data, "up.pid"), time.Second); pid != pid1 {
		t.Errorf("a description change restarted the upstream (%d → %d)", pid1, pid)
	}
	answer = "decline"
	if text, sc, _ := a.call("hub_update_server", map[string]any{"name": "up", "args": fixtureArgs(data, "up", "-stderr-lines", "1")}); sc["changed"] != false {
		t.Errorf("declined args update = %q", text)
	}
	answer = "accept"
	os.Remove(filepath.Join(data, "up.pid"))
	if text, sc, _ := a.call("hub_update_server", map[string]any{"name": "up", "args": fixtureArgs(data, "up", "-stderr-lines", "1")}); a.settle("up", sc)["state"] != "CONNECTED" {
		t.Fatalf("approved args update = %q", text)
	}
	pid2, err := testbin.ReadPID(filepath.Join(data, "up.pid"), 5*time.Second)
	if err != nil || pid2 == pid1 {
		t.Errorf("args change did not restart the upstream (%d → %d, %v)", pid1, pid2, err)
	}
	if alive := testbin.WaitGone(5*time.Second, pid1); len(alive) > 0 {
		t.Errorf("old process %d alive after the restart", pid1)
	}
}

// TestAdminRateLimited covers A10: a burst of registrations is cut off, the
// store stays consistent and nothing is left running.
func TestAdminRateLimited(t *testing.T) {
	data := t.TempDir()
	a := startAdminHub(t, data, "", nil, "MCP_HUB_ADMIN__APPROVAL=auto")
	hubPID := a.cmd.Process.Pid
	added, limited := 0, 0
	var names []string
	for i := range 1000 {
		name := fmt.Sprintf("r%d", i)
		op, args := "hub_add_server", map[string]any{"name": name, "command": fixtureBin, "args": []any{"-only", "pid"}}
		if i%2 == 1 {
			op, args = "hub_remove_server", map[string]any{"name": fmt.Sprintf("r%d", i-1)}
		}
		text, _, isErr := a.call(op, args)
		switch {
		case isErr && strings.Contains(text, "too many changes"):
			limited++
		case !isErr && op == "hub_add_server":
			added++
			names = append(names, name)
		case !isErr:
			names = slices.DeleteFunc(names, func(n string) bool { return n == args["name"] })
		}
	}
	if limited < 900 {
		t.Errorf("%d of 1000 changes were rate-limited; want most", limited)
	}
	regs, err := openTestStore(t, data).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, r := range regs {
		stored = append(stored, r.Spec.Name)
	}
	slices.Sort(names)
	if !slices.Equal(stored, names) {
		t.Errorf("store holds %v, want %v", stored, names)
	}
	a.close()
	waitFor(t, 10*time.Second, "no process left", func() bool { return len(testbin.Children(hubPID)) == 0 && !testbin.Alive(hubPID) })
}
