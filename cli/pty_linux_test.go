package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the terminal side a program reads as
// its stdin, and the other side. The test closes both.
func openPTY(t *testing.T) (term, other *os.File) {
	t.Helper()
	other, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { other.Close() })
	fd := int(other.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	return term, other
}

// TestServeTerminalHint (item 4): started by hand in a terminal, serve
// says on stderr that it waits for an MCP client on stdin, how to stop it
// and how to try the hub; stdout, the MCP channel, gets nothing. Started
// by a client (stdin not a terminal), it says nothing of the kind.
func TestServeTerminalHint(t *testing.T) {
	s := newSetup(t, "")
	term, _ := openPTY(t)
	stderr := createFile(t, t.TempDir(), "stderr")
	stdout := createFile(t, t.TempDir(), "stdout")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Serve(ctx, &Env{Args: []string{"--config", s.config}, Environ: []string{"MCP_HUB_DATA_DIR=" + s.data},
			Stdin: term, Stdout: stdout, Stderr: stderr})
	}()
	const hint = "mcp-hub is an MCP server: it now waits for an MCP client to write JSON-RPC\non its stdin, this terminal."
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(readFile(t, stderr.Name()), hint) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("serve: exit %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return when its context ended")
	}
	got := readFile(t, stderr.Name())
	for _, w := range []string{hint, "press Ctrl-C to stop this one", "\n  mcp-hub doctor ", "\n  mcp-hub serve --http 127.0.0.1:7411 "} {
		if !strings.Contains(got, w) {
			t.Errorf("stderr lacks %q:\n%s", w, got)
		}
	}
	if out := readFile(t, stdout.Name()); out != "" {
		t.Errorf("stdout, the MCP channel, got %q", out)
	}

	// A client's pipe: no hint.
	if o := s.run(t, Serve, ""); o.code != ExitOK || strings.Contains(o.stderr, "waits for an MCP client") {
		t.Errorf("serve on a pipe: %s", o)
	}
}
