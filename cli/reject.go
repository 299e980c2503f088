package cli

import (
	"context"
	"fmt"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Reject rejects an upstream so it never runs.
func Reject(ctx context.Context, e *Env) int {
	return withStore(ctx, e, "NAME [flags]", 1, 1, nil, func(st *persist.Store, cfg *config.Config, args []string) int {
		name := args[0]
		if _, ok := configServer(cfg, name); ok {
			fmt.Fprintln(e.Stderr, inConfigFile(cfg, "reject", name))
			return ExitFail
		}
		r, err := st.Get(ctx, name)
		if err != nil {
			e.lookupFailed("reject", name, st.Path(), err)
			return ExitFail
		}
		if r.Source == upstream.SourceConfig {
			fmt.Fprintf(e.Stderr, "mcp-hub reject: %q is %s\n", name, e.ours(staleText(cfg, name)))
			return ExitFail
		}
		// The code path of the web console, as "cli".
		if err := hub.RejectRegistration(ctx, hubstore.Store{Store: st}, "cli", r); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub reject:", err)
			return ExitFail
		}
		fmt.Fprintf(e.Stdout, "Rejected %q: it will not run (remove it with %s remove %s).\n", name, e.prog(), name)
		return ExitOK
	})
}
