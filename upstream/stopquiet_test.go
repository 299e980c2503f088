package upstream

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// TestStopDuringConnectIsNoFailure: a connection attempt cut short
// because the upstream is being stopped (the hub shuts down while its
// servers start) is no failure of the server's: no "upstream connect
// failed" warning with a retry and a hint to run it by hand.
func TestStopDuringConnectIsNoFailure(t *testing.T) {
	logs := &testbin.Buffer{}
	opts := fastOptions(t)
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := NewManager(opts)
	u, err := m.Add(stdioSpec("slow", "-only", "echo", "-slow-start", "5s"), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, u, 5*time.Second, StateConnecting)
	time.Sleep(100 * time.Millisecond) // well into the attempt
	m.Close()
	if s := logs.String(); strings.Contains(s, "upstream connect failed") {
		t.Errorf("stopping during a connection attempt logged a failure:\n%s", s)
	}
}
