package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
)

// List lists the upstreams of the config in effect and the store (and the
// broken stored rows).
func List(ctx context.Context, e *Env) int {
	return withStore(ctx, e, "[flags]", 0, 0, nil, func(st *persist.Store, cfg *config.Config, _ []string) int {
		ents, broken, err := entries(ctx, st, cfg)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub:", err)
			return ExitFail
		}
		hubs := hubTargets(cfg)
		if len(ents)+len(broken)+len(hubs) == 0 {
			fmt.Fprintf(e.Stdout, "No upstreams: %s and none are registered in %s.\nAdd one with: %s add NAME -- COMMAND [ARGS...]\n", noneInConfig(cfg), st.Path(), e.prog())
			return ExitOK
		}
		tokens, err := st.Tokens(ctx)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub:", err)
			return ExitFail
		}
		printSources(e.Stdout, cfg, st)
		lines := map[string]string{}
		for name, en := range ents {
			approval, enabled, scope := en.ApprovalState(), fmt.Sprint(en.Enabled), en.Spec.Scope.String()
			launch := strings.ReplaceAll(en.Spec.RedactedLaunch().String(), "\n", "; ")
			login := loginWords(tokens, name, "")
			if en.Stale {
				approval, enabled, scope, login = probe.StalePrefix, "-", "-", "-"
				launch = "nothing: " + e.ours(staleText(cfg, name))
			} else if w := hubUnderWords(cfg, name); w != "" {
				launch += " (" + w + ")"
			}
			lines[name] = fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, en.Spec.InferTransport(), en.Source, approval, enabled, scope, login, launch)
		}
		for _, h := range hubs {
			lines[h.Spec.Name] = fmt.Sprintf("%s\tstdio\tconfig\tnot run\t-\t-\t-\tnothing: %s\n", h.Spec.Name, h.NotRun)
		}
		for _, b := range broken {
			lines[b.Name] = fmt.Sprintf("%s\tunknown\t%s\tFAILED\t-\t-\t-\tnothing: %s; %s\n", b.Name, b.Source, strings.ReplaceAll(probe.BrokenWhy(b), "\n", " "), e.ours(probe.BrokenFix(b.Name)))
		}
		printRows(e.Stdout, "NAME\tTRANSPORT\tSOURCE\tAPPROVAL\tENABLED\tSCOPE\tLOGIN\tRUNS", lines)
		printToolChanges(ctx, e, st, cfg)
		return ExitOK
	})
}

// noneInConfig says that the config in effect defines no upstream.
func noneInConfig(cfg *config.Config) string {
	switch {
	case cfg.File != "":
		return cfg.File + " defines none"
	case cfg.WhyNone() != "":
		return "no config file is in effect (" + cfg.WhyNone() + ")"
	}
	return "no config file is in effect"
}

// printSources says where the upstreams shown come from: the config file
// in effect (or why there is none) and the store.
func printSources(w io.Writer, cfg *config.Config, st *persist.Store) {
	fmt.Fprintf(w, "Config file: %s\nStore: %s\n\n", cfg.InEffect(), st.Path())
}
