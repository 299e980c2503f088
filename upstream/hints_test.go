package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHints: the rules doctor, the serving hub and add share name the
// cause a person can act on, most specific first: a package runner given
// no package is not blamed on a slow download.
func TestHints(t *testing.T) {
	dir := t.TempDir()
	npx := filepath.Join(dir, "npx")
	if err := os.WriteFile(npx, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	shellLine := `sh: 1: {jsonrpc:2.0,id:1,method:initialize}: not found`
	for _, tt := range []struct {
		name string
		f    HintFacts
		want []string // prefixes of the hints, in order
	}{
		{"bare npx stalls", HintFacts{Spec: Spec{Name: "m", Command: npx}, Failed: true, LastError: "initialize: no answer within 1s"},
			[]string{"npx was given no package to run, so it starts a shell"}},
		{"npx reading JSON as commands", HintFacts{Spec: Spec{Name: "m", Command: npx, Args: []string{"-y", "--", "x"}}, Failed: true, LastError: "initialize: no answer within 1s", Stderr: []string{"npm warn", shellLine}},
			[]string{`npx was given no package to run, so it started a shell that reads the hub's JSON-RPC messages as commands (stderr: "sh: 1: {jsonrpc:`}},
		{"npx downloading", HintFacts{Spec: Spec{Name: "m", Command: npx, Args: []string{"-y", "@scope/pkg"}}, Failed: true, LastError: "initialize: no answer within 1s", InitTimeout: time.Second},
			[]string{"npx downloads the package on its first run, which can take longer than the initialize timeout (1s)", "it did not answer initialize within 1s"}},
		{"not on PATH", HintFacts{Spec: Spec{Name: "g", Command: "mcp-hub-test-no-such-command"}, Failed: true, LastError: "start: not found"},
			[]string{"mcp-hub-test-no-such-command is not on PATH ("}},
		{"bare uvx", HintFacts{Spec: Spec{Name: "u", Command: filepath.Join(dir, "uvx")}, Failed: true},
			[]string{"the command cannot be run: ", "uvx was given no package to run: put the package after it"}},
		{"connected", HintFacts{Spec: Spec{Name: "ok", Command: npx, Args: []string{"pkg"}}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Hints(tt.f)
			if len(got) != len(tt.want) {
				t.Fatalf("hints %q, want %d starting %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("hint %d: %q, want it to start %q", i, got[i], w)
				}
			}
		})
	}
}

// TestCommandHint: what add can tell before anything runs.
func TestCommandHint(t *testing.T) {
	for _, tt := range []struct {
		spec      Spec
		want      string
		noPackage bool
	}{
		{Spec{Name: "a", Command: "npx"}, "npx was given no package to run", true},
		{Spec{Name: "a", Command: "npx", Args: []string{"-y"}}, "npx was given no package to run", true},
		{Spec{Name: "a", Command: "mcp-hub-test-no-such-command"}, "mcp-hub-test-no-such-command is not on PATH (", false},
		{Spec{Name: "a", Command: "sh", Args: []string{"-c", "true"}}, "", false},
		{Spec{Name: "a", URL: "http://127.0.0.1:1/mcp"}, "", false},
	} {
		if got := CommandHint(tt.spec); !strings.HasPrefix(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("CommandHint(%s %v) = %q, want it to start %q", tt.spec.Command, tt.spec.Args, got, tt.want)
		}
		if got := NoPackage(tt.spec); got != tt.noPackage {
			t.Errorf("NoPackage(%s %v) = %v", tt.spec.Command, tt.spec.Args, got)
		}
	}
}

// TestValidNameInWords (issue 29 item 9): an invalid name is explained in
// words, never with the pattern.
func TestValidNameInWords(t *testing.T) {
	rule := "a name is made of letters, digits, '-' and '_' (at most 32, the first a letter or a digit)"
	for _, tt := range []struct{ name, want string }{
		{"bad name", `invalid name "bad name": it has a space; ` + rule},
		{"", `invalid name "": it is empty; ` + rule},
		{"-x", `invalid name "-x": it starts with '-'; ` + rule},
		{"a.b/c", `invalid name "a.b/c": it has '.', '/'; ` + rule},
		{"notes-über", `invalid name "notes-über": it has 'ü'; ` + rule},
		{strings.Repeat("a", 33), `invalid name "` + strings.Repeat("a", 33) + `": it has 33 characters; ` + rule},
		{"hub_tools", `invalid name "hub_tools": "hub" and names starting "hub_" are reserved for the hub (its own tools are hub_*)`},
	} {
		if err := ValidName(tt.name); err == nil || err.Error() != tt.want {
			t.Errorf("ValidName(%q) = %v\nwant %s", tt.name, err, tt.want)
		}
	}
	if err := ValidName("my-notes_2"); err != nil {
		t.Errorf("a valid name: %v", err)
	}
}

// TestWholeCommandLine (issue 29 item 4): a command that holds its
// arguments too is named so, with the entry as it should be written;
// a program whose path has a space is no such command.
func TestWholeCommandLine(t *testing.T) {
	spec := Spec{Name: "memory", Command: "npx -y @modelcontextprotocol/server-memory"}
	want := `the command "npx -y @modelcontextprotocol/server-memory" is a whole command line, and no program has that name: the command is the program alone, its arguments go in args: "command": "npx", "args": ["-y","@modelcontextprotocol/server-memory"]`
	if h := CommandHint(spec); h != want {
		t.Errorf("CommandHint:\ngot  %s\nwant %s", h, want)
	}
	if h := Hints(HintFacts{Spec: spec, LastError: "start: no such file", Failed: true}); len(h) == 0 || h[0] != want {
		t.Errorf("Hints: %q", h)
	}
	secret := Spec{Name: "x", Command: "server --api-key sk-planted-secret-value", Args: []string{"--port", "1"}}
	if h := CommandHint(secret); strings.Contains(h, "sk-planted") || !strings.Contains(h, `"args": ["--api-key","***","--port","1"]`) {
		t.Errorf("a secret argument: %s", h)
	}
	dir := filepath.Join(t.TempDir(), "My Server")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "run server")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := SplitCommand(Spec{Name: "x", Command: prog}); ok {
		t.Errorf("a program with spaces in its path is split")
	}
}

// TestHintsSayWhere: a hint that says what to change says where the
// server is defined: edit the config file that defines it, or change the
// store's registration (the running hub's hub_update_server or REST API
// and an approval, or mcp-hub remove and add on that store). Without a
// Home the hints say what only, as before.
func TestHintsSayWhere(t *testing.T) {
	file := Home{Source: SourceConfig, ConfigFile: "/etc/hub.yaml"}
	cmd := func(sub string) string { return "mcp-hub " + sub + " --data-dir /d" }
	store := Home{Source: SourceAdmin, ConfigFile: "/etc/hub.yaml", Command: cmd}
	noFile := Home{Source: SourceCLI, Command: cmd}
	web := Spec{Name: "w", URL: "http://127.0.0.1:1/sse", Headers: map[string]string{"Authorization": "Bearer ${T}"}}
	for _, tt := range []struct {
		name string
		f    HintFacts
		want string // the end of the last hint
	}{
		{"401, file", HintFacts{Spec: web, Failed: true, LastError: "HTTP 401 Unauthorized", Home: file},
			`(is the token right, and set?). "w" is defined in /etc/hub.yaml: edit its headers there (a running hub applies the edit within seconds).`},
		{"401, store", HintFacts{Spec: web, Failed: true, LastError: "HTTP 401 Unauthorized", Home: store},
			`(is the token right, and set?). "w" is registered in the store: change its headers with hub_update_server or PUT /api/servers/w {"headers": {"Authorization": "Bearer ${TOKEN}"}} and approve the change (mcp-hub approve --data-dir /d w), or register it anew: mcp-hub remove --data-dir /d w, then mcp-hub add --data-dir /d w --url http://127.0.0.1:1/sse --header 'Authorization=Bearer ${TOKEN}'.`},
		{"unreachable, store", HintFacts{Spec: web, Failed: true, LastError: "upstream unreachable: connection refused", Home: store},
			`is the server running, and the URL right? "w" is registered in the store: change its url with hub_update_server or PUT /api/servers/w {"url": "NEW-URL"} and approve the change (mcp-hub approve --data-dir /d w), or register it anew: mcp-hub remove --data-dir /d w, then mcp-hub add --data-dir /d w --url NEW-URL --transport sse (and its --header flags).`},
		{"unset header variable, file", HintFacts{Spec: web, Failed: true, LastError: "header Authorization: environment variable T is not set", Home: file},
			`or write the value into the server's headers. "w" is defined in /etc/hub.yaml: edit its headers there (a running hub applies the edit within seconds).`},
		{"slow, file", HintFacts{Spec: Spec{Name: "s", Command: "/bin/cat"}, Failed: true, LastError: "initialize: no answer within 1s", InitTimeout: time.Second, Home: file},
			`raise initTimeout of "s" in /etc/hub.yaml (or timeouts.initialize, every server's)`},
		{"slow, store without a config file", HintFacts{Spec: Spec{Name: "s", Command: "/bin/cat"}, Failed: true, LastError: "initialize: no answer within 1s", InitTimeout: time.Second, Home: noFile},
			`raise timeouts.initialize in a config file (--config FILE), or set $MCP_HUB_TIMEOUTS__INITIALIZE where the hub starts (a server registered in the store has no initTimeout of its own)`},
		{"slow, unknown", HintFacts{Spec: Spec{Name: "s", Command: "/bin/cat"}, Failed: true, LastError: "initialize: no answer within 1s", InitTimeout: time.Second},
			`raise initTimeout (per server) or timeouts.initialize`},
		{"not on PATH, unknown", HintFacts{Spec: Spec{Name: "g", Command: "mcp-hub-test-no-such-command"}, Failed: true, LastError: "start: not found"},
			`give its absolute path as the command; a hub started by a client inherits the client's PATH`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Hints(tt.f)
			if len(got) == 0 || !strings.HasSuffix(got[len(got)-1], tt.want) {
				t.Errorf("hints %q\nwant the last to end %q", got, tt.want)
			}
		})
	}
	// A refused redirect's error says what to do, and where: no hint
	// sends the person to run the server by hand.
	if got := Hints(HintFacts{Spec: web, Failed: true, LastError: "initialize: " + ErrRedirected.Error() + ": …", Home: file}); len(got) != 0 {
		t.Errorf("hints of a refused redirect: %q", got)
	}
}
