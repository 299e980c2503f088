package cli

import (
	"bufio"
	"context"
	"fmt"
	"github.com/mcp-hub/mcp-hub/config"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/persist"
)

// Tool pins on the command line (issue 17): approve shows and approves what
// changed in an approved upstream's tools; list and status name what is
// quarantined. The logic is hub's (StoredToolChanges, ApproveToolChanges).

// approveToolChanges shows the changes to name's tools since they were
// pinned, asks (unless yes) and pins the new definitions. done is false
// when there is nothing to approve.
func approveToolChanges(ctx context.Context, e *Env, st *persist.Store, name string, yes bool) (code int, done bool) {
	all, err := hub.StoredToolChanges(ctx, hubstore.Store{Store: st}, name)
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub approve:", err)
		return ExitFail, true
	}
	c, ok := all[name]
	if !ok {
		return ExitOK, false
	}
	fmt.Fprintf(e.Stdout, "%s\n", c.Review())
	if !yes {
		if !isTerminal(e.Stdin) {
			fmt.Fprintf(e.Stderr, "\nmcp-hub approve: not approved; stdin is not a terminal: review the above and re-run with --yes\n")
			return ExitFail, true
		}
		fmt.Fprint(e.Stdout, "\nApprove these changes? [y/N] ")
		line, _ := bufio.NewReader(e.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(e.Stdout, "Not approved.")
			return ExitFail, true
		}
	}
	if err := hub.ApproveToolChanges(ctx, hubstore.Store{Store: st}, "cli", c); err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub approve:", err, "(run approve again to review what changed)")
		return ExitFail, true
	}
	fmt.Fprintf(e.Stdout, "Approved the changes to %q: %s. A running hub serves them within seconds.\n", name, c.Summary())
	return ExitOK, true
}

// printToolChanges lists, below list's and status's tables, the upstreams
// whose tools changed since they were pinned.
func printToolChanges(ctx context.Context, e *Env, st *persist.Store, cfg *config.Config) {
	all, err := hub.StoredToolChanges(ctx, hubstore.Store{Store: st}, "")
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub: tool pins:", err)
		return
	}
	if len(all) == 0 {
		return
	}
	fmt.Fprintf(e.Stdout, "\nChanged since approved (review with %s NAME):\n", e.approveCommand(cfg))
	for _, name := range slices.Sorted(maps.Keys(all)) {
		c := all[name]
		what := "served but flagged (trust " + string(c.Trust) + ")"
		if c.Quarantined() {
			what = "QUARANTINED"
		}
		fmt.Fprintf(e.Stdout, "  %s: %s: %s\n", name, what, c.Summary())
	}
}
