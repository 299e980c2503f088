package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// exportRegs are registrations that exercise everything export writes.
func exportRegs() []upstream.Registration {
	yes := false
	regs := []upstream.Registration{
		{Spec: upstream.Spec{Name: "files", Description: "Files: \"quoted\", 'single', #hash\nsecond line", Command: "/opt/mcp/files server",
			Args:        []string{"--root", "/tmp/a b", "true", "123", "null", "- dash", "key: value", "${HOME}", "ünïcode", ""},
			Env:         map[string]string{"TOKEN": "${GH_TOKEN}", "PLAIN": "s3cret-plain", "FROM_FILE": "file:/run/secrets/x", "EMPTY": ""},
			Cwd:         "/tmp/work dir",
			Tools:       upstream.ToolFilter{Allow: []string{"read_*", "list"}, Deny: []string{"*delete*"}},
			InitTimeout: upstream.Duration(45 * time.Second), ListTimeout: upstream.Duration(5 * time.Second),
			CallTimeout: upstream.Duration(90 * time.Minute), IdleTimeout: upstream.Duration(10 * time.Minute),
			ProtocolVersion: "2025-06-18", MaxInFlight: 3, Scope: upstream.ScopeSession, MaxInstances: 4, Start: upstream.StartEagerSessions},
			Enabled: true, AutoConnect: true},
		{Spec: upstream.Spec{Name: "remote", URL: "https://mcp.example.com/mcp?api_key=sk-live-1&region=${REGION}&flag",
			Headers: map[string]string{"Authorization": "Bearer ${EXAMPLE_TOKEN}", "X-Team": "team-secret"}},
			Enabled: true, AutoConnect: true},
		{Spec: upstream.Spec{Name: "legacy", Transport: upstream.TransportSSE, URL: "http://127.0.0.1:8931/events", Scope: upstream.ScopeAuto},
			Enabled: true, AutoConnect: true},
		{Spec: upstream.Spec{Name: "true", Command: "yes-mcp"}, Enabled: false, AutoConnect: true},
		{Spec: upstream.Spec{Name: "123", Command: "numbers-mcp", Start: upstream.StartLazy}, Enabled: true, AutoConnect: true},
		{Spec: upstream.Spec{Name: "lazy", Command: "lazy-mcp", AllowSampling: &yes}, Enabled: true, AutoConnect: false},
	}
	for i := range regs {
		if err := regs[i].Spec.Validate(); err != nil {
			panic(err)
		}
		regs[i].Source, regs[i].Approval, regs[i].ApprovedHash = upstream.SourceCLI, upstream.ApprovalApproved, regs[i].Spec.Fingerprint()
	}
	return regs
}

// storeRegs registers regs in dataDir, plus one pending and one whose
// approval no longer covers what it runs.
func storeRegs(t *testing.T, dataDir string, regs []upstream.Registration) {
	t.Helper()
	st := openTestStore(t, dataDir)
	ctx := context.Background()
	pending := upstream.Registration{Spec: upstream.Spec{Name: "pending", Command: "bash", Args: []string{"-c", "evil"}, Transport: upstream.TransportStdio},
		Enabled: true, AutoConnect: true, Source: upstream.SourceAdmin, Approval: upstream.ApprovalPending}
	changed := upstream.Registration{Spec: upstream.Spec{Name: "changed", Command: "changed-mcp", Transport: upstream.TransportStdio},
		Enabled: true, AutoConnect: true, Source: upstream.SourceAdmin, Approval: upstream.ApprovalApproved, ApprovedHash: "0123"}
	for _, r := range append(regs, pending, changed) {
		if _, err := st.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
}

// TestExportRoundTrip: what export writes, the config loader reads back as
// the same upstreams (yaml: everything; claude: what that format holds).
func TestExportRoundTrip(t *testing.T) {
	regs := exportRegs()
	data := t.TempDir()
	storeRegs(t, data, regs)

	// What each upstream should load as: the hub runs registrations that
	// do not auto-connect lazily.
	want := map[string]ServerConfig{}
	for _, r := range regs {
		s := r.Spec
		if !r.AutoConnect {
			s.Start = upstream.StartLazy
		}
		s.AllowSampling = nil // no config key
		if t := r.TrustPolicy(); t != upstream.TrustWarn {
			s.Trust = t // stated, so that the file's default (warn) does not apply
		}
		want[s.Name] = ServerConfig{Spec: s, Disabled: !r.Enabled}
	}
	claudeOnly := func(sc ServerConfig) ServerConfig {
		s := sc.Spec
		return ServerConfig{Disabled: sc.Disabled, Spec: upstream.Spec{Name: s.Name, Transport: s.Transport, Command: s.Command,
			Args: s.Args, Env: s.Env, Cwd: s.Cwd, URL: s.URL, Headers: s.Headers}}
	}

	for _, tt := range []struct {
		format, file string
		want         func(ServerConfig) ServerConfig
		wantStderr   []string
	}{
		{"yaml", "exported.yaml", func(sc ServerConfig) ServerConfig { return sc }, []string{
			`left out "pending": not approved (pending)`,
			`left out "changed": not approved (changed since it was approved)`,
			`"lazy": allowSampling (false) has no config file key; left out`,
		}},
		{"claude", "exported.json", claudeOnly, []string{
			`left out "pending": not approved (pending)`,
			`"files": not in the claude format: description, tools, initTimeout, listTimeout, callTimeout, idleTimeout, protocolVersion, start: eager, maxInFlight, scope, maxInstances (--format yaml keeps them)`,
			`"lazy": not in the claude format: start: lazy`,
		}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			stdout, stderr, code := cliSplit(t, data, "", "export", "--format", tt.format, "--reveal")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			// Only settings someone changed are named (issue 29 item 9):
			// legacy has the scope mcp-hub add gives, and none has a trust
			// policy of its own.
			for _, w := range []string{`"legacy": not in the claude format`, ", trust"} {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr warns about a default: %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "***") {
				t.Errorf("--reveal masked something: %s", stderr)
			}
			file := writeFile(t, tt.file, stdout)
			c, err := config.Load(config.Sources{File: file})
			if err != nil {
				t.Fatalf("the config loader rejects the export: %v\n%s", err, stdout)
			}
			got := map[string]ServerConfig{}
			for _, sc := range c.Servers {
				got[sc.Spec.Name] = sc
			}
			wantFmt := map[string]ServerConfig{}
			for name, sc := range want {
				wantFmt[name] = tt.want(sc)
			}
			if diff := cmp.Diff(wantFmt, got); diff != "" {
				t.Errorf("loaded export differs (-want +got):\n%s\nexport:\n%s", diff, stdout)
			}
		})
	}

	t.Run("empty store", func(t *testing.T) {
		for _, format := range []string{"yaml", "claude"} {
			stdout, _, code := cliSplit(t, t.TempDir(), "", "export", "--format", format)
			c, err := config.Load(config.Sources{File: writeFile(t, "empty."+map[string]string{"yaml": "yaml", "claude": "json"}[format], stdout)})
			if code != exitOK || err != nil || len(c.Servers) != 0 {
				t.Errorf("%s: exit %d, load error %v, servers %v\n%s", format, code, err, c, stdout)
			}
		}
	})
	t.Run("bad format", func(t *testing.T) {
		if _, stderr, code := cliSplit(t, data, "", "export", "--format", "toml"); code != exitConfig || !strings.Contains(stderr, `--format "toml": want claude or yaml`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

func TestExportMasking(t *testing.T) {
	data := t.TempDir()
	storeRegs(t, data, exportRegs())
	secrets := []string{"s3cret-plain", "sk-live-1", "team-secret"}
	kept := []string{"${GH_TOKEN}", "file:/run/secrets/x", "Bearer ${EXAMPLE_TOKEN}", "region=${REGION}", "&flag", "api_key=***"}
	for _, format := range []string{"claude", "yaml"} {
		t.Run(format, func(t *testing.T) {
			stdout, stderr, code := cliSplit(t, data, "", "export", "--format", format)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, s := range secrets {
				if strings.Contains(stdout, s) {
					t.Errorf("secret %q in the export", s)
				}
			}
			for _, s := range kept {
				if !strings.Contains(stdout, s) {
					t.Errorf("export lacks %q", s)
				}
			}
			if !strings.Contains(stderr, "3 secret value(s) written as ***; --reveal writes them") {
				t.Errorf("stderr = %q", stderr)
			}
			if format == "claude" {
				var doc struct {
					MCPServers map[string]map[string]any `json:"mcpServers"`
				}
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
				env := doc.MCPServers["files"]["env"].(map[string]any)
				if env["PLAIN"] != "***" || env["TOKEN"] != "${GH_TOKEN}" || env["EMPTY"] != "" {
					t.Errorf("files env = %v", env)
				}
			}
			revealed, _, _ := cliSplit(t, data, "", "export", "--format", format, "--reveal")
			for _, s := range secrets {
				if !strings.Contains(revealed, s) {
					t.Errorf("--reveal: %q missing", s)
				}
			}
		})
	}
}
