//go:build linux

package upstream

// Supervision of daemonizing upstreams (issue 12, item 3) and admin
// commands on an upstream stuck connecting (item 8).

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// removeWithin runs m.Remove(name) and fails the test when it has not
// returned within d. It returns how long it took.
func removeWithin(t *testing.T, m *Manager, name string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- m.Remove(name) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("remove %s: %v", name, err)
		}
	case <-time.After(d):
		t.Fatalf("remove %s did not return within %s", name, d)
	}
	return time.Since(start)
}

// waitNoTrace waits until pid is gone and reaped: no process, no zombie.
func waitNoTrace(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for testbin.Exists(pid) {
		if time.Now().After(deadline) {
			if testbin.Alive(pid) {
				t.Fatalf("process %d still runs (parent %d)", pid, testbin.Parent(pid))
			}
			t.Fatalf("process %d is a zombie (parent %d, the test is %d)", pid, testbin.Parent(pid), os.Getpid())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDaemonGoneAfterRemove: an upstream whose grandchild leaves its
// process group (setsid, or a double fork that re-parents it at once) and
// keeps the upstream's stdout open. Remove returns within the grace
// sequence, and the daemon is gone: killed and reaped, no zombie.
func TestDaemonGoneAfterRemove(t *testing.T) {
	for _, mode := range []string{"setsid", "double-fork"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			dpid := filepath.Join(dir, "daemon.pid")
			opts := fastOptions(t)
			m := newManager(t, opts)
			u, _ := m.Add(stdioSpec("d", "-daemon", dpid, "-daemon-mode", mode, "-only", "echo"), AddOptions{})
			st := waitState(t, u, 10*time.Second, StateConnected)
			d, err := testbin.ReadPID(dpid, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = signalPID(d, sigKill) })
			if !testbin.Alive(d) {
				t.Fatalf("daemon %d not running", d)
			}
			if mode == "double-fork" {
				// The subreaper: the orphan is the hub's, not init's.
				if p := testbin.Parent(d); p != os.Getpid() {
					t.Errorf("double-forked daemon's parent is %d, want the hub (%d)", p, os.Getpid())
				}
			}
			callText(t, u, "echo", `{}`)
			// Stdin closes; the fixture exits at once; the daemon gets SIGTERM
			// and exits: well within one grace period of each step.
			took := removeWithin(t, m, "d", 3*opts.ShutdownGrace+2*time.Second)
			t.Logf("remove with a %s daemon holding stdout: %s", mode, took.Round(time.Millisecond))
			waitNoTrace(t, st.PID, 5*time.Second)
			waitNoTrace(t, d, 5*time.Second)
		})
	}
}

// TestReparentedDaemonExitingLeavesNoZombie: a double-forked daemon is
// re-parented to the hub and exits on its own while its upstream keeps
// running; the hub reaps it.
func TestReparentedDaemonExitingLeavesNoZombie(t *testing.T) {
	dir := t.TempDir()
	dpid := filepath.Join(dir, "daemon.pid")
	m := newManager(t, fastOptions(t))
	u, _ := m.Add(stdioSpec("d", "-daemon", dpid, "-daemon-mode", "double-fork", "-daemon-exit-after", "2s", "-only", "echo"), AddOptions{})
	st := waitState(t, u, 10*time.Second, StateConnected)
	d, err := testbin.ReadPID(dpid, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = signalPID(d, sigKill) })
	if p := testbin.Parent(d); p != os.Getpid() {
		t.Fatalf("daemon's parent is %d, want the hub (%d)", p, os.Getpid())
	}
	// It exits after 2 s; then it must not stay a zombie of ours.
	waitNoTrace(t, d, 10*time.Second)
	if z := testbin.Zombies(os.Getpid()); len(z) > 0 {
		t.Errorf("zombies %v", z)
	}
	if now := u.Status(); now.State != StateConnected || now.PID != st.PID {
		t.Errorf("upstream %+v, want still connected to %d", now, st.PID)
	}
	callText(t, u, "echo", `{}`)
}

// TestCommandsAbandonAConnectingAttempt: restart, disconnect and remove of
// an upstream whose attempt hangs (a stdio child that never answers
// initialize and ignores stdin EOF and SIGTERM, an HTTP server that
// accepts connections and never answers) take effect at once, not after
// the init timeout, and leave no process behind.
func TestCommandsAbandonAConnectingAttempt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	pidFile := filepath.Join(t.TempDir(), "stuck.pid")
	specs := map[string]Spec{
		"stdio": stdioSpec("stuck", "-hang-initialize", "-ignore-sigterm", "-pid-file", pidFile),
		"http":  {Name: "stuck", URL: fmt.Sprintf("http://%s/mcp", ln.Addr())},
	}
	// childPID returns the stdio child's pid (0 for http), written at its
	// start; the status has no pid before the upstream is connected.
	childPID := func(kind string) int {
		t.Helper()
		if kind != "stdio" {
			return 0
		}
		defer os.Remove(pidFile)
		pid, err := testbin.ReadPID(pidFile, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	for _, kind := range []string{"stdio", "http"} {
		t.Run(kind, func(t *testing.T) {
			opts := fastOptions(t)
			opts.InitTimeout = time.Minute
			opts.ShutdownGrace = 2 * time.Second
			m := newManager(t, opts)
			u, err := m.Add(specs[kind], AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			waitState(t, u, 10*time.Second, StateConnecting)
			pid := childPID(kind)
			// A bound well under the init timeout and under one grace
			// period: the attempt is abandoned, not waited for.
			bound := opts.ShutdownGrace
			applied := func(what string) time.Duration {
				t.Helper()
				start := time.Now()
				sent := u.CommandsSent()
				for u.Status().Applied < sent {
					if time.Since(start) > bound {
						t.Fatalf("%s of a connecting upstream not applied within %s (status %+v)", what, bound, u.Status())
					}
					time.Sleep(5 * time.Millisecond)
				}
				return time.Since(start)
			}
			if err := m.Restart("stuck"); err != nil {
				t.Fatal(err)
			}
			t.Logf("restart applied in %s", applied("restart").Round(time.Millisecond))
			if kind == "stdio" {
				waitNoTrace(t, pid, 5*time.Second)
				pid = childPID(kind) // the new attempt's
			}
			if err := m.Disconnect("stuck"); err != nil {
				t.Fatal(err)
			}
			t.Logf("disconnect applied in %s", applied("disconnect").Round(time.Millisecond))
			if s := u.Status(); s.State != StateDisconnected {
				t.Errorf("after disconnect: %s", s.State)
			}
			if err := m.Connect("stuck"); err != nil {
				t.Fatal(err)
			}
			waitState(t, u, 10*time.Second, StateConnecting)
			if kind == "stdio" {
				waitNoTrace(t, pid, 5*time.Second) // the one disconnect stopped
				pid = childPID(kind)
			}
			took := removeWithin(t, m, "stuck", bound)
			t.Logf("remove of a connecting %s upstream: %s", kind, took.Round(time.Millisecond))
			if kind == "stdio" {
				if kids := testbin.Children(os.Getpid()); slices.Contains(kids, pid) {
					t.Errorf("child %d still runs after remove", pid)
				}
				waitNoTrace(t, pid, 5*time.Second)
			}
		})
	}
}

// TestReadersStopWhileAnEscapedProcessHoldsStdout: a daemon the hub cannot
// attribute to its upstream (double fork with a cleared environment: no
// marker, another session, its parent gone) keeps the upstream's stdout
// and stderr open. Remove still returns once the readers are cut off: the
// pipes stay in the runtime poller, so closing them wakes the reads.
func TestReadersStopWhileAnEscapedProcessHoldsStdout(t *testing.T) {
	dir := t.TempDir()
	dpid := filepath.Join(dir, "daemon.pid")
	opts := fastOptions(t)
	m := newManager(t, opts)
	u, _ := m.Add(stdioSpec("escaped", "-daemon", dpid, "-daemon-mode", "double-fork", "-daemon-clear-env", "-only", "echo"), AddOptions{})
	st := waitState(t, u, 10*time.Second, StateConnected)
	d, err := testbin.ReadPID(dpid, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Not ours to reap: the test kills it, and reaps it (it was
		// re-parented to this process).
		_ = signalPID(d, sigKill)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(d, &ws, 0, nil)
	})
	took := removeWithin(t, m, "escaped", 3*opts.ShutdownGrace+drainWait+5*time.Second)
	t.Logf("remove while an escaped process holds stdout: %s", took.Round(time.Millisecond))
	waitNoTrace(t, st.PID, 5*time.Second)
	if !testbin.Alive(d) {
		t.Log("the escaped daemon did not survive (the test expects it to be out of reach)")
	}
}
