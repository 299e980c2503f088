package config

import (
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
)

// TestCodeModeAndToolPolicy: the codeMode shorthand, the environment, the
// policy parsed into the hub's options, and bad values named by key.
func TestCodeModeAndToolPolicy(t *testing.T) {
	c, err := Load(Sources{File: writeFile(t, "h.yaml", "codeMode: on\ntoolPolicy:\n  rules:\n    \"*/delete_*\": deny\n    \"fs/write_*\": ask\n")})
	if err != nil {
		t.Fatal(err)
	}
	o := c.HubOptions(HubParams{})
	if o.CodeMode.Mode != hub.CodeModeOn || o.CodeMode.Limits.MaxCalls != 100 || o.CodeMode.Limits.MemoryBytes != 64<<20 {
		t.Errorf("code mode options %+v", o.CodeMode)
	}
	if a, pat := o.ToolPolicy.Decide("fs", "write_file"); a != toolpolicy.Ask || pat != "fs/write_*" {
		t.Errorf("fs/write_file: %s by %q", a, pat)
	}
	if c, err := Load(Sources{File: writeFile(t, "b.json", `{"codeMode": true}`)}); err != nil || c.CodeModeMode != "on" {
		t.Errorf("codeMode: true: %v", err)
	}
	c, err = Load(Sources{Environ: []string{"MCP_HUB_CODE_MODE__MAX_CALLS=7", "MCP_HUB_CODE_MODE__MODE=on"}})
	if err != nil || c.CodeModeMode != "on" || c.CodeMaxCalls != 7 || c.Policy != nil {
		t.Errorf("environment: %v %+v", err, c)
	}
	for _, tt := range []struct{ file, want string }{
		{"toolPolicy: {rules: {delete: deny}}", "toolPolicy: rules.delete: pattern \"delete\": want server/tool"},
		{"toolPolicy: {rules: {\"a/b\": block}}", "must be allow, ask or deny"},
		{"codeMode: maybe", "codeMode.mode"},
		{"codeMode: {maxCalls: 0}", "must be more than 0"},
	} {
		_, err := Load(Sources{File: writeFile(t, "bad.yaml", tt.file)})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.file, err, tt.want)
		}
	}
}
