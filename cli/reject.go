package cli

import (
	"context"
	"fmt"

	"github.com/mcp-hub/mcp-hub/config"
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
			lookupFailed(e.Stderr, "reject", name, err)
			return ExitFail
		}
		if r.Source == upstream.SourceConfig {
			fmt.Fprintf(e.Stderr, "mcp-hub reject: %q is %s\n", name, staleText(cfg, name))
			return ExitFail
		}
		if _, err := st.Update(ctx, name, func(cur *upstream.Registration) error {
			cur.Approval, cur.ApprovedHash, cur.ApprovalNote = upstream.ApprovalRejected, "", ""
			return nil
		}); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub reject:", err)
			return ExitFail
		}
		audit(ctx, st, "reject", name, map[string]any{"launch": r.Spec.RedactedLaunch()})
		fmt.Fprintf(e.Stdout, "Rejected %q: it will not run (remove it with mcp-hub remove %s).\n", name, name)
		return ExitOK
	})
}
