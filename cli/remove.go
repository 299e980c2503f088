package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Remove removes a registered upstream (or a broken or stale stored row).
// An upstream of the config file in effect is edited there.
func Remove(ctx context.Context, e *Env) int {
	return withStore(ctx, e, "NAME [flags]", 1, 1, nil, func(st *persist.Store, cfg *config.Config, args []string) int {
		name := args[0]
		if _, ok := configServer(cfg, name); ok {
			fmt.Fprintln(e.Stderr, inConfigFile(cfg, "remove", name))
			return ExitFail
		}
		r, err := st.Get(ctx, name)
		if b := (upstream.BrokenRegistration{}); errors.As(err, &b) {
			return removeBroken(ctx, e, st, b)
		}
		if err != nil {
			e.lookupFailed("remove", name, st.Path(), err)
			return ExitFail
		}
		if err := st.Delete(ctx, name); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub remove:", err)
			return ExitFail
		}
		audit(ctx, st, "remove", name, map[string]any{"launch": r.Spec.RedactedLaunch()})
		if r.Source == upstream.SourceConfig {
			fmt.Fprintf(e.Stdout, "Removed %q (stale: a hub started with another config file registered it).\n", name)
			return ExitOK
		}
		fmt.Fprintf(e.Stdout, "Removed %q. A running hub stops it within seconds.\n", name)
		return ExitOK
	})
}
