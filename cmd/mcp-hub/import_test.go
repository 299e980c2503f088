package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// cliSplit runs an mcp-hub command on dataDir and a config file ("" for an
// empty one) and returns its stdout and stderr apart.
func cliSplit(t *testing.T, dataDir, cfg string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if cfg == "" {
		cfg = writeFile(t, "none.yaml", "")
	}
	full := append([]string{args[0], "--data-dir", dataDir, "--config", cfg}, args[1:]...)
	cmd := exec.Command(hubBin, full...)
	cmd.Env = append(os.Environ(), "MCP_HUB_CONFIG=")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// importFixture returns the path of a file under testdata/import.
func importFixture(t *testing.T, rel string) string {
	t.Helper()
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "testdata", "import", rel)
}

// storedRegs returns the registrations of dataDir by name.
func storedRegs(t *testing.T, dataDir string) map[string]upstream.Registration {
	t.Helper()
	st := openTestStore(t, dataDir)
	regs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	out := map[string]upstream.Registration{}
	for _, r := range regs {
		out[r.Spec.Name] = r
	}
	return out
}

// reportLine matches the report line of one entry: outcome, name, detail.
func reportLine(outcome, name, detail string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(outcome) + ` +` + regexp.QuoteMeta(name) + ` +.*` + regexp.QuoteMeta(detail))
}

func TestImportClientConfigs(t *testing.T) {
	workspace := importFixture(t, "vscode")
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		wantCode   int
		want       map[string]upstream.Spec // the registrations, exactly
		wantLines  []*regexp.Regexp
	}{
		{
			name: "claude desktop", file: "claude_desktop_config.json", wantCode: exitOK,
			want: map[string]upstream.Spec{
				"filesystem": {Name: "filesystem", Transport: upstream.TransportStdio, Command: "npx",
					Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/notes", "/Users/me/Desktop"}},
				"github": {Name: "github", Transport: upstream.TransportStdio, Command: "npx",
					Args: []string{"-y", "@modelcontextprotocol/server-github"},
					Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_0123456789abcdef"}},
				"sqlite": {Name: "sqlite", Transport: upstream.TransportStdio, Command: "uvx",
					Args: []string{"mcp-server-sqlite", "--db-path", "/Users/me/test.db"},
					Env:  map[string]string{"LOG_LEVEL": "2", "SQLITE_KEY": "${SQLITE_KEY}"}},
				// memory, defined twice (issue 26): neither definition.
			},
			wantLines: []*regexp.Regexp{
				reportLine("added", "filesystem", "run: npx -y @modelcontextprotocol/server-filesystem /Users/me/notes /Users/me/Desktop"),
				reportLine("skipped", "memory", "line 13: defined 2 times in the file (lines 13, 28): which one was meant is not clear, so none is imported"),
				reportLine("skipped", "memory", "line 28: defined 2 times in the file (lines 13, 28)"),
				reportLine("skipped", "my notes", `line 17: invalid name "my notes": it has a space; a name is made of letters, digits, '-' and '_' (at most 32, the first a letter or a digit); rename it (to "my-notes", say)`),
				reportLine("skipped", "hub_tools", `line 20: invalid name "hub_tools": "hub" and names starting "hub_" are reserved for the hub`),
				regexp.MustCompile(`(?m)^Added 3, skipped 4, could not read 0\.`),
			},
		},
		{
			name: "cursor", file: "cursor_mcp.json", wantCode: exitFail,
			want: map[string]upstream.Spec{
				"remote": {Name: "remote", Transport: upstream.TransportHTTP,
					URL:     "https://mcp.example.com/mcp?api_key=sk-live-123&region=${REGION}",
					Headers: map[string]string{"Authorization": "Bearer ${EXAMPLE_TOKEN}", "X-Team": "team-secret"}},
				"legacy": {Name: "legacy", Transport: upstream.TransportSSE, URL: "http://127.0.0.1:8931/sse"},
				"stream": {Name: "stream", Transport: upstream.TransportHTTP, URL: "http://127.0.0.1:8932/mcp",
					Headers: map[string]string{"Cookie": "file:/run/secrets/cookie"}},
				"fetch": {Name: "fetch", Transport: upstream.TransportStdio, Command: "uvx",
					Args: []string{"mcp-server-fetch", "--ignore-robots-txt"},
					Env:  map[string]string{"HTTPS_PROXY": "http://proxy.internal:3128"}, Cwd: "/srv/fetch"},
			},
			wantLines: []*regexp.Regexp{
				reportLine("added", "legacy", "connect (sse) to: http://127.0.0.1:8931/sse"),
				reportLine("skipped", "Fetch.Server", `line 21: invalid name "Fetch.Server"`),
				reportLine("skipped", "an-extremely-long-server-name-over-32-characters", `rename it (to "an-extremely-long-server-name-ov", say)`),
				reportLine("could not read", "broken", "line 28: command: either command (stdio) or url (sse, http) is required"),
				reportLine("could not read", "typo", `line 31: arg: unknown key (did you mean "args"?)`),
				regexp.MustCompile(`(?m)^Added 4, skipped 2, could not read 2\.`),
			},
		},
		{
			name: "vs code", file: "vscode/.vscode/mcp.json", wantCode: exitOK,
			want: map[string]upstream.Spec{
				"workspace-fs": {Name: "workspace-fs", Transport: upstream.TransportStdio, Command: "npx",
					Args: []string{"-y", "@modelcontextprotocol/server-filesystem", workspace}, Cwd: workspace,
					// env wins over envFile.
					Env: map[string]string{"DEBUG": "mcp:*", "API_KEY": "from-env-wins", "NODE_ENV": "production", "ALLOWED_DIR": "/tmp/allowed"}},
				"api": {Name: "api", Transport: upstream.TransportHTTP, URL: "https://api.example.com/mcp",
					Headers: map[string]string{"Authorization": "Bearer ${input:api-token}", "X-User": "${USER}"}},
				// type sse with a URL that does not say so.
				"events": {Name: "events", Transport: upstream.TransportSSE, URL: "https://events.example.com/stream"},
			},
			wantLines: []*regexp.Regexp{
				regexp.MustCompile(`\(servers: VS Code\): 4 server\(s\)`),
				regexp.MustCompile(`ignored dev \(VS Code's development mode\)`),
				regexp.MustCompile(`read 2 variable\(s\) from envFile ` + regexp.QuoteMeta(filepath.Join(workspace, ".env"))),
				regexp.MustCompile(`headers.Authorization: \$\{input:api-token\} is resolved by VS Code only`),
				reportLine("skipped", "Bad Name!", `line 26: invalid name "Bad Name!"`),
				regexp.MustCompile(`(?m)^Added 3, skipped 1, could not read 0\.`),
			},
		},
		{
			name: "vs code settings", file: "vscode-settings.json", wantCode: exitOK,
			want: map[string]upstream.Spec{
				"time": {Name: "time", Transport: upstream.TransportStdio, Command: "uvx",
					Args: []string{"mcp-server-time", "--local-timezone=${env:TZ}"}},
				"ws": {Name: "ws", Transport: upstream.TransportStdio, Command: "node",
					Args: []string{"${workspaceFolder}/server.js"}, Env: map[string]string{"HOME_DIR": home}},
			},
			wantLines: []*regexp.Regexp{
				regexp.MustCompile(`\(mcp.servers: VS Code settings\): 2 server\(s\)`),
				regexp.MustCompile(`args\[1\]: \$\{env:TZ\} is resolved by VS Code only; the hub passes it on as written`),
				regexp.MustCompile(`args\[0\]: \$\{workspaceFolder\} is unknown here; left as written`),
				regexp.MustCompile(`(?m)^Added 2, skipped 0, could not read 0\.`),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			out, code := cli(t, data, "import", importFixture(t, tt.file))
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			for _, re := range tt.wantLines {
				if !re.MatchString(out) {
					t.Errorf("output lacks %s", re)
				}
			}
			regs := storedRegs(t, data)
			got := map[string]upstream.Spec{}
			for name, r := range regs {
				got[name] = r.Spec
				if r.Source != upstream.SourceCLI || r.Approval != upstream.ApprovalApproved || !r.Approved() ||
					r.ApprovedHash != r.Spec.Fingerprint() || !r.Enabled || !r.AutoConnect {
					t.Errorf("%s: source %s, approval %s (covers this launch spec: %v), enabled %v, auto-connect %v; want cli, approved, true, true, true",
						name, r.Source, r.Approval, r.Approved(), r.Enabled, r.AutoConnect)
				}
			}
			for name, s := range tt.want {
				s.Scope = upstream.DefaultScope // what a new registration gets
				tt.want[name] = s
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("registrations (-want +got):\n%s", diff)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// TestImportAndAddScope: servers registered from the command line (import,
// add) get the scope of new registrations, auto, unless they name one;
// list shows it.
func TestImportAndAddScope(t *testing.T) {
	data := t.TempDir()
	file := writeFile(t, "claude.json", `{"mcpServers": {
		"plain": {"command": "x"},
		"shared": {"command": "x", "scope": "shared"},
		"own": {"command": "x", "scope": "session"}}}`)
	if out, code := cli(t, data, "import", file); code != exitOK {
		t.Fatalf("import: %d\n%s", code, out)
	}
	if out, code := cli(t, data, "add", "added", "--", "x"); code != exitOK || !strings.Contains(out, "(scope auto)") {
		t.Fatalf("add: %d\n%s", code, out)
	}
	if out, code := cli(t, data, "add", "mine", "--scope", "session", "--", "x"); code != exitOK {
		t.Fatalf("add --scope session: %d\n%s", code, out)
	}
	if out, code := cli(t, data, "add", "bad", "--scope", "per-user", "--", "x"); code != exitConfig || !strings.Contains(out, "scope") {
		t.Errorf("add --scope per-user: %d\n%s", code, out)
	}
	want := map[string]upstream.Scope{"plain": upstream.ScopeAuto, "shared": upstream.ScopeShared, "own": upstream.ScopeSession,
		"added": upstream.ScopeAuto, "mine": upstream.ScopeSession}
	regs := storedRegs(t, data)
	for name, scope := range want {
		if got := regs[name].Spec.Scope; got != scope {
			t.Errorf("%s: scope %q, want %q", name, got, scope)
		}
	}
	out, _ := cli(t, data, "list")
	for name, scope := range want {
		if !lineHas(out, name, scope.String()) {
			t.Errorf("list does not show %s's scope %s:\n%s", name, scope, out)
		}
	}
}

// TestImportMalformed: a file that cannot be read changes nothing and says
// why on stderr (clientconfig's TestParseErrors has every error).
func TestImportMalformed(t *testing.T) {
	tests := []struct {
		name, content string
		want          string // a substring of the error
	}{
		{"missing comma", `{"mcpServers": {"a": {"command": "x"} "b": {}}}`, `line 1, column 39: invalid JSON: invalid character '"' after object key:value pair`},
		{"servers not an object", "{\n\n  \"servers\": 3}", "line 3: servers: expected an object of servers by name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			file := writeFile(t, "client.json", tt.content)
			stdout, stderr, code := cliSplit(t, data, "", "import", file)
			if code != exitFail {
				t.Errorf("exit code %d, want %d", code, exitFail)
			}
			if !strings.Contains(stderr, file+": "+tt.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, file+": "+tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("data dir created (%v); a file that cannot be parsed must change nothing", err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, stderr, code := cliSplit(t, t.TempDir(), "", "import", filepath.Join(t.TempDir(), "nope.json"))
		if code != exitFail || !strings.Contains(stderr, "nope.json: no such file or directory") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// TestImportSkips: names already registered (by the CLI, or by the config
// file) are skipped with a reason, and importing the same file twice adds
// nothing the second time.
func TestImportSkips(t *testing.T) {
	data := t.TempDir()
	cfg := writeFile(t, "hub.yaml", "mcpServers:\n  sqlite:\n    command: my-sqlite\n")
	if out, code := cliConfig(t, data, cfg, "add", "github", "--", "my-github-server"); code != exitOK {
		t.Fatalf("add: %d %s", code, out)
	}
	file := importFixture(t, "claude_desktop_config.json")
	out, code := cliConfig(t, data, cfg, "import", file)
	if code != exitOK {
		t.Errorf("exit code %d, want 0", code)
	}
	for _, re := range []*regexp.Regexp{
		reportLine("skipped", "github", `line 8: an upstream named "github" is already registered (by cli); mcp-hub remove github first to replace it`),
		reportLine("skipped", "sqlite", "line 23: defined in "+cfg+", the hub's config file; edit it there"),
		reportLine("added", "filesystem", "run: npx"),
		regexp.MustCompile(`(?m)^Added 1, skipped 6, could not read 0\.`),
	} {
		if !re.MatchString(out) {
			t.Errorf("output lacks %s", re)
		}
	}
	regs := storedRegs(t, data)
	if got := regs["github"].Spec.Command; got != "my-github-server" {
		t.Errorf("github runs %q after import, want the registration it had", got)
	}
	if _, ok := regs["sqlite"]; ok {
		t.Errorf("sqlite was registered although the config file defines it")
	}

	out, code = cliConfig(t, data, cfg, "import", file)
	if code != exitOK || !strings.Contains(out, "Added 0, skipped 7, could not read 0.") {
		t.Errorf("second import: exit %d\n%s", code, out)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

func TestImportDryRun(t *testing.T) {
	file := importFixture(t, "claude_desktop_config.json")
	t.Run("no store yet", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		out, code := cli(t, data, "import", "--dry-run", file)
		if code != exitOK {
			t.Errorf("exit code %d, want 0", code)
		}
		for _, want := range []string{"  would add       filesystem", "  skipped         my notes", "Dry run: would add 3, skip 4; could not read 0. Nothing was changed."} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("dry run created the data dir (%v)", err)
		}
	})
	t.Run("existing store", func(t *testing.T) {
		data := t.TempDir()
		if out, code := cli(t, data, "add", "memory", "--", "mem"); code != exitOK {
			t.Fatalf("add: %d %s", code, out)
		}
		st := openTestStore(t, data)
		before, err := st.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		info, _ := os.Stat(filepath.Join(data, persist.FileName))
		out, code := cli(t, data, "import", file, "--dry-run")
		if code != exitOK || !reportLine("skipped", "memory", "defined 2 times").MatchString(out) ||
			!strings.Contains(out, "Dry run: would add 3, skip 4;") {
			t.Errorf("exit %d\n%s", code, out)
		}
		after := storedRegs(t, data)
		if len(before) != 1 || len(after) != 1 {
			t.Fatalf("registrations before %d, after %d; want 1, 1", len(before), len(after))
		}
		if diff := cmp.Diff(before[0], after["memory"]); diff != "" {
			t.Errorf("dry run changed the store (-before +after):\n%s", diff)
		}
		if info2, _ := os.Stat(filepath.Join(data, persist.FileName)); info2 == nil || !info2.ModTime().Equal(info.ModTime()) {
			t.Errorf("dry run wrote hub.db")
		}
	})
}

// TestMigrationCommandsHelp: import, export, tools and doctor document
// their flags and exit status, and are listed by mcp-hub --help.
func TestMigrationCommandsHelp(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		want []string
	}{
		{"import", []string{"Usage: mcp-hub import FILE [--dry-run]", "--dry-run", "Exit status: 0 when every server was added or skipped"}},
		{"export", []string{"Usage: mcp-hub export [--format claude|yaml] [--reveal]", "--reveal", `"***"`}},
		{"tools", []string{"Usage: mcp-hub tools [--json]", "--json", "Exit status: 0 when the catalog was printed"}},
		{"doctor", []string{"Usage: mcp-hub doctor", "Registrations nobody approved are not run", "Exit status: 0 when no upstream failed"}},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			out, err := exec.Command(hubBin, tt.cmd, "--help").CombinedOutput()
			if err != nil {
				t.Errorf("--help: %v", err)
			}
			for _, w := range append(tt.want, "--data-dir", "--config") {
				if !strings.Contains(string(out), w) {
					t.Errorf("help lacks %q:\n%s", w, out)
				}
			}
		})
	}
	out, _ := exec.Command(hubBin, "--help").CombinedOutput()
	for _, c := range []string{"import", "export", "tools", "doctor"} {
		if !regexp.MustCompile(`(?m)^  ` + c + ` +\S`).Match(out) {
			t.Errorf("mcp-hub --help does not list %s:\n%s", c, out)
		}
	}
	if _, stderr, code := cliSplit(t, t.TempDir(), "", "import"); code != exitConfig || !strings.Contains(stderr, "Usage: mcp-hub import") {
		t.Errorf("import without a file: exit %d, stderr %q", code, stderr)
	}
}
