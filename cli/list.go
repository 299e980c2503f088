package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
)

// List lists the registered upstreams (and the broken stored rows).
func List(ctx context.Context, e *Env) int {
	return withStore(ctx, e, "[flags]", 0, 0, nil, func(st *persist.Store, _ *config.Config, _ []string) int {
		regs, broken, err := registrations(ctx, st)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub:", err)
			return ExitFail
		}
		if len(regs)+len(broken) == 0 {
			fmt.Fprintln(e.Stdout, "No upstreams are registered. Add one with: mcp-hub add NAME -- COMMAND [ARGS...]")
			return ExitOK
		}
		tokens, err := st.Tokens(ctx)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub:", err)
			return ExitFail
		}
		lines := map[string]string{}
		for _, r := range regs {
			approval := r.ApprovalState()
			launch := strings.ReplaceAll(r.Spec.RedactedLaunch().String(), "\n", "; ")
			login := loginWords(tokens, r.Spec.Name, "")
			lines[r.Spec.Name] = fmt.Sprintf("%s\t%s\t%s\t%s\t%v\t%s\t%s\t%s\n", r.Spec.Name, r.Spec.InferTransport(), r.Source, approval, r.Enabled, r.Spec.Scope, login, launch)
		}
		for _, b := range broken {
			lines[b.Name] = fmt.Sprintf("%s\tunknown\t%s\tFAILED\t-\t-\t-\tnothing: %s; %s\n", b.Name, b.Source, strings.ReplaceAll(probe.BrokenWhy(b), "\n", " "), probe.BrokenFix(b.Name))
		}
		printRows(e.Stdout, "NAME\tTRANSPORT\tSOURCE\tAPPROVAL\tENABLED\tSCOPE\tLOGIN\tRUNS", lines)
		printToolChanges(ctx, e, st)
		return ExitOK
	})
}
