package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestServe runs the default command in-process as a stdio MCP server in
// front of the fixture (from the config file) and a registration of the
// store, lists the tools through it, and closes stdin: the command returns
// 0, having logged to its stderr only.
func TestServe(t *testing.T) {
	s := newSetup(t, fixtureConfig("alpha", []string{"-only", "echo"}, ""))
	s.register(t, "beta", upstream.ApprovalApproved, "-only", "add")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.stdin, s.stdout = inR, outW
	stderr := createFile(t, t.TempDir(), "stderr")
	s.stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stderr of serve:\n%s", readFile(t, stderr.Name()))
		}
	})

	// The default command runs with no name, as Run starts it.
	done := make(chan outcome, 1)
	go func() {
		o := s.run(t, Serve, "", "--log-level", "debug")
		outW.Close()
		done <- o
	}()
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- slices.Clone(sc.Bytes())
		}
	}()
	call := func(id, method, params string) json.RawMessage {
		t.Helper()
		if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+"}\n"); err != nil {
			t.Fatal(err)
		}
		timeout := time.After(30 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed before the answer to %s", method)
				}
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("stdout line is not JSON-RPC: %q", line)
				}
				if string(m.ID) == id {
					if m.Error != nil {
						t.Fatalf("%s: %s", method, m.Error)
					}
					return m.Result
				}
			case <-timeout:
				t.Fatalf("no answer to %s", method)
			}
		}
	}
	call("1", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(call("2", "tools/list", `{}`), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		if !strings.HasPrefix(tl.Name, "hub_") {
			names = append(names, tl.Name)
		}
	}
	if want := []string{"add", "echo"}; !slices.Equal(names, want) {
		t.Errorf("tools: %v, want %v", names, want)
	}
	inW.Close()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after stdin closed")
	}
	if o.code != ExitOK {
		t.Fatalf("serve: %s", o)
	}
	for _, want := range []string{"mcp-hub serving on stdio", "client closed stdin; shutting down", "level=DEBUG"} {
		if !strings.Contains(o.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, o.stderr)
		}
	}
	if strings.Contains(o.stderr, "sk-planted-secret-value") {
		t.Errorf("stderr shows beta's env value:\n%s", o.stderr)
	}
}

// TestServeFlags runs serve's flag handling in-process: --version prints
// the build main gives, and what is not a flag is refused.
func TestServeFlags(t *testing.T) {
	s := newSetup(t, "")
	var stdout, stderr bytes.Buffer
	e := &Env{Args: []string{"--version"}, Stdout: &stdout, Stderr: &stderr, Build: Build{Version: "v9.8.7", Commit: "c0ffee"}}
	if code := Serve(context.Background(), e); code != ExitOK {
		t.Fatalf("--version: exit %d, stderr %s", code, stderr.String())
	}
	for _, re := range []string{`^mcp-hub v9\.8\.7\n`, `(?m)^commit: c0ffee$`, `(?m)^MCP protocol versions served to clients: 2025-11-25, `} {
		if !regexp.MustCompile(re).MatchString(stdout.String()) {
			t.Errorf("--version lacks %s:\n%s", re, stdout.String())
		}
	}
	if o := s.run(t, Serve, "serve", "extra"); o.code != ExitConfig || o.stderr != "mcp-hub serve: unexpected argument \"extra\"\nUsage: mcp-hub serve [flags]\nRun 'mcp-hub serve --help' for more.\n" {
		t.Errorf("serve extra: %s", o)
	}
	if o := s.run(t, Serve, "", "--http", "192.0.2.1:7411"); o.code != ExitConfig || !strings.Contains(o.stderr, `http.listen "192.0.2.1:7411" is not a loopback address`) {
		t.Errorf("serve --http on a remote address: %s", o)
	}
}

// TestApproveCommand: the approve command the serving hub shows names the
// program as it was run and the store it serves, a store's password
// masked.
func TestApproveCommand(t *testing.T) {
	e := &Env{Program: "./bin/mcp-hub"}
	for _, tt := range []struct {
		cfg  config.Config
		want string
	}{
		{config.Config{}, "./bin/mcp-hub approve"},
		{config.Config{DataDir: "/srv data"}, "./bin/mcp-hub approve --data-dir '/srv data'"},
		{config.Config{Store: "postgres://hub:pg-Secret-77@db/hub"}, "./bin/mcp-hub approve --store 'postgres://hub:***@db/hub'"},
		{config.Config{Store: "${HUB_PG}"}, "./bin/mcp-hub approve --store '${HUB_PG}'"},
	} {
		if got := e.approveCommand(&tt.cfg); got != tt.want {
			t.Errorf("approveCommand(%+v) = %q, want %q", tt.cfg, got, tt.want)
		}
	}
	cfg := &config.Config{DataDir: "/srv/hub"}
	for in, want := range map[string]string{
		"not approved (pending): review it with mcp-hub approve fs":    "not approved (pending): review it with ./bin/mcp-hub approve --data-dir /srv/hub fs",
		"run `mcp-hub approve --data-dir /srv/hub fs` (the hub's own)": "run `./bin/mcp-hub approve --data-dir /srv/hub fs` (the hub's own)",
		"mcp-hub approve a; mcp-hub approve b":                         "./bin/mcp-hub approve --data-dir /srv/hub a; ./bin/mcp-hub approve --data-dir /srv/hub b",
	} {
		if got := e.oursAt(cfg, in); got != want {
			t.Errorf("oursAt(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNoAuthWarningNamesTheStore: the start warning of serve --http
// --http-no-auth without a token says to approve with the command of the
// store the hub serves; it said "mcp-hub approve NAME", which looks in the
// default store.
func TestNoAuthWarningNamesTheStore(t *testing.T) {
	s := newSetup(t, "")
	c := startServe(t, s, "--http", "127.0.0.1:0", "--http-no-auth", "--stdio")
	o := c.close(t)
	if want := "approve with mcp-hub approve --data-dir " + s.data + " NAME"; !strings.Contains(o.stderr, want) {
		t.Errorf("want %q in the log; got %s", want, o.stderr)
	}
}
