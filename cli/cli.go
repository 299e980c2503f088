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
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/console"
	"github.com/mcp-hub/mcp-hub/internal/suggest"
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
	// Program is how the person ran this binary, for the commands hints
	// show ("./bin/mcp-hub"; see [ProgramName]); "" means mcp-hub.
	Program string
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// commands is the tree Run found the command in (for the usage text).
	commands Commands
	// use is the command's usage text (after its name), set by flags.
	use string
	// afterDash is set by commands that take a command line after "--"
	// (add): a flag error then asks whether "--" was forgotten.
	afterDash bool
	// httpReady, when set, is called by serve once its HTTP server runs,
	// with its base URL and console (mcp-hub ui).
	httpReady func(base string, con *console.Console)
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
// and returns the exit code. "help" shows the usage of mcp-hub, "help CMD"
// that of a command, on stdout.
func Run(ctx context.Context, cmds Commands, e Env) int {
	e.commands = cmds
	args := e.Args
	if len(args) > 0 && args[0] == helpCommand {
		if _, ok := cmds[helpCommand]; !ok {
			return runHelp(ctx, cmds, e, args[1:])
		}
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		c, ok := cmds[args[0]]
		if !ok {
			return e.unknownCommand(args[0])
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

// helpCommand shows help; it is not in the command tree.
const helpCommand = "help"

// runHelp runs mcp-hub help [CMD]: the usage of mcp-hub, or CMD --help.
func runHelp(ctx context.Context, cmds Commands, e Env, args []string) int {
	switch {
	case len(args) == 0:
		e.usage(e.Stdout)
		return ExitOK
	case len(args) > 1:
		fmt.Fprintf(e.Stderr, "mcp-hub help: unexpected argument %q\nUsage: mcp-hub help [COMMAND]\n", args[1])
		return ExitConfig
	}
	c, ok := cmds[args[0]]
	if !ok {
		return e.unknownCommand(args[0])
	}
	e.Name, e.Args = args[0], []string{"--help"}
	return c.Run(ctx, &e)
}

// unknownCommand reports a command the tree does not have: the one meant
// when it is a near miss, else every command.
func (e *Env) unknownCommand(name string) int {
	if s := suggest.Closest(name, append(slices.Collect(maps.Keys(e.commands)), helpCommand)); s != "" {
		fmt.Fprintf(e.Stderr, "mcp-hub: unknown command %q; did you mean %q?\nRun '%s help' for every command.\n", name, s, e.prog())
		return ExitConfig
	}
	fmt.Fprintf(e.Stderr, "mcp-hub: unknown command %q\n\n", name)
	e.usage(e.Stderr)
	return ExitConfig
}

func (e *Env) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s [command] [flags]\n\nWith no command, mcp-hub serves MCP over stdio in front of its upstream MCP servers.\n\nCommands:\n", e.prog())
	summaries := map[string]string{helpCommand: "show this help, or a command's: help COMMAND"}
	for n, c := range e.commands {
		summaries[n] = c.Summary
	}
	for _, n := range slices.Sorted(maps.Keys(summaries)) {
		fmt.Fprintf(w, "  %-8s %s\n", n, summaries[n])
	}
	fmt.Fprintf(w, "\nRun %[1]s COMMAND --help (or %[1]s help COMMAND) for a command's flags.\n", e.prog())
}

// now returns the time by the command's clock.
func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// cmdName is the command as typed: "mcp-hub add", or "mcp-hub" for the
// default command.
func (e *Env) cmdName() string {
	if e.Name == "" {
		return "mcp-hub"
	}
	return "mcp-hub " + e.Name
}

// flags returns a flag set with the config flags every command accepts.
// Its Usage, what --help shows, writes use and the flags to stdout; a
// usage error goes to stderr through usageError.
func (e *Env) flags(use string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(e.cmdName(), pflag.ContinueOnError)
	fs.SetOutput(e.Stderr) // unused: ContinueOnError prints nothing
	config.AddFlags(fs)
	// A second synopsis line of use names the program too.
	use = strings.ReplaceAll(use, "\n       mcp-hub ", "\n       "+e.prog()+" ")
	e.use = use
	fs.Usage = func() {
		fmt.Fprintf(e.Stdout, "Usage: %s %s\n\nFlags:\n%s", e.cmdLine(), use, fs.FlagUsages())
	}
	return fs
}

// usageError reports a mistake on the command line to stderr, with the
// command's synopsis, and returns ExitConfig.
func (e *Env) usageError(format string, args ...any) int {
	fmt.Fprintf(e.Stderr, "%s: %s\n", e.cmdName(), fmt.Sprintf(format, args...))
	synopsis, _, _ := strings.Cut(e.use, "\n\n")
	fmt.Fprintf(e.Stderr, "Usage: %s %s\nRun '%s --help' for more.\n", e.cmdLine(), synopsis, e.cmdLine())
	return ExitConfig
}

// argCountError reports too few or too many arguments: the first missing
// one by its name in the synopsis (NAME, FILE), or the first extra one.
func (e *Env) argCountError(args []string, minArgs int) int {
	if len(args) >= minArgs {
		return e.usageError("unexpected argument %q", args[max(minArgs, 0)])
	}
	synopsis, _, _ := strings.Cut(e.use, "\n")
	var names []string
	for _, w := range strings.Fields(synopsis) {
		if w == strings.ToUpper(w) && strings.Trim(w, "[]-.") == w {
			names = append(names, w)
		}
	}
	if len(args) < len(names) {
		return e.usageError("missing %s", names[len(args)])
	}
	return e.usageError("missing an argument")
}

// parse parses the command's flags and loads the configuration. ok is false
// when the command should exit with code: --help was shown, or the flags or
// the config file are wrong (said on stderr).
func (e *Env) parse(fs *pflag.FlagSet) (cfg *config.Config, code int, ok bool) {
	if code, ok := e.parseFlags(fs); !ok {
		return nil, code, false
	}
	cfg, err := loadConfig(fs, e.Environ)
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub:", err)
		return nil, ExitConfig, false
	}
	return cfg, 0, true
}

// parseFlags parses e.Args. ok is false when the command should exit with
// code: 0 after --help, ExitConfig after a flag error, which it reports.
func (e *Env) parseFlags(fs *pflag.FlagSet) (code int, ok bool) {
	err := fs.Parse(e.Args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, pflag.ErrHelp):
		return ExitOK, false
	}
	if e.afterDash {
		if form, ok := dashForm(fs, e.Args); ok {
			fmt.Fprintf(e.Stderr, "%s: %v\n%s", e.cmdName(), err, e.forgotDash(form))
			return ExitConfig, false
		}
	}
	return e.usageError("%v%s", err, flagMeant(fs, err)), false
}

// unknownFlagRE matches pflag's error for a long flag it does not know.
var unknownFlagRE = regexp.MustCompile(`^unknown flag: --([^=\s]+)`)

// flagMeant suggests the flag of fs meant by the unknown one err names:
// " (did you mean --http?)", or "".
func flagMeant(fs *pflag.FlagSet, err error) string {
	m := unknownFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := suggest.Closest(m[1], names); s != "" {
		return fmt.Sprintf(" (did you mean --%s?)", s)
	}
	return ""
}

// loadConfig loads the configuration as every command does: defaults, the
// config file (--config, $MCP_HUB_CONFIG or the user's hub.yaml), MCP_HUB_*
// variables of environ, and the flags the user set.
func loadConfig(flags *pflag.FlagSet, environ []string) (*config.Config, error) {
	return config.Load(config.Sources{Flags: flags, Environ: environ, DefaultFile: config.DefaultFile()})
}
