package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// mcp-hub add NAME [flags] -- COMMAND [ARGS...] takes the upstream's
// command line after "--", so that its flags are never taken for the
// hub's. A command line without "--" is a mistake the user is shown the
// right form of.

// dashForm returns args with "--" put before the command: the positional
// argument after the first one (the name) starts it. ok is false when args
// has "--" already, names no command, or has a flag mcp-hub does not know
// before the command.
func dashForm(fs *pflag.FlagSet, args []string) (form []string, ok bool) {
	positional := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil, false
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			f := flagOf(fs, a)
			switch {
			case f == nil:
				return nil, false // a mistake before the command: "--" would not fix it
			case f.NoOptDefVal == "" && !strings.Contains(a, "="):
				i++ // its value
			}
			continue
		}
		if positional++; positional == 2 {
			form = append(slices.Clone(args[:i]), "--")
			return append(form, args[i:]...), true
		}
	}
	return nil, false
}

// flagOf returns the defined flag arg sets (--name, --name=v or -x), nil
// when it is unknown or several shorthands.
func flagOf(fs *pflag.FlagSet, arg string) *pflag.Flag {
	if name, ok := strings.CutPrefix(arg, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		return fs.Lookup(name)
	}
	if len(arg) == 2 {
		return fs.ShorthandLookup(arg[1:])
	}
	return nil
}

// forgotDash asks whether "--" was forgotten and shows the command line
// with it, secret values masked (--env and --header values, secret-looking
// arguments).
func (e *Env) forgotDash(form []string) string {
	out := fmt.Sprintf("Did you forget \"--\" before the command? Run:\n  %s\n", e.shownLine(form))
	// The right form of a package runner given no package would be refused
	// next: say so now, not on the second try.
	if cmd := form[slices.Index(form, "--")+1:]; len(cmd) > 0 {
		if spec := (upstream.Spec{Command: cmd[0], Args: cmd[1:]}); upstream.NoPackage(spec) {
			out += "and " + upstream.CommandHint(spec) + "\n"
		}
	}
	return out
}

// shownLine is the command line of this command with the arguments form,
// quoted for a shell, with secret values masked.
func (e *Env) shownLine(form []string) string {
	shown := make([]string, 0, len(form))
	for i := 0; i < len(form); i++ {
		a := form[i]
		if a == "--" {
			shown = append(shown, "--")
			shown = append(shown, redact.Argv(form[i+1:])...)
			break
		}
		switch f, v, _ := strings.Cut(a, "="); {
		case (a == "--env" || a == "--header") && i+1 < len(form):
			k, _, _ := strings.Cut(form[i+1], "=")
			shown = append(shown, a, k+"=***")
			i++
		case f == "--env" || f == "--header":
			k, _, _ := strings.Cut(v, "=")
			shown = append(shown, f+"="+k+"=***")
		default:
			shown = append(shown, a)
		}
	}
	for i, a := range shown {
		shown[i] = shellQuote(a)
	}
	return e.cmdLine() + " " + strings.Join(shown, " ")
}

// shellQuote quotes a for a POSIX shell when it needs quoting.
func shellQuote(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
