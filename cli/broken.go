package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// A stored registration that cannot be decoded (a corrupt row, an unknown
// transport) is shown by list, status and doctor as FAILED with the
// reason (probe.BrokenWhy), and mcp-hub remove removes it; the hub runs all
// the others.

// lookupFailed reports why st.Get of name failed, for the command cmd;
// store is where it looked (a hint for a name registered in another
// hub's store).
func (e *Env) lookupFailed(cmd, name, store string, err error) {
	w := e.Stderr
	var b upstream.BrokenRegistration
	switch {
	case errors.As(err, &b):
		fmt.Fprintf(w, "mcp-hub %s: %q: %s; %s\n", cmd, name, probe.BrokenWhy(b), e.ours(probe.BrokenFix(name)))
	case errors.Is(err, upstream.ErrNotFound):
		fmt.Fprintf(w, "mcp-hub %s: no upstream named %q is registered in %s (registered with a hub on another data directory or store? give %s its --data-dir or --store)\n", cmd, name, store, cmd)
	default:
		fmt.Fprintf(w, "mcp-hub %s: %v\n", cmd, err)
	}
}

// removeBroken removes a registration that cannot be decoded, whatever its
// source: nothing of it can run (a config file that still defines the name
// registers it again when a hub starts).
func removeBroken(ctx context.Context, e *Env, st *persist.Store, b upstream.BrokenRegistration) int {
	if err := st.Delete(ctx, b.Name); err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub remove:", err)
		return ExitFail
	}
	audit(ctx, st, "remove", b.Name, map[string]string{"broken": b.Reason})
	fmt.Fprintf(e.Stdout, "Removed %q (its stored registration could not be decoded).\n", b.Name)
	return ExitOK
}
