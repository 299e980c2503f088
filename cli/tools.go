package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
	"github.com/mcp-hub/mcp-hub/toolsearch"
	"github.com/mcp-hub/mcp-hub/upstream"
)

const toolsUse = `[--json] [--search "words" [--limit N]] [flags]

Connects every upstream of the config file and the store as the hub does
(registrations only when approved; lazy ones too), waits until each one has
connected or failed (at most its initialize plus list timeouts), prints the
merged tool catalog a client of the hub sees, and stops them all again.

The table lists the tools a client's tools/list holds, in its order (the
hub's own included, as the configuration selects them), the upstream that
offers each and its name there; in search mode (--catalog-expose search,
or auto over catalog.searchAbove tools) then the tools tools/list leaves
out, which hub_search_tools finds; then the tools that are not exposed,
who holds their name and why; then the upstreams that did not connect
(mcp-hub doctor says why). --json prints the same as one JSON object.

--search "words" prints instead the tools that match a request in plain
words, best first, ranked as the hub's hub_search_tools ranks them: rank,
score, server, tool, the name it is listed under, and its description;
with --json, hub_search_tools' structuredContent ({tools, total}).

Exit status: 0 when the catalog was printed, even when some upstreams did
not connect (they are listed); 1 when the store cannot be read; 2 on a usage
error. Nothing is logged unless --log-level is debug, warn or error (then
to stderr).`

// Tools probes every upstream and prints the merged tool catalog.
func Tools(ctx context.Context, e *Env) int {
	var (
		asJSON *bool
		query  *string
		limit  *int
	)
	define := func(fs *pflag.FlagSet) {
		asJSON = fs.Bool("json", false, "print JSON for scripts")
		query = fs.String("search", "", "print the tools that match these words, best first, as hub_search_tools ranks them")
		limit = fs.Int("limit", 20, "with --search: most tools to print")
		addExposeFlag(fs)
	}
	return withStore(ctx, e, toolsUse, 0, 0, define, func(st *persist.Store, cfg *config.Config, _ []string) int {
		targets, err := probe.Targets(ctx, cfg, st)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub tools:", err)
			return ExitFail
		}
		targets = append(targets, hubTargets(cfg)...)
		p, err := runProbe(ctx, e, cfg, targets, st)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub tools:", err)
			return ExitFail
		}
		if *query != "" {
			return printSearch(e, p.Search, *query, *limit, *asJSON)
		}
		rep := probe.NewToolsReport(p)
		if *asJSON {
			enc := json.NewEncoder(e.Stdout)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				fmt.Fprintln(e.Stderr, "mcp-hub tools:", err)
				return ExitFail
			}
			return ExitOK
		}
		printTools(e, cfg, rep)
		return ExitOK
	})
}

func printTools(e *Env, cfg *config.Config, rep *probe.ToolsReport) {
	w, prog := e.Stdout, e.prog()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tUPSTREAM\tORIGINAL NAME")
	for _, t := range rep.Tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Upstream, t.Original)
	}
	tw.Flush()
	if len(rep.Unlisted) > 0 {
		fmt.Fprintf(w, "\nNot in tools/list (catalog.expose %s: hub_search_tools finds them, hub_call_tool calls them) (%d):\n", rep.Expose, len(rep.Unlisted))
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tUPSTREAM\tORIGINAL NAME")
		for _, t := range rep.Unlisted {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Upstream, t.Original)
		}
		tw.Flush()
	}
	if len(rep.Shadowed) > 0 {
		fmt.Fprintf(w, "\nNot exposed (%d):\n", len(rep.Shadowed))
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tUPSTREAM\tORIGINAL NAME\tSHADOWED BY\tWHY")
		for _, s := range rep.Shadowed {
			by := s.ShadowedBy
			if by == "" {
				by = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Upstream, s.Original, by, s.Why)
		}
		tw.Flush()
	}
	var missing []probe.UpstreamLine
	connected := 0
	for _, u := range rep.Upstreams {
		if u.NotRun != "" || u.State != upstream.StateConnected || u.Error != "" {
			missing = append(missing, u)
		} else {
			connected++
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(w, "\nNot in the catalog (%s doctor says more):\n", prog)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, u := range missing {
			state, why := string(u.State), u.Error
			if u.NotRun != "" {
				state, why = "not run", u.NotRun
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Name, state, oneLine(e.oursAt(cfg, why)))
		}
		tw.Flush()
	}
	if rep.Expose == "search" {
		fmt.Fprintf(w, "\n%d tool(s) in tools/list and %d found by search, from %d of %d upstream(s) and the hub; %d not exposed.\n",
			len(rep.Tools), len(rep.Unlisted), connected, len(rep.Upstreams), len(rep.Shadowed))
		return
	}
	fmt.Fprintf(w, "\n%d tool(s) from %d of %d upstream(s) and the hub; %d not exposed.\n",
		len(rep.Tools), connected, len(rep.Upstreams), len(rep.Shadowed))
}

// printSearch prints the ranking of query over the probed catalog.
func printSearch(e *Env, ix *toolsearch.Index, query string, limit int, asJSON bool) int {
	results, total := ix.Search(query, max(limit, 1))
	if results == nil {
		results = []toolsearch.Result{}
	}
	if asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"tools": results, "total": total}); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub tools:", err)
			return ExitFail
		}
		return ExitOK
	}
	if total == 0 {
		fmt.Fprintf(e.Stdout, "No tool matches %q.\n", query)
		return ExitOK
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSCORE\tUPSTREAM\tTOOL\tLISTED AS\tDESCRIPTION")
	for i, r := range results {
		listed := r.ExposedAs
		if listed == "" {
			listed = "- (hub_call_tool)"
		}
		desc := oneLine(r.Description)
		if len(r.AlsoOn) > 0 {
			// A tool several servers offer alike is one line.
			desc = "(the same on " + alsoOn(r.AlsoOn) + ") " + desc
		}
		fmt.Fprintf(tw, "%d\t%.3f\t%s\t%s\t%s\t%s\n", i+1, r.Score, r.Server, r.Tool, listed, desc)
	}
	tw.Flush()
	fmt.Fprintf(e.Stdout, "\n%d of %d matching tool(s).\n", len(results), total)
	return ExitOK
}

// alsoOn names the other servers of a search result: the first three and
// how many more.
func alsoOn(servers []string) string {
	const shown = 3
	s := strings.Join(servers[:min(len(servers), shown)], ", ")
	if more := len(servers) - shown; more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
