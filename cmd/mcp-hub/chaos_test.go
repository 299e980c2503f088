package main

// Chaos tests of the hub binary (issue 5; security plan §7, E-series).

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// TestE2HubKilled: the hub process is killed with SIGKILL, so it can shut
// nothing down: its stdio upstreams die through the parent-death signal.
func TestE2HubKilled(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf(`
mcpServers:
  plain:
    command: %[1]s
    args: ["-only", "echo", "-pid-file", "%[2]s/plain.pid"]
  tree:
    command: %[1]s
    args: ["-only", "pid", "-pid-file", "%[2]s/tree.pid", "-grandchild", "%[2]s/grandchild.pid"]
  stubborn:
    command: %[1]s
    args: ["-only", "add", "-ignore-sigterm", "-pid-file", "%[2]s/stubborn.pid"]
  daemonizing:
    command: %[1]s
    args: ["-only", "echo", "-extra", "daemon_tool", "-daemon", "%[2]s/daemon.pid"]
`, fixtureBin, dir))
	data := t.TempDir()
	c := startRaw(t, nil, hubBin, "--config", cfg, "--data-dir", data)
	c.initialize()
	if names := withoutHubTools(toolNames(t, c.call("tools/list", "").Result)); !slices.Equal(names, []string{"add", "daemon_tool", "echo", "pid"}) {
		t.Fatalf("tools %v, want every upstream's", names)
	}
	pids := map[string]int{}
	for _, n := range []string{"plain", "tree", "stubborn", "grandchild", "daemon"} {
		pid, err := testbin.ReadPID(filepath.Join(dir, n+".pid"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pids[n] = pid
	}
	t.Cleanup(func() {
		_ = syscall.Kill(pids["grandchild"], syscall.SIGKILL)
		_ = syscall.Kill(pids["daemon"], syscall.SIGKILL)
	})
	hub := c.cmd.Process.Pid
	children := testbin.Children(hub)
	for _, n := range []string{"plain", "tree", "stubborn"} {
		if !slices.Contains(children, pids[n]) {
			t.Fatalf("upstream %s (%d) is not a child of the hub (children %v)", n, pids[n], children)
		}
	}

	killed := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the hub did not die")
	}
	t.Run("children die through the parent-death signal", func(t *testing.T) {
		direct := []int{pids["plain"], pids["tree"], pids["stubborn"]}
		if alive := testbin.WaitGone(10*time.Second, direct...); len(alive) > 0 {
			t.Fatalf("upstreams %v outlived the killed hub", alive)
		}
		t.Logf("upstreams %v gone %s after the hub was killed", direct, time.Since(killed).Round(time.Millisecond))
	})
	t.Run("grandchildren are swept at the next start", func(t *testing.T) {
		// The parent-death signal reaches only the hub's own children; a
		// grandchild that holds none of the hub's pipes (the fixture's
		// sleeps with /dev/null as stdio) is orphaned. The next hub on the
		// data directory kills what is left of the dead hub's process
		// groups.
		if alive := testbin.WaitGone(time.Second, pids["grandchild"]); len(alive) == 0 {
			t.Log("the grandchild died with the hub")
		}
		// A daemon that left the group (setsid) is found by the dead hub's
		// marker in its environment.
		next := startRaw(t, nil, hubBin, "--config", writeFile(t, "empty.yaml", ""), "--data-dir", data)
		next.initialize()
		if alive := testbin.WaitGone(10*time.Second, pids["grandchild"], pids["daemon"]); len(alive) > 0 {
			t.Fatalf("grandchildren %v outlived the dead hub and the next start", alive)
		}
		waitFor(t, 5*time.Second, "the sweep in the log", func() bool {
			return strings.Contains(next.stderr.String(), "killed a process a hub that died left behind") &&
				strings.Contains(next.stderr.String(), fmt.Sprintf("pid=%d", pids["grandchild"])) &&
				strings.Contains(next.stderr.String(), fmt.Sprintf("pid=%d", pids["daemon"]))
		})
	})
}
