// Package cli holds the commands of mcp-hub. Each command is a function
// that takes all it reads and writes (its arguments, the environment, the
// standard streams, the build and the clock) in an [Env], so a test can run
// any of them in-process; package main only builds the command tree
// ([Commands]) and exits with the code [Run] returns.
//
// The logic an embedder of the hub could reuse lives in importable
// packages: the configuration in config, the client-config formats in
// clientconfig, the store in hubstore, probing and diagnosis in probe. What
// stays here is the command line: flags, texts and tables. Only
// cmd/mcp-hub imports this package (TestImportedOnlyByMain keeps it so):
// arrows run cmd -> cli -> everything else.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFail   = 1
	ExitConfig = 2
)

// Build identifies the binary; main sets it from its linker flags.
type Build struct {
	// Version is the version; "" means the module version of the build
	// info, else "dev".
	Version string
	// Commit is the VCS revision; "" means the one of the build info.
	Commit string
}

// Env is what a command runs with. A command reads and writes nothing of
// the process but what Env gives it, except for what it starts (upstream
// processes inherit the process's environment), the user's default data
// and config directories when no flag names them, and the signals serve
// and the probing commands stop on.
type Env struct {
	// Name is the command's name as typed ("list"); "" when the command
	// line named none and the default command runs.
	Name string
	// Args are the command's arguments, after its name.
	Args []string
	// Environ is the environment, as KEY=VALUE strings; MCP_HUB_*
	// variables configure the hub.
	Environ []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Build   Build
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// commands is the tree Run found the command in (for the usage text).
	commands Commands
}

// Command is one mcp-hub subcommand.
type Command struct {
	Summary string
	Run     func(ctx context.Context, e *Env) int
}

// Commands is a command tree: the commands by name. The one named
// DefaultCommand runs when the command line names none.
type Commands map[string]Command

// DefaultCommand is the command that runs when the command line names none.
const DefaultCommand = "serve"

// Run runs the command the command line e.Args names (e.Name is ignored)
// and returns the exit code.
func Run(ctx context.Context, cmds Commands, e Env) int {
	e.commands = cmds
	args := e.Args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		c, ok := cmds[args[0]]
		if !ok {
			fmt.Fprintf(e.Stderr, "mcp-hub: unknown command %q\n\n", args[0])
			e.usage(e.Stderr)
			return ExitConfig
		}
		e.Name, e.Args = args[0], args[1:]
		return c.Run(ctx, &e)
	}
	c, ok := cmds[DefaultCommand]
	if !ok {
		e.usage(e.Stderr)
		return ExitConfig
	}
	e.Name = ""
	return c.Run(ctx, &e)
}

func (e *Env) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: mcp-hub [command] [flags]\n\nWith no command, mcp-hub serves MCP over stdio in front of its upstream MCP servers.\n\nCommands:\n")
	for _, n := range slices.Sorted(maps.Keys(e.commands)) {
		fmt.Fprintf(w, "  %-8s %s\n", n, e.commands[n].Summary)
	}
	fmt.Fprintf(w, "\nRun mcp-hub COMMAND --help for a command's flags.\n")
}

// now returns the time by the command's clock.
func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// flags returns a flag set with the config flags every command accepts.
func (e *Env) flags(use string) *pflag.FlagSet {
	name := "mcp-hub"
	if e.Name != "" {
		name += " " + e.Name
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	config.AddFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(e.Stderr, "Usage: %s %s\n\nFlags:\n%s", name, use, fs.FlagUsages())
	}
	return fs
}

// parse parses the command's flags and loads the configuration. ok is false
// when the command should exit with code.
func (e *Env) parse(fs *pflag.FlagSet) (cfg *config.Config, code int, ok bool) {
	if err := fs.Parse(e.Args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, ExitOK, false
		}
		return nil, ExitConfig, false
	}
	cfg, err := loadConfig(fs, e.Environ)
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub:", err)
		return nil, ExitConfig, false
	}
	return cfg, 0, true
}

// loadConfig loads the configuration as every command does: defaults, the
// config file (--config, $MCP_HUB_CONFIG or the user's hub.yaml), MCP_HUB_*
// variables of environ, and the flags the user set.
func loadConfig(flags *pflag.FlagSet, environ []string) (*config.Config, error) {
	return config.Load(config.Sources{Flags: flags, Environ: environ, DefaultFile: config.DefaultFile()})
}
