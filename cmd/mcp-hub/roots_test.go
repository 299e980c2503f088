package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestFilesystemServerRoots (issue 29 item 7): the reference filesystem
// server asks the hub for roots as soon as it starts, while no client
// session waits on it. The hub answers: with the roots configured for it
// (which the server then works in), else an empty list (it keeps the
// directories of its arguments). Nothing shows the connected, working
// server as failed: no "Failed to request initial roots" on its stderr, no
// refused request in the log, no error in mcp-hub status.
func TestFilesystemServerRoots(t *testing.T) {
	server := npmPackage(t, "@modelcontextprotocol/server-filesystem/dist/index.js")
	argDir, rootDir, data := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{argDir, rootDir} {
		if err := os.WriteFile(filepath.Join(d, "note.txt"), []byte("in "+filepath.Base(d)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf(`
catalog:
  policy: prefix
mcpServers:
  files:
    command: node
    args: [%[1]q, %[2]q]
  rooted:
    command: node
    args: [%[1]q, %[2]q]
    roots: [%[3]q]
`, server, argDir, rootDir))
	c := startRaw(t, nil, hubBin, "--config", cfg, "--data-dir", data, "--log-level", "debug")
	if init := c.initialize(); init.Result == nil {
		t.Fatalf("initialize: %s", init.Error)
	}
	c.call("tools/list", "")
	allowed := func(server string) string {
		t.Helper()
		m := c.call("tools/call", fmt.Sprintf(`{"name":"%s__list_allowed_directories","arguments":{}}`, server))
		if m.Result == nil {
			t.Fatalf("%s list_allowed_directories: %s", server, m.Error)
		}
		return textOf(t, m.Result)
	}
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// The server asks after initialize, answered or not: wait until its
	// answer is in.
	waitFor(t, 30*time.Second, "rooted to work in its configured root", func() bool {
		return strings.Contains(allowed("rooted"), real(rootDir))
	})
	if got := allowed("rooted"); strings.Contains(got, real(argDir)) {
		t.Errorf("rooted still allows its argument directory: %s", got)
	}
	waitFor(t, 30*time.Second, "files to have its answer", func() bool {
		return strings.Contains(c.stderr.String(), `upstream=files line="No valid root directories provided by client"`)
	})
	if got := allowed("files"); !strings.Contains(got, real(argDir)) {
		t.Errorf("files, given no roots, does not keep its argument directory: %s", got)
	}

	log := c.stderr.String()
	for _, bad := range []string{"Failed to request", "upstream request refused", "-32600"} {
		if strings.Contains(log, bad) {
			t.Errorf("the log says %q:\n%s", bad, log)
		}
	}
	if !strings.Contains(log, `msg="upstream roots/list answered by the hub" upstream=rooted roots=1`) {
		t.Errorf("the log does not say the hub answered rooted's roots/list")
	}
	var status string
	waitFor(t, 10*time.Second, "mcp-hub status to show both connected with no error", func() bool {
		status, _ = cliConfig(t, data, cfg, "status")
		return regexp.MustCompile(`(?m)^files +CONNECTED +\d+ +approved +- +\d+s ago by hub pid \d+$`).MatchString(status) &&
			regexp.MustCompile(`(?m)^rooted +CONNECTED +\d+ +approved +- +\d+s ago by hub pid \d+$`).MatchString(status)
	})
	t.Logf("mcp-hub status:\n%s", status)
	if code, _ := c.closeStdin(20 * time.Second); code != 0 {
		t.Errorf("hub exit %d", code)
	}
}
