package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func parseFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

// loadConfig loads as mcp-hub does: flags, environment and the default
// file.
func loadConfig(fs *pflag.FlagSet, environ []string) (*Config, error) {
	return Load(Sources{Flags: fs, Environ: environ, DefaultFile: DefaultFile()})
}

var writeFile = testbin.WriteFile

func TestConfigPrecedence(t *testing.T) {
	file := writeFile(t, "hub.yaml", "logLevel: warn\ndataDir: /from/file\ncatalog:\n  policy: prefix\nfirstListWait: 3s\n")
	tests := []struct {
		name    string
		args    []string
		env     []string
		level   string
		dataDir string
		policy  string
		wait    time.Duration
	}{
		{"file only", nil, nil, "warn", "/from/file", "prefix", 3 * time.Second},
		{"env beats file", nil, []string{"MCP_HUB_LOG_LEVEL=debug", "MCP_HUB_CATALOG__POLICY=merge"}, "debug", "/from/file", "merge", 3 * time.Second},
		{"flag beats env", []string{"--log-level", "error", "--data-dir", "/from/flag"}, []string{"MCP_HUB_LOG_LEVEL=debug", "MCP_HUB_DATA_DIR=/from/env"}, "error", "/from/flag", "prefix", 3 * time.Second},
		{"unset flags keep file values", []string{"--first-list-wait", "1s"}, nil, "warn", "/from/file", "prefix", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := parseFlags(t, append([]string{"--config", file}, tt.args...)...)
			c, err := loadConfig(fs, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if c.LogLevel != tt.level || c.DataDir != tt.dataDir || c.CatalogPolicy != tt.policy || c.FirstListWait != tt.wait {
				t.Errorf("got level=%s dataDir=%s policy=%s wait=%s; want %s %s %s %s",
					c.LogLevel, c.DataDir, c.CatalogPolicy, c.FirstListWait, tt.level, tt.dataDir, tt.policy, tt.wait)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := loadConfig(parseFlags(t), []string{"MCP_HUB_CONFIG=" + writeFile(t, "empty.yaml", "")})
	if err != nil {
		t.Fatal(err)
	}
	if c.LogLevel != "info" || c.CatalogPolicy != "merge" || c.CatalogSeparator != "__" || c.FirstListWait != 10*time.Second ||
		c.InitTimeout != 30*time.Second || c.CallTimeout != 120*time.Second || c.MaxInFlight != 10 || c.Backoff.InitialDelay != 5*time.Second ||
		c.Backoff.MaxAttempts != 5 || c.HealthInterval != 30*time.Second || c.MaxSpawns != 4 {
		t.Errorf("defaults = %+v", c)
	}
}

func TestConfigServers(t *testing.T) {
	file := writeFile(t, "claude_desktop_config.json", `{
  "globalShortcut": "",
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp", 3], "env": {"A": "1", "N": 2}, "cwd": "/tmp"},
    "remote": {"type": "sse", "url": "http://127.0.0.1:9/sse", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    "stream": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"},
    "login": {"url": "https://mcp.example.com/mcp", "oauth": {"clientId": "cid", "clientSecret": "${SECRET}", "scopes": ["a", "b"],
              "clientMetadataUrl": "https://example.com/c.json", "redirectPort": 8765}},
    "inferred": {"url": "https://example.com/api/sse/"},
    "tuned": {"command": "x", "transport": "stdio", "disabled": true, "tools": {"allow": ["read_*"], "deny": ["*delete*"]},
              "callTimeout": "5m", "start": "lazy", "maxInFlight": 2, "idleTimeout": "10m", "allowSampling": false, "allowRoots": true,
              "scope": "session", "maxInstances": 3}
  }
}`)
	c, err := loadConfig(parseFlags(t, "--config", file), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Server{}
	for _, s := range c.Servers {
		byName[s.Spec.Name] = s
	}
	fs := byName["fs"].Spec
	if fs.Transport != upstream.TransportStdio || fs.Command != "npx" || strings.Join(fs.Args, " ") != "-y @modelcontextprotocol/server-filesystem /tmp 3" ||
		fs.Env["N"] != "2" || fs.Cwd != "/tmp" {
		t.Errorf("fs = %+v", fs)
	}
	if r := byName["remote"].Spec; r.Transport != upstream.TransportSSE || r.Headers["Authorization"] != "Bearer ${TOKEN}" {
		t.Errorf("remote = %+v", r)
	}
	if s := byName["stream"].Spec; s.Transport != upstream.TransportHTTP {
		t.Errorf("stream transport = %s, want http", s.Transport)
	}
	if o := byName["login"].Spec.OAuth; o == nil || o.ClientID != "cid" || o.ClientSecret != "${SECRET}" || strings.Join(o.Scopes, " ") != "a b" ||
		o.ClientMetadataURL != "https://example.com/c.json" || o.RedirectPort != 8765 {
		t.Errorf("login oauth = %+v", o)
	}
	if o := byName["stream"].Spec.OAuth; o != nil {
		t.Errorf("stream oauth = %+v, want none", o)
	}
	if s := byName["inferred"].Spec; s.Transport != upstream.TransportSSE {
		t.Errorf("inferred transport = %s, want sse", s.Transport)
	}
	tuned := byName["tuned"]
	if !tuned.Disabled || tuned.Spec.CallTimeout.Std() != 5*time.Minute || tuned.Spec.Start != upstream.StartLazy ||
		tuned.Spec.MaxInFlight != 2 || tuned.Spec.Tools.Allow[0] != "read_*" || tuned.Spec.Tools.Deny[0] != "*delete*" ||
		tuned.Spec.IdleTimeout.Std() != 10*time.Minute || tuned.Spec.AllowSampling == nil || *tuned.Spec.AllowSampling ||
		tuned.Spec.AllowRoots == nil || !*tuned.Spec.AllowRoots || tuned.Spec.AllowElicitation != nil ||
		tuned.Spec.Scope != upstream.ScopeSession || tuned.Spec.MaxInstances != 3 || fs.Scope != upstream.ScopeShared {
		t.Errorf("tuned = %+v", tuned)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                []string // substrings of the message
	}{
		{"unknown key with suggestion", "hub.yaml", "mcpServers:\n  a:\n    comand: x\n", []string{"hub.yaml", "mcpServers.a.comand", "unknown key", `did you mean "mcpServers.a.command"`}},
		{"wrong type", "hub.yaml", "timeouts:\n  call: 30\n", []string{"timeouts.call", `expected a duration such as "30s"`, `"30s"`}},
		{"bad enum", "hub.yaml", "catalog:\n  policy: smart\n", []string{"catalog.policy", "expected one of merge, prefix", `"smart"`}},
		{"args not a list", "hub.yaml", "mcpServers:\n  a:\n    command: x\n    args: -y\n", []string{"mcpServers.a.args", "expected a list of strings"}},
		{"missing command", "hub.yaml", "mcpServers:\n  a:\n    cwd: /tmp\n", []string{"mcpServers.a.command", "required"}},
		{"invalid server name", "hub.yaml", "mcpServers:\n  \"bad name\":\n    command: x\n", []string{"mcpServers.bad name", `invalid name "bad name": it has a space; a name is made of letters, digits, '-' and '_' (at most 32, the first a letter or a digit)`}},
		{"reserved server name", "hub.yaml", "mcpServers:\n  hub_admin:\n    command: x\n", []string{"reserved"}},
		{"bad url", "hub.yaml", "mcpServers:\n  a:\n    url: ftp://x\n", []string{"mcpServers.a.url", "http or https"}},
		{"json syntax", "hub.json", "{\"mcpServers\": {\"a\": {\"command\": \"x\" \"y\"}}}", []string{"hub.json", "invalid character"}},
		{"yaml syntax", "hub.yaml", "mcpServers:\n  a: [\n", []string{"hub.yaml", "yaml"}},
		{"separator", "hub.yaml", "catalog:\n  separator: \"::\"\n", []string{"catalog.separator"}},
		{"server not allowed", "hub.yaml", "security:\n  allowedServerNames: [a]\nmcpServers:\n  a:\n    command: x\n  b:\n    command: x\n", []string{"mcpServers.b", "not in security.allowedServerNames (a)"}},
		{"allow flag type", "hub.yaml", "mcpServers:\n  a:\n    command: x\n    allowSampling: maybe\n", []string{"mcpServers.a.allowSampling"}},
		{"oauth literal secret", "hub.yaml", "mcpServers:\n  a:\n    url: https://h/mcp\n    oauth:\n      clientId: c\n      clientSecret: s3cr3t-literal\n", []string{"mcpServers.a.oauth.clientSecret", "${VAR}"}},
		{"oauth on stdio", "hub.yaml", "mcpServers:\n  a:\n    command: x\n    oauth:\n      clientId: c\n", []string{"mcpServers.a.oauth", "sse and http"}},
		{"oauth metadata url", "hub.yaml", "mcpServers:\n  a:\n    url: https://h/mcp\n    oauth:\n      clientMetadataUrl: http://x/c.json\n", []string{"mcpServers.a.oauth.clientMetadataUrl", "https"}},
		{"oauth and static auth", "hub.yaml", "mcpServers:\n  a:\n    url: https://h/mcp\n    headers: {Authorization: x}\n    oauth:\n      scopes: [a]\n", []string{"mcpServers.a.oauth", "Authorization"}},
		{"oauth port", "hub.yaml", "mcpServers:\n  a:\n    url: https://h/mcp\n    oauth:\n      redirectPort: 70000\n", []string{"mcpServers.a.oauth.redirectPort"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, tt.file, tt.content)
			_, err := loadConfig(parseFlags(t, "--config", p), nil)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// Issue 26: an error quotes a bounded prefix of what the file holds.
	t.Run("a megabyte of server name", func(t *testing.T) {
		p := writeFile(t, "hub.json", `{"mcpServers":{"`+strings.Repeat("n ", 1<<19)+`":{"command":"x"}}}`)
		_, err := loadConfig(parseFlags(t, "--config", p), nil)
		if err == nil || len(err.Error()) > 8<<10 || !strings.Contains(err.Error(), "a name is made of letters") {
			t.Errorf("error of %d bytes, want at most 8 KiB saying what a name is made of: %.300v", len(err.Error()), err)
		}
	})
	t.Run("missing explicit file", func(t *testing.T) {
		_, err := loadConfig(parseFlags(t, "--config", filepath.Join(t.TempDir(), "nope.yaml")), nil)
		if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
			t.Errorf("err = %v, want it to name the missing file", err)
		}
	})
	t.Run("unknown env key", func(t *testing.T) {
		_, err := loadConfig(parseFlags(t), []string{"MCP_HUB_CONFIG=" + writeFile(t, "e.yaml", ""), "MCP_HUB_LOG_LEVL=debug"})
		if err == nil || !strings.Contains(err.Error(), "MCP_HUB_LOG_LEVL") {
			t.Errorf("err = %v, want it to name MCP_HUB_LOG_LEVL", err)
		}
	})
}

func TestEnvKey(t *testing.T) {
	for in, want := range map[string]string{
		"MCP_HUB_DATA_DIR":              "dataDir",
		"MCP_HUB_LOG_LEVEL":             "logLevel",
		"MCP_HUB_CATALOG__POLICY":       "catalog.policy",
		"MCP_HUB_LIMITS__MAX_IN_FLIGHT": "limits.maxInFlight",
		"OTHER":                         "",
	} {
		if got := envKey(in); got != want {
			t.Errorf("envKey(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestNoConfigFileIsFine(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	if _, err := os.Stat(DefaultFile()); !errors.Is(err, os.ErrNotExist) {
		t.Skip("a user config file exists")
	}
	c, err := loadConfig(parseFlags(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.File != "" || len(c.Servers) != 0 {
		t.Errorf("config = %+v, want defaults and no file", c)
	}
}
