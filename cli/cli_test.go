package cli

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// TestRun runs command lines through a command tree in-process: Run finds
// the named command and gives it its name and the arguments after it,
// runs the default command with no name when none is named, and refuses
// an unknown command with the usage, which lists the tree.
func TestRun(t *testing.T) {
	type call struct {
		cmd, name string
		args      []string
	}
	var calls []call
	cmd := func(id string, code int) Command {
		return Command{Summary: "the " + id + " command", Run: func(_ context.Context, e *Env) int {
			calls = append(calls, call{id, e.Name, e.Args})
			return code
		}}
	}
	tree := Commands{DefaultCommand: cmd("serve", 7), "list": cmd("list", 3)}
	for _, tt := range []struct {
		args   []string
		code   int
		call   *call
		stderr []string
	}{
		{[]string{"list", "--json", "x"}, 3, &call{"list", "list", []string{"--json", "x"}}, nil},
		{nil, 7, &call{"serve", "", nil}, nil},
		{[]string{"--http", "127.0.0.1:0"}, 7, &call{"serve", "", []string{"--http", "127.0.0.1:0"}}, nil},
		{[]string{"serve", "-v"}, 7, &call{"serve", "serve", []string{"-v"}}, nil},
		{[]string{"frobnicate", "list"}, ExitConfig, nil, []string{"mcp-hub: unknown command \"frobnicate\"\n\nUsage: mcp-hub [command] [flags]", "\n  list     the list command\n  serve    the serve command\n"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			calls = nil
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), tree, Env{Name: "ignored", Args: tt.args, Stdout: &stdout, Stderr: &stderr})
			if code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			switch {
			case tt.call == nil && len(calls) > 0:
				t.Errorf("ran %+v, want nothing run", calls)
			case tt.call != nil && (len(calls) != 1 || calls[0].cmd != tt.call.cmd || calls[0].name != tt.call.name || !slices.Equal(calls[0].args, tt.call.args)):
				t.Errorf("ran %+v, want %+v", calls, *tt.call)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// TestDefaultUsage: mcp-hub --help lists the commands of the tree the
// default command was run from, then serve's flags, on stdout.
func TestDefaultUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	tree := Commands{DefaultCommand: {Summary: "serve MCP", Run: Serve}, "doctor": {Summary: "diagnose", Run: Doctor}}
	if code := Run(context.Background(), tree, Env{Args: []string{"--help"}, Stdout: &stdout, Stderr: &stderr}); code != ExitOK {
		t.Fatalf("--help: exit %d\n%s", code, stderr.String())
	}
	for _, w := range []string{"Usage: mcp-hub [command] [flags]", "\n  doctor   diagnose\n  help     show this help, or a command's: help COMMAND\n  serve    serve MCP\n", "\nFlags:\n", "--data-dir", "--http string"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("--help lacks %q:\n%s", w, stdout.String())
		}
	}
	if stderr.String() != "" {
		t.Errorf("--help wrote to stderr: %q", stderr.String())
	}
}
