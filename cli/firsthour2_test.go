package cli

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The tests of this file are the second round of a new user's first hour
// (issue 29): each runs what a user typed and asserts the message.

// TestSetupUpdatesHubEntry (item 3): a client's file that launches the hub
// already, under another name than setup's (the README's own "hub"), has
// that entry updated, not a second one added beside it (the client would
// start two hubs); --name renames it; a second hub entry is named.
func TestSetupUpdatesHubEntry(t *testing.T) {
	h := newSetupHome(t)
	path := h.path(t, "claude-desktop")
	writeAt(t, path, []byte(`{
  "mcpServers": {
    "hub": {"command": "npx", "args": ["-y", "@mcp-hub/cli", "--config", "/home/me/servers.json"]},
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
  }
}
`))
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	o := h.run(t, "claude")
	if o.code != ExitOK || !strings.Contains(o.stdout, "  \"hub\" launches the hub: "+exe+" --data-dir "+h.data+" --config /home/me/servers.json\n"+
		"  (the entry that launched mcp-hub already, updated: no second hub entry was added)\n"+
		"  kept from the entry it updates: --config /home/me/servers.json\n") {
		t.Fatalf("setup over a hub entry named hub: %s", o)
	}
	hubs := func() []string {
		cc, err := clientconfig.Parse(path, []byte(readFile(t, path)))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, en := range cc.Entries {
			if m, _ := en.Value.(map[string]any); launchesHub(en.Value) || m["command"] == exe {
				names = append(names, en.Name)
			}
		}
		return names
	}
	if got := hubs(); len(got) != 1 || got[0] != "hub" || !strings.Contains(readFile(t, path), `"memory": {"command": "npx"`) {
		t.Errorf("entries that launch the hub: %v; file:\n%s", got, readFile(t, path))
	}
	if o := h.run(t, "claude"); o.code != ExitOK || !strings.Contains(o.stdout, `its entry "hub" launches the hub. Nothing was changed.`) {
		t.Errorf("setup again: %s", o)
	}
	if o := h.run(t, "claude", "--name", "mcp-hub"); o.code != ExitOK || !strings.Contains(o.stdout, "  (it replaces \"hub\", which launched mcp-hub)\n") {
		t.Errorf("setup --name mcp-hub: %s", o)
	}
	if got := hubs(); len(got) != 1 || got[0] != "mcp-hub" {
		t.Errorf("after --name mcp-hub, the entries that launch the hub: %v", got)
	}
	// A second hub entry, written by hand: named, and left to the person.
	b, err := clientconfig.SetServer([]byte(readFile(t, path)), clientconfig.ShapeMCPServers, "old-hub", clientconfig.Server{Command: "/opt/mcp-hub/bin/mcp-hub"})
	if err != nil {
		t.Fatal(err)
	}
	writeAt(t, path, b)
	if o := h.run(t, "claude"); o.code != ExitOK || !strings.Contains(o.stdout, "old-hub: left in the file: it launches mcp-hub too, so Claude Desktop starts two hubs; remove one of them\n") {
		t.Errorf("setup with two hub entries: %s", o)
	}
}

// TestAddWholeCommandLine (item 4): a command line given as one word (the
// whole of it in quotes) is refused with the command line that works;
// nothing is registered.
func TestAddWholeCommandLine(t *testing.T) {
	s := newSetup(t, "")
	o := s.run(t, Add, "add", "memory", "--env", "TOKEN=sk-typed-secret", "--", "npx -y @modelcontextprotocol/server-memory")
	want := `mcp-hub add: the command "npx -y @modelcontextprotocol/server-memory" is a whole command line in one word, and no program has that name: give the program and each of its arguments as words of their own (no quotes around them all):
  mcp-hub add --config ` + s.config + ` memory --env 'TOKEN=***' -- npx -y @modelcontextprotocol/server-memory
Nothing was added.
`
	if o.code != ExitConfig || o.stderr != want {
		t.Errorf("got %s\nwant stderr:\n%s", o, want)
	}
	if regs, err := s.store(t).List(context.Background()); err != nil || len(regs) != 0 {
		t.Errorf("registered %v (%v)", regs, err)
	}
}

// TestAddMissingName (item 5): an add with nothing before "--" says the
// name is missing, and shows the command line with one.
func TestAddMissingName(t *testing.T) {
	s := newSetup(t, "")
	o := s.run(t, Add, "add", "--", "npx", "-y", "@modelcontextprotocol/server-memory")
	want := "mcp-hub add: missing NAME: the upstream's name goes before \"--\", for example:\n  mcp-hub add --config " + s.config + " memory -- npx -y @modelcontextprotocol/server-memory\n"
	if o.code != ExitConfig || o.stderr != want {
		t.Errorf("got %s\nwant stderr:\n%s", o, want)
	}
	for cmd, name := range map[string]string{"uvx mcp-server-fetch": "fetch", "node /srv/weather-mcp/index.js": "index", "/opt/bin/my-tool --stdio": "my-tool", "npx -y @scope/thing@1.2.3": "thing"} {
		if got := guessName(strings.Fields(cmd)); got != name {
			t.Errorf("guessName(%s) = %q, want %q", cmd, got, name)
		}
	}
}

// TestAddSelfLaunch (item 2): add and import refuse a server that launches
// mcp-hub on this hub's own store; one of another store is registered.
func TestAddSelfLaunch(t *testing.T) {
	s := newSetup(t, "")
	o := s.run(t, Add, "add", "again", "--", "/opt/mcp-hub/bin/mcp-hub", "--data-dir", s.data)
	want := "mcp-hub add: again: it launches mcp-hub itself, on this hub's store (" + filepath.Join(s.data, "hub.db") + "): it would run this hub's servers a second time; not added\n"
	if o.code != ExitConfig || o.stderr != want {
		t.Errorf("got %s\nwant stderr:\n%s", o, want)
	}
	if o := s.run(t, Add, "add", "team", "--", "/opt/mcp-hub/bin/mcp-hub", "--data-dir", t.TempDir()); o.code != ExitOK {
		t.Errorf("a hub of another store: %s", o)
	}
	file := testbin.WriteFile(t, "claude.json", `{"mcpServers": {"hub": {"command": "mcp-hub"}, "self": {"command": "mcp-hub", "args": ["--data-dir", "`+s.data+`"]}}}`)
	o = s.run(t, Import, "import", file)
	for _, w := range []string{
		`  skipped         hub   line 1: it launches mcp-hub itself: the hub's own entry in this file, not a server to import`,
		`  skipped         self  line 1: it launches mcp-hub itself, on this hub's store (` + filepath.Join(s.data, "hub.db") + `): it would run this hub's servers a second time`,
	} {
		if !strings.Contains(o.stdout, w) {
			t.Errorf("import lacks %q:\n%s", w, o)
		}
	}
}

// TestDidYouMean (item 9): a mistyped command or flag gets the one meant.
func TestDidYouMean(t *testing.T) {
	tree := Commands{"serve": {Run: Serve}, "setup": {Run: Setup}, "status": {Run: Status}, "doctor": {Run: Doctor}}
	run := func(args ...string) outcome {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), tree, Env{Args: args, Environ: []string{"MCP_HUB_DATA_DIR=" + t.TempDir()},
			Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Program: "./bin/mcp-hub"})
		return outcome{stdout: stdout.String(), stderr: stderr.String(), code: code}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sever"}, "mcp-hub: unknown command \"sever\"; did you mean \"serve\"?\nRun './bin/mcp-hub help' for every command.\n"},
		{[]string{"docter", "--config", "x"}, "mcp-hub: unknown command \"docter\"; did you mean \"doctor\"?\nRun './bin/mcp-hub help' for every command.\n"},
		{[]string{"--htttp", ":1"}, "mcp-hub: unknown flag: --htttp (did you mean --http?)\nUsage: ./bin/mcp-hub [command] [flags]\nRun './bin/mcp-hub --help' for more.\n"},
		{[]string{"serve", "--htttp", ":1"}, "mcp-hub serve: unknown flag: --htttp (did you mean --http?)\nUsage: ./bin/mcp-hub serve [flags]\nRun './bin/mcp-hub serve --help' for more.\n"},
		{[]string{"status", "--data-dri", "x"}, "mcp-hub status: unknown flag: --data-dri (did you mean --data-dir?)\nUsage: ./bin/mcp-hub status [flags]\nRun './bin/mcp-hub status --help' for more.\n"},
		{[]string{"status", "--verbose"}, "mcp-hub status: unknown flag: --verbose\nUsage: ./bin/mcp-hub status [flags]\nRun './bin/mcp-hub status --help' for more.\n"},
	} {
		if o := run(tt.args...); o.code != ExitConfig || o.stderr != tt.want {
			t.Errorf("%q:\ngot  %s\nwant %q", tt.args, o, tt.want)
		}
	}
	if o := run("zzz"); !strings.HasPrefix(o.stderr, "mcp-hub: unknown command \"zzz\"\n\nUsage: ./bin/mcp-hub [command] [flags]") {
		t.Errorf("a command like none: %s", o)
	}
}

// TestProgramName (item 9): hints name the binary as it was run.
func TestProgramName(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcp-hub")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "/nonexistent")
	for argv0, want := range map[string]string{
		"mcp-hub":             "mcp-hub",
		"./bin/mcp-hub":       "./bin/mcp-hub",
		bin:                   bin,
		"npx -y @mcp-hub/cli": "npx -y @mcp-hub/cli",
		filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "mcp-hub"): "go run ./cmd/mcp-hub",
	} {
		if got := ProgramName(argv0); got != want {
			t.Errorf("ProgramName(%q) = %q, want %q", argv0, got, want)
		}
	}
	t.Setenv("PATH", dir)
	if got := ProgramName(bin); got != "mcp-hub" {
		t.Errorf("the binary PATH finds: %q", got)
	}
	s := newSetup(t, "")
	s.environ = nil
	var stdout, stderr bytes.Buffer
	e := &Env{Name: "reject", Args: []string{"--config", s.config, "nope"}, Environ: []string{"MCP_HUB_DATA_DIR=" + s.data},
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Program: "./bin/mcp-hub"}
	s.register(t, "memory", upstream.ApprovalPending)
	e.Args = []string{"--config", s.config, "memory"}
	if code := Reject(context.Background(), e); code != ExitOK || !strings.Contains(stdout.String(), "(remove it with ./bin/mcp-hub remove memory)") {
		t.Errorf("reject: %d %s %s", code, stdout.String(), stderr.String())
	}
}

// TestAddressInUse (item 9): serve on an address something listens on says
// who may be there and how to check.
func TestAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	s := newSetup(t, "")
	o := s.run(t, Serve, "serve", "--http", addr, "--http-no-auth")
	if want := "bind: address already in use: another program listens there; a hub may already serve there: curl http://" + addr + "/healthz answers \"ok\" if one does, and ss -ltnp 'sport = :" + port + "' (lsof -i :" + port + " on macOS) names the program. Stop it, or serve on another port (--http 127.0.0.1:"; o.code != ExitFail || !strings.Contains(o.stderr, want) {
		t.Errorf("want exit %d and %q; got %s", ExitFail, want, o)
	}
}

// TestAddressInUseMakesNoToken: serve --http on a busy port fails before
// it generates a bearer token: a fresh data directory stays empty and no
// token is printed. It wrote and printed a new token, then failed.
func TestAddressInUseMakesNoToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := newSetup(t, "")
	s.data = filepath.Join(s.data, "fresh")
	o := s.run(t, Serve, "serve", "--http", ln.Addr().String())
	if o.code != ExitFail || !strings.Contains(o.stderr, "address already in use") {
		t.Fatalf("want exit %d and address already in use; got %s", ExitFail, o)
	}
	if strings.Contains(o.stderr, "bearer token") {
		t.Errorf("a token was printed for a hub that never served:\n%s", o.stderr)
	}
	if _, err := os.Stat(filepath.Join(s.data, "http-token")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the data directory got a token: %v", err)
	}
}

// TestStatusDeadHub (item 9): while a hub runs, status does not show what a
// hub that has exited reported last as an upstream's state, and an upstream
// the running hub has not reported yet is not "never (no hub has run it)".
func TestStatusDeadHub(t *testing.T) {
	s := newSetup(t, "")
	s.register(t, "alive", upstream.ApprovalApproved)
	s.register(t, "ghost", upstream.ApprovalApproved)
	s.register(t, "newer", upstream.ApprovalApproved)
	st := s.store(t)
	for _, name := range []string{"alive", "ghost"} {
		if err := st.SaveStatus(context.Background(), upstream.Status{Name: name, State: upstream.StateFailed, LastError: "it broke", Since: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// ghost's report is from a hub that has exited since.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", filepath.Join(s.data, "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE upstream_status SET hub_pid = ? WHERE upstream_id = (SELECT id FROM upstreams WHERE name = 'ghost')`, dead.Process.Pid); err != nil {
		t.Fatal(err)
	}
	o := s.run(t, Status, "status")
	if !regexp.MustCompile(`(?m)^alive +FAILED +0 +approved +- +it broke +\d+s ago by hub pid \d+$`).MatchString(o.stdout) ||
		!regexp.MustCompile(`(?m)^ghost +- +- +approved +- +\d+s ago by hub pid \d+ \(no longer running\); not reported by the running hub \(pid \d+\) yet$`).MatchString(o.stdout) ||
		!regexp.MustCompile(`(?m)^newer +- +- +approved +- +not reported by the running hub \(pid \d+\) yet$`).MatchString(o.stdout) {
		t.Errorf("status:\n%s", o)
	}
}

// TestAddressInUseByHub (item 9): serve on the address a hub serves on
// says a hub serves there: this data directory's (it advertised the
// address), or another (it answers as a hub).
func TestAddressInUseByHub(t *testing.T) {
	s := newSetup(t, "")
	c := startServe(t, s, "--http", "127.0.0.1:0", "--stdio")
	var a advert
	waitUntil(t, func() bool {
		var err error
		a, err = readAdvert(filepath.Join(s.data, advertFile))
		return err == nil
	})
	addr := strings.TrimPrefix(a.URL, "http://")
	again := &setup{data: s.data, config: s.config}
	o := again.run(t, Serve, "serve", "--http", addr)
	if want := "bind: address already in use: an mcp-hub serves there already (pid " + fmt.Sprint(os.Getpid()) + ", on this data directory): connect to it (mcp-hub ui opens its console), or stop it first\n"; o.code != ExitFail || !strings.HasSuffix(o.stderr, want) {
		t.Errorf("the same data dir: want exit %d and %q; got %s", ExitFail, want, o)
	}
	other := newSetup(t, "")
	o = other.run(t, Serve, "serve", "--http", addr, "--http-no-auth")
	if want := "bind: address already in use: an mcp-hub serves there already (" + a.URL + "/healthz answers, as a hub's does): connect to it, stop it, or serve on another port (--http 127.0.0.1:"; o.code != ExitFail || !strings.Contains(o.stderr, want) {
		t.Errorf("another data dir: want exit %d and %q; got %s", ExitFail, want, o)
	}
	c.close(t)
}

// TestConfigSlips (items 4, 6): doctor shows a whole command line in
// command with the entry as it should be; a YAML mistake is reported at
// its line and column by every command.
func TestConfigSlips(t *testing.T) {
	s := newSetup(t, "")
	s.config = testbin.WriteFile(t, "servers.json", `{"mcpServers": {"memory": {"command": "npx -y @modelcontextprotocol/server-memory"}}}`)
	o := s.run(t, Doctor, "doctor")
	want := "  hint:  the command \"npx -y @modelcontextprotocol/server-memory\" is a whole command line, and no program has that name: the command is the program alone, its arguments go in args: \"command\": \"npx\", \"args\": [\"-y\",\"@modelcontextprotocol/server-memory\"]. " +
		"\"memory\" is defined in " + s.config + ": edit its command and args there (a running hub applies the edit within seconds).\n"
	if o.code != ExitFail || !strings.Contains(o.stdout, want) {
		t.Errorf("doctor: want %q; got %s", want, o)
	}
	s.config = testbin.WriteFile(t, "hub.yaml", "mcpServers:\n  a:\n    command: x\n    args: [1]\n   env: {}\n")
	o = s.run(t, List, "list")
	want = "mcp-hub: config " + s.config + ": line 5, column 4: invalid YAML: value is not allowed in this context (it is indented 3 spaces, like no line above it: the keys of one map, and the items of one list, line up)\n"
	if o.code != ExitConfig || o.stderr != want {
		t.Errorf("list: want %q; got %s", want, o)
	}
}

// waitUntil waits up to 10 s for cond.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
