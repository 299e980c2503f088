package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/clientconfig"
)

// TestSetupKeepsTheEntrysSettings: a hub entry written as the README's
// "Connect your client" writes it, with --config naming the person's
// servers and env holding what their ${VAR}s read, keeps both when setup
// updates it; a flag setup is given replaces the entry's; a --move-servers
// that would move servers into another store than the entry's is refused
// before anything changes.
func TestSetupKeepsTheEntrysSettings(t *testing.T) {
	h := newSetupHome(t)
	path := h.path(t, "claude-desktop")
	servers := filepath.Join(h.home, "my-servers.json")
	orig := `{"mcpServers": {
  "hub": {"command": "/usr/local/bin/mcp-hub", "args": ["--config", "` + servers + `", "--log-level", "debug"], "env": {"GITHUB_TOKEN": "ghp_keepMeSecret0123456789abcdef"}, "cwd": "/srv"},
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
}}
`
	writeAt(t, path, []byte(orig))
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)

	entry := func() map[string]any {
		t.Helper()
		cc, err := clientconfig.Parse(path, []byte(readFile(t, path)))
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range cc.Entries {
			if en.Name == "hub" {
				m, _ := en.Value.(map[string]any)
				return m
			}
		}
		t.Fatalf("no hub entry:\n%s", readFile(t, path))
		return nil
	}
	args := func(m map[string]any) string {
		var out []string
		for _, a := range m["args"].([]any) {
			out = append(out, a.(string))
		}
		return strings.Join(out, " ")
	}

	o := h.run(t, "claude")
	if o.code != ExitOK || !strings.Contains(o.stdout, "  kept from the entry it updates: --config "+servers+"; --log-level debug; env GITHUB_TOKEN; cwd /srv\n") {
		t.Fatalf("setup over the README's hub entry: %s", o)
	}
	if strings.Contains(o.stdout+o.stderr, "ghp_keepMeSecret") {
		t.Errorf("setup shows the env value:\n%s", o)
	}
	m := entry()
	if got, want := args(m), "--data-dir "+h.data+" --config "+servers+" --log-level debug"; m["command"] != exe || got != want {
		t.Errorf("entry: %v %s, want %s %s", m["command"], got, exe, want)
	}
	if env, _ := m["env"].(map[string]any); env["GITHUB_TOKEN"] != "ghp_keepMeSecret0123456789abcdef" || m["cwd"] != "/srv" {
		t.Errorf("entry lost its env or cwd: %v", m)
	}
	if o := h.run(t, "claude"); o.code != ExitOK || !strings.Contains(o.stdout, "Nothing was changed.") {
		t.Errorf("setup again: %s", o)
	}

	// A flag given to setup wins over the entry's.
	other := filepath.Join(h.home, "other.yaml")
	writeAt(t, other, []byte("servers: {}\n"))
	if o := h.run(t, "claude", "--config", other); o.code != ExitOK {
		t.Fatalf("setup --config: %s", o)
	}
	if got, want := args(entry()), "--config "+other+" --data-dir "+h.data+" --log-level debug"; got != want {
		t.Errorf("after setup --config %s: args %s, want %s", other, got, want)
	}

	// An entry on another data dir than setup's: --move-servers would put
	// the servers where that hub does not look.
	writeAt(t, path, []byte(`{"mcpServers": {
  "hub": {"command": "/usr/local/bin/mcp-hub", "args": ["--data-dir", "/srv/hub-data"]},
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
}}
`))
	before := readFile(t, path)
	o = h.runNoDataDir(t, "claude", "--move-servers")
	if o.code != ExitFail || !strings.Contains(o.stderr, "the hub's entry runs it with --data-dir /srv/hub-data, another store than this setup's") ||
		!strings.Contains(o.stderr, "setup claude --data-dir /srv/hub-data --move-servers") || readFile(t, path) != before {
		t.Errorf("--move-servers over an entry on another data dir: %s\nfile:\n%s", o, readFile(t, path))
	}
}

// runNoDataDir is run with no data dir given: setup's store is the
// default one of the home.
func (h *setupHome) runNoDataDir(t *testing.T, args ...string) outcome {
	t.Helper()
	return h.runEnv(t, []string{"HOME=" + h.home, "USERPROFILE=" + h.home, "APPDATA=" + filepath.Join(h.home, "AppData"), "XDG_DATA_HOME=" + filepath.Join(h.home, "data")}, args...)
}
