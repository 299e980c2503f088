package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/persist"
)

// setupHome is a user's home for setup: the client config files below it
// and the hub's data dir.
type setupHome struct {
	home, data string
	clock      time.Time
}

func newSetupHome(t *testing.T) *setupHome {
	return &setupHome{home: t.TempDir(), data: t.TempDir(), clock: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
}

// run runs mcp-hub setup ARGS in-process with HOME (and APPDATA below it)
// set to the home and the data dir in MCP_HUB_DATA_DIR; each run is a
// second after the one before.
func (h *setupHome) run(t *testing.T, args ...string) outcome {
	t.Helper()
	return h.runEnv(t, []string{"HOME=" + h.home, "USERPROFILE=" + h.home, "APPDATA=" + filepath.Join(h.home, "AppData"), "MCP_HUB_DATA_DIR=" + h.data}, args...)
}

// runEnv is run with the environment environ.
func (h *setupHome) runEnv(t *testing.T, environ []string, args ...string) outcome {
	t.Helper()
	var stdout, stderr strings.Builder
	h.clock = h.clock.Add(time.Second)
	now := h.clock
	e := &Env{
		Name:    "setup",
		Args:    args,
		Environ: environ,
		Stdin:   strings.NewReader(""),
		Stdout:  &stdout,
		Stderr:  &stderr,
		Now:     func() time.Time { return now },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := Setup(ctx, e)
	return outcome{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// path returns where client keeps its file in the home on this OS.
func (h *setupHome) path(t *testing.T, client string) string {
	t.Helper()
	c, ok := clientconfig.ClientByID(client)
	if !ok {
		t.Fatalf("no client %s", client)
	}
	p, err := c.UserPath(runtime.GOOS, clientconfig.Dirs{Home: h.home, AppData: filepath.Join(h.home, "AppData")})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// backups returns the backups setup made of path.
func backups(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".mcp-hub-*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range m {
		if strings.HasSuffix(f, ".bak") || strings.HasSuffix(f, ".none") {
			out = append(out, f)
		}
	}
	return out
}

func writeAt(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func thisBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// setupCases are a config file of each client as people have them: other
// servers, keys the hub does not know, comments and trailing commas where
// the client allows them, and an entry the hub cannot read.
var setupCases = []struct {
	arg, client string
	shape       clientconfig.Shape
	content     string
	moved       []string // what --move-servers takes into the hub
	stays       []string // what it leaves in the file
	code        int      // of --move-servers
	keep        []string // what every run leaves as it was
}{
	{arg: "claude", client: "claude-desktop", shape: clientconfig.ShapeMCPServers, content: `{
  "globalShortcut": "Alt+Space",
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_setupTestSecretValue0123456789"}
    },
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "autoApprove": ["read_graph"]}
  },
  "preferences": {"menuBarEnabled": true, "quickEntryShortcut": "off"}
}
`, moved: []string{"github", "memory"}, keep: []string{`"globalShortcut": "Alt+Space",`, `"preferences": {"menuBarEnabled": true, "quickEntryShortcut": "off"}`}},
	{arg: "claude-code", client: "claude-code", shape: clientconfig.ShapeMCPServers, content: `{
  "numStartups": 42,
  "primaryApiKey": "sk-ant-api03-setupTestKeyValue",
  "projects": {
    "/home/me/src/app": {
      "allowedTools": [],
      "mcpServers": {"local-db": {"type": "stdio", "command": "db-mcp", "args": [], "env": {}}}
    }
  },
  "mcpServers": {
    "context7": {
      "type": "stdio",
      "command": "npx",
      "args": ["--yes", "@upstash/context7-mcp", "--api-key", "ctx7-setupTestSecret"],
      "env": {}
    }
  },
  "oauthAccount": {"emailAddress": "me@example.com"}
}
`, moved: []string{"context7"}, keep: []string{`"numStartups": 42,`, `"mcpServers": {"local-db": {"type": "stdio", "command": "db-mcp", "args": [], "env": {}}}`, `"oauthAccount": {"emailAddress": "me@example.com"}`}},
	{arg: "cursor", client: "cursor", shape: clientconfig.ShapeMCPServers, content: `{
  "mcpServers": {
    "remote": {"url": "https://mcp.example.com/mcp?api_key=setupTestQuerySecret", "headers": {"Authorization": "Bearer ${EXAMPLE_TOKEN}"}},
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "disabled": false},
    "broken": {"command": ["not", "a", "string"]}
  },
  "cursorOnly": {"x": 1}
}
`, moved: []string{"fetch", "remote"}, stays: []string{"broken"}, code: ExitFail, keep: []string{`"cursorOnly": {"x": 1}`}},
	{arg: "vscode", client: "vscode", shape: clientconfig.ShapeVSCode, content: `{
	// Servers of this machine.
	"inputs": [
		{"type": "promptString", "id": "api-token", "description": "API token", "password": true},
	],
	"servers": {
		"memory": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "@modelcontextprotocol/server-memory"], // pin it some day
		},
		/* fetches pages */
		"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}, // keep
	},
}
`, moved: []string{"fetch", "memory"}, keep: []string{"// Servers of this machine.", `{"type": "promptString", "id": "api-token", "description": "API token", "password": true},`}},
	{arg: "windsurf", client: "windsurf", shape: clientconfig.ShapeMCPServers, content: `{
  "mcpServers": {
    "zapier": {
      "serverUrl": "https://actions.zapier.com/mcp/KEY/sse"
    },
    "time": {"command": "uvx", "args": ["mcp-server-time"], "disabled": false, "disabledTools": ["convert_time"]}
  }
}
`, moved: []string{"time", "zapier"}},
}

// TestSetup runs setup for each client on a home with the client's file
// as people have it: the hub's entry is added and nothing else changes; a
// second run changes nothing; --undo gives the file back byte for byte;
// --move-servers imports the other servers into the hub's store and
// removes them from the file, again idempotent and undone byte for byte.
func TestSetup(t *testing.T) {
	exe := thisBinary(t)
	for _, tc := range setupCases {
		t.Run(tc.arg, func(t *testing.T) {
			t.Parallel()
			h := newSetupHome(t)
			path := h.path(t, tc.client)
			orig := []byte(tc.content)
			writeAt(t, path, orig)
			client, _ := clientconfig.ClientByID(tc.client)
			want := clientconfig.HubEntry(client, exe, "--data-dir", h.data)

			// Add the hub.
			o := h.run(t, tc.arg)
			if o.code != ExitOK || !strings.Contains(o.stdout, "Backup: ") {
				t.Fatalf("setup %s: %s", tc.arg, o)
			}
			got := readFile(t, path)
			checkHubEntry(t, path, []byte(got), want)
			back, found, err := clientconfig.RemoveServer([]byte(got), tc.shape, "mcp-hub")
			if err != nil || !found || !bytes.Equal(back, orig) {
				t.Errorf("the file less the hub's entry is not the file as it was (found %v, %v):\n%s", found, err, got)
			}
			bs := backups(t, path)
			if len(bs) != 1 || readFile(t, bs[0]) != tc.content {
				t.Fatalf("backups %v, want one holding the file as it was", bs)
			}
			if o := h.run(t, tc.arg); o.code != ExitOK || !strings.Contains(o.stdout, "is set up already") || readFile(t, path) != got || len(backups(t, path)) != 1 {
				t.Errorf("setup again: %s\nfile:\n%s\nbackups %v", o, readFile(t, path), backups(t, path))
			}
			if o := h.run(t, tc.arg, "--undo"); o.code != ExitOK || readFile(t, path) != tc.content || len(backups(t, path)) != 0 {
				t.Fatalf("undo: %s\nfile:\n%s\nbackups %v", o, readFile(t, path), backups(t, path))
			}

			// Add the hub and move the servers into it.
			o = h.run(t, tc.arg, "--move-servers")
			if o.code != tc.code {
				t.Fatalf("setup %s --move-servers: code %d, want %d: %s", tc.arg, o.code, tc.code, o)
			}
			moved := readFile(t, path)
			cc := checkHubEntry(t, path, []byte(moved), want)
			var names []string
			for _, en := range cc.Entries {
				names = append(names, en.Name)
			}
			if wantNames := append([]string{"mcp-hub"}, tc.stays...); !sameSet(names, wantNames) {
				t.Errorf("entries after --move-servers: %v, want %v:\n%s", names, wantNames, moved)
			}
			for _, k := range tc.keep {
				if !strings.Contains(moved, k) {
					t.Errorf("--move-servers lost %q:\n%s", k, moved)
				}
			}
			st, err := persist.Open(context.Background(), h.data, nil)
			if err != nil {
				t.Fatal(err)
			}
			regs, err := st.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var stored []string
			for _, r := range regs {
				if !r.Approved() || !r.Enabled {
					t.Errorf("%s is %s, enabled %v; want approved and enabled", r.Spec.Name, r.Approval, r.Enabled)
				}
				stored = append(stored, r.Spec.Name)
			}
			st.Close()
			if !sameSet(stored, tc.moved) {
				t.Errorf("the hub's store holds %v, want %v", stored, tc.moved)
			}
			if o := h.run(t, tc.arg, "--move-servers"); o.code != tc.code || !strings.Contains(o.stdout, "is set up already") || readFile(t, path) != moved || len(backups(t, path)) != 1 {
				t.Errorf("setup --move-servers again: %s\nfile:\n%s", o, readFile(t, path))
			}
			o = h.run(t, tc.arg, "--undo")
			if o.code != ExitOK || readFile(t, path) != tc.content {
				t.Fatalf("undo of --move-servers: %s\nfile:\n%s", o, readFile(t, path))
			}
			if len(tc.moved) > 0 && !strings.Contains(o.stdout, "The hub keeps the servers it took: ") {
				t.Errorf("undo does not say the hub keeps the moved servers: %s", o)
			}
		})
	}
}

// checkHubEntry checks that b parses and its entry mcp-hub is want; it
// returns the parsed file.
func checkHubEntry(t *testing.T, path string, b []byte, want clientconfig.Server) *clientconfig.File {
	t.Helper()
	cc, err := clientconfig.Parse(path, b)
	if err != nil {
		t.Fatalf("the file does not parse: %v\n%s", err, b)
	}
	var wantV any
	wb, _ := json.Marshal(want)
	_ = json.Unmarshal(wb, &wantV)
	for _, en := range cc.Entries {
		if en.Name == "mcp-hub" {
			if gb, _ := json.Marshal(en.Value); string(gb) != string(mustJSON(wantV)) {
				t.Errorf("entry mcp-hub = %s, want %s", gb, mustJSON(wantV))
			}
			return cc
		}
	}
	t.Fatalf("no entry mcp-hub in:\n%s", b)
	return nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// addedHubRE is the diff's line adding the hub's entry, as indented as
// the file's entries are (spaces or tabs).
var addedHubRE = regexp.MustCompile(`(?m)^\+\s+"mcp-hub": \{$`)

// TestSetupDryRun: --dry-run prints the change as a diff with every secret
// value of the file masked (env values, secret arguments, URL queries, keys
// that look secret), and changes nothing: no file, backup or store.
func TestSetupDryRun(t *testing.T) {
	for _, tc := range setupCases {
		t.Run(tc.arg, func(t *testing.T) {
			h := newSetupHome(t)
			path := h.path(t, tc.client)
			writeAt(t, path, []byte(tc.content))
			o := h.run(t, tc.arg, "--move-servers", "--dry-run")
			if o.code != tc.code || !strings.Contains(o.stdout, "--- "+path+"\n+++ "+path+" (after)\n") ||
				!addedHubRE.MatchString(o.stdout) || !strings.Contains(o.stdout, "Dry run: nothing was changed.") {
				t.Fatalf("setup --move-servers --dry-run: %s", o)
			}
			for _, secret := range []string{"ghp_setupTestSecretValue0123456789", "sk-ant-api03-setupTestKeyValue", "ctx7-setupTestSecret", "setupTestQuerySecret"} {
				if strings.Contains(o.stdout+o.stderr, secret) {
					t.Errorf("the dry run shows the secret %s:\n%s", secret, o)
				}
			}
			if readFile(t, path) != tc.content || len(backups(t, path)) != 0 || fileExists(filepath.Join(h.data, "hub.db")) {
				t.Errorf("the dry run changed something: file:\n%s\nbackups %v", readFile(t, path), backups(t, path))
			}
		})
	}
}

// TestSetupNewFile: a client with no config file gets one holding the hub
// alone (npx as the launcher); --undo removes it again.
func TestSetupNewFile(t *testing.T) {
	h := newSetupHome(t)
	path := h.path(t, "claude-desktop")
	o := h.run(t, "claude", "--launcher", "npx")
	if o.code != ExitOK {
		t.Fatalf("setup claude: %s", o)
	}
	client, _ := clientconfig.ClientByID("claude-desktop")
	checkHubEntry(t, path, []byte(readFile(t, path)), clientconfig.HubEntry(client, "npx", "-y", NPMPackage, "--data-dir", h.data))
	if bs := backups(t, path); len(bs) != 1 || !strings.HasSuffix(bs[0], ".none") {
		t.Errorf("backups %v, want one saying there was no file", bs)
	}
	if o := h.run(t, "claude", "--undo"); o.code != ExitOK || fileExists(path) {
		t.Errorf("undo: %s; the file exists: %v", o, fileExists(path))
	}
}

// TestSetupErrors: a wrong client, launcher or flag combination is a usage
// error; a file that does not parse is reported with its line and column
// and left alone, with no backup.
func TestSetupErrors(t *testing.T) {
	h := newSetupHome(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"notepad"}, ExitConfig, `unknown client "notepad"; want one of claude, claude-code, cursor, vscode, windsurf`},
		{[]string{"claude", "--launcher", "brew"}, ExitConfig, `--launcher "brew": want "npx" or "path"`},
		{[]string{"claude", "--undo", "--move-servers"}, ExitConfig, "--undo restores the file alone"},
		{[]string{"claude", "--undo"}, ExitFail, "has no backup from mcp-hub setup"},
		{nil, ExitConfig, "mcp-hub setup: missing CLIENT"},
		{[]string{"claude", "cursor"}, ExitConfig, `mcp-hub setup: unexpected argument "cursor"`},
	} {
		if o := h.run(t, tc.args...); o.code != tc.code || !strings.Contains(o.stderr, tc.msg) {
			t.Errorf("setup %v: %s\nwant code %d and %q", tc.args, o, tc.code, tc.msg)
		}
	}
	path := filepath.Join(h.home, "broken.json")
	bad := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}}\n  }\n}\n"
	writeAt(t, path, []byte(bad))
	o := h.run(t, "cursor", "--config-file", path)
	if o.code != ExitFail || !strings.Contains(o.stderr, path+": line 5, column 1: invalid JSON") || !strings.Contains(o.stderr, "Nothing was changed.") {
		t.Errorf("setup on a broken file: %s", o)
	}
	if readFile(t, path) != bad || len(backups(t, path)) != 0 {
		t.Errorf("the broken file was touched")
	}
}

// TestNPMPackageName: the package setup puts in entries is the one
// scripts/npm.sh builds.
func TestNPMPackageName(t *testing.T) {
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Name string            `json:"name"`
		Bin  map[string]string `json:"bin"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(root, "npm", "cli", "package.json"))), &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != NPMPackage || p.Bin["mcp-hub"] == "" {
		t.Errorf("npm/cli/package.json: name %q, bin %v; want %q with the bin mcp-hub", p.Name, p.Bin, NPMPackage)
	}
}
