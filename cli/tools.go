package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

const toolsUse = `[--json] [flags]

Connects every upstream of the config file and the store as the hub does
(registrations only when approved; lazy ones too), waits until each one has
connected or failed (at most its initialize plus list timeouts), prints the
merged tool catalog a client of the hub sees, and stops them all again.

The table lists each exposed tool, the upstream that offers it and its name
there; then the tools that are not exposed, who holds their name and why;
then the upstreams that did not connect (mcp-hub doctor says why). --json
prints the same as one JSON object.

Exit status: 0 when the catalog was printed, even when some upstreams did
not connect (they are listed); 1 when the store cannot be read; 2 on a usage
error. Nothing is logged unless --log-level is debug, warn or error (then
to stderr).`

// Tools probes every upstream and prints the merged tool catalog.
func Tools(ctx context.Context, e *Env) int {
	var asJSON *bool
	define := func(fs *pflag.FlagSet) { asJSON = fs.Bool("json", false, "print JSON for scripts") }
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
		printTools(e, rep)
		return ExitOK
	})
}

func printTools(e *Env, rep *probe.ToolsReport) {
	w, prog := e.Stdout, e.prog()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tUPSTREAM\tORIGINAL NAME")
	for _, t := range rep.Tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Upstream, t.Original)
	}
	tw.Flush()
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
			fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Name, state, oneLine(e.ours(why)))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\n%d tool(s) from %d of %d upstream(s) and the hub; %d not exposed.\n",
		len(rep.Tools), connected, len(rep.Upstreams), len(rep.Shadowed))
}
