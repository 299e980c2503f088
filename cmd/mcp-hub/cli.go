package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The command-line commands work on the store directly; a running hub
// notices their changes within a second or two and applies them.

// withStore parses flags, opens the store and runs f.
func withStore(ctx context.Context, e *cmdEnv, use string, minArgs, maxArgs int, define func(*pflag.FlagSet), f func(st *persist.Store, cfg *Config, args []string) int) int {
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
		fs.Usage()
		return exitConfig
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-hub:", err)
		return exitFail
	}
	defer st.Close()
	return f(st, cfg, args)
}

func cmdList(ctx context.Context, e *cmdEnv) int {
	return withStore(ctx, e, "[flags]", 0, 0, nil, func(st *persist.Store, _ *Config, _ []string) int {
		regs, err := st.List(ctx)
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub:", err)
			return exitFail
		}
		broken, err := st.Broken(ctx)
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub:", err)
			return exitFail
		}
		if len(regs)+len(broken) == 0 {
			fmt.Fprintln(e.stdout, "No upstreams are registered. Add one with: mcp-hub add NAME -- COMMAND [ARGS...]")
			return exitOK
		}
		lines := map[string]string{}
		for _, r := range regs {
			approval := r.ApprovalState()
			launch := strings.ReplaceAll(r.Spec.RedactedLaunch().String(), "\n", "; ")
			lines[r.Spec.Name] = fmt.Sprintf("%s\t%s\t%s\t%s\t%v\t%s\n", r.Spec.Name, r.Spec.InferTransport(), r.Source, approval, r.Enabled, launch)
		}
		for _, b := range broken {
			lines[b.Name] = fmt.Sprintf("%s\tunknown\t%s\tFAILED\t-\tnothing: %s; %s\n", b.Name, b.Source, strings.ReplaceAll(brokenWhy(b), "\n", " "), brokenFix(b.Name))
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTRANSPORT\tSOURCE\tAPPROVAL\tENABLED\tRUNS")
		for _, name := range slices.Sorted(maps.Keys(lines)) {
			fmt.Fprint(tw, lines[name])
		}
		tw.Flush()
		return exitOK
	})
}

func cmdStatus(ctx context.Context, e *cmdEnv) int {
	return withStore(ctx, e, "[flags]", 0, 0, nil, func(st *persist.Store, _ *Config, _ []string) int {
		regs, err := st.List(ctx)
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub:", err)
			return exitFail
		}
		stats, err := st.Statuses(ctx)
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub:", err)
			return exitFail
		}
		broken, err := st.Broken(ctx)
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub:", err)
			return exitFail
		}
		lines := map[string]string{}
		for _, b := range broken {
			lines[b.Name] = fmt.Sprintf("%s\t%s\t-\t-\t%s\t-\n", b.Name, upstream.StateFailed, oneLine(brokenWhy(b)))
		}
		for _, r := range regs {
			state, tools, lastErr, reported := "-", "-", "", "never (no hub has run it)"
			if s, ok := stats[r.Spec.Name]; ok {
				state, tools, lastErr = string(s.State), fmt.Sprint(s.Tools), s.LastError
				reported = fmt.Sprintf("%s ago by hub pid %d", time.Since(s.ReportedAt).Round(time.Second), s.HubPID)
				if !processAlive(s.HubPID) {
					reported += " (no longer running)"
				}
			}
			if r.Approval != upstream.ApprovalApproved || !r.Approved() {
				state = string(upstream.StatePending)
				lastErr = "awaiting approval: mcp-hub approve " + r.Spec.Name
			}
			lines[r.Spec.Name] = fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\n", r.Spec.Name, state, tools, r.ApprovalState(), oneLine(redact.Text(lastErr)), reported)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSTATE\tTOOLS\tAPPROVAL\tLAST ERROR\tREPORTED")
		for _, name := range slices.Sorted(maps.Keys(lines)) {
			fmt.Fprint(tw, lines[name])
		}
		tw.Flush()
		return exitOK
	})
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func cmdAdd(ctx context.Context, e *cmdEnv) int {
	var url, cwd, desc, transport *string
	var env, headers *[]string
	var disabled, noAuto *bool
	define := func(fs *pflag.FlagSet) {
		url = fs.String("url", "", "the endpoint of an SSE or streamable HTTP server")
		cwd = fs.String("cwd", "", "working directory of a stdio server")
		desc = fs.String("description", "", "free text")
		transport = fs.String("transport", "", "stdio, sse or http (inferred when absent)")
		env = fs.StringArray("env", nil, "KEY=VALUE environment variable of a stdio server (repeatable); VALUE may be ${VAR} or file:PATH")
		headers = fs.StringArray("header", nil, "Name=VALUE header sent to an HTTP server (repeatable)")
		disabled = fs.Bool("disabled", false, "register without connecting")
		noAuto = fs.Bool("no-auto-connect", false, "do not connect when the hub starts (connect on first use)")
	}
	use := "NAME [flags] -- COMMAND [ARGS...]\n       mcp-hub add NAME [flags] --url URL"
	return withStore(ctx, e, use, 1, -1, define, func(st *persist.Store, _ *Config, args []string) int {
		spec := upstream.Spec{Name: args[0], URL: *url, Cwd: *cwd, Description: *desc, Transport: upstream.Transport(*transport)}
		if len(args) > 1 {
			spec.Command, spec.Args = args[1], args[2:]
		}
		var err error
		if spec.Env, err = keyValues(*env, "--env"); err == nil {
			spec.Headers, err = keyValues(*headers, "--header")
		}
		if err == nil {
			err = spec.Validate()
		}
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub add:", err)
			return exitConfig
		}
		// A person at a terminal typed the command: that is the approval.
		reg := upstream.Registration{Spec: spec, Enabled: !*disabled, AutoConnect: !*noAuto, Source: upstream.SourceCLI}
		reg.Approve()
		if _, err := st.Create(ctx, reg); err != nil {
			if errors.Is(err, upstream.ErrExists) {
				fmt.Fprintf(e.stderr, "mcp-hub add: an upstream named %q is already registered (mcp-hub remove %s first)\n", spec.Name, spec.Name)
				return exitFail
			}
			fmt.Fprintln(e.stderr, "mcp-hub add:", err)
			return exitFail
		}
		_ = hubStore{st}.Audit(ctx, "cli", "add", spec.Name, map[string]any{"launch": spec.RedactedLaunch()})
		fmt.Fprintf(e.stdout, "Added %q (approved). It will:\n\n%s\n\nA running hub picks it up within seconds.\n", spec.Name, indent(spec.Review()))
		return exitOK
	})
}

func keyValues(kvs []string, flag string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}

func cmdRemove(ctx context.Context, e *cmdEnv) int {
	return withStore(ctx, e, "NAME [flags]", 1, 1, nil, func(st *persist.Store, cfg *Config, args []string) int {
		name := args[0]
		r, err := st.Get(ctx, name)
		if b := (upstream.BrokenRegistration{}); errors.As(err, &b) {
			return removeBroken(ctx, e, st, b)
		}
		if err != nil {
			lookupFailed(e.stderr, "remove", name, err)
			return exitFail
		}
		if r.Source == upstream.SourceConfig {
			fmt.Fprintf(e.stderr, "mcp-hub remove: %q is defined in %s; edit it there\n", name, fileOr(cfg.File))
			return exitFail
		}
		if err := st.Delete(ctx, name); err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub remove:", err)
			return exitFail
		}
		_ = hubStore{st}.Audit(ctx, "cli", "remove", name, map[string]any{"launch": r.Spec.RedactedLaunch()})
		fmt.Fprintf(e.stdout, "Removed %q. A running hub stops it within seconds.\n", name)
		return exitOK
	})
}

func fileOr(f string) string {
	if f == "" {
		return "the config file"
	}
	return f
}

func cmdApprove(ctx context.Context, e *cmdEnv) int {
	var yes *bool
	define := func(fs *pflag.FlagSet) { yes = fs.BoolP("yes", "y", false, "approve without asking") }
	return withStore(ctx, e, "NAME [flags]", 1, 1, define, func(st *persist.Store, _ *Config, args []string) int {
		name := args[0]
		r, err := st.Get(ctx, name)
		if err != nil {
			lookupFailed(e.stderr, "approve", name, err)
			return exitFail
		}
		if r.Approved() {
			fmt.Fprintf(e.stdout, "%q is already approved. Its approval covers:\n\n%s\n", name, indent(r.Spec.Review()))
			return exitOK
		}
		fp := r.Spec.Fingerprint()
		why := ""
		if r.ApprovalNote != "" {
			why = " (" + r.ApprovalNote + ")"
		}
		fmt.Fprintf(e.stdout, "%q was registered by %s%s. Approving lets it:\n\n%s\n", name, r.Source, why, indent(r.Spec.Review()))
		if !*yes {
			if !isTerminal(e.stdin) {
				fmt.Fprintf(e.stderr, "\nmcp-hub approve: not approved; stdin is not a terminal: review the above and re-run with --yes\n")
				return exitFail
			}
			fmt.Fprint(e.stdout, "\nApprove? [y/N] ")
			line, _ := bufio.NewReader(e.stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				fmt.Fprintln(e.stdout, "Not approved.")
				return exitFail
			}
		}
		_, err = st.Update(ctx, name, func(cur *upstream.Registration) error {
			if cur.Spec.Fingerprint() != fp {
				return errors.New("what it runs changed while you were reviewing it; run approve again")
			}
			cur.Approve()
			return nil
		})
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub approve:", err)
			return exitFail
		}
		_ = hubStore{st}.Audit(ctx, "cli", "approve", name, map[string]any{"launch": r.Spec.RedactedLaunch()})
		fmt.Fprintf(e.stdout, "Approved %q. A running hub starts it within seconds.\n", name)
		return exitOK
	})
}

// indent indents every line of s but the empty ones by four spaces.
func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}

func cmdReject(ctx context.Context, e *cmdEnv) int {
	return withStore(ctx, e, "NAME [flags]", 1, 1, nil, func(st *persist.Store, cfg *Config, args []string) int {
		name := args[0]
		r, err := st.Get(ctx, name)
		if err != nil {
			lookupFailed(e.stderr, "reject", name, err)
			return exitFail
		}
		if r.Source == upstream.SourceConfig {
			fmt.Fprintf(e.stderr, "mcp-hub reject: %q is defined in %s; edit it there\n", name, fileOr(cfg.File))
			return exitFail
		}
		if _, err := st.Update(ctx, name, func(cur *upstream.Registration) error {
			cur.Approval, cur.ApprovedHash, cur.ApprovalNote = upstream.ApprovalRejected, "", ""
			return nil
		}); err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub reject:", err)
			return exitFail
		}
		_ = hubStore{st}.Audit(ctx, "cli", "reject", name, map[string]any{"launch": r.Spec.RedactedLaunch()})
		fmt.Fprintf(e.stdout, "Rejected %q: it will not run (remove it with mcp-hub remove %s).\n", name, name)
		return exitOK
	})
}

// processAlive reports whether a process with this pid runs.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && pid > 0 && p.Signal(syscall.Signal(0)) == nil
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
