package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// The command name may hold spaces and parentheses.
	line := "42 (a (b) c) S 7 42 40 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0"
	s, err := parseStat(42, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stat{PID: 42, PPID: 7, PGID: 42, SID: 40, State: 'S', Start: 123456}); s != want {
		t.Errorf("parseStat = %+v, want %+v", s, want)
	}
	if _, err := parseStat(1, []byte("1 (x) S 0")); err == nil {
		t.Error("a short stat line parsed")
	}
}

// start runs argv with the given extra environment and attributes, and
// kills it at the end of the test.
func start(t *testing.T, env []string, attr *syscall.SysProcAttr, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func pids(t *testing.T, o Owner) []int {
	t.Helper()
	ms, err := Members(o)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, s := range ms {
		out = append(out, s.PID)
	}
	return out
}

// waitChild waits for a child of pid to appear and returns it.
func waitChild(t *testing.T, pid int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if kids, _ := Children(pid); len(kids) > 0 {
			return kids[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d started no child", pid)
	return 0
}

// TestMembers: a process belongs to an upstream through its marker
// (whatever its session), its process group, its parent, or because it was
// remembered with its start time; nothing else does.
func TestMembers(t *testing.T) {
	tag := "1.2." + strconv.Itoa(os.Getpid())
	marked := start(t, []string{MarkerVar + "=" + tag}, &syscall.SysProcAttr{Setsid: true}, "sleep", "30")
	other := start(t, []string{MarkerVar + "=" + tag + "0"}, &syscall.SysProcAttr{Setsid: true}, "sleep", "30")
	grouped := start(t, nil, &syscall.SysProcAttr{Setpgid: true}, "sleep", "30")
	// A child that left the group and session and has no marker: found
	// through its parent.
	parent := start(t, nil, &syscall.SysProcAttr{Setpgid: true}, "sh", "-c", "setsid sleep 30 & wait")
	child := waitChild(t, parent.Process.Pid)

	if got := pids(t, Owner{Tag: tag}); !slices.Equal(got, []int{marked.Process.Pid}) {
		t.Errorf("by marker: %v, want %d", got, marked.Process.Pid)
	}
	if got := pids(t, Owner{TagPrefix: "1.2."}); !slices.Contains(got, marked.Process.Pid) || !slices.Contains(got, other.Process.Pid) {
		t.Errorf("by marker prefix: %v, want %d and %d", got, marked.Process.Pid, other.Process.Pid)
	}
	gs, err := ReadStat(grouped.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if got := pids(t, Owner{Group: gs.PID, RootStart: gs.Start}); !slices.Equal(got, []int{gs.PID}) {
		t.Errorf("by group: %v, want %d", got, gs.PID)
	}
	// A group id now led by a process that started at another time is
	// not the group that was meant.
	if got := pids(t, Owner{Group: gs.PID, RootStart: gs.Start - 1}); len(got) != 0 {
		t.Errorf("by a reused group id: %v, want none", got)
	}
	ps, err := ReadStat(parent.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	got := pids(t, Owner{Root: ps.PID, RootStart: ps.Start})
	if !slices.Contains(got, ps.PID) || !slices.Contains(got, child) || len(got) != 2 {
		t.Errorf("by parent: %v, want %d and its child %d", got, ps.PID, child)
	}
	cs, err := ReadStat(child)
	if err != nil {
		t.Fatal(err)
	}
	if got := pids(t, Owner{Known: map[int]uint64{child: cs.Start}}); !slices.Equal(got, []int{child}) {
		t.Errorf("remembered: %v, want %d", got, child)
	}
	if got := pids(t, Owner{Known: map[int]uint64{child: cs.Start + 1}}); len(got) != 0 {
		t.Errorf("remembered with another start time (a reused pid): %v, want none", got)
	}
	// Nothing older than the upstream's first process belongs.
	if got := pids(t, Owner{Tag: tag, RootStart: cs.Start + 1<<40}); len(got) != 0 {
		t.Errorf("with a later root start: %v, want none", got)
	}
	if m, ok := MarkerOf(marked.Process.Pid); !ok || m != tag {
		t.Errorf("MarkerOf = %q %v", m, ok)
	}
	if kids, err := Children(os.Getpid()); err != nil || !slices.Contains(kids, marked.Process.Pid) {
		t.Errorf("Children = %v, %v", kids, err)
	}
	if !strings.HasPrefix(Marker(1, 2, 3), HubPrefix(1, 2)) {
		t.Error("a marker does not start with its hub's prefix")
	}
}
