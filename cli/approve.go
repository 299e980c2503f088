package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Approve shows what an upstream runs and, when the person agrees, approves it.
func Approve(ctx context.Context, e *Env) int {
	var yes *bool
	define := func(fs *pflag.FlagSet) { yes = fs.BoolP("yes", "y", false, "approve without asking") }
	return withStore(ctx, e, "NAME [flags]", 1, 1, define, func(st *persist.Store, cfg *config.Config, args []string) int {
		name := args[0]
		r, err := st.Get(ctx, name)
		if err != nil {
			e.lookupFailed("approve", name, st.Path(), err)
			return ExitFail
		}
		if r.Approved() {
			if code, done := approveToolChanges(ctx, e, st, name, *yes); done {
				return code
			}
			fmt.Fprintf(e.Stdout, "%q is already approved. Its approval covers:\n\n%s\n", name, indent(r.Spec.Review()))
			return ExitOK
		}
		opts := catalog.Options{Policy: catalog.Policy(cfg.CatalogPolicy), Separator: cfg.CatalogSeparator}
		fmt.Fprintf(e.Stdout, "%s\n", hub.ApprovalPrompt(r, hub.StoredTakeoverNote(ctx, hubstore.Store{Store: st}, opts, r)))
		if !*yes {
			if !isTerminal(e.Stdin) {
				fmt.Fprintf(e.Stderr, "\nmcp-hub approve: not approved; stdin is not a terminal: review the above and re-run with --yes\n")
				return ExitFail
			}
			fmt.Fprint(e.Stdout, "\nApprove? [y/N] ")
			line, _ := bufio.NewReader(e.Stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				fmt.Fprintln(e.Stdout, "Not approved.")
				return ExitFail
			}
		}
		// The code path of the REST API and the web console, as "cli".
		if err := hub.ApproveRegistration(ctx, hubstore.Store{Store: st}, "cli", r); errors.Is(err, hub.ErrReviewChanged) {
			fmt.Fprintln(e.Stderr, "mcp-hub approve: what it runs changed while you were reviewing it; run approve again")
			return ExitFail
		} else if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub approve:", err)
			return ExitFail
		}
		fmt.Fprintf(e.Stdout, "Approved %q. A running hub starts it within seconds.\n", name)
		return ExitOK
	})
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
