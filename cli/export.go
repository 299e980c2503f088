package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

const exportUse = `[--format claude|yaml] [--reveal] [flags]

Writes the registered upstreams (from the store) to stdout: as a Claude
Desktop document ({"mcpServers": …}, also a valid hub config file), or as a
hub.yaml "servers:" section that the hub's config loader reads back
unchanged.

Secret values are written as "***": env and header values, the values of
URL query parameters, and the values of secret-looking arguments
(--api-key=…, --token …, mysql's -p…). References are not secrets and are
kept as written: "file:<path>", and values made only of ${VAR} references
(after an authorization scheme such as "Bearer "). --reveal writes every
value.

Upstreams that are not approved (pending, rejected, or changed since their
approval) are left out, so that an export cannot turn a registration
nobody approved into a config file entry; stderr names them.`

// Export writes the approved registrations as a config file.
func Export(ctx context.Context, e *Env) int {
	var format *string
	var reveal *bool
	define := func(fs *pflag.FlagSet) {
		format = fs.String("format", "claude", "claude (Claude Desktop's mcpServers JSON) or yaml (hub.yaml)")
		reveal = fs.Bool("reveal", false, "write secret values instead of ***")
	}
	return withStore(ctx, e, exportUse, 0, 0, define, func(st *persist.Store, _ *config.Config, _ []string) int {
		if *format != "claude" && *format != "yaml" {
			fmt.Fprintf(e.Stderr, "mcp-hub export: --format %q: want claude or yaml\n", *format)
			return ExitConfig
		}
		regs, err := st.List(ctx)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub export:", err)
			return ExitFail
		}
		if broken, err := st.Broken(ctx); err == nil {
			for _, b := range broken {
				fmt.Fprintf(e.Stderr, "mcp-hub export: left out %q: %s\n", b.Name, probe.BrokenWhy(b))
			}
		}
		var out []upstream.Registration
		for _, r := range regs {
			if !r.Approved() {
				why := string(r.Approval)
				if r.Approval == upstream.ApprovalApproved {
					why = "changed since it was approved"
				}
				fmt.Fprintf(e.Stderr, "mcp-hub export: left out %q: not approved (%s)\n", r.Spec.Name, why)
				continue
			}
			for _, n := range unexportable(r.Spec, *format) {
				fmt.Fprintf(e.Stderr, "mcp-hub export: %q: %s\n", r.Spec.Name, n)
			}
			out = append(out, r)
		}
		m := redact.Masker{Reveal: *reveal}
		var buf bytes.Buffer
		if *format == "yaml" {
			writeYAML(&buf, out, &m, st.Path())
		} else {
			if err := writeClaude(&buf, out, &m, e.Stderr); err != nil {
				fmt.Fprintln(e.Stderr, "mcp-hub export:", err)
				return ExitFail
			}
		}
		if _, err := e.Stdout.Write(buf.Bytes()); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub export:", err)
			return ExitFail
		}
		if m.Masked > 0 {
			fmt.Fprintf(e.Stderr, "mcp-hub export: %d secret value(s) written as %s; --reveal writes them\n", m.Masked, redact.Mask)
		}
		return ExitOK
	})
}

// exportArgs are a stdio spec's arguments as export writes them.
func exportArgs(m *redact.Masker, s upstream.Spec) []string {
	if len(s.Args) == 0 {
		return nil
	}
	return m.Argv(append([]string{s.Command}, s.Args...))[1:]
}

// unexportable says what of s a config file in format cannot hold.
func unexportable(s upstream.Spec, format string) []string {
	var out []string
	for name, v := range map[string]*bool{"allowSampling": s.AllowSampling, "allowElicitation": s.AllowElicitation, "allowRoots": s.AllowRoots} {
		if v != nil {
			out = append(out, fmt.Sprintf("%s (%v) has no config file key; left out", name, *v))
		}
	}
	if format == "yaml" {
		for _, k := range slices.Concat(slices.Collect(maps.Keys(s.Env)), slices.Collect(maps.Keys(s.Headers))) {
			if strings.Contains(k, ".") {
				out = append(out, fmt.Sprintf("%q contains a dot, which the config loader reads as a nested key", k))
			}
		}
	}
	slices.Sort(out)
	return out
}

func writeClaude(w io.Writer, regs []upstream.Registration, m *redact.Masker, stderr io.Writer) error {
	servers := map[string]clientconfig.Server{}
	for _, r := range regs {
		s := r.Spec
		ce := clientconfig.Server{Disabled: !r.Enabled}
		if s.InferTransport() == upstream.TransportStdio {
			ce.Command, ce.Args, ce.Env, ce.Cwd = s.Command, exportArgs(m, s), m.Values(s.Env), s.Cwd
		} else {
			ce.Type, ce.URL, ce.Headers = string(s.InferTransport()), m.URL(s.URL), m.Values(s.Headers)
		}
		if lost := hubOnly(r); len(lost) > 0 {
			fmt.Fprintf(stderr, "mcp-hub export: %q: not in the claude format: %s (--format yaml keeps them)\n", s.Name, strings.Join(lost, ", "))
		}
		servers[s.Name] = ce
	}
	return clientconfig.WriteMCPServers(w, servers)
}

// hubOnly names the settings of r that only the hub understands and that
// someone set: a scope or trust policy a registration made the same way
// gets anyway is no loss (mcp-hub import gives it back), so it is not named.
func hubOnly(r upstream.Registration) []string {
	s := r.Spec
	var out []string
	add := func(cond bool, name string) {
		if cond {
			out = append(out, name)
		}
	}
	add(s.Description != "", "description")
	add(!s.Tools.IsZero(), "tools")
	add(s.InitTimeout != 0, "initTimeout")
	add(s.ListTimeout != 0, "listTimeout")
	add(s.CallTimeout != 0, "callTimeout")
	add(s.IdleTimeout != 0, "idleTimeout")
	add(s.ProtocolVersion != "", "protocolVersion")
	add(s.Start == upstream.StartLazy || !r.AutoConnect, "start: lazy")
	add(s.Start == upstream.StartEagerSessions && r.AutoConnect, "start: eager")
	add(s.MaxInFlight != 0, "maxInFlight")
	defaultScope := upstream.DefaultScope
	if r.Source == upstream.SourceConfig {
		defaultScope = upstream.ScopeShared
	}
	add(s.Scope != defaultScope, "scope")
	add(s.MaxInstances != 0, "maxInstances")
	add(len(s.Roots) > 0, "roots")
	add(s.Trust != "" && s.Trust != (upstream.Registration{Source: r.Source}).TrustPolicy(), "trust")
	return out
}

// writeYAML writes regs as a hub.yaml servers: section. Every scalar is a
// JSON string (a valid YAML double-quoted scalar), so no name or value can
// be mistaken for a number, a boolean or YAML syntax.
func writeYAML(w io.Writer, regs []upstream.Registration, m *redact.Masker, from string) {
	q := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	}
	list := func(ss []string) string {
		qs := make([]string, len(ss))
		for i, s := range ss {
			qs[i] = q(s)
		}
		return "[" + strings.Join(qs, ", ") + "]"
	}
	kv := func(indent, key string, vals map[string]string) {
		if len(vals) == 0 {
			return
		}
		fmt.Fprintf(w, "%s%s:\n", indent, key)
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			fmt.Fprintf(w, "%s  %s: %s\n", indent, q(k), q(vals[k]))
		}
	}
	dur := func(key string, d upstream.Duration) {
		if d != 0 {
			fmt.Fprintf(w, "    %s: %s\n", key, q(time.Duration(d).String()))
		}
	}
	fmt.Fprintf(w, "# Written by mcp-hub export from %s.\n", from)
	if !m.Reveal {
		fmt.Fprintf(w, "# Secret values are written as %q; mcp-hub export --reveal writes them.\n", redact.Mask)
	}
	if len(regs) == 0 {
		fmt.Fprintln(w, "servers: {}")
		return
	}
	fmt.Fprintln(w, "servers:")
	for _, r := range regs {
		s := r.Spec
		fmt.Fprintf(w, "  %s:\n", q(s.Name))
		fmt.Fprintf(w, "    # registered by %s\n", r.Source)
		if s.Description != "" {
			fmt.Fprintf(w, "    description: %s\n", q(s.Description))
		}
		fmt.Fprintf(w, "    transport: %s\n", q(string(s.InferTransport())))
		if s.Command != "" {
			fmt.Fprintf(w, "    command: %s\n", q(s.Command))
		}
		if len(s.Args) > 0 {
			fmt.Fprintf(w, "    args: %s\n", list(exportArgs(m, s)))
		}
		kv("    ", "env", m.Values(s.Env))
		if s.Cwd != "" {
			fmt.Fprintf(w, "    cwd: %s\n", q(s.Cwd))
		}
		if s.URL != "" {
			fmt.Fprintf(w, "    url: %s\n", q(m.URL(s.URL)))
		}
		kv("    ", "headers", m.Values(s.Headers))
		if !r.Enabled {
			fmt.Fprintln(w, "    disabled: true")
		}
		if !s.Tools.IsZero() {
			fmt.Fprintln(w, "    tools:")
			if len(s.Tools.Allow) > 0 {
				fmt.Fprintf(w, "      allow: %s\n", list(s.Tools.Allow))
			}
			if len(s.Tools.Deny) > 0 {
				fmt.Fprintf(w, "      deny: %s\n", list(s.Tools.Deny))
			}
		}
		dur("initTimeout", s.InitTimeout)
		dur("listTimeout", s.ListTimeout)
		dur("callTimeout", s.CallTimeout)
		dur("idleTimeout", s.IdleTimeout)
		if s.ProtocolVersion != "" {
			fmt.Fprintf(w, "    protocolVersion: %s\n", q(s.ProtocolVersion))
		}
		if s.Start == upstream.StartLazy || !r.AutoConnect {
			fmt.Fprintln(w, `    start: "lazy"`)
		} else if s.Start == upstream.StartEagerSessions {
			fmt.Fprintln(w, `    start: "eager"`)
		}
		if s.MaxInFlight != 0 {
			fmt.Fprintf(w, "    maxInFlight: %d\n", s.MaxInFlight)
		}
		if s.Scope != upstream.ScopeShared {
			fmt.Fprintf(w, "    scope: %s\n", q(string(s.Scope)))
		}
		if s.MaxInstances != 0 {
			fmt.Fprintf(w, "    maxInstances: %d\n", s.MaxInstances)
		}
		if len(s.Roots) > 0 {
			fmt.Fprintf(w, "    roots: %s\n", list(s.Roots))
		}
		if t := exportTrust(r); t != "" {
			fmt.Fprintf(w, "    trust: %s\n", q(string(t)))
		}
	}
}

// exportTrust is the trust policy an exported entry must state so that,
// loaded from a config file (where the default is warn), the server keeps
// the policy it has now; "" when the file's default is that policy.
func exportTrust(r upstream.Registration) upstream.Trust {
	if t := r.TrustPolicy(); t != upstream.TrustWarn {
		return t
	}
	return ""
}
