package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

const doctorUse = `[flags]

Starts every upstream of the config file and the store as the hub does,
once, and reports on each: what it runs (the command's resolved path, or
the URL with secrets masked), how long it took to start, initialize and be
listed, its protocol version, how many tools, prompts and resources it
offers, tools it loses to (or wins from) other upstreams, names and schemas
the catalog had to fix, and for failures the error, the last lines of its
stderr and a hint at the usual causes (command not on PATH, npx downloading
the package, an unset environment variable, non-JSON on stdout, exiting at
once, no answer to initialize). Everything is stopped again before it exits.

Registrations nobody approved are not run: they are reported as "not
approved" (or "rejected"), and mcp-hub approve NAME reviews them.

Exit status: 0 when no upstream failed (warnings and upstreams that are not
run do not count); 1 when one failed or the store cannot be read; 2 on a
usage error. Nothing is logged unless --log-level is debug, warn or error
(then to stderr).`

// Doctor statuses.
const (
	doctorOK      = "ok"
	doctorWarning = "warning"
	doctorFailed  = "FAILED"
)

// doctorRow is the diagnosis of one upstream.
type doctorRow struct {
	Name, Source, Status, Runs      string
	Init, Protocol                  string
	Tools, Prompts, Resources       string
	Errors, Hints, Notes, StderrOut []string
}

func cmdDoctor(ctx context.Context, e *cmdEnv) int {
	return withStore(ctx, e, doctorUse, 0, 0, nil, func(st *persist.Store, cfg *Config, _ []string) int {
		targets, err := probeTargets(ctx, cfg, st)
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub doctor:", err)
			return exitFail
		}
		if len(targets) == 0 {
			fmt.Fprintf(e.stdout, "No upstreams: %s defines none and none are registered in %s.\n", fileOr(cfg.File), st.Path())
			return exitOK
		}
		start := time.Now()
		p, err := runProbe(ctx, cfg, targets, st, probeLogger(e.stderr, cfg))
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub doctor:", err)
			return exitFail
		}
		rows := make([]doctorRow, 0, len(p.Results))
		for _, r := range p.Results {
			rows = append(rows, diagnose(r, p, cfg))
		}
		fmt.Fprintf(e.stdout, "Checked %d upstream(s) from %s and %s in %s.\n\n", len(rows), fileOr(cfg.File), st.Path(), time.Since(start).Round(10*time.Millisecond))
		if printDoctor(e.stdout, rows) {
			return exitFail
		}
		return exitOK
	})
}

// printDoctor writes the table and the details, and reports whether an
// upstream failed.
func printDoctor(w io.Writer, rows []doctorRow) (failed bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UPSTREAM\tSOURCE\tSTATUS\tRUNS\tINIT\tPROTOCOL\tTOOLS\tPROMPTS\tRESOURCES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Source, r.Status, r.Runs, r.Init, r.Protocol, r.Tools, r.Prompts, r.Resources)
	}
	tw.Flush()
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.Status]++
		if len(r.Errors)+len(r.Hints)+len(r.Notes)+len(r.StderrOut) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", r.Name, r.Status)
		for _, s := range r.Errors {
			fmt.Fprintf(w, "  error: %s\n", s)
		}
		for _, s := range r.Hints {
			fmt.Fprintf(w, "  hint:  %s\n", s)
		}
		for _, s := range r.Notes {
			fmt.Fprintf(w, "  note:  %s\n", s)
		}
		if len(r.StderrOut) > 0 {
			fmt.Fprintf(w, "  stderr (last %d line(s)):\n", len(r.StderrOut))
			for _, s := range r.StderrOut {
				fmt.Fprintf(w, "    %s\n", s)
			}
		}
	}
	notRun := len(rows) - counts[doctorOK] - counts[doctorWarning] - counts[doctorFailed]
	fmt.Fprintf(w, "\n%d upstream(s): %d ok, %d with warnings, %d failed, %d not run.\n",
		len(rows), counts[doctorOK], counts[doctorWarning], counts[doctorFailed], notRun)
	return counts[doctorFailed] > 0
}

// stderrLines is how many of the last stderr lines a failure shows.
const stderrLines = 10

// diagnose turns a probe result into a row of the report.
func diagnose(r *probeResult, p *probe, cfg *Config) doctorRow {
	spec := r.Spec
	row := doctorRow{Name: spec.Name, Source: r.Source, Init: "-", Protocol: "-", Tools: "-", Prompts: "-", Resources: "-"}
	if r.Broken != "" {
		row.Status, row.Runs = doctorFailed, "nothing"
		row.Errors = append(row.Errors, r.Broken)
		row.Hints = append(row.Hints, brokenFix(spec.Name)+"; the hub runs the other upstreams meanwhile")
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
		row.Status = doctorOK
		row.Init = r.Ready.Round(time.Millisecond).String()
		row.Protocol = r.Status.ProtocolVersion
		row.Tools = fmt.Sprint(len(r.Inv.Tools))
		row.Prompts = fmt.Sprint(len(r.Inv.Prompts))
		row.Resources = fmt.Sprint(len(r.Inv.Resources) + len(r.Inv.Templates))
	} else {
		row.Status = doctorFailed
		if r.Status.LastError != "" {
			row.Errors = append(row.Errors, r.Status.LastError)
		}
		if !r.Settled {
			row.Errors = append(row.Errors, fmt.Sprintf("did not connect within %s", p.Wait))
		}
		row.StderrOut = r.Stderr[max(0, len(r.Stderr)-stderrLines):]
	}
	row.Hints = hints(r, lookErr, pick(spec.InitTimeout.Std(), cfg.InitTimeout))

	warn := func(format string, args ...any) {
		row.Notes = append(row.Notes, fmt.Sprintf(format, args...))
		if row.Status == doctorOK {
			row.Status = doctorWarning
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
			warn("%s %q is not exposed: %s", s.Kind, s.Original, shadowWhy(s))
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
func hints(r *probeResult, lookErr error, initTimeout time.Duration) []string {
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
