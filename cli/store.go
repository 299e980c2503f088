package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The command-line commands work on the store directly; a running hub
// notices their changes within a second or two and applies them.

// withStore parses flags, opens the store and runs f.
func withStore(ctx context.Context, e *Env, use string, minArgs, maxArgs int, define func(*pflag.FlagSet), f func(st *persist.Store, cfg *config.Config, args []string) int) int {
	fs := e.flags(use)
	if define != nil {
		define(fs)
	}
	cfg, code, ok := e.parse(fs)
	if !ok {
		return code
	}
	args := fs.Args()
	if len(args) < minArgs || (maxArgs >= 0 && len(args) > maxArgs) {
		if len(args) > maxArgs && maxArgs >= 0 {
			return e.argCountError(args, maxArgs)
		}
		return e.argCountError(args, minArgs)
	}
	st, err := openStore(ctx, e, cfg)
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub:", err)
		return ExitFail
	}
	defer st.Close()
	return f(st, cfg, args)
}

// openStore opens the store the configuration names: hub.db in the data
// directory, or the PostgreSQL database of the store key.
func openStore(ctx context.Context, e *Env, cfg *config.Config) (*persist.Store, error) {
	location, err := cfg.Store.Resolve(lookupOf(e.Environ))
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return hubstore.OpenAt(ctx, location, cfg.DataDir)
}

// audit records what a command did in the store's audit log; the command
// has done it whether or not that succeeds.
func audit(ctx context.Context, st *persist.Store, action, name string, detail any) {
	_ = hubstore.Store{Store: st}.Audit(ctx, "cli", action, name, detail)
}

// registrations reads the stored registrations: those that decode and
// those that do not.
func registrations(ctx context.Context, st *persist.Store) ([]upstream.Registration, []upstream.BrokenRegistration, error) {
	regs, err := st.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	broken, err := st.Broken(ctx)
	if err != nil {
		return nil, nil, err
	}
	return regs, broken, nil
}
