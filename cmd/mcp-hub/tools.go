package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/persist"
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

// toolsReport is what mcp-hub tools --json prints.
type toolsReport struct {
	Tools     []toolLine     `json:"tools"`
	Shadowed  []shadowLine   `json:"shadowed"`
	Upstreams []upstreamLine `json:"upstreams"`
}

// toolLine is one exposed tool. Upstream is "hub" for the hub's own tools.
type toolLine struct {
	Name     string   `json:"name"`
	Upstream string   `json:"upstream"`
	Original string   `json:"original"`
	Fixes    []string `json:"fixes,omitempty"`
}

// shadowLine is a tool that is not exposed.
type shadowLine struct {
	Name       string `json:"name"`
	Upstream   string `json:"upstream"`
	Original   string `json:"original"`
	ShadowedBy string `json:"shadowedBy,omitempty"`
	Reason     string `json:"reason"`
	Why        string `json:"why"`
}

// upstreamLine is one upstream and whether its tools are in the catalog.
type upstreamLine struct {
	Name   string         `json:"name"`
	Source string         `json:"source"`
	State  upstream.State `json:"state,omitempty"`
	// Tools is how many tools it offers, Exposed how many of them the
	// catalog exposes.
	Tools   int    `json:"tools"`
	Exposed int    `json:"exposed"`
	Error   string `json:"error,omitempty"`
	NotRun  string `json:"notRun,omitempty"`
}

func cmdTools(ctx context.Context, e *cmdEnv) int {
	var asJSON *bool
	define := func(fs *pflag.FlagSet) { asJSON = fs.Bool("json", false, "print JSON for scripts") }
	return withStore(ctx, e, toolsUse, 0, 0, define, func(st *persist.Store, cfg *Config, _ []string) int {
		targets, err := probeTargets(ctx, cfg, st)
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub tools:", err)
			return exitFail
		}
		p, err := runProbe(ctx, cfg, targets, st, probeLogger(e.stderr, cfg))
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub tools:", err)
			return exitFail
		}
		rep := newToolsReport(p)
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				fmt.Fprintln(e.stderr, "mcp-hub tools:", err)
				return exitFail
			}
			return exitOK
		}
		printTools(e.stdout, rep)
		return exitOK
	})
}

func newToolsReport(p *probe) *toolsReport {
	rep := &toolsReport{Tools: []toolLine{}, Shadowed: []shadowLine{}, Upstreams: []upstreamLine{}}
	for _, en := range p.Catalog.Tools() {
		rep.Tools = append(rep.Tools, toolLine{Name: en.Name, Upstream: serverOrHub(en.Server), Original: en.Original, Fixes: en.Fixes})
	}
	for _, s := range p.Catalog.Shadowed() {
		if s.Kind != catalog.KindTool {
			continue
		}
		rep.Shadowed = append(rep.Shadowed, shadowLine{Name: s.Name, Upstream: serverOrHub(s.Server), Original: s.Original,
			ShadowedBy: s.Winner, Reason: s.Reason, Why: shadowWhy(s)})
	}
	for _, r := range p.Results {
		ul := upstreamLine{Name: r.Spec.Name, Source: r.Source, State: r.Status.State, NotRun: r.NotRun, Error: r.Status.LastError}
		if r.NotRun != "" {
			ul.State = ""
		} else if !r.Settled {
			ul.Error = fmt.Sprintf("did not connect within %s", p.Wait)
		}
		ul.Tools = len(r.Inv.Tools)
		for _, en := range p.Catalog.ServerEntries(r.Spec.Name) {
			if en.Kind == catalog.KindTool {
				ul.Exposed++
			}
		}
		rep.Upstreams = append(rep.Upstreams, ul)
	}
	return rep
}

func serverOrHub(s string) string {
	if s == "" {
		return catalog.HubWinner
	}
	return s
}

// shadowWhy explains a shadow report to a person.
func shadowWhy(s catalog.Shadow) string {
	switch s.Reason {
	case catalog.ReasonCollision:
		if s.Winner == catalog.HubWinner {
			return "the hub's own tool has this name"
		}
		return fmt.Sprintf("%s offers a tool of this name too and sorts first", s.Winner)
	case catalog.ReasonDuplicate:
		return "the upstream lists this name more than once; the first one is exposed"
	case catalog.ReasonReserved:
		return "names starting " + catalog.ReservedPrefix + " are reserved for the hub"
	case catalog.ReasonInvalid:
		return "invalid"
	}
	return s.Reason
}

func printTools(w io.Writer, rep *toolsReport) {
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
	var missing []upstreamLine
	connected := 0
	for _, u := range rep.Upstreams {
		if u.NotRun != "" || u.State != upstream.StateConnected || u.Error != "" {
			missing = append(missing, u)
		} else {
			connected++
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(w, "\nNot in the catalog (mcp-hub doctor says more):\n")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, u := range missing {
			state, why := string(u.State), u.Error
			if u.NotRun != "" {
				state, why = "not run", u.NotRun
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Name, state, oneLine(why))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\n%d tool(s) from %d of %d upstream(s) and the hub; %d not exposed.\n",
		len(rep.Tools), connected, len(rep.Upstreams), len(rep.Shadowed))
}
