package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// doctorSection returns the details doctor printed for one upstream.
func doctorSection(out, name string) string {
	i := strings.Index(out, "\n"+name+": ")
	if i < 0 {
		return ""
	}
	rest := out[i+1:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func TestDoctor(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	// A command called npx that never answers: the hint says what npx does.
	npx := filepath.Join(t.TempDir(), "npx")
	if err := os.Symlink(fixtureBin, npx); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf(`
timeouts:
  shutdownGrace: 500ms
mcpServers:
  alpha:
    command: %[1]s
    args: ["-only", "echo,add", "-extra", "bad.name", "-pid-file", "%[2]s/alpha.pid"]
  dup:
    command: %[1]s
    args: ["-only", "echo", "-pid-file", "%[2]s/dup.pid"]
  garbage:
    command: %[1]s
    args: ["-garbage", "-only", "pid", "-pid-file", "%[2]s/garbage.pid"]
  exits:
    command: %[1]s
    args: ["-exit-immediately"]
  missing:
    command: mcp-hub-test-no-such-command
  noenv:
    command: %[1]s
    env: {TOKEN: "${MCP_HUB_TEST_UNSET_VAR}"}
  hang:
    command: %[1]s
    args: ["-hang-initialize", "-pid-file", "%[2]s/hang.pid"]
    initTimeout: 1s
  slowpkg:
    command: %[3]s
    args: ["-hang-initialize", "@example/slow-package"]
    initTimeout: 1s
  down:
    url: http://127.0.0.1:1/mcp?key=secret-in-url
  off:
    command: %[1]s
    disabled: true
`, fixtureBin, dir, npx))
	registerFixture(t, data, "waiting", upstream.ApprovalPending, upstream.SourceAdmin, "-pid-file", dir+"/waiting.pid")
	registerFixture(t, data, "nope", upstream.ApprovalRejected, upstream.SourceAdmin, "-pid-file", dir+"/nope.pid")

	out, code := cliConfig(t, data, cfg, "doctor")
	if code != exitFail {
		t.Errorf("exit code %d, want %d (upstreams failed)", code, exitFail)
	}
	q := regexp.QuoteMeta
	tests := []struct {
		name string
		row  string   // the table row, as a regexp after the name
		want []string // substrings of its details
	}{
		{"alpha", `config +ok +` + q(fixtureBin) + ` +\d+(\.\d+)?m?s +` + upstream.DefaultProtocolVersion + ` +3 +0 +0$`, []string{
			`note:  tool "echo" shadows dup's tool of the same name`,
			`note:  tool "bad.name" (exposed as "bad_name_`,
			`is not a valid client tool name`,
		}},
		{"dup", `config +warning +` + q(fixtureBin) + ` +\S+ +` + upstream.DefaultProtocolVersion + ` +1 +0 +0$`, []string{
			`note:  tool "echo" is not exposed: alpha offers a tool of this name too and sorts first`,
		}},
		{"garbage", `config +warning +` + q(fixtureBin) + ` +\S+ +` + upstream.DefaultProtocolVersion + ` +1 +0 +0$`, []string{
			`hint:  it writes text that is not JSON-RPC to stdout`,
			`note:  wrote lines to stdout that are not JSON-RPC, the first: "fixture banner: hello"`,
		}},
		{"exits", `config +FAILED +` + q(fixtureBin) + ` +- +- +- +- +-$`, []string{
			`error: initialize: upstream process exited: exit status 1`,
			`hint:  it exits as soon as it starts`,
			"stderr (last 1 line(s)):\n    fatal: fixture told to exit",
		}},
		{"missing", `config +FAILED +mcp-hub-test-no-such-command \(not found\) +-`, []string{
			`error: start mcp-hub-test-no-such-command: exec: "mcp-hub-test-no-such-command": executable file not found in $PATH`,
			`hint:  mcp-hub-test-no-such-command is not on PATH (`,
		}},
		{"noenv", `config +FAILED +` + q(fixtureBin) + ` +-`, []string{
			`error: env TOKEN: environment variable MCP_HUB_TEST_UNSET_VAR is not set`,
			`hint:  MCP_HUB_TEST_UNSET_VAR is not set in the hub's environment`,
		}},
		{"hang", `config +FAILED +` + q(fixtureBin) + ` +-`, []string{
			`error: initialize: no answer within 1s`,
			`hint:  it did not answer initialize within 1s`,
		}},
		{"slowpkg", `config +FAILED +` + q(npx) + ` +-`, []string{
			`error: initialize: no answer within 1s`,
			`hint:  npx downloads the package on its first run, which can take longer than the initialize timeout (1s)`,
		}},
		{"down", `config +FAILED +` + q("http://127.0.0.1:1/mcp?key=***") + ` +-`, []string{
			`hint:  nothing answers at http://127.0.0.1:1/mcp?key=***: is the server running`,
		}},
		{"off", `config +disabled +`, []string{`note:  not run: disabled in ` + cfg}},
		{"waiting", `admin +not approved +`, []string{`note:  not run: not approved (pending): review it with mcp-hub approve --data-dir ` + data + ` waiting`}},
		{"nope", `admin +rejected +`, []string{`note:  not run: rejected`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if re := regexp.MustCompile(`(?m)^` + q(tt.name) + ` +` + tt.row); !re.MatchString(out) {
				t.Errorf("no table row matching %s", re)
			}
			sec := doctorSection(out, tt.name)
			for _, w := range tt.want {
				if !strings.Contains(sec, w) {
					t.Errorf("details lack %q; got:\n%s", w, sec)
				}
			}
		})
	}
	if !strings.Contains(out, "12 upstream(s): 1 ok, 2 with warnings, 6 failed, 3 not run.") {
		t.Errorf("summary missing")
	}
	if strings.Contains(out, "secret-in-url") {
		t.Errorf("a URL secret is in the report")
	}
	for _, f := range []string{"waiting.pid", "nope.pid"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists: an upstream nobody approved ran", f)
		}
	}
	if n := checkNoLeaks(t, dir); n != 4 {
		t.Errorf("%d pid files, want 4", n)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestDoctorHealthy: nothing failed (a warning is not a failure), exit 0.
func TestDoctorHealthy(t *testing.T) {
	for _, tt := range []struct {
		name, servers, summary string
	}{
		{"ok", "  a:\n    command: %[1]s\n    args: [\"-only\", \"echo\"]\n", "1 upstream(s): 1 ok, 0 with warnings, 0 failed, 0 not run."},
		{"warning", "  a:\n    command: %[1]s\n    args: [\"-only\", \"echo\", \"-garbage\"]\n", "1 upstream(s): 0 ok, 1 with warnings, 0 failed, 0 not run."},
		// A session-scoped server stops its own process once listed: that is
		// no failure.
		{"per session", "  a:\n    command: %[1]s\n    args: [\"-only\", \"echo\"]\n    scope: session\n", "1 upstream(s): 1 ok, 0 with warnings, 0 failed, 0 not run."},
		{"none", "", "No upstreams:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeFile(t, "hub.yaml", "mcpServers:\n"+fmt.Sprintf(tt.servers, fixtureBin))
			if tt.servers == "" {
				cfg = writeFile(t, "hub.yaml", "")
			}
			out, code := cliConfig(t, t.TempDir(), cfg, "doctor")
			if code != exitOK || !strings.Contains(out, tt.summary) {
				t.Errorf("exit %d, want 0 and %q:\n%s", code, tt.summary, out)
			}
		})
	}
}
