package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
)

func parseFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	config.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestBadConfigExit runs the binary: a bad config exits 2 with the message on
// stderr and nothing on stdout.
func TestBadConfigExit(t *testing.T) {
	p := writeFile(t, "hub.yaml", "mcpServers:\n  a:\n    args: [x]\n")
	cmd := exec.Command(hubBin, "--config", p)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitConfig {
		t.Fatalf("exit = %v, want code %d", err, exitConfig)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
	if !strings.Contains(stderr.String(), p) || !strings.Contains(stderr.String(), "mcpServers.a.command") {
		t.Errorf("stderr = %q, want the file and key", stderr.String())
	}
}
