package cli

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
	"github.com/spf13/pflag"
)

const addUse = `NAME [flags] -- COMMAND [ARGS...]
       mcp-hub add NAME [flags] --url URL

Registers an upstream, approved: a person typed the command. Everything
after "--" is the upstream's command line, run without a shell; flags
before it are mcp-hub's. A command that is not on PATH is registered with
a warning; a package runner given no package (npx, uvx, … with no
package) is refused.`

// Add registers an upstream, approved: a person typed the command.
func Add(ctx context.Context, e *Env) int {
	var url, cwd, desc, transport, scope, trust *string
	var env, headers *[]string
	var disabled, noAuto *bool
	var flags *pflag.FlagSet
	define := func(fs *pflag.FlagSet) {
		flags = fs
		url = fs.String("url", "", "the endpoint of an SSE or streamable HTTP server")
		cwd = fs.String("cwd", "", "working directory of a stdio server")
		desc = fs.String("description", "", "free text")
		transport = fs.String("transport", "", "stdio, sse or http (inferred when absent)")
		env = fs.StringArray("env", nil, "KEY=VALUE environment variable of a stdio server (repeatable); VALUE may be ${VAR} or file:PATH")
		headers = fs.StringArray("header", nil, "Name=VALUE header sent to an HTTP server (repeatable)")
		disabled = fs.Bool("disabled", false, "register without connecting")
		noAuto = fs.Bool("no-auto-connect", false, "do not connect when the hub starts (connect on first use)")
		scope = fs.String("scope", string(upstream.DefaultScope), scopeUsage)
		trust = fs.String("trust", string(upstream.TrustPin), "what a changed or new tool of it does: pin (held back until you approve it), warn (served and flagged) or off")
	}
	e.afterDash = true
	return withStore(ctx, e, addUse, 1, -1, define, func(st *persist.Store, cfg *config.Config, args []string) int {
		if flags.ArgsLenAtDash() == 0 {
			return e.missingName(args)
		}
		if len(args) > 1 && flags.ArgsLenAtDash() != 1 {
			if form, ok := dashForm(flags, e.Args); ok {
				fmt.Fprintf(e.Stderr, "mcp-hub add: unexpected argument %q\n%s", args[1], e.forgotDash(form))
				return ExitConfig
			}
			return e.usageError("the command goes after \"--\": mcp-hub add NAME [flags] -- COMMAND [ARGS...]")
		}
		spec := upstream.Spec{Name: args[0], URL: *url, Cwd: *cwd, Description: *desc, Transport: upstream.Transport(*transport), Scope: upstream.Scope(*scope), Trust: upstream.Trust(*trust)}
		if spec.Trust == upstream.TrustPin {
			spec.Trust = "" // the default for what a person registered here
		}
		if len(args) > 1 {
			spec.Command, spec.Args = args[1], args[2:]
		}
		if _, ok := configServer(cfg, spec.Name); ok {
			fmt.Fprintln(e.Stderr, inConfigFile(cfg, "add", spec.Name)+", or pick another name")
			return ExitFail
		}
		var err error
		if spec.Env, err = keyValues(*env, "--env"); err == nil {
			spec.Headers, err = keyValues(*headers, "--header")
		}
		if err == nil {
			err = spec.Validate()
		}
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub add:", err)
			return ExitConfig
		}
		if split, ok := upstream.SplitCommand(spec); ok {
			return e.wholeLine(spec, split)
		}
		if why := selfLaunch(cfg, spec); why != "" {
			fmt.Fprintf(e.Stderr, "mcp-hub add: %s: %s; not added\n", spec.Name, why)
			return ExitConfig
		}
		// Known before anything runs: a package runner given no package
		// can never serve MCP; a command not on PATH may be installed
		// later (or be on the PATH of the client that starts the hub).
		hint := upstream.CommandHint(spec)
		if hint != "" && upstream.NoPackage(spec) {
			fmt.Fprintf(e.Stderr, "mcp-hub add: %s\n", hint)
			return ExitConfig
		}
		// A person at a terminal typed the command: that is the approval.
		reg := upstream.Registration{Spec: spec, Enabled: !*disabled, AutoConnect: !*noAuto, Source: upstream.SourceCLI}
		reg.Approve()
		if _, err := st.Create(ctx, reg); err != nil {
			if errors.Is(err, upstream.ErrExists) {
				if old, gerr := st.Get(ctx, spec.Name); gerr == nil && old.Source == upstream.SourceConfig {
					fmt.Fprintf(e.Stderr, "mcp-hub add: an upstream named %q is registered: %s\n", spec.Name, e.ours(staleText(cfg, spec.Name)))
					return ExitFail
				}
				fmt.Fprintf(e.Stderr, "mcp-hub add: an upstream named %q is already registered (%s remove %s first)\n", spec.Name, e.prog(), spec.Name)
				return ExitFail
			}
			fmt.Fprintln(e.Stderr, "mcp-hub add:", err)
			return ExitFail
		}
		audit(ctx, st, "add", spec.Name, map[string]any{"launch": spec.RedactedLaunch()})
		fmt.Fprintf(e.Stdout, "Added %q (approved). It will:\n\n%s\n\nA running hub picks it up within seconds.\n", spec.Name, indent(spec.Review()))
		if hint != "" {
			fmt.Fprintf(e.Stderr, "mcp-hub add: warning: %s\n", hint)
		}
		return ExitOK
	})
}

// keyValues parses the KEY=VALUE arguments of flag.
func keyValues(kvs []string, flag string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}

// missingName reports an add whose command line names no upstream before
// "--" (only flags came before it). When the first word after "--" is no
// program and more follow, it is taken for the name put on the wrong side;
// otherwise the right form names the upstream after the package it runs.
func (e *Env) missingName(command []string) int {
	form := slices.Clone(e.Args)
	i := slices.Index(form, "--")
	if i < 0 {
		return e.usageError("missing NAME")
	}
	if _, err := upstream.ResolveCommand(upstream.Spec{Command: command[0]}); err != nil && len(command) > 1 {
		form[i], form[i+1] = form[i+1], form[i]
		fmt.Fprintf(e.Stderr, "mcp-hub add: the upstream's name goes before \"--\" and its command after it (no program is named %q):\n  %s\n", command[0], e.shownLine(form))
		return ExitConfig
	}
	form = slices.Insert(form, i, guessName(command))
	fmt.Fprintf(e.Stderr, "mcp-hub add: missing NAME: the upstream's name goes before \"--\", for example:\n  %s\n", e.shownLine(form))
	return ExitConfig
}

// guessName is a name for the upstream a command line runs: its package
// or program without scope, version and "server"/"mcp" affixes.
func guessName(command []string) string {
	word := command[0]
	for _, a := range command[1:] {
		if !strings.HasPrefix(a, "-") {
			word = a // the last word that is no flag: the package or script, usually
		}
	}
	word = path.Base(strings.ReplaceAll(word, `\`, "/"))
	word = strings.TrimSuffix(word, path.Ext(word))
	if i := strings.LastIndex(word, "@"); i > 0 {
		word = word[:i]
	}
	for _, affix := range []string{"mcp-server-", "server-", "mcp-"} {
		word = strings.TrimPrefix(word, affix)
	}
	for _, affix := range []string{"-mcp-server", "-server", "-mcp"} {
		word = strings.TrimSuffix(word, affix)
	}
	if s := suggestName(word); s != "" {
		return s
	}
	return "NAME"
}

// wholeLine refuses a command that is a whole command line in one word
// (quoted: "npx -y pkg"), and shows the command line that works.
func (e *Env) wholeLine(spec, split upstream.Spec) int {
	form := slices.Clone(e.Args)
	if i := slices.Index(form, "--"); i >= 0 && i+1 < len(form) && form[i+1] == spec.Command {
		form = slices.Replace(form, i+1, i+2, strings.Fields(spec.Command)...)
	}
	fmt.Fprintf(e.Stderr, "mcp-hub add: the command %q is a whole command line in one word, and no program has that name: "+
		"give the program and each of its arguments as words of their own (no quotes around them all):\n  %s\nNothing was added.\n",
		strings.Join(redact.Argv(append([]string{split.Command}, split.Args[:len(split.Args)-len(spec.Args)]...)), " "), e.shownLine(form))
	return ExitConfig
}
