package main

import (
	"bytes"
	"context"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	hubcli "github.com/mcp-hub/mcp-hub/cli"
)

// TestCommandTree runs the command tree main builds in-process: every
// command answers --help with its usage and the config flags, and
// mcp-hub --help lists every command with its summary.
func TestCommandTree(t *testing.T) {
	tree := commands()
	want := []string{"add", "approve", "doctor", "export", "import", "list", "login", "logout", "reject", "remove", "serve", "setup", "status", "tools", "ui"}
	if got := slices.Sorted(maps.Keys(tree)); !slices.Equal(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
	run := func(args ...string) (string, int) {
		var out bytes.Buffer
		code := hubcli.Run(context.Background(), tree, hubcli.Env{Args: args, Stdout: &out, Stderr: &out})
		return out.String(), code
	}
	for name, c := range tree {
		out, code := run(name, "--help")
		if code != exitOK || !strings.Contains(out, "Usage: mcp-hub "+name+" ") || !strings.Contains(out, "--data-dir") || !strings.Contains(out, "--config") {
			t.Errorf("mcp-hub %s --help: exit %d\n%s", name, code, out)
		}
		if c.Summary == "" {
			t.Errorf("%s has no summary", name)
		}
	}
	out, code := run("--help")
	for name, c := range tree {
		if !strings.Contains(out, "\n  "+name+strings.Repeat(" ", max(1, 9-len(name)))+c.Summary+"\n") {
			t.Errorf("mcp-hub --help does not list %s:\n%s", name, out)
		}
	}
	if code != exitOK {
		t.Errorf("mcp-hub --help: exit %d", code)
	}
}

func TestCommandHelp(t *testing.T) {
	for _, c := range []string{"", "serve", "list", "status", "add", "remove", "approve", "reject"} {
		args := []string{"--help"}
		if c != "" {
			args = []string{c, "--help"}
		}
		cmd := exec.Command(hubBin, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("mcp-hub %s --help: %v\n%s", c, err, out.String())
		}
		if !strings.Contains(out.String(), "Usage: mcp-hub") || !strings.Contains(out.String(), "--data-dir") {
			t.Errorf("mcp-hub %s --help:\n%s", c, out.String())
		}
	}
	if out, code := cli(t, t.TempDir(), "frobnicate"); code != exitConfig || !strings.Contains(out, "unknown command") {
		t.Errorf("unknown command: %d %s", code, out)
	}
}
