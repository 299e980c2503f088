package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Hints name the likely causes of what went wrong with an upstream, for
// people. They are one set of rules wherever a failure is shown: mcp-hub
// doctor prints them under a failure, the hub logs them with a failed
// connection attempt and answers a call to a server that failed to start
// with them, and mcp-hub add warns with the ones it can tell before
// anything runs.

// HintFacts is what [Hints] judges an upstream by.
type HintFacts struct {
	Spec Spec
	// LastError is the error of its last attempt, "" when none.
	LastError string
	// Failed is set when it did not connect.
	Failed bool
	// Slow is set when it connected but took long (over 5 s) to be ready.
	Slow bool
	// NonJSON is set when it wrote lines to stdout that are not JSON-RPC.
	NonJSON bool
	// Stderr holds the last lines it wrote to stderr.
	Stderr []string
	// InitTimeout is the initialize timeout it ran with.
	InitTimeout time.Duration
	// Home says where it is defined: the hints that say what to change
	// say where (its config file, or the store's commands).
	Home Home
}

// ResolveCommand returns the program a stdio spec runs: its command looked
// up in PATH, or, when it names a path, that file (relative to the spec's
// working directory).
func ResolveCommand(spec Spec) (string, error) {
	cmd := spec.Command
	if !strings.ContainsRune(cmd, '/') && !strings.ContainsRune(cmd, filepath.Separator) {
		return exec.LookPath(cmd)
	}
	if !filepath.IsAbs(cmd) && spec.Cwd != "" {
		cmd = filepath.Join(spec.Cwd, cmd)
	}
	fi, err := os.Stat(cmd)
	if err != nil {
		return cmd, err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return cmd, fmt.Errorf("%s is not an executable file", cmd)
	}
	return cmd, nil
}

// CommandHint says what is wrong with a stdio spec's command before it
// runs: not on PATH, not executable, or a package runner (npx, uvx, …)
// given no package. It is "" when nothing is, and for other transports.
func CommandHint(spec Spec) string {
	if spec.InferTransport() != TransportStdio {
		return ""
	}
	if h := noPackageHint(spec, nil, Home{}); h != "" {
		return h
	}
	_, err := ResolveCommand(spec)
	if h := wholeLineHint(spec, err, Home{}); h != "" {
		return h
	}
	return lookHint(spec, err, Home{})
}

// SplitCommand reports whether a stdio spec's command is a whole command
// line ("npx -y @modelcontextprotocol/server-memory" in command) that names
// no program, and returns the spec with the program alone in Command and
// the words after it in front of Args.
func SplitCommand(spec Spec) (Spec, bool) {
	if spec.InferTransport() != TransportStdio || !strings.ContainsAny(strings.TrimSpace(spec.Command), " \t") {
		return spec, false
	}
	if _, err := ResolveCommand(spec); err == nil {
		return spec, false // a program whose path has a space
	}
	f := strings.Fields(spec.Command)
	spec.Command, spec.Args = f[0], append(f[1:], spec.Args...)
	return spec, true
}

// wholeLineHint is the hint for a command that holds its arguments too,
// with the entry as it should be written (secret-looking arguments
// masked) and where; "" when it is no such command.
func wholeLineHint(spec Spec, lookErr error, home Home) string {
	split, ok := SplitCommand(spec)
	if !ok || lookErr == nil {
		return ""
	}
	argv := redact.Argv(append([]string{split.Command}, split.Args...))
	cmd, _ := json.Marshal(argv[0])
	args, _ := json.Marshal(argv[1:])
	return join(fmt.Sprintf("the command %q is a whole command line, and no program has that name: the command is the program alone, its arguments go in args: \"command\": %s, \"args\": %s",
		strings.Join(argv[:len(argv)-len(spec.Args)], " "), cmd, args), home.commandChange(spec, argv[0], argv[1:]))
}

// join appends a sentence of where to change something (Home.Change) to
// a hint, when there is one.
func join(hint, where string) string {
	switch {
	case where == "":
		return hint
	case strings.HasSuffix(hint, "?"):
		return hint + " " + where
	}
	return hint + ". " + where
}

// NoPackage reports whether spec runs a package runner (npx, uvx, …)
// given no package to run, which can never serve MCP.
func NoPackage(spec Spec) bool {
	return spec.InferTransport() == TransportStdio && noPackageHint(spec, nil, Home{}) != ""
}

func lookHint(spec Spec, lookErr error, home Home) string {
	switch {
	case lookErr == nil:
		return ""
	case errors.Is(lookErr, exec.ErrNotFound):
		return join(fmt.Sprintf("%s is not on PATH (%s): install it, or give its absolute path as the command; a hub started by a client inherits the client's PATH", spec.Command, os.Getenv("PATH")),
			home.commandChange(spec, "/absolute/path/to/"+filepath.Base(spec.Command), nil))
	}
	return join(fmt.Sprintf("the command cannot be run: %v", lookErr), home.commandChange(spec, "/absolute/path/to/"+filepath.Base(spec.Command), nil))
}

// downloaders are commands that fetch a package before running it.
var downloaders = map[string]bool{"npx": true, "bunx": true, "uvx": true, "pnpx": true, "pipx": true}

// downloader returns the base name of the spec's command when it is a
// package runner, "" otherwise.
func downloader(spec Spec) string {
	base := strings.TrimSuffix(filepath.Base(spec.Command), ".cmd")
	if downloaders[base] {
		return base
	}
	return ""
}

// shellFedJSON matches a line a shell writes when it is given JSON-RPC as a
// command: npx with no package starts one on its stdin.
var shellFedJSON = regexp.MustCompile(`^(?:\S*/)?(?:ba|da|z)?sh: .*\{"?jsonrpc`)

// noPackageHint is the hint for a package runner given no package (every
// argument a flag), or whose stderr shows a shell reading the hub's
// messages as commands, and where to put it; "" otherwise.
func noPackageHint(spec Spec, stderr []string, home Home) string {
	base := downloader(spec)
	if base == "" {
		return ""
	}
	bare := true
	for _, a := range spec.Args {
		if !strings.HasPrefix(a, "-") {
			bare = false
		}
	}
	fed := ""
	for _, l := range stderr {
		if shellFedJSON.MatchString(l) {
			fed = l
			break
		}
	}
	where := home.commandChange(spec, spec.Command, append(redact.Argv(append([]string{spec.Command}, spec.Args...))[1:], "PACKAGE"))
	switch {
	case fed != "":
		return join(fmt.Sprintf("%s was given no package to run, so it started a shell that reads the hub's JSON-RPC messages as commands (stderr: %q): put the package after it, e.g. %s -y @modelcontextprotocol/server-memory", base, cut(fed, 60), base), where)
	case bare && base == "npx":
		return join("npx was given no package to run, so it starts a shell that reads the hub's JSON-RPC messages as commands and never answers: put the package after it, e.g. npx -y @modelcontextprotocol/server-memory", where)
	case bare:
		return join(fmt.Sprintf("%s was given no package to run: put the package after it, e.g. %s mcp-server-fetch", base, base), where)
	}
	return ""
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

var (
	unsetVarRE = regexp.MustCompile(`(?:(env|header) (\S+): )?environment variable (\S+) is not set`)
	readFileRE = regexp.MustCompile(`(?:env|header) (\S+): read ([^:]+):`)
)

// unsetHint is the hint for the variable name that is not set in the
// hub's environment, which the spec's env or header key (kind "env" or
// "header"; "" when unknown) refers to.
func unsetHint(spec Spec, kind, key, name string, home Home) string {
	hint := fmt.Sprintf("%s is not set in the hub's environment: set it where the hub is started (a client passes only the env of the hub's own entry), or write the value into the server's %s", name, map[string]string{"": "env", "env": "env", "header": "headers"}[kind])
	if key == "" {
		return hint
	}
	if kind == "header" {
		return join(hint, home.headerChange(spec, key, "VALUE"))
	}
	return join(hint, home.envChange(spec, key))
}

// Hints names the likely causes of what went wrong with an upstream, most
// specific first; a failure always gets at least one, but for a refused
// redirect, whose error says what to do and where.
func Hints(f HintFacts) []string {
	spec := f.Spec
	lastErr := f.LastError
	var out []string
	noPackage := ""
	if spec.InferTransport() == TransportStdio {
		_, lookErr := ResolveCommand(spec)
		if h := wholeLineHint(spec, lookErr, f.Home); h != "" {
			out = append(out, h)
		} else if h := lookHint(spec, lookErr, f.Home); h != "" {
			out = append(out, h)
		}
		noPackage = noPackageHint(spec, f.Stderr, f.Home)
		if noPackage != "" {
			out = append(out, noPackage)
		}
		slow := f.Slow || f.Failed && strings.Contains(lastErr, "no answer within")
		if base := downloader(spec); base != "" && slow && noPackage == "" {
			out = append(out, fmt.Sprintf("%s downloads the package on its first run, which can take longer than the initialize timeout (%s): run `%s` once in a terminal, or %s", base, f.InitTimeout, strings.Join(redact.Argv(append([]string{spec.Command}, spec.Args...)), " "), f.Home.initTimeoutFix(spec.Name)))
		}
		if f.NonJSON {
			out = append(out, "it writes text that is not JSON-RPC to stdout, where MCP stdio servers must write only messages (logs belong on stderr); the hub skips such lines, but one inside a message breaks it")
		}
	}
	if m := unsetVarRE.FindStringSubmatch(lastErr); m != nil {
		out = append(out, unsetHint(spec, m[1], m[2], m[3], f.Home))
	}
	if m := readFileRE.FindStringSubmatch(lastErr); m != nil {
		out = append(out, fmt.Sprintf("%s comes from file:%s, which cannot be read", m[1], m[2]))
	}
	switch {
	case !f.Failed:
	case strings.Contains(lastErr, ErrExited.Error()):
		out = append(out, "it exits as soon as it starts: its stderr usually says why; run it in a terminal to see")
	case strings.Contains(lastErr, "no answer within") && noPackage == "":
		out = append(out, fmt.Sprintf("it did not answer initialize within %s: it may need other arguments, wait for input, or be slow to start; %s", f.InitTimeout, f.Home.initTimeoutFix(spec.Name)))
	case strings.Contains(lastErr, "HTTP 401"), strings.Contains(lastErr, "HTTP 403"):
		out = append(out, join("the server refused the request: check the headers (is the token right, and set?)",
			f.Home.headerChange(spec, "Authorization", "Bearer ${TOKEN}")))
	case strings.Contains(lastErr, "HTTP 404"), strings.Contains(lastErr, "HTTP 405"):
		out = append(out, join("nothing MCP answers at that path: streamable HTTP endpoints usually end in /mcp, legacy SSE ones in /sse (set transport if the URL does not say)", f.Home.urlChange(spec)))
	case strings.Contains(lastErr, ErrUnreachable.Error()), strings.Contains(lastErr, "connection refused"), strings.Contains(lastErr, "no such host"):
		out = append(out, join(fmt.Sprintf("nothing answers at %s: is the server running, and the URL right?", redact.URL(spec.URL)), f.Home.urlChange(spec)))
	case strings.Contains(lastErr, ErrRedirected.Error()):
		return out // the refusal says what to do, and where
	}
	if f.Failed && len(out) == 0 {
		out = append(out, "run it by hand to see what it does: "+strings.ReplaceAll(spec.RedactedLaunch().String(), "\n", "; "))
	}
	return out
}

// Hints returns the hints for the upstream's last failed attempt, as
// mcp-hub doctor gives them; nil when it has not failed.
func (u *Upstream) Hints() []string {
	st := u.Status()
	if st.State != StateFailed || st.LastError == "" {
		return nil
	}
	return u.hints(st.LastError)
}

// hints returns the hints for an attempt that failed with lastErr.
func (u *Upstream) hints(lastErr string) []string {
	spec := u.Spec()
	return Hints(HintFacts{Spec: spec, LastError: lastErr, Failed: true, Stderr: u.StderrTail(),
		InitTimeout: pick(spec.InitTimeout.Std(), u.m.opts.InitTimeout), Home: u.home()})
}

// headerChange is [Home.Change] for an HTTP upstream's header key.
func (h Home) headerChange(spec Spec, key, value string) string {
	update := fmt.Sprintf(`"headers": {%s: %s}`, jsonString(key), jsonString(value))
	return h.Change(spec.Name, "its headers", update, addURL(spec, shownURL(spec.URL), shellWord(key+"="+value)))
}

// envChange is [Home.Change] for a stdio upstream's env key.
func (h Home) envChange(spec Spec, key string) string {
	update := fmt.Sprintf(`"env": {%s: "VALUE"}`, jsonString(key))
	return h.Change(spec.Name, "its env", update, "--env "+shellWord(key+"=VALUE")+" "+addCommand(spec, spec.Command, nil))
}

// commandChange is [Home.Change] for a stdio upstream's command (and
// args, when args is not empty: the words of the new command line).
func (h Home) commandChange(spec Spec, command string, args []string) string {
	what, update := "its command", `"command": `+jsonString(command)
	switch {
	case len(args) > 0 && command == spec.Command:
		what, update = "its args", `"args": [`+quoteAll(args)+`]`
	case len(args) > 0:
		what = "its command and args"
		update += `, "args": [` + quoteAll(args) + `]`
	}
	add := addCommand(spec, command, args)
	if len(spec.Env) > 0 {
		add = "--env KEY=VALUE… " + add
	}
	return h.Change(spec.Name, what, update, add)
}

// addCommand is what follows the name in an mcp-hub add of spec's server
// running command with args (spec's own when nil: ARGS…).
func addCommand(spec Spec, command string, args []string) string {
	add := "-- " + shellWord(command)
	switch {
	case args != nil:
		for _, a := range args {
			add += " " + shellWord(a)
		}
	case len(spec.Args) > 0:
		add += " ARGS…"
	}
	return add
}

// shellWord quotes w for a POSIX shell when it needs quoting.
func shellWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-…") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// quoteAll is words as a JSON list's items.
func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = jsonString(w)
	}
	return strings.Join(q, ", ")
}

// initTimeoutFix says how to give the upstream more time to answer
// initialize: its own initTimeout in the config file that defines it;
// timeouts.initialize for one of the store, which has no timeout of its
// own.
func (h Home) initTimeoutFix(name string) string {
	switch {
	case h.inFile():
		return fmt.Sprintf("raise initTimeout of %q in %s (or timeouts.initialize, every server's)", name, h.file())
	case h.stored() && h.ConfigFile != "":
		return fmt.Sprintf("raise timeouts.initialize in %s (a server registered in the store has no initTimeout of its own)", h.ConfigFile)
	case h.stored():
		return "raise timeouts.initialize in a config file (--config FILE), or set $MCP_HUB_TIMEOUTS__INITIALIZE where the hub starts (a server registered in the store has no initTimeout of its own)"
	}
	return "raise initTimeout (per server) or timeouts.initialize"
}

// shownURL is u as a hint shows it: "URL" when it holds a secret.
func shownURL(u string) string {
	if redact.URL(u) != u {
		return "URL"
	}
	return u
}

// jsonString is s as JSON writes it.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
