package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Status shows each upstream's state as the running hub last reported it.
func Status(ctx context.Context, e *Env) int {
	return withStore(ctx, e, "[flags]", 0, 0, nil, func(st *persist.Store, cfg *config.Config, _ []string) int {
		ents, broken, err := entries(ctx, st, cfg)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub:", err)
			return ExitFail
		}
		stats, err := st.Statuses(ctx)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub:", err)
			return ExitFail
		}
		tokens, err := st.Tokens(ctx)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub:", err)
			return ExitFail
		}
		printSources(e.Stdout, cfg, st)
		live := liveHubs(stats)
		lines := map[string]string{}
		for _, b := range broken {
			lines[b.Name] = fmt.Sprintf("%s\t%s\t-\t-\t-\t%s\t-\n", b.Name, upstream.StateFailed, oneLine(probe.BrokenWhy(b)))
		}
		for _, en := range ents {
			r := en.Registration
			if en.Stale {
				// Whatever a hub last reported, a hub started with this
				// config does not run it.
				lines[r.Spec.Name] = fmt.Sprintf("%s\t%s\t-\t-\t-\t%s\t-\n", r.Spec.Name, strings.ToUpper(probe.StalePrefix), "not defined by the config file in effect ("+e.prog()+" list says more)")
				continue
			}
			state, tools, lastErr, reported := "-", "-", "", "never (no hub has run it)"
			if len(live) > 0 && r.Approval == upstream.ApprovalApproved && r.Approved() {
				// A hub runs and has not reported this approved one
				// (yet): it writes its reports off the request path, a
				// moment after each change.
				reported = fmt.Sprintf("not reported by the running hub (pid %s) yet", strings.Join(live, ", "))
			}
			if s, ok := stats[r.Spec.Name]; ok {
				state, tools, lastErr = string(s.State), fmt.Sprint(s.Tools), s.LastError
				reported = fmt.Sprintf("%s ago by hub pid %d", e.now().Sub(s.ReportedAt).Round(time.Second), s.HubPID)
				if !processAlive(s.HubPID) {
					reported += " (no longer running)"
					if len(live) > 0 {
						// What a dead hub saw is not what the live one
						// runs: it is not shown as the state.
						state, tools, lastErr = "-", "-", ""
						reported += fmt.Sprintf("; not reported by the running hub (pid %s) yet", strings.Join(live, ", "))
					}
				}
			}
			if r.Spec.Scope != upstream.ScopeShared && state != "-" {
				// Its instances run per client session.
				n, sessions := 0, ""
				if s, ok := stats[r.Spec.Name]; ok {
					n = s.Instances
					if len(s.Sessions) > 0 {
						sessions = " for " + strings.Join(s.Sessions, ", ")
					}
				}
				state += fmt.Sprintf(" (scope %s, %d %s%s)", r.Spec.Scope, n, plural(n, "instance", "instances"), sessions)
			}
			if r.Approval != upstream.ApprovalApproved || !r.Approved() {
				state = string(upstream.StatePending)
				lastErr = "awaiting approval: " + e.approveCommand(cfg) + " " + r.Spec.Name
			}
			login := e.ours(loginWords(tokens, r.Spec.Name, upstream.State(state)))
			lines[r.Spec.Name] = fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Spec.Name, state, tools, r.ApprovalState(), login, oneLine(redact.Text(lastErr)), reported)
		}
		printRows(e.Stdout, "NAME\tSTATE\tTOOLS\tAPPROVAL\tLOGIN\tLAST ERROR\tREPORTED", lines)
		printToolChanges(ctx, e, st, cfg)
		return ExitOK
	})
}

// liveHubs are the pids of the hubs that reported a status and still run.
func liveHubs(stats map[string]persist.StoredStatus) []string {
	var pids []int
	for _, s := range stats {
		if !slices.Contains(pids, s.HubPID) && processAlive(s.HubPID) {
			pids = append(pids, s.HubPID)
		}
	}
	slices.Sort(pids)
	out := make([]string, len(pids))
	for i, p := range pids {
		out[i] = strconv.Itoa(p)
	}
	return out
}

// processAlive reports whether a process with this pid runs.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && pid > 0 && p.Signal(syscall.Signal(0)) == nil
}
