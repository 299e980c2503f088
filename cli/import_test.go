package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func TestImportSuggestName(t *testing.T) {
	for in, want := range map[string]string{
		"my notes":                    "my-notes",
		"Fetch.Server":                "Fetch-Server",
		"@scope/pkg":                  "scope-pkg",
		"  ":                          "",
		"hub":                         "",
		"é":                           "",
		"a--b":                        "a--b",
		"x" + strings.Repeat("y", 40): "x" + strings.Repeat("y", 31),
	} {
		if got := suggestName(in); got != want {
			t.Errorf("suggestName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestImportExport runs import (dry run, then for real) and export
// in-process: a Claude Desktop file's servers are registered, approved,
// and written back with their secret values masked.
func TestImportExport(t *testing.T) {
	s := newSetup(t, "")
	file := testbin.WriteFile(t, "claude_desktop_config.json", `{
  "mcpServers": {
    "notes": {"command": `+jsonString(fixtureBin)+`, "args": ["-only", "echo"], "env": {"NOTES_TOKEN": "sk-imported-secret-value"}},
    "bad name!": {"command": "x"}
  }
}`)
	o := s.run(t, Import, "import", file, "--dry-run")
	if o.code != ExitOK || !strings.Contains(o.stdout, "Dry run: would add 1, skip 1; could not read 0. Nothing was changed.") ||
		!regexp.MustCompile(`(?m)^  would add +notes +`).MatchString(o.stdout) {
		t.Fatalf("import --dry-run: %s", o)
	}
	if fileExists(filepath.Join(s.data, persist.FileName)) {
		t.Fatal("the dry run created the store")
	}
	o = s.run(t, Import, "import", file)
	if o.code != ExitOK || !strings.Contains(o.stdout, "Added 1, skipped 1, could not read 0. They are approved; a running hub starts them within seconds.") ||
		!regexp.MustCompile(`(?m)^  skipped +bad name! +line \d+: `).MatchString(o.stdout) {
		t.Fatalf("import: %s", o)
	}
	if r, err := s.get(t, "notes"); err != nil || !r.Approved() || r.Spec.Env["NOTES_TOKEN"] != "sk-imported-secret-value" {
		t.Fatalf("imported: %+v, %v", r, err)
	}
	if o := s.run(t, Import, "import", file); o.code != ExitOK || !strings.Contains(o.stdout, "Added 0, skipped 2") {
		t.Errorf("import again: %s", o)
	}
	if o := s.run(t, Import, "import", filepath.Join(t.TempDir(), "nope.json")); o.code != ExitFail || !strings.Contains(o.stderr, "mcp-hub import: ") {
		t.Errorf("import of a missing file: %s", o)
	}

	o = s.run(t, Export, "export")
	if o.code != ExitOK || !strings.Contains(o.stderr, "mcp-hub export: 1 secret value(s) written as ***; --reveal writes them") {
		t.Fatalf("export: %s", o)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &doc); err != nil {
		t.Fatalf("export: %v\n%s", err, o.stdout)
	}
	if n := doc.MCPServers["notes"]; n.Command != fixtureBin || n.Env["NOTES_TOKEN"] != "***" || len(doc.MCPServers) != 1 {
		t.Errorf("export: %+v", doc.MCPServers)
	}
	if o := s.run(t, Export, "export", "--format", "yaml", "--reveal"); o.code != ExitOK ||
		!strings.Contains(o.stdout, "\nservers:\n  \"notes\":\n") || !strings.Contains(o.stdout, `"NOTES_TOKEN": "sk-imported-secret-value"`) {
		t.Errorf("export --format yaml --reveal: %s", o)
	}
	if o := s.run(t, Export, "export", "--format", "toml"); o.code != ExitConfig || o.stderr != "mcp-hub export: --format \"toml\": want claude or yaml\n" {
		t.Errorf("export --format toml: %s", o)
	}
}

// TestTrustSurvivesExport: a server registered with a trust policy keeps it
// through export: loaded from the exported file (where the default is warn),
// it has the policy it had in the store.
func TestTrustSurvivesExport(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  upstream.Trust
	}{
		{nil, upstream.TrustPin}, // mcp-hub add's default
		{[]string{"--trust", "off"}, upstream.TrustOff},
		{[]string{"--trust", "warn"}, upstream.TrustWarn},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			s := newSetup(t, "")
			args := append(append([]string{"up"}, tc.flags...), "--", fixtureBin, "-only", "echo")
			if o := s.run(t, Add, "add", args...); o.code != ExitOK {
				t.Fatalf("add: %s", o)
			}
			r, err := s.get(t, "up")
			if err != nil || r.TrustPolicy() != tc.want {
				t.Fatalf("stored policy %q (%v), want %q", r.TrustPolicy(), err, tc.want)
			}
			o := s.run(t, Export, "export", "--format", "yaml")
			if o.code != ExitOK {
				t.Fatalf("export: %s", o)
			}
			cfg, err := config.Load(config.Sources{File: testbin.WriteFile(t, "exported.yaml", o.stdout)})
			if err != nil || len(cfg.Servers) != 1 {
				t.Fatalf("load the export: %v\n%s", err, o.stdout)
			}
			loaded := upstream.Registration{Spec: cfg.Servers[0].Spec, Source: upstream.SourceConfig}
			if got := loaded.TrustPolicy(); got != tc.want {
				t.Errorf("policy after export and load = %q, want %q\n%s", got, tc.want, o.stdout)
			}
		})
	}
	s := newSetup(t, "")
	if o := s.run(t, Add, "add", "up", "--trust", "sometimes", "--", fixtureBin); o.code == ExitOK || !strings.Contains(o.stderr, "trust") {
		t.Errorf("add --trust sometimes: %s", o)
	}
}

// TestImportWholeCommandLine: an entry whose command holds the whole
// command line ("npx -y pkg" in command) is skipped, as add refuses it,
// with the entry as it should be written; setup --move-servers leaves it
// in the client's file.
func TestImportWholeCommandLine(t *testing.T) {
	s := newSetup(t, "")
	file := testbin.WriteFile(t, "claude_desktop_config.json", `{
  "mcpServers": {
    "memory": {"command": "npx -y @modelcontextprotocol/server-memory --token sk-whole-line-secret"},
    "notes": {"command": `+jsonString(fixtureBin)+`, "args": ["-only", "echo"]}
  }
}`)
	o := s.run(t, Import, "import", file)
	want := `  skipped         memory  line 3: its command "npx -y @modelcontextprotocol/server-memory --token ***" is a whole command line, and no program has that name: ` +
		`write the program alone in command and its arguments in args ("command": "npx", "args": ["-y","@modelcontextprotocol/server-memory","--token","***"]) and import again`
	if o.code != ExitOK || !strings.Contains(o.stdout, want) || !strings.Contains(o.stdout, "Added 1, skipped 1") || strings.Contains(o.stdout+o.stderr, "sk-whole-line-secret") {
		t.Errorf("import: %s\nwant the line:\n%s", o, want)
	}
	if _, err := s.get(t, "memory"); err == nil {
		t.Error("the whole-line entry was registered")
	}
}
