package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONSyntaxPosition: a JSON config file that does not parse is
// reported with the line and column where it goes wrong, as clientconfig
// reports client files.
func TestJSONSyntaxPosition(t *testing.T) {
	for _, tt := range []struct{ content, want string }{
		{"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"} \"b\": {}\n  }\n}\n", `line 3, column 27: invalid JSON: invalid character '"' after object key:value pair`},
		{"{\"logLevel\": \"warn\",\n,}\n", `line 2, column 1: invalid JSON: invalid character ',' looking for beginning of object key string`},
		{"{\n  // my servers\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}},\n  \"logLevel\": warn\n}\n", `line 4, column 15: invalid JSON: invalid literal: warn`},
		{"{\"logLevel\": \"warn\"", "line 1, column 20: invalid JSON: unexpected end of JSON input"},
	} {
		file := writeFile(t, "hub.json", tt.content)
		_, err := Load(Sources{File: file})
		if want := "config " + file + ": " + tt.want; err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", tt.content, err, want)
		}
	}
}

// TestServersSpelling: errors under a servers: key name servers, as the
// file spells it; under mcpServers, mcpServers.
func TestServersSpelling(t *testing.T) {
	for _, tt := range []struct{ content, want string }{
		{"servers:\n  foo:\n    comand: x\n", `servers.foo.comand: unknown key (did you mean "servers.foo.command"?)`},
		{"servers:\n  foo:\n    command: x\n    url: http://x/mcp\n", "servers.foo"},
		{"servers:\n  hub_x:\n    command: x\n", "servers.hub_x: invalid name"},
		{"mcpServers:\n  foo:\n    comand: x\n", `mcpServers.foo.comand: unknown key (did you mean "mcpServers.foo.command"?)`},
	} {
		file := writeFile(t, "hub.yaml", tt.content)
		_, err := Load(Sources{File: file})
		if want := "config " + file + ": " + tt.want; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want it to start %s", tt.content, err, want)
		}
	}
}

// TestInEffect: the config says which file is in effect, or why none is.
func TestInEffect(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "mcp-hub", "hub.yaml")
	c, err := Load(Sources{DefaultFile: def})
	if err != nil || c.InEffect() != "none ("+def+" does not exist)" {
		t.Errorf("no file: %q, %v", c.InEffect(), err)
	}
	wrong := writeFileAt(t, filepath.Join(dir, "hub.yaml"), "logLevel: warn\n")
	c, err = Load(Sources{DefaultFile: def})
	if want := "none (" + def + " does not exist; " + wrong + " is not read: move it to " + def + ")"; err != nil || c.InEffect() != want || c.LogLevel != "info" {
		t.Errorf("a file in the wrong place: %q (logLevel %s), %v; want %q", c.InEffect(), c.LogLevel, err, want)
	}
	writeFileAt(t, def, "logLevel: warn\n")
	c, err = Load(Sources{DefaultFile: def})
	if err != nil || c.InEffect() != def || c.LogLevel != "warn" || c.WhyNone() != "" {
		t.Errorf("the default file: %q, %v", c.InEffect(), err)
	}
	if c, err := Load(Sources{}); err != nil || c.InEffect() != "none" {
		t.Errorf("no default file: %q, %v", c.InEffect(), err)
	}
}

func writeFileAt(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMarkerIsNoSetting (issue 29 item 2): the marker a hub puts in the
// environment of its stdio upstreams (MCP_HUB_UPSTREAM) is no setting, so a
// hub started by a hub loads its configuration; a variable that sets no key
// is named as the variable, with the one meant.
func TestMarkerIsNoSetting(t *testing.T) {
	c, err := Load(Sources{Environ: []string{"MCP_HUB_UPSTREAM=1234.5678.1", "MCP_HUB_LOG_LEVEL=warn"}})
	if err != nil || c.LogLevel != "warn" {
		t.Errorf("with the marker set: %v (logLevel %q)", err, c.LogLevel)
	}
	for _, tt := range []struct{ env, want string }{
		{"MCP_HUB_LOG_LEVL=debug", "config: environment variable MCP_HUB_LOG_LEVL sets no mcp-hub setting (did you mean MCP_HUB_LOG_LEVEL?)"},
		{"MCP_HUB_CATALOG__POLICI=prefix", "config: environment variable MCP_HUB_CATALOG__POLICI sets no mcp-hub setting (did you mean MCP_HUB_CATALOG__POLICY?)"},
		{"MCP_HUB_NOTHING_LIKE_IT=1", "config: environment variable MCP_HUB_NOTHING_LIKE_IT sets no mcp-hub setting"},
	} {
		if _, err := Load(Sources{Environ: []string{tt.env}}); err == nil || err.Error() != tt.want {
			t.Errorf("%s: got %v, want %s", tt.env, err, tt.want)
		}
	}
}

// TestYAMLSyntaxPosition (issue 29 item 6): a YAML config file that does
// not parse is reported at the line and column of the mistake, not where
// the enclosing block began, with what usually causes it.
func TestYAMLSyntaxPosition(t *testing.T) {
	for _, tt := range []struct{ content, want string }{
		{"mcpServers:\n  a:\n    command: x\n    args: [1]\n   env: {}\n",
			"line 5, column 4: invalid YAML: value is not allowed in this context (it is indented 3 spaces, like no line above it: the keys of one map, and the items of one list, line up)"},
		{"mcpServers:\n  a:\n    args:\n    - a\n   - b\n",
			"line 5, column 4: invalid YAML: value is not allowed in this context (it is indented 3 spaces, like no line above it: the keys of one map, and the items of one list, line up)"},
		{"mcpServers:\n  a:\n\tcommand: x\n", "line 3, column 1: invalid YAML: found character '\t' that cannot start any token (YAML indents with spaces; this line has a tab)"},
		{"mcpServers:\n  a:\n    command: \"x\n    args: []\n", "line 3, column 14: invalid YAML: could not find end character of double-quoted text"},
		{"mcpServers:\n  a:\n    command x\n    args: []\n", "line 3, column 5: invalid YAML: unexpected key name"},
	} {
		file := writeFile(t, "hub.yaml", tt.content)
		_, err := Load(Sources{File: file})
		if want := "config " + file + ": " + tt.want; err == nil || err.Error() != want {
			t.Errorf("%q:\ngot  %v\nwant %s", tt.content, err, want)
		}
	}
}

// TestJSONWithComments: a JSON config file may carry comments and
// trailing commas, as VS Code's mcp.json and files setup keeps do.
func TestJSONWithComments(t *testing.T) {
	file := writeFile(t, "mcp.json", `{
  // my servers
  "servers": {
    "fx": {"type": "stdio", "command": "/bin/fixture", "args": ["-name", "fx",],}, /* the test one */
  },
  "logLevel": "warn",
}
`)
	cfg, err := Load(Sources{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Spec.Name != "fx" || strings.Join(cfg.Servers[0].Spec.Args, " ") != "-name fx" || cfg.LogLevel != "warn" {
		t.Errorf("servers %+v, logLevel %q", cfg.Servers, cfg.LogLevel)
	}
}
