package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/persist"
)

// storedNames lists the registrations in the hub's store of h.
func (h *setupHome) storedNames(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(h.data, persist.FileName)); err != nil {
		return nil
	}
	st, err := persist.Open(context.Background(), h.data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	regs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range regs {
		out = append(out, r.Spec.Name)
	}
	return out
}

const twoServers = `{
  "mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
  }
}
`

// Issue 26: a client file that is a symbolic link (into a dotfiles
// repository, say) is changed through the link, which stays a link; --undo
// restores the file it points to, and the link stays too. On the old code
// the link was replaced by a regular file, and --undo did not restore it.
func TestSetupWritesThroughASymlink(t *testing.T) {
	h := newSetupHome(t)
	path := h.path(t, "claude-desktop")
	real := filepath.Join(t.TempDir(), "dotfiles", "claude.json")
	writeAt(t, real, []byte(twoServers))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	isLink := func() bool {
		fi, err := os.Lstat(path)
		return err == nil && fi.Mode()&os.ModeSymlink != 0
	}
	o := h.run(t, "claude", "--move-servers")
	if o.code != ExitOK {
		t.Fatalf("setup --move-servers: %s", o)
	}
	if !isLink() {
		t.Fatal("the client's file is no longer a link")
	}
	cc, err := clientconfig.Parse(real, []byte(readFile(t, real)))
	if err != nil || len(cc.Entries) != 1 || cc.Entries[0].Name != "mcp-hub" {
		t.Fatalf("the linked file after --move-servers: %v\n%s", err, readFile(t, real))
	}
	o = h.run(t, "claude", "--undo")
	if o.code != ExitOK || !isLink() || readFile(t, real) != twoServers {
		t.Fatalf("undo: %s; link %v; the linked file:\n%s", o, isLink(), readFile(t, real))
	}
}

// Issue 26: setup checks it can write the client's file before it imports
// anything: a read-only file is refused with nothing imported, so no
// server ends up both in the hub and in the file. (The check honours the
// file's mode even for root, who may write anything: these tests run as
// root in CI.) On the old code the servers were imported, then the write
// failed (or, as root, the read-only file was replaced).
func TestSetupChecksItCanWriteBeforeImporting(t *testing.T) {
	h := newSetupHome(t)
	path := h.path(t, "claude-desktop")
	writeAt(t, path, []byte(twoServers))
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	o := h.run(t, "claude", "--move-servers")
	if o.code != ExitFail || !strings.Contains(o.stderr, "read-only") || !strings.Contains(o.stderr, "Nothing was imported or changed") {
		t.Errorf("setup --move-servers on a read-only file: %s", o)
	}
	if names := h.storedNames(t); len(names) != 0 {
		t.Errorf("the hub imported %v from a file setup could not change", names)
	}
	if readFile(t, path) != twoServers || len(backups(t, path)) != 0 {
		t.Errorf("the read-only file changed:\n%s", readFile(t, path))
	}
	// Without --move-servers: refused too, not replaced.
	if o := h.run(t, "claude"); o.code != ExitFail || readFile(t, path) != twoServers {
		t.Errorf("setup on a read-only file: %s", o)
	}
}

// Issue 26: a server defined twice in mcpServers is skipped, both
// definitions, with the reason, and both stay in the file, as the README
// says. On the old code the last definition was imported and both were
// removed from the file.
func TestSetupSkipsAServerDefinedTwice(t *testing.T) {
	h := newSetupHome(t)
	path := h.path(t, "claude-desktop")
	const twice = `{
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
    "memory": {"command": "npx", "args": ["-y", "evil-memory"]}
  }
}
`
	writeAt(t, path, []byte(twice))
	o := h.run(t, "claude", "--move-servers")
	if o.code != ExitOK || !strings.Contains(o.stdout, "defined 2 times in the file (lines 3, 5)") {
		t.Fatalf("setup --move-servers: %s", o)
	}
	if names := h.storedNames(t); len(names) != 1 || names[0] != "github" {
		t.Errorf("the hub holds %v, want github alone", names)
	}
	got := readFile(t, path)
	if !strings.Contains(got, "server-memory") || !strings.Contains(got, "evil-memory") || strings.Contains(got, "server-github") {
		t.Errorf("the file after --move-servers: want both memory definitions kept, github moved:\n%s", got)
	}
}
