package sweep

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
	start, err := StartTime(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	return c.Process.Pid, start
}

func alive(pid int) bool {
	f, err := statFields(pid)
	return err == nil && f[0] != "Z"
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
	deadStart, _ := StartTime(deadLeader)
	hubPID, hubStart := deadHub(t)
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
		if l.Upstream != "orphaned" {
			t.Errorf("swept %+v, not from the orphaned group", l)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(orphan) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(orphan) || fmt.Sprint(killed) != fmt.Sprint([]int{orphan}) {
		t.Errorf("swept %v (orphan %d alive: %v), want exactly the orphan", killed, orphan, alive(orphan))
	}
	for _, pid := range []int{ownLeader, ownMember, reused, reusedMember} {
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
