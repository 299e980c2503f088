package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The tests of this file are the first hour of a new user (issue 21): each
// runs the exact wrong input a user typed and asserts the message.

// firstHourTree is the command tree of mcp-hub, as main builds it.
func firstHourTree() Commands {
	return Commands{
		"serve": {Summary: "serve MCP over stdio (the default)", Run: Serve},
		"list":  {Summary: "list the upstreams", Run: List},
		"add":   {Summary: "register an upstream", Run: Add},
	}
}

// runLine runs a command line through the tree in-process, with the data
// dir dataDir and no config file but the default one.
func runLine(t *testing.T, dataDir string, args ...string) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), firstHourTree(), Env{Args: args, Environ: []string{"MCP_HUB_DATA_DIR=" + dataDir},
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	return outcome{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// TestAddForgotDash (item 1): a command line without "--" before the
// upstream's command is a usage error that shows the right form, whether
// or not its flags happen to be mcp-hub's; a package runner given no
// package is refused; nothing is registered.
func TestAddForgotDash(t *testing.T) {
	s := newSetup(t, "")
	for _, tt := range []struct {
		args []string
		want []string // lines of stderr, in order
		not  string   // never in stderr
	}{
		{[]string{"mem4", "npx", "-y", "@modelcontextprotocol/server-memory"}, []string{
			`mcp-hub add: unknown shorthand flag: 'y' in -y`,
			`Did you forget "--" before the command? Run:`,
			`  mcp-hub add --config ` + s.config + ` mem4 -- npx -y @modelcontextprotocol/server-memory`,
		}, "no package"}, // the package is there: no more to say
		{[]string{"mem4", "npx", "--foo"}, []string{
			`mcp-hub add: unknown flag: --foo`,
			`Did you forget "--" before the command? Run:`,
			`  mcp-hub add --config ` + s.config + ` mem4 -- npx --foo`,
		}, ""},
		{[]string{"mem3", "npx"}, []string{
			`mcp-hub add: unexpected argument "npx"`,
			`Did you forget "--" before the command? Run:`,
			`  mcp-hub add --config ` + s.config + ` mem3 -- npx`,
			`and npx was given no package to run, so it starts a shell that reads the hub's JSON-RPC messages as commands and never answers: put the package after it, e.g. npx -y @modelcontextprotocol/server-memory`,
		}, ""},
		{[]string{"mem5", "--env", "TOKEN=sk-typed-secret-value", "npx", "-y", "pkg", "--api-key", "sk-arg-secret"}, []string{
			`mcp-hub add: unknown shorthand flag: 'y' in -y`,
			`Did you forget "--" before the command? Run:`,
			`  mcp-hub add --config ` + s.config + ` mem5 --env 'TOKEN=***' -- npx -y pkg --api-key '***'`,
		}, "sk-"},
		{[]string{"mem3", "--", "npx"}, []string{
			`mcp-hub add: npx was given no package to run, so it starts a shell that reads the hub's JSON-RPC messages as commands and never answers: put the package after it, e.g. npx -y @modelcontextprotocol/server-memory`,
		}, ""},
		{[]string{"mem3", "--", "npx", "-y"}, []string{`mcp-hub add: npx was given no package to run`}, ""},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o := s.run(t, Add, "add", tt.args...)
			if o.code != ExitConfig || o.stdout != "" {
				t.Errorf("want exit %d and nothing on stdout; got %s", ExitConfig, o)
			}
			lines := strings.Split(o.stderr, "\n")
			for i, w := range tt.want {
				if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
					t.Errorf("stderr line %d: want %q; got %s", i+1, w, o)
				}
			}
			if tt.not != "" && strings.Contains(o.stderr, tt.not) {
				t.Errorf("stderr shows %q:\n%s", tt.not, o.stderr)
			}
		})
	}
	regs, err := s.store(t).List(context.Background())
	if err != nil || len(regs) != 0 {
		t.Errorf("registered %+v (%v); want nothing", regs, err)
	}
	// Other commands name a bad flag too (they said nothing).
	if o := s.run(t, List, "list", "--nope"); o.code != ExitConfig || !strings.HasPrefix(o.stderr, "mcp-hub list: unknown flag: --nope\nUsage: mcp-hub list [flags]\n") {
		t.Errorf("list --nope: %s", o)
	}
}

// TestConfigInEffect (item 2): list, status, doctor, add and remove show
// the servers of the config file in effect and say which file it is; a
// server a hub stored from a config file no longer in effect is stale,
// never shown as live; remove forgets it, and add and remove point the
// same way.
func TestConfigInEffect(t *testing.T) {
	s := newSetup(t, fixtureConfig("memory", []string{"-only", "echo"}, ""))

	// Before any hub ran: the file's server is listed, the file named.
	o := s.run(t, List, "list")
	if o.code != ExitOK || !strings.HasPrefix(o.stdout, "Config file: "+s.config+"\n") ||
		!regexp.MustCompile(`(?m)^memory +stdio +config +approved +true +shared +- +run: `).MatchString(o.stdout) {
		t.Errorf("list with the config file: %s", o)
	}
	for _, tt := range []struct {
		f    func(context.Context, *Env) int
		args []string
	}{{Add, []string{"add", "memory", "--", "other"}}, {Remove, []string{"remove", "memory"}}} {
		want := `mcp-hub ` + tt.args[0] + `: "memory" is defined in ` + s.config + ` (the config file in effect); edit it there`
		if o := s.run(t, tt.f, tt.args[0], tt.args[1:]...); o.code != ExitFail || !strings.HasPrefix(o.stderr, want) {
			t.Errorf("%s of a server of the file: want %q; got %s", tt.args[0], want, o)
		}
	}

	// A hub runs with the file (and stores its server), then the file is
	// no longer in effect: the commands run without --config, and no
	// default file exists.
	if o := s.run(t, Serve, ""); o.code != ExitOK {
		t.Fatalf("serve: %s", o)
	}
	if r, err := s.get(t, "memory"); err != nil || r.Source != upstream.SourceConfig {
		t.Fatalf("the hub did not store the file's server: %+v, %v", r, err)
	}
	none := &setup{data: s.data}
	def := config.DefaultFile()
	stale := `stale: no config file is in effect (` + def + ` does not exist); a hub started with another config file registered it. A hub started with this config forgets it; mcp-hub remove memory forgets it now`
	o = none.run(t, List, "list")
	if o.code != ExitOK || !strings.HasPrefix(o.stdout, "Config file: none ("+def+" does not exist)\n") ||
		!regexp.MustCompile(`(?m)^memory +stdio +config +stale +- +- +- +nothing: `+regexp.QuoteMeta(stale)+`$`).MatchString(o.stdout) {
		t.Errorf("list without the config file: %s", o)
	}
	o = none.run(t, Status, "status")
	if o.code != ExitOK || !regexp.MustCompile(`(?m)^memory +STALE +- +- +- +not defined by the config file in effect \(mcp-hub list says more\) +-$`).MatchString(o.stdout) {
		t.Errorf("status without the config file: %s", o)
	}
	o = none.run(t, Doctor, "doctor")
	if o.code != ExitOK || !strings.HasPrefix(o.stdout, "Checked 1 upstream(s) from no config file ("+def+" does not exist) and ") ||
		!regexp.MustCompile(`(?m)^memory +config +stale +`).MatchString(o.stdout) || !strings.Contains(o.stdout, "  note:  not run: "+stale+"\n") {
		t.Errorf("doctor without the config file: %s", o)
	}
	if o := none.run(t, Add, "add", "memory", "--", "other"); o.code != ExitFail ||
		o.stderr != `mcp-hub add: an upstream named "memory" is registered: `+stale+"\n" {
		t.Errorf("add of a stale name: %s", o)
	}
	if o := none.run(t, Remove, "remove", "memory"); o.code != ExitOK ||
		o.stdout != "Removed \"memory\" (stale: a hub started with another config file registered it).\n" {
		t.Errorf("remove of a stale registration: %s", o)
	}
	if _, err := s.get(t, "memory"); !errors.Is(err, upstream.ErrNotFound) {
		t.Errorf("after remove: %v, want not found", err)
	}
}

// TestMisplacedConfigFile (item 3): the default config file is
// <user config dir>/mcp-hub/hub.yaml; a hub.yaml in the user config dir
// itself is not read, and list says so, and where it belongs.
func TestMisplacedConfigFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	def := config.DefaultFile()
	if filepath.Base(filepath.Dir(def)) != "mcp-hub" || filepath.Base(def) != "hub.yaml" {
		t.Fatalf("default config file %s, want <user config dir>/mcp-hub/hub.yaml", def)
	}
	wrong := filepath.Join(filepath.Dir(filepath.Dir(def)), "hub.yaml")
	yaml := fixtureConfig("notes", []string{"-only", "echo"}, "")
	if err := os.MkdirAll(filepath.Dir(wrong), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrong, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &setup{data: t.TempDir()}
	o := s.run(t, List, "list")
	want := "No upstreams: no config file is in effect (" + def + " does not exist; " + wrong + " is not read: move it to " + def + ") and none are registered in "
	if o.code != ExitOK || !strings.HasPrefix(o.stdout, want) {
		t.Errorf("list with hub.yaml in the wrong place: want %q; got %s", want, o)
	}
	if err := os.MkdirAll(filepath.Dir(def), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(wrong, def); err != nil {
		t.Fatal(err)
	}
	if o := s.run(t, List, "list"); o.code != ExitOK || !strings.HasPrefix(o.stdout, "Config file: "+def+"\n") || !regexp.MustCompile(`(?m)^notes +stdio +config +approved `).MatchString(o.stdout) {
		t.Errorf("list with hub.yaml in its place: %s", o)
	}
}

// TestJSONConfigSyntaxError (item 5): a malformed JSON config file is
// reported with the line and column where it goes wrong.
func TestJSONConfigSyntaxError(t *testing.T) {
	s := newSetup(t, "")
	s.config = testbin.WriteFile(t, "servers.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"} \"b\": {}\n  }\n}\n")
	o := s.run(t, List, "list")
	want := "mcp-hub: config " + s.config + ": line 3, column 27: invalid JSON: invalid character '\"' after object key:value pair\n"
	if o.code != ExitConfig || o.stderr != want {
		t.Errorf("want exit %d and %q; got %s", ExitConfig, want, o)
	}
}

// TestDoctorBareNpx (item 6): npx with no package starts a shell that
// reads the hub's messages as commands; doctor says so, not that npx is
// downloading.
func TestDoctorBareNpx(t *testing.T) {
	npx := filepath.Join(t.TempDir(), "npx")
	if err := os.WriteFile(npx, []byte("#!/bin/sh\nexec sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newSetup(t, "timeouts:\n  shutdownGrace: 200ms\nmcpServers:\n  mem:\n    command: "+jsonString(npx)+"\n    initTimeout: 1s\n")
	o := s.run(t, Doctor, "doctor")
	if o.code != ExitFail || !strings.Contains(o.stdout, "  hint:  npx was given no package to run, so it started a shell that reads the hub's JSON-RPC messages as commands (stderr: \"sh: ") ||
		!strings.Contains(o.stdout, "put the package after it, e.g. npx -y @modelcontextprotocol/server-memory. \"mem\" is defined in "+s.config+": edit its args there") {
		t.Errorf("doctor of a bare npx: %s", o)
	}
	if strings.Contains(o.stdout, "downloads the package") || strings.Contains(o.stdout, "did not answer initialize") {
		t.Errorf("doctor blames a download or a slow start:\n%s", o.stdout)
	}
}

// TestServeFailureHints (item 7): while serving, a server whose command
// is missing is logged with doctor's hint, and a call to it answers that
// it failed to start, why, and to see mcp-hub doctor.
func TestServeFailureHints(t *testing.T) {
	s := newSetup(t, fixtureConfig("alpha", []string{"-only", "echo"}, "  ghost:\n    command: mcp-hub-test-no-such-ghost\n"))
	c := startServe(t, s)
	c.call(t, "2", "tools/list", `{}`)
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(c.call(t, "3", "tools/call", `{"name":"hub_call_tool","arguments":{"server":"ghost","tool":"x","arguments":{}}}`).Result, &res); err != nil {
		t.Fatal(err)
	}
	wantFail := `MCP server "ghost" failed to start: start mcp-hub-test-no-such-ghost: exec: "mcp-hub-test-no-such-ghost": executable file not found in $PATH; hint: mcp-hub-test-no-such-ghost is not on PATH (`
	if len(res.Content) != 1 || !res.IsError || !strings.HasPrefix(res.Content[0].Text, "hub_call_tool: "+wantFail) || !strings.HasSuffix(res.Content[0].Text, "(see mcp-hub doctor)") {
		t.Errorf("hub_call_tool of ghost: %+v", res)
	}
	if e := c.call(t, "4", "tools/call", `{"name":"x","arguments":{}}`).Error; !strings.Contains(string(e), `unknown tool: \"x\"; it may belong to a server that failed: `+strings.ReplaceAll(wantFail, `"`, `\"`)) {
		t.Errorf("tools/call of an unknown tool: %s", e)
	}
	o := c.close(t)
	if !strings.Contains(o.stderr, `msg="upstream connect failed" upstream=ghost attempt=1 err="start mcp-hub-test-no-such-ghost: exec: \"mcp-hub-test-no-such-ghost\": executable file not found in $PATH" retry_in=`) ||
		!strings.Contains(o.stderr, ` hint="mcp-hub-test-no-such-ghost is not on PATH (`) {
		t.Errorf("the log of the failure has no hint:\n%s", o.stderr)
	}
}

// TestAddNotOnPath (item 8): add registers a command that is not on PATH
// (it may be on the client's), and warns.
func TestAddNotOnPath(t *testing.T) {
	s := newSetup(t, "")
	o := s.run(t, Add, "add", "ghost2", "--", "mcp-hub-test-no-such-ghost2")
	if o.code != ExitOK || !strings.HasPrefix(o.stderr, "mcp-hub add: warning: mcp-hub-test-no-such-ghost2 is not on PATH (") ||
		!strings.HasSuffix(o.stderr, "): install it, or give its absolute path as the command; a hub started by a client inherits the client's PATH\n") {
		t.Errorf("add of a command not on PATH: %s", o)
	}
	if _, err := s.get(t, "ghost2"); err != nil {
		t.Errorf("not registered: %v", err)
	}
	if o := s.run(t, Add, "add", "here", "--", fixtureBin); o.code != ExitOK || o.stderr != "" {
		t.Errorf("add of a command that exists warns: %s", o)
	}
}

// TestDoctorShadowedResource (item 9): doctor names a shadowed resource
// a resource, identified by its URI.
func TestDoctorShadowedResource(t *testing.T) {
	s := newSetup(t, fixtureConfig("alpha", []string{"-only", "echo", "-conformance"},
		"  beta:\n    command: "+jsonString(fixtureBin)+"\n    args: [\"-only\", \"echo\", \"-conformance\"]\n"))
	o := s.run(t, Doctor, "doctor")
	for _, w := range []string{
		`  note:  resource "test://static-text" is not exposed: alpha offers a resource of this URI too and sorts first`,
		`  note:  resource template "test://template/{id}/data" is not exposed: alpha offers a resource template of this URI template too and sorts first`,
		`  note:  resource "test://static-text" shadows beta's resource of the same URI`,
	} {
		if !strings.Contains(o.stdout, w+"\n") {
			t.Errorf("doctor lacks %q:\n%s", w, o.stdout)
		}
	}
	if regexp.MustCompile(`(?m)^  note:  resource.*a tool`).MatchString(o.stdout) {
		t.Errorf("doctor calls a resource a tool:\n%s", o.stdout)
	}
}

// TestServersKeySpelling (item 10): a mistake under a servers: key is
// reported under servers, as the file spells it.
func TestServersKeySpelling(t *testing.T) {
	s := newSetup(t, "servers:\n  foo:\n    comand: x\n")
	o := s.run(t, List, "list")
	want := "mcp-hub: config " + s.config + `: servers.foo.comand: unknown key (did you mean "servers.foo.command"?)` + "\n"
	if o.code != ExitConfig || o.stderr != want {
		t.Errorf("want %q; got %s", want, o)
	}
}

// TestHelpOnStdout (item 11): --help, help and help CMD write to stdout
// and exit 0 (mcp-hub --help | less shows it); help of an unknown command
// is a usage error on stderr.
func TestHelpOnStdout(t *testing.T) {
	data := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string // stdout's start
	}{
		{[]string{"--help"}, "Usage: mcp-hub [command] [flags]\n"},
		{[]string{"-h"}, "Usage: mcp-hub [command] [flags]\n"},
		{[]string{"help"}, "Usage: mcp-hub [command] [flags]\n"},
		{[]string{"help", "list"}, "Usage: mcp-hub list [flags]\n"},
		{[]string{"list", "--help"}, "Usage: mcp-hub list [flags]\n"},
		{[]string{"help", "add"}, "Usage: mcp-hub add NAME [flags] -- COMMAND [ARGS...]\n"},
		{[]string{"serve", "--help"}, "Usage: mcp-hub serve [flags]\n"},
	} {
		o := runLine(t, data, tt.args...)
		if o.code != ExitOK || !strings.HasPrefix(o.stdout, tt.want) || o.stderr != "" {
			t.Errorf("mcp-hub %s: want exit 0 and stdout starting %q, nothing on stderr; got %s", strings.Join(tt.args, " "), tt.want, o)
		}
	}
	if o := runLine(t, data, "help"); !strings.Contains(o.stdout, "\n  help     show this help, or a command's: help COMMAND\n") {
		t.Errorf("help does not list itself: %s", o)
	}
	for _, args := range [][]string{{"help", "nope"}, {"nope"}} {
		if o := runLine(t, data, args...); o.code != ExitConfig || o.stdout != "" || !strings.HasPrefix(o.stderr, "mcp-hub: unknown command \"nope\"\n") {
			t.Errorf("mcp-hub %s: %s", strings.Join(args, " "), o)
		}
	}
}

// serveSession is serve running in-process on pipes.
type serveSession struct {
	in    io.WriteCloser
	lines chan []byte
	done  chan outcome
}

// rpcAnswer is a JSON-RPC answer.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// startServe runs serve with the setup in-process and initializes it.
func startServe(t *testing.T, s *setup, args ...string) *serveSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.stdin, s.stdout = inR, outW
	c := &serveSession{in: inW, lines: make(chan []byte), done: make(chan outcome, 1)}
	go func() {
		o := s.run(t, Serve, "", args...)
		outW.Close()
		c.done <- o
	}()
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- slices.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() { inW.Close() })
	c.call(t, "1", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// call sends a request and returns its answer.
func (c *serveSession) call(t *testing.T, id, method, params string) rpcAnswer {
	t.Helper()
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+"}\n"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("stdout closed before the answer to %s", method)
			}
			var a rpcAnswer
			if err := json.Unmarshal(line, &a); err != nil {
				t.Fatalf("stdout line is not JSON-RPC: %q", line)
			}
			if string(a.ID) == id {
				return a
			}
		case <-timeout:
			t.Fatalf("no answer to %s", method)
		}
	}
}

// close closes stdin and returns what serve did.
func (c *serveSession) close(t *testing.T) outcome {
	t.Helper()
	c.in.Close()
	select {
	case o := <-c.done:
		return o
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after stdin closed")
	}
	return outcome{}
}

// TestUsageMistakes: mistakes around the command name and "--" are named,
// not guessed at.
func TestUsageMistakes(t *testing.T) {
	data := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string // stderr's start
	}{
		{[]string{"--log-level", "debug", "list"}, "mcp-hub: the command goes before its flags: mcp-hub list [flags]\nUsage: mcp-hub [command] [flags]\n"},
		{[]string{"--log-level", "debug", "frobnicate"}, "mcp-hub: unknown command \"frobnicate\"\n"},
		{[]string{"add", "--bogus", "mem", "npx", "-y"}, "mcp-hub add: unknown flag: --bogus\nUsage: mcp-hub add NAME [flags] -- COMMAND [ARGS...]\n"},
		{[]string{"add", "--", "mem", "npx"}, "mcp-hub add: the upstream's name goes before \"--\" and its command after it (no program is named \"mem\"):\n  mcp-hub add mem -- npx\n"},
		{[]string{"list", "extra"}, "mcp-hub list: unexpected argument \"extra\"\nUsage: mcp-hub list [flags]\nRun 'mcp-hub list --help' for more.\n"},
		{[]string{"add"}, "mcp-hub add: missing NAME\n"},
		{[]string{"help", "add", "list"}, "mcp-hub help: unexpected argument \"list\"\n"},
	} {
		o := runLine(t, data, tt.args...)
		if o.code != ExitConfig || o.stdout != "" || !strings.HasPrefix(o.stderr, tt.want) {
			t.Errorf("mcp-hub %s: want exit 2 and stderr starting %q; got %s", strings.Join(tt.args, " "), tt.want, o)
		}
	}
}
