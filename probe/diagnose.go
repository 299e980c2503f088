package probe

import (
	"fmt"
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

// slowStart is how long a start may take before a hint says why, at least:
// a start that took less than half its initialize timeout is fine, however
// busy the machine was, and gets no hint.
const slowStart = 5 * time.Second

// slow reports whether a start that took ready came close enough to the
// initialize timeout to need a hint.
func slow(ready, initTimeout time.Duration) bool {
	return ready > slowStart && ready > initTimeout/2
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
	if spec.InferTransport() == upstream.TransportStdio {
		path, err := upstream.ResolveCommand(spec)
		row.Runs = path
		if err != nil {
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
	initTimeout := pick(spec.InitTimeout.Std(), cfg.InitTimeout)
	row.Hints = upstream.Hints(upstream.HintFacts{
		Spec: spec, LastError: r.Status.LastError, Failed: !r.Connected(), Slow: slow(r.Ready, initTimeout),
		NonJSON: r.NonJSON > 0, Stderr: r.Stderr, InitTimeout: initTimeout, Home: p.Home(spec.Name),
	})
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
			warn("%s %q is not exposed: %s", kindWord(s.Kind), s.Original, ShadowWhy(s))
		case s.Winner == spec.Name && s.Reason == catalog.ReasonCollision:
			row.Notes = append(row.Notes, fmt.Sprintf("%s %q shadows %s's %s of the same %s", kindWord(s.Kind), s.Name, s.Server, kindWord(s.Kind), keyWord(s.Kind)))
		}
	}
	for _, en := range p.Catalog.ServerEntries(spec.Name) {
		for _, f := range en.Fixes {
			row.Notes = append(row.Notes, fmt.Sprintf("%s %q (exposed as %q): %s", kindWord(en.Kind), en.Original, en.Name, f))
		}
	}
	return row
}

func notRunStatus(why string) string {
	for _, s := range []string{"not approved", "rejected", "disabled", StalePrefix} {
		if strings.HasPrefix(why, s) {
			return s
		}
	}
	return "not run"
}
