// Package testbin builds the project's binaries (the hub, the fixture MCP
// server) for tests, and inspects processes they start. It is used only by
// tests; it does not import package testing so it can be shared.
package testbin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/proc"
)

// TB is the part of testing.TB the helpers here use.
type TB interface {
	Helper()
	TempDir() string
	Fatal(args ...any)
	Cleanup(func())
}

// WriteFile writes content to a file name in a new temporary directory of
// t and returns its path.
func WriteFile(t TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Listen starts bin (the fixture with -transport sse or http), which
// prints "LISTENING <url>" as its first line on stdout, and returns that
// URL. Its stderr goes to stderr (nil: discarded). The process is
// interrupted and reaped when the test ends.
func Listen(t TB, stderr io.Writer, bin string, args ...string) string {
	t.Helper()
	return ListenEnv(t, stderr, nil, bin, args...)
}

// ListenEnv is Listen with variables added to the environment.
func ListenEnv(t TB, stderr io.Writer, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTENING ")
	if !ok {
		t.Fatal(fmt.Sprintf("%s printed %q, not LISTENING <url>", filepath.Base(bin), line))
	}
	return u
}

// Root returns the module's root directory (where go.mod is).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found")
		}
		dir = parent
	}
}

// Build compiles the package pkg (relative to the module root, such as
// "./testdata/fixture") into dir and returns the binary's path.
func Build(dir, pkg string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, stderr.String())
	}
	return out, nil
}

// Alive reports whether a process with this pid exists and is not a zombie.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if !signalable(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z' && b[i+2] != 'X'
	}
	return true
}

// WaitGone waits until none of pids is alive; it returns the ones still
// alive after d.
func WaitGone(d time.Duration, pids ...int) []int {
	deadline := time.Now().Add(d)
	for {
		var alive []int
		for _, p := range pids {
			if Alive(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ReadPID reads a pid file, waiting up to d for it to appear.
func ReadPID(path string, d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			var pid int
			_, err = fmt.Sscan(strings.TrimSpace(string(b)), &pid)
			return pid, err
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("pid file %s did not appear", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Children returns the pids of the live (non-zombie) child processes of pid.
func Children(pid int) []int { return childrenIf(pid, func(zombie bool) bool { return !zombie }) }

// Zombies returns the pids of the children of pid that exited and were
// not reaped.
func Zombies(pid int) []int { return childrenIf(pid, func(zombie bool) bool { return zombie }) }

// childrenIf returns the pids of the children of pid whose zombie state
// keep accepts, from /proc.
func childrenIf(pid int, keep func(zombie bool) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		var p int
		if _, err := fmt.Sscan(e.Name(), &p); err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+2:]))
		if len(fields) < 2 || !keep(fields[0] == "Z") {
			continue
		}
		var ppid int
		if _, err := fmt.Sscan(fields[1], &ppid); err == nil && ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// Exists reports whether a process with this pid exists, zombies included:
// a process that is gone and reaped does not.
func Exists(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// Parent returns the parent pid of process pid, or 0 when it is gone.
func Parent(pid int) int {
	s, err := proc.ReadStat(pid)
	if err != nil {
		return 0
	}
	return s.PPID
}

// Marked returns the live processes whose environment carries an upstream
// marker (internal/proc) that starts with prefix: HubPrefix of a hub
// process finds every process of every upstream it started.
func Marked(prefix string) []int {
	all, err := proc.All()
	if err != nil {
		return nil
	}
	var out []int
	for _, s := range all {
		if s.Zombie() {
			continue
		}
		if m, ok := proc.MarkerOf(s.PID); ok && strings.HasPrefix(m, prefix) {
			out = append(out, s.PID)
		}
	}
	return out
}

// HubPrefix returns the marker prefix of the upstreams of hub process pid.
func HubPrefix(pid int) (string, error) {
	start, err := proc.StartTime(pid)
	if err != nil {
		return "", err
	}
	return proc.HubPrefix(pid, start), nil
}

// Buffer is a bytes.Buffer safe for concurrent writers: where a test
// collects what a process or a logger writes while it runs.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
