//go:build unix

package sweep

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/proc"
)

// group starts `sleep` as the leader of a new process group, plus a second
// member in that group, and returns both pids.
func group(t *testing.T) (leader, member int) {
	t.Helper()
	l := exec.Command("sleep", "60")
	l.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	m := exec.Command("sleep", "60")
	m.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: l.Process.Pid}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-l.Process.Pid, syscall.SIGKILL)
		_ = l.Wait()
		_ = m.Wait()
	})
	return l.Process.Pid, m.Process.Pid
}

// deadHub returns the pid and start time of a process that has exited.
func deadHub(t *testing.T) (int, uint64) {
	t.Helper()
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	start, err := proc.StartTime(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	return c.Process.Pid, start
}

func alive(pid int) bool {
	s, err := proc.ReadStat(pid)
	return err == nil && !s.Zombie()
}

// marked starts `sleep` in a session of its own (as a daemon) with the
// marker value an upstream of a hub gives its processes.
func marked(t *testing.T, marker string) int {
	t.Helper()
	c := exec.Command("sleep", "60")
	c.Env = append(os.Environ(), proc.MarkerVar+"="+marker)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	})
	return c.Process.Pid
}

func TestSweep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "process-groups")
	self := Open(path)
	if self.off {
		t.Skip("no /proc here")
	}
	ownLeader, ownMember := group(t)
	if err := self.Add(ownLeader, "own"); err != nil {
		t.Fatal(err)
	}

	// A group of a hub that died, whose leader died with it.
	deadLeader, orphan := group(t)
	deadStart, _ := proc.StartTime(deadLeader)
	hubPID, hubStart := deadHub(t)
	// A daemon of the dead hub's upstream that left the group, and one of
	// a hub that runs (this process).
	daemon := marked(t, proc.Marker(hubPID, hubStart, 7))
	selfStart, _ := proc.StartTime(os.Getpid())
	livesOn := marked(t, proc.Marker(os.Getpid(), selfStart, 1))
	// A group of a dead hub whose id now belongs to another process.
	reused, reusedMember := group(t)
	lines := []string{
		entry{hubPID, hubStart, deadLeader, deadStart, "orphaned"}.String(),
		entry{hubPID, hubStart, reused, 12345, "reused"}.String(),
		"garbage line",
	}
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, []byte(strings.Join(lines, "\n")+"\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(deadLeader, syscall.SIGKILL) // the leader died with the hub
	// SIGKILL is delivered asynchronously: sweep once the leader is gone
	// (a zombie of this test), as a leader that died with its hub is.
	for deadline := time.Now().Add(5 * time.Second); alive(deadLeader) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}

	left, err := Open(path).Sweep()
	if err != nil {
		t.Fatal(err)
	}
	var killed []int
	for _, l := range left {
		killed = append(killed, l.PID)
		switch {
		case l.PID == orphan && l.Upstream == "orphaned":
		case l.PID == daemon && l.Upstream == "(left its process group)":
		default:
			t.Errorf("swept %+v", l)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for (alive(orphan) || alive(daemon)) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	slices.Sort(killed)
	want := []int{orphan, daemon}
	slices.Sort(want)
	if alive(orphan) || alive(daemon) || !slices.Equal(killed, want) {
		t.Errorf("swept %v (orphan %d alive: %v, daemon %d alive: %v), want exactly those two", killed, orphan, alive(orphan), daemon, alive(daemon))
	}
	for _, pid := range []int{ownLeader, ownMember, reused, reusedMember, livesOn} {
		if !alive(pid) {
			t.Errorf("process %d, not a dead hub's, was killed", pid)
		}
	}
	b, _ = os.ReadFile(path)
	if got := string(b); !strings.Contains(got, " own\n") || strings.Contains(got, "orphaned") || strings.Contains(got, "reused") {
		t.Errorf("register after the sweep:\n%s\nwant only this hub's entry", got)
	}
	if err := self.Remove(ownLeader); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("register after Remove: %q", b)
	}
}

// TestConcurrentUpdates: hubs on one data directory update the register at
// once without losing entries.
func TestConcurrentUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "process-groups")
	regs := []*Register{Open(path), Open(path)}
	if regs[0].off {
		t.Skip("no /proc here")
	}
	pid := os.Getpid() // any live process will do as a "leader"
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if err := regs[i%2].Add(pid, fmt.Sprintf("u%d", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 40 {
		t.Errorf("%d entries, want 40", n)
	}
}
