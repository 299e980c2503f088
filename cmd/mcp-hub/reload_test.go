package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHotReload: edits of the config file reach the running hub, whatever
// way the editor saves, while a client session stays connected and hears
// list_changed; a broken edit changes nothing until it is fixed.
func TestHotReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.yaml")
	config := func(servers ...string) string {
		s := "configPoll: 50ms\nmcpServers:\n"
		for _, sv := range servers {
			name, only, _ := strings.Cut(sv, ":")
			s += fmt.Sprintf("  %s:\n    command: %s\n    args: [-only, %q]\n", name, fixtureBin, only)
		}
		return s
	}
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(config("a:echo"))
	c := startRaw(t, nil, hubBin, "--config", path, "--data-dir", t.TempDir())
	c.initialize()
	tools := func() []string { return withoutHubTools(toolNames(t, c.call("tools/list", "").Result)) }
	if got := tools(); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("tools at start: %v", got)
	}
	expect := func(what string, want ...string) {
		t.Helper()
		before := c.countNotifications("notifications/tools/list_changed")
		waitFor(t, 15*time.Second, what, func() bool { return slices.Equal(tools(), want) })
		waitFor(t, 5*time.Second, what+": list_changed", func() bool {
			return c.countNotifications("notifications/tools/list_changed") > before
		})
	}

	write(config("a:echo", "b:pid"))
	expect("an edit in place adds b", "echo", "pid")

	tmp := path + ".swp"
	if err := os.WriteFile(tmp, []byte(config("a:echo,add", "b:pid")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	expect("a rename-and-replace changes a", "add", "echo", "pid")

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the missing file in the log", func() bool {
		return strings.Contains(c.stderr.String(), "config file is gone")
	})
	if got := tools(); !slices.Equal(got, []string{"add", "echo", "pid"}) {
		t.Errorf("tools while the file is missing: %v, want the last good ones", got)
	}
	write(config("a:echo,add"))
	expect("delete and recreate removes b", "add", "echo")

	write("mcpServers:\n  a: [\n")
	waitFor(t, 5*time.Second, "the broken edit in the log", func() bool {
		return strings.Contains(c.stderr.String(), "config edit not applied")
	})
	if got := tools(); !slices.Equal(got, []string{"add", "echo"}) {
		t.Errorf("tools after a broken edit: %v, want the last good ones", got)
	}
	write(config("a:echo"))
	expect("fixing the edit applies it", "echo")
	if m := c.call("tools/call", `{"name":"echo","arguments":{"message":"still here"}}`); !strings.Contains(string(m.Result), "still here") {
		t.Errorf("the session after the edits: %s %s", m.Result, m.Error)
	}
}
