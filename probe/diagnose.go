package probe

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The statuses of a diagnosis; an upstream that is not run has the reason
// as its status ("not approved", "rejected", "disabled", "not run").
const (
	StatusOK      = "ok"
	StatusWarning = "warning"
	StatusFailed  = "FAILED"
)

// Row is the diagnosis of one upstream, as mcp-hub doctor prints it.
type Row struct {
	Name, Source, Status, Runs      string
	Init, Protocol                  string
	Tools, Prompts, Resources       string
	Errors, Hints, Notes, StderrOut []string
}

// stderrLines is how many of the last stderr lines a failure shows.
const stderrLines = 10

// Diagnose turns the result r of the probe p into a row of the report.
func Diagnose(r *Result, p *Report, cfg *config.Config) Row {
	spec := r.Spec
	row := Row{Name: spec.Name, Source: r.Source, Init: "-", Protocol: "-", Tools: "-", Prompts: "-", Resources: "-"}
	if r.Broken != "" {
		row.Status, row.Runs = StatusFailed, "nothing"
		row.Errors = append(row.Errors, r.Broken)
		row.Hints = append(row.Hints, BrokenFix(spec.Name)+"; the hub runs the other upstreams meanwhile")
		return row
	}
	stdio := spec.InferTransport() == upstream.TransportStdio
	var lookErr error
	if stdio {
		var path string
		path, lookErr = resolveCommand(spec)
		row.Runs = path
		if lookErr != nil {
			row.Runs = spec.Command + " (not found)"
		}
	} else {
		row.Runs = redact.URL(spec.URL)
	}
	if r.NotRun != "" {
		row.Status = notRunStatus(r.NotRun)
		row.Notes = append(row.Notes, "not run: "+r.NotRun)
		return row
	}

	if r.Connected() {
		row.Status = StatusOK
		row.Init = r.Ready.Round(time.Millisecond).String()
		row.Protocol = r.Status.ProtocolVersion
		row.Tools = fmt.Sprint(len(r.Inv.Tools))
		row.Prompts = fmt.Sprint(len(r.Inv.Prompts))
		row.Resources = fmt.Sprint(len(r.Inv.Resources) + len(r.Inv.Templates))
	} else {
		row.Status = StatusFailed
		if r.Status.LastError != "" {
			row.Errors = append(row.Errors, r.Status.LastError)
		}
		if !r.Settled {
			row.Errors = append(row.Errors, fmt.Sprintf("did not connect within %s", p.Wait))
		}
		row.StderrOut = r.Stderr[max(0, len(r.Stderr)-stderrLines):]
	}
	row.Hints = hints(r, lookErr, pick(spec.InitTimeout.Std(), cfg.InitTimeout))
	loginRow(&row, r)

	warn := func(format string, args ...any) {
		row.Notes = append(row.Notes, fmt.Sprintf(format, args...))
		if row.Status == StatusOK {
			row.Status = StatusWarning
		}
	}
	if r.NonJSON > 0 {
		warn("wrote lines to stdout that are not JSON-RPC, the first: %q", r.FirstNonJSON)
	}
	for _, bad := range r.Rejected {
		warn("the catalog rejected an item: %s", bad)
	}
	for _, s := range p.Catalog.Shadowed() {
		switch {
		case s.Server == spec.Name:
			warn("%s %q is not exposed: %s", s.Kind, s.Original, ShadowWhy(s))
		case s.Winner == spec.Name && s.Reason == catalog.ReasonCollision:
			row.Notes = append(row.Notes, fmt.Sprintf("%s %q shadows %s's %s of the same name", s.Kind, s.Name, s.Server, s.Kind))
		}
	}
	for _, en := range p.Catalog.ServerEntries(spec.Name) {
		for _, f := range en.Fixes {
			row.Notes = append(row.Notes, fmt.Sprintf("%s %q (exposed as %q): %s", en.Kind, en.Original, en.Name, f))
		}
	}
	return row
}

func notRunStatus(why string) string {
	for _, s := range []string{"not approved", "rejected", "disabled"} {
		if strings.HasPrefix(why, s) {
			return s
		}
	}
	return "not run"
}

// resolveCommand returns the program a stdio spec runs: its command looked
// up in PATH, or, when it names a path, that file (relative to cwd).
func resolveCommand(spec upstream.Spec) (string, error) {
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

var (
	unsetVarRE = regexp.MustCompile(`environment variable (\S+) is not set`)
	readFileRE = regexp.MustCompile(`(?:env|header) (\S+): read ([^:]+):`)
)

// downloaders are commands that fetch a package before running it.
var downloaders = map[string]bool{"npx": true, "bunx": true, "uvx": true, "pnpx": true, "pipx": true}

// hints names the likely causes of what went wrong with r.
func hints(r *Result, lookErr error, initTimeout time.Duration) []string {
	spec := r.Spec
	lastErr := r.Status.LastError
	failed := !r.Connected()
	var out []string
	if spec.InferTransport() == upstream.TransportStdio {
		base := filepath.Base(spec.Command)
		switch {
		case lookErr != nil && errors.Is(lookErr, exec.ErrNotFound):
			out = append(out, fmt.Sprintf("%s is not on PATH (%s): install it, or give its absolute path as the command; a hub started by a client inherits the client's PATH", spec.Command, os.Getenv("PATH")))
		case lookErr != nil:
			out = append(out, fmt.Sprintf("the command cannot be run: %v", lookErr))
		}
		slow := r.Ready > 5*time.Second || failed && strings.Contains(lastErr, "no answer within")
		if downloaders[strings.TrimSuffix(base, ".cmd")] && slow {
			out = append(out, fmt.Sprintf("%s downloads the package on its first run, which can take longer than the initialize timeout (%s): run `%s` once in a terminal, or raise initTimeout for this server", base, initTimeout, strings.Join(redact.Argv(append([]string{spec.Command}, spec.Args...)), " ")))
		}
		if r.NonJSON > 0 {
			out = append(out, "it writes text that is not JSON-RPC to stdout, where MCP stdio servers must write only messages (logs belong on stderr); the hub skips such lines, but one inside a message breaks it")
		}
	}
	if m := unsetVarRE.FindStringSubmatch(lastErr); m != nil {
		out = append(out, fmt.Sprintf("%s is not set in the hub's environment: set it where the hub is started (a client passes only the env of the hub's own entry), or write the value into the server's env", m[1]))
	}
	if m := readFileRE.FindStringSubmatch(lastErr); m != nil {
		out = append(out, fmt.Sprintf("%s comes from file:%s, which cannot be read", m[1], m[2]))
	}
	switch {
	case !failed:
	case strings.Contains(lastErr, upstream.ErrExited.Error()):
		out = append(out, "it exits as soon as it starts: its stderr (below) usually says why; run it in a terminal to see")
	case strings.Contains(lastErr, "no answer within"):
		out = append(out, fmt.Sprintf("it did not answer initialize within %s: it may need other arguments, wait for input, or be slow to start; raise initTimeout (per server) or timeouts.initialize", initTimeout))
	case strings.Contains(lastErr, "HTTP 401"), strings.Contains(lastErr, "HTTP 403"):
		out = append(out, "the server refused the request: check the headers (is the token right, and set?)")
	case strings.Contains(lastErr, "HTTP 404"), strings.Contains(lastErr, "HTTP 405"):
		out = append(out, "nothing MCP answers at that path: streamable HTTP endpoints usually end in /mcp, legacy SSE ones in /sse (set transport if the URL does not say)")
	case strings.Contains(lastErr, upstream.ErrUnreachable.Error()), strings.Contains(lastErr, "connection refused"), strings.Contains(lastErr, "no such host"):
		out = append(out, fmt.Sprintf("nothing answers at %s: is the server running, and the URL right?", redact.URL(spec.URL)))
	}
	if failed && len(out) == 0 {
		out = append(out, "run it by hand to see what it does: "+strings.ReplaceAll(spec.RedactedLaunch().String(), "\n", "; "))
	}
	return out
}
