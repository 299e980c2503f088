package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestLoadSources: each source on its own, and which file wins when
// several are named.
func TestLoadSources(t *testing.T) {
	fileA := writeFile(t, "a.yaml", "logLevel: warn\n")
	fileB := writeFile(t, "b.json", `{"logLevel": "error"}`)
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	tests := []struct {
		name     string
		src      func(t *testing.T) Sources
		file     string // the file read
		level    string
		wantErr  string
		checkCfg func(t *testing.T, c *Config)
	}{
		{name: "nothing: the defaults", src: func(*testing.T) Sources { return Sources{} }, level: "info"},
		{name: "file", src: func(*testing.T) Sources { return Sources{File: fileA} }, file: fileA, level: "warn"},
		{name: "json file", src: func(*testing.T) Sources { return Sources{File: fileB} }, file: fileB, level: "error"},
		{name: "environment", src: func(*testing.T) Sources {
			return Sources{Environ: []string{"MCP_HUB_LOG_LEVEL=debug", "MCP_HUB_HTTP__ALLOWED_HOSTS=a.example, b.example", "OTHER=1"}}
		}, level: "debug", checkCfg: func(t *testing.T, c *Config) {
			if !slices.Equal(c.HTTPAllowedHosts, []string{"a.example", "b.example"}) {
				t.Errorf("allowedHosts = %q, want the comma-separated list", c.HTTPAllowedHosts)
			}
		}},
		{name: "environment names the file", src: func(*testing.T) Sources { return Sources{Environ: []string{"MCP_HUB_CONFIG=" + fileA}} }, file: fileA, level: "warn"},
		{name: "flags", src: func(t *testing.T) Sources {
			return Sources{Flags: parseFlags(t, "--log-level", "error", "--first-list-wait", "2s")}
		}, level: "error", checkCfg: func(t *testing.T, c *Config) {
			if c.FirstListWait != 2*time.Second {
				t.Errorf("firstListWait = %s, want 2s", c.FirstListWait)
			}
		}},
		{name: "flag names the file", src: func(t *testing.T) Sources { return Sources{Flags: parseFlags(t, "--config", fileB)} }, file: fileB, level: "error"},
		{name: "default file when it exists", src: func(*testing.T) Sources { return Sources{DefaultFile: fileA} }, file: fileA, level: "warn"},
		{name: "default file may be missing", src: func(*testing.T) Sources { return Sources{DefaultFile: missing} }, level: "info"},
		{name: "File beats the environment", src: func(*testing.T) Sources {
			return Sources{File: fileA, Environ: []string{"MCP_HUB_CONFIG=" + fileB}}
		}, file: fileA, level: "warn"},
		{name: "--config beats File", src: func(t *testing.T) Sources {
			return Sources{File: fileA, Flags: parseFlags(t, "--config", fileB)}
		}, file: fileB, level: "error"},
		{name: "a named file must exist", src: func(*testing.T) Sources { return Sources{File: missing} }, wantErr: "missing.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.src(t))
			if tt.wantErr != "" {
				var ce *Error
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want an *Error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.File != tt.file || c.LogLevel != tt.level {
				t.Errorf("file %q, logLevel %q; want %q, %q", c.File, c.LogLevel, tt.file, tt.level)
			}
			if tt.checkCfg != nil {
				tt.checkCfg(t, c)
			}
		})
	}
}

// TestDecodeServer: one client entry decodes as an entry of mcpServers
// does, and its errors name the key under mcpServers.<name>.
func TestDecodeServer(t *testing.T) {
	got, err := DecodeServer("c.json", "fs", map[string]any{
		"command": "npx", "args": []any{"-y", "pkg", 3.0}, "env": map[string]any{"N": 2.0, "T": "${TOKEN}"},
		"type": "stdio", "tools": map[string]any{"deny": []any{"rm*"}}, "callTimeout": "5m", "allowRoots": "false",
	})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	want := Server{Spec: upstream.Spec{Name: "fs", Transport: upstream.TransportStdio, Command: "npx", Args: []string{"-y", "pkg", "3"},
		Env: map[string]string{"N": "2", "T": "${TOKEN}"}, Tools: upstream.ToolFilter{Deny: []string{"rm*"}},
		CallTimeout: upstream.Duration(5 * time.Minute), AllowRoots: &no}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeServer (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name string
		raw  any
		want string
	}{
		{"bad name", map[string]any{"command": "x"}, "c.json: mcpServers.bad name: invalid name"},
		{"a", "npx", `mcpServers.a: expected a section (a map of keys), got the string "npx"`},
		{"a", map[string]any{"command": "x", "args": "-y"}, "mcpServers.a.args: expected a list of strings, got the string \"-y\""},
		{"a", map[string]any{"command": "x", "callTimeout": 30.0}, `mcpServers.a.callTimeout: expected a duration such as "30s", got the number 30 (write "30s" for seconds)`},
		{"a", map[string]any{"command": "x", "type": "sse", "transport": "stdio"}, `mcpServers.a.transport: disagrees with type "sse"`},
		{"a", map[string]any{"url": "ftp://x"}, "mcpServers.a.url"},
	} {
		_, err := DecodeServer("c.json", tt.name, tt.raw)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeServer(%q, %v) = %v, want %q", tt.name, tt.raw, err, tt.want)
		}
	}
}

func TestSourceResolve(t *testing.T) {
	secret := writeFile(t, "tok", "from-a-file\n")
	env := func(k string) (string, bool) { return map[string]string{"T": "from-env"}[k], k == "T" }
	for in, want := range map[Source]string{"literal": "literal", "${T}": "from-env", "Bearer ${T}": "Bearer from-env", Source("file:" + secret): "from-a-file"} {
		if got, err := in.Resolve(env); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Source("${NOPE}").Resolve(env); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("an unset variable: err = %v, want it named", err)
	}
}

// TestHubOptions: the configuration reaches the hub's and the upstream
// manager's options.
func TestHubOptions(t *testing.T) {
	c, err := Load(Sources{File: writeFile(t, "hub.yaml", `
firstListWait: 0s
health: {interval: 0s}
catalog: {policy: prefix}
admin: {tools: read-only}
limits: {maxConcurrentSpawns: 2}
reconnect: {maxAttempts: -1}
mcpServers:
  b: {command: y, disabled: true}
  a: {command: x}
`)})
	if err != nil {
		t.Fatal(err)
	}
	o := c.HubOptions(HubParams{Version: "9"})
	if o.Version != "9" || o.FirstListWait != -1 || o.Catalog.Policy != "prefix" || o.Admin != hub.AdminReadOnly || o.ConfigFile != c.File ||
		o.Upstream.HealthInterval != -1 || o.Upstream.MaxConcurrentSpawns != 2 || o.Upstream.Backoff.MaxAttempts != -1 ||
		o.Upstream.Backoff.Initial != 5*time.Second || o.Upstream.CallTimeout != 120*time.Second {
		t.Errorf("options = %+v", o)
	}
	servers := c.HubServers()
	if len(servers) != 2 || servers[0].Spec.Name != "a" || servers[0].Disabled || servers[1].Spec.Name != "b" || !servers[1].Disabled {
		t.Errorf("servers = %+v, want a, then b disabled", servers)
	}
}
