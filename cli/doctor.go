package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
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

// Doctor probes every upstream and diagnoses the ones that fail.
func Doctor(ctx context.Context, e *Env) int {
	return withStore(ctx, e, doctorUse, 0, 0, nil, func(st *persist.Store, cfg *config.Config, _ []string) int {
		targets, err := probe.Targets(ctx, cfg, st)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub doctor:", err)
			return ExitFail
		}
		targets = append(targets, hubTargets(cfg)...)
		if len(targets) == 0 {
			fmt.Fprintf(e.Stdout, "No upstreams: %s and none are registered in %s.\n", noneInConfig(cfg), st.Path())
			return ExitOK
		}
		start := e.now()
		p, err := runProbe(ctx, e, cfg, targets, st)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub doctor:", err)
			return ExitFail
		}
		rows := make([]probe.Row, 0, len(p.Results))
		for _, r := range p.Results {
			row := probe.Diagnose(r, p, cfg)
			for _, ss := range [][]string{row.Errors, row.Hints, row.Notes} {
				for i, s := range ss {
					ss[i] = e.oursAt(cfg, s)
				}
			}
			if w := hubUnderWords(cfg, row.Name); w != "" && r.Source == string(upstream.SourceConfig) {
				row.Notes = append([]string{w}, row.Notes...)
			}
			rows = append(rows, row)
		}
		fmt.Fprintf(e.Stdout, "Checked %d upstream(s) from %s and %s in %s.\n\n", len(rows), configOrNone(cfg), st.Path(), e.now().Sub(start).Round(10*time.Millisecond))
		if printDoctor(e.Stdout, rows) {
			return ExitFail
		}
		return ExitOK
	})
}

// configOrNone names the config file in effect, or says there is none.
func configOrNone(cfg *config.Config) string {
	switch {
	case cfg.File != "":
		return cfg.File
	case cfg.WhyNone() != "":
		return "no config file (" + cfg.WhyNone() + ")"
	}
	return "no config file"
}

// printDoctor writes the table and the details, and reports whether an
// upstream failed.
func printDoctor(w io.Writer, rows []probe.Row) (failed bool) {
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
	notRun := len(rows) - counts[probe.StatusOK] - counts[probe.StatusWarning] - counts[probe.StatusFailed]
	fmt.Fprintf(w, "\n%d upstream(s): %d ok, %d with warnings, %d failed, %d not run.\n",
		len(rows), counts[probe.StatusOK], counts[probe.StatusWarning], counts[probe.StatusFailed], notRun)
	return counts[probe.StatusFailed] > 0
}
