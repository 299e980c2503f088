//go:build linux

package main

// The hub binary and daemonizing upstreams (issue 12, item 3): no process
// escapes supervision, no admin call or shutdown is held up by one.

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// killAtEnd SIGKILLs pids that still run when the test ends (a failing
// test must not leave daemons behind).
func killAtEnd(t *testing.T, pids ...int) {
	t.Cleanup(func() {
		for _, p := range pids {
			if testbin.Alive(p) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
}

// noTrace waits until none of pids exists: no process, no zombie.
func noTrace(t *testing.T, d time.Duration, pids ...int) {
	t.Helper()
	waitFor(t, d, fmt.Sprintf("processes %v to be gone and reaped", pids), func() bool {
		return !slices.ContainsFunc(pids, testbin.Exists)
	})
}

// callAsync calls an admin tool in the background; the channel gets the
// result's text and how long the call took.
func (a *adminHub) callAsync(name string, args map[string]any) <-chan string {
	ch := make(chan string, 1)
	start := time.Now()
	cs := a.cs
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		switch {
		case err != nil:
			ch <- fmt.Sprintf("error: %v (after %s)", err, time.Since(start))
		case res.IsError:
			ch <- fmt.Sprintf("tool error (after %s)", time.Since(start))
		default:
			ch <- "ok after " + time.Since(start).Round(time.Millisecond).String()
		}
	}()
	return ch
}

// TestDaemonizingUpstreamRemoved: an upstream whose grandchild leaves its
// process group (setsid, or a double fork that re-parents it to the hub)
// and keeps the upstream's stdout open. hub_remove_server answers within
// the grace sequence, the grandchild is gone (no process, no zombie), and
// while the remove runs hub_restart_server of another upstream answers.
func TestDaemonizingUpstreamRemoved(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf("mcpServers:\n  other:\n    command: %s\n    args: [\"-only\", \"pid\"]\n", fixtureBin))
	// The stubborn remove takes two grace periods; they are long enough
	// that a restart of another upstream (a spawn and an initialize) ends
	// well within them on a loaded machine.
	const grace = 3 * time.Second
	a := startAdminHub(t, data, cfg, nil, "MCP_HUB_ADMIN__APPROVAL=auto", "MCP_HUB_TIMEOUTS__SHUTDOWN_GRACE="+grace.String())
	hubPID := a.cmd.Process.Pid
	for _, tc := range []struct {
		name, mode string
		stubborn   bool // the upstream ignores stdin EOF and SIGTERM: the remove takes both grace periods
	}{
		{"setsid", "setsid", false},
		{"doublefork", "double-fork", false},
		{"stubborn", "double-fork", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(dir, tc.name+".pid")
			args := []any{"-only", "echo", "-extra", tc.name + "_tool", "-daemon", pidFile, "-daemon-mode", tc.mode}
			if tc.stubborn {
				args = append(args, "-ignore-sigterm")
			}
			text, sc, isErr := a.call("hub_add_server", map[string]any{"name": tc.name, "command": fixtureBin, "args": args})
			if isErr || sc["state"] != "CONNECTED" {
				t.Fatalf("hub_add_server = %q", text)
			}
			daemon, err := testbin.ReadPID(pidFile, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			killAtEnd(t, daemon)
			if tc.mode == "double-fork" {
				if p := testbin.Parent(daemon); p != hubPID {
					t.Errorf("the double-forked daemon's parent is %d, want the hub %d (a subreaper)", p, hubPID)
				}
			}
			var root int
			for _, p := range testbin.Children(hubPID) {
				if args, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); strings.Contains(string(args), tc.name+"_tool") {
					root = p
				}
			}
			if root == 0 {
				t.Fatal("the upstream is not a child of the hub")
			}
			killAtEnd(t, root)

			start := time.Now()
			removed := a.callAsync("hub_remove_server", map[string]any{"name": tc.name})
			var removeResult *string // set when the remove's answer was already taken
			if tc.stubborn {
				// The remove waits out both grace periods: meanwhile another
				// upstream's restart answers.
				time.Sleep(100 * time.Millisecond)
				select {
				case r := <-a.callAsync("hub_restart_server", map[string]any{"name": "other"}):
					if !strings.HasPrefix(r, "ok") {
						t.Errorf("hub_restart_server of another upstream: %s", r)
					}
					// The stubborn upstream takes two grace periods to
					// stop: still running, it shows the restart did not
					// wait for its stop. (The remove itself may answer
					// early: the store poll can start the stop first.)
					if !testbin.Exists(root) {
						t.Error("the stubborn upstream was gone before the restart of another upstream answered: nothing shows the restart did not wait")
					}
					select {
					case r := <-removed:
						removeResult = &r
					default:
					}
					t.Logf("hub_restart_server of another upstream: %s, while the stubborn upstream was being stopped", r)
				case <-time.After(10 * time.Second):
					t.Fatal("hub_restart_server of another upstream did not answer while one was removed")
				}
			}
			// Each step of the sequence waits at most one grace period.
			if removeResult != nil {
				c := make(chan string, 1)
				c <- *removeResult
				removed = c
			}
			select {
			case r := <-removed:
				if !strings.HasPrefix(r, "ok") {
					t.Fatalf("hub_remove_server: %s", r)
				}
				t.Logf("hub_remove_server with a %s daemon holding stdout (stubborn upstream: %v): %s", tc.mode, tc.stubborn, r)
			case <-time.After(3*grace + 2*time.Second):
				t.Fatalf("hub_remove_server did not answer within %s", time.Since(start).Round(time.Millisecond))
			}
			noTrace(t, 5*time.Second, root, daemon)
			if z := testbin.Zombies(hubPID); len(z) > 0 {
				t.Errorf("zombies of the hub: %v", z)
			}
		})
	}
}

// TestDaemonizingUpstreamsHubExits: the hub exits within 10 s of stdin EOF,
// and of SIGTERM, with its upstreams' daemons running, and leaves not one
// process behind (none carries its marker, none of the daemons runs), not
// even a zombie: the test is a subreaper meanwhile, so what the hub leaves
// would be re-parented to it. In the last case the graceful stop of the
// stubborn upstream (two grace periods of 6 s) would outlast the limit:
// the hub kills what is left before it.
func TestDaemonizingUpstreamsHubExits(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	for _, tc := range []struct{ name, how, grace string }{
		{"stdin_EOF", "stdin EOF", ""},
		{"SIGTERM", "SIGTERM", ""},
		{"stdin_EOF_graceful_stop_beyond_the_limit", "stdin EOF", "6s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			how := tc.how
			var env []string
			if tc.grace != "" {
				env = []string{"MCP_HUB_TIMEOUTS__SHUTDOWN_GRACE=" + tc.grace}
			}
			before := append(testbin.Children(os.Getpid()), testbin.Zombies(os.Getpid())...)
			dir := t.TempDir()
			var yaml strings.Builder
			yaml.WriteString("mcpServers:\n")
			names := []string{"setsid", "doublefork", "stubborn", "plain"}
			for i, name := range names {
				args := fmt.Sprintf(`["-only", "echo", "-extra", "%s_tool", "-daemon", "%s/%s.pid", "-daemon-mode", "%s"`,
					name, dir, name, []string{"setsid", "double-fork", "double-fork", "setsid"}[i])
				if name == "stubborn" {
					args += `, "-ignore-sigterm"`
				}
				if name == "plain" {
					args = fmt.Sprintf(`["-only", "pid", "-grandchild", "%s/plain.pid"`, dir)
				}
				fmt.Fprintf(&yaml, "  %s:\n    command: %s\n    args: %s]\n", name, fixtureBin, args)
			}
			c := startRaw(t, env, hubBin, "--config", writeFile(t, "hub.yaml", yaml.String()), "--data-dir", t.TempDir())
			c.initialize()
			waitFor(t, 20*time.Second, "every upstream's tools", func() bool {
				tools := toolNames(t, c.call("tools/list", "").Result)
				return slices.Contains(tools, "setsid_tool") && slices.Contains(tools, "doublefork_tool") &&
					slices.Contains(tools, "stubborn_tool") && slices.Contains(tools, "pid")
			})
			var grandchildren []int
			for _, name := range names {
				pid, err := testbin.ReadPID(filepath.Join(dir, name+".pid"), 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				grandchildren = append(grandchildren, pid)
			}
			killAtEnd(t, grandchildren...)
			hubPID := c.cmd.Process.Pid
			prefix, err := testbin.HubPrefix(hubPID)
			if err != nil {
				t.Fatal(err)
			}
			marked := testbin.Marked(prefix)
			killAtEnd(t, marked...)
			if len(marked) < 2*len(names) {
				t.Errorf("processes with the hub's marker: %v, want the %d upstreams and their grandchildren", marked, len(names))
			}

			start := time.Now()
			if how == "SIGTERM" {
				if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				select {
				case <-c.exited:
				case <-time.After(10 * time.Second):
					t.Fatal("the hub did not exit within 10 s of SIGTERM")
				}
			} else {
				c.closeStdin(10 * time.Second)
			}
			t.Logf("the hub exited %s after %s (code %d)", time.Since(start).Round(time.Millisecond), how, c.cmd.ProcessState.ExitCode())
			if code := c.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d after %s", code, how)
			}
			// The log line of the kill at the limit, with how many processes
			// it killed: the stubborn upstream at least.
			var killLine string
			for l := range strings.SplitSeq(c.stderr.String(), "\n") {
				if strings.Contains(l, "shutdown running out of time") {
					killLine = l
				}
			}
			switch {
			case tc.grace == "" && killLine != "":
				t.Errorf("the graceful stop did not end in time: %s", killLine)
			case tc.grace != "" && (killLine == "" || strings.Contains(killLine, "processes=0")):
				t.Errorf("the hub did not kill the stubborn upstream at the limit: %q", killLine)
			case killLine != "":
				t.Logf("at the limit: %s", killLine)
			}
			left := testbin.Marked(prefix)
			if len(left) > 0 {
				t.Errorf("processes with the hub's marker left: %v", left)
			}
			ran := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(grandchildren), marked...))))
			alive := testbin.WaitGone(time.Second, ran...)
			if len(alive) > 0 {
				t.Errorf("processes left behind: %v", alive)
			}
			// The hub was reaped by the test; anything else now a child of
			// the test came from the hub.
			time.Sleep(100 * time.Millisecond)
			var stray []int
			for _, p := range append(testbin.Children(os.Getpid()), testbin.Zombies(os.Getpid())...) {
				if !slices.Contains(before, p) {
					stray = append(stray, p)
					t.Errorf("process %d (alive: %v) was left by the hub", p, testbin.Alive(p))
					var ws syscall.WaitStatus
					_ = syscall.Kill(p, syscall.SIGKILL)
					_, _ = syscall.Wait4(p, &ws, 0, nil)
				}
			}
			t.Logf("after %s: %d of the %d processes the hub ran (upstreams and daemons) left; %d with its marker, %d re-parented to the test (zombies included)",
				how, len(alive), len(ran), len(left), len(stray))
		})
	}
}

// TestAdminToolsOnConnectingServer: hub_update_server, hub_restart_server
// and hub_remove_server of a server stuck CONNECTING (a stdio child that
// never answers initialize and ignores stdin EOF and SIGTERM; an HTTP URL
// that accepts connections and never answers) answer within about a second
// instead of after the init timeout (update blocked 45 s).
func TestAdminToolsOnConnectingServer(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	})
	pidFile := filepath.Join(dir, "stdio.pid")
	for _, args := range [][]string{
		{"add", "stdio", "--", fixtureBin, "-hang-initialize", "-ignore-sigterm", "-pid-file", pidFile},
		{"add", "http", "--url", fmt.Sprintf("http://%s/mcp", ln.Addr())},
	} {
		if out, code := cli(t, data, args...); code != 0 {
			t.Fatalf("mcp-hub %v: %d %s", args, code, out)
		}
	}
	a := startAdminHub(t, data, "", nil)
	pid, err := testbin.ReadPID(pidFile, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	killAtEnd(t, pid)
	const bound = 3 * time.Second // generous next to the target, 1 s; the init timeout is 30 s
	within := func(tool, name string, args map[string]any) string {
		t.Helper()
		args["name"] = name
		select {
		case r := <-a.callAsync(tool, args):
			if !strings.HasPrefix(r, "ok") {
				t.Errorf("%s %s: %s", tool, name, r)
			}
			t.Logf("%s of the connecting %s server: %s", tool, name, r)
			return r
		case <-time.After(bound):
			t.Fatalf("%s of the connecting %s server did not answer within %s", tool, name, bound)
			return ""
		}
	}
	for _, name := range []string{"stdio", "http"} {
		waitFor(t, 10*time.Second, name+" connecting", func() bool {
			_, sc, _ := a.call("hub_get_server", map[string]any{"name": name})
			server, _ := sc["server"].(map[string]any)
			return server["state"] == "CONNECTING"
		})
		within("hub_update_server", name, map[string]any{"description": "changed while connecting"})
		within("hub_restart_server", name, map[string]any{})
		within("hub_remove_server", name, map[string]any{})
	}
	noTrace(t, 5*time.Second, pid)
}
