package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// registerFixture stores a registration of the fixture in dataDir.
func registerFixture(t *testing.T, dataDir, name string, approval upstream.Approval, source upstream.Source, args ...string) {
	t.Helper()
	spec := upstream.Spec{Name: name, Command: fixtureBin, Args: args}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	r := upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true, Source: source, Approval: approval}
	if approval == upstream.ApprovalApproved {
		r.ApprovedHash = spec.Fingerprint()
	}
	st := openTestStore(t, dataDir)
	if _, err := st.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	st.Close()
}

// checkNoLeaks fails when a process whose pid file is in dir still runs,
// and returns how many pid files there were.
func checkNoLeaks(t *testing.T, dir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, f := range files {
		pid, err := testbin.ReadPID(f, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if alive := testbin.WaitGone(500*time.Millisecond, pid); len(alive) > 0 {
			t.Errorf("%s (pid %d) still runs after the command exited", filepath.Base(f), pid)
		}
	}
	return len(files)
}

// toolsConfig declares alpha (echo, add, an invalid name and a reserved
// one), beta (echo, pid) and gamma, which exits at once.
func toolsConfig(t *testing.T, dir string) string {
	return writeFile(t, "hub.yaml", fmt.Sprintf(`
mcpServers:
  alpha:
    command: %[1]s
    args: ["-name", "alpha", "-only", "echo,add", "-extra", "bad.name,hub_x", "-pid-file", "%[2]s/alpha.pid"]
  beta:
    command: %[1]s
    args: ["-only", "echo,pid", "-pid-file", "%[2]s/beta.pid"]
  gamma:
    command: %[1]s
    args: ["-exit-immediately"]
`, fixtureBin, dir))
}

func TestToolsJSON(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	cfg := toolsConfig(t, dir)
	registerFixture(t, data, "eps", upstream.ApprovalApproved, upstream.SourceCLI, "-only", "pid,sleep_ms", "-pid-file", dir+"/eps.pid")
	registerFixture(t, data, "delta", upstream.ApprovalPending, upstream.SourceAdmin, "-only", "cwd", "-pid-file", dir+"/delta.pid")
	// The config file wins a name it shares with a registration.
	registerFixture(t, data, "alpha", upstream.ApprovalApproved, upstream.SourceCLI, "-only", "argv", "-pid-file", dir+"/alpha-stored.pid")

	stdout, stderr, code := cliSplit(t, data, cfg, "tools", "--json")
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	var rep toolsReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, stdout)
	}
	tools := map[string]toolLine{}
	for _, tl := range rep.Tools {
		tools[tl.Name] = tl
	}
	for _, want := range []toolLine{
		{Name: "add", Upstream: "alpha", Original: "add"},
		{Name: "echo", Upstream: "alpha", Original: "echo"},
		{Name: "pid", Upstream: "beta", Original: "pid"},
		{Name: "sleep_ms", Upstream: "eps", Original: "sleep_ms"},
		{Name: "hub_list_servers", Upstream: "hub", Original: "hub_list_servers"},
	} {
		if got := tools[want.Name]; got.Upstream != want.Upstream || got.Original != want.Original || len(got.Fixes) != 0 {
			t.Errorf("tool %s = %+v, want %+v", want.Name, got, want)
		}
	}
	var renamed *toolLine
	for _, tl := range rep.Tools {
		if tl.Original == "bad.name" {
			renamed = &tl
		}
	}
	if renamed == nil || renamed.Upstream != "alpha" || !regexp.MustCompile(`^bad_name_[0-9a-f]{8}$`).MatchString(renamed.Name) ||
		len(renamed.Fixes) != 1 || !strings.Contains(renamed.Fixes[0], "not a valid client tool name") {
		t.Errorf("bad.name exposed as %+v, want a fixed name with the fix noted", renamed)
	}
	upstreamTools := 0
	for _, tl := range rep.Tools {
		if tl.Upstream != "hub" {
			upstreamTools++
		} else if !strings.HasPrefix(tl.Name, "hub_") {
			t.Errorf("hub tool %q", tl.Name)
		}
	}
	if upstreamTools != 5 { // add, echo, pid, sleep_ms, bad_name_…
		t.Errorf("%d upstream tools, want 5: %+v", upstreamTools, rep.Tools)
	}

	wantShadowed := []shadowLine{
		{Name: "echo", Upstream: "beta", Original: "echo", ShadowedBy: "alpha", Reason: "collision", Why: "alpha offers a tool of this name too and sorts first"},
		{Name: "hub_x", Upstream: "alpha", Original: "hub_x", ShadowedBy: "hub", Reason: "reserved", Why: "names starting hub_ are reserved for the hub"},
		{Name: "pid", Upstream: "eps", Original: "pid", ShadowedBy: "beta", Reason: "collision", Why: "beta offers a tool of this name too and sorts first"},
	}
	if fmt.Sprint(rep.Shadowed) != fmt.Sprint(wantShadowed) {
		t.Errorf("shadowed = %+v\nwant       %+v", rep.Shadowed, wantShadowed)
	}

	ups := map[string]upstreamLine{}
	for _, u := range rep.Upstreams {
		ups[u.Name] = u
	}
	for _, want := range []upstreamLine{
		{Name: "alpha", Source: "config", State: upstream.StateConnected, Tools: 4, Exposed: 3},
		{Name: "beta", Source: "config", State: upstream.StateConnected, Tools: 2, Exposed: 1},
		{Name: "eps", Source: "cli", State: upstream.StateConnected, Tools: 2, Exposed: 1},
	} {
		if got := ups[want.Name]; got != want {
			t.Errorf("upstream %s = %+v, want %+v", want.Name, got, want)
		}
	}
	if g := ups["gamma"]; g.State != upstream.StateFailed || !strings.Contains(g.Error, "fatal: fixture told to exit") {
		t.Errorf("gamma = %+v, want FAILED with its stderr in the error", g)
	}
	if d := ups["delta"]; d.State != "" || d.NotRun != "not approved (pending): review it with mcp-hub approve delta" {
		t.Errorf("delta = %+v, want not run for want of approval", d)
	}

	if _, err := os.Stat(filepath.Join(dir, "delta.pid")); err == nil {
		t.Errorf("delta ran although nobody approved it")
	}
	if _, err := os.Stat(filepath.Join(dir, "alpha-stored.pid")); err == nil || tools["argv"].Name != "" {
		t.Errorf("the stored alpha ran although the config file defines alpha")
	}
	if n := checkNoLeaks(t, dir); n != 3 {
		t.Errorf("%d pid files, want 3 (alpha, beta, eps)", n)
	}
}

func TestToolsTable(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	cfg := toolsConfig(t, dir)
	registerFixture(t, data, "delta", upstream.ApprovalPending, upstream.SourceAdmin, "-only", "cwd")
	out, code := cliConfig(t, data, cfg, "tools")
	if code != exitOK {
		t.Errorf("exit %d, want 0", code)
	}
	for _, re := range []string{
		`(?m)^TOOL +UPSTREAM +ORIGINAL NAME$`,
		`(?m)^echo +alpha +echo$`,
		`(?m)^pid +beta +pid$`,
		`(?m)^bad_name_[0-9a-f]{8} +alpha +bad\.name$`,
		`(?m)^hub_get_server +hub +hub_get_server$`,
		`(?m)^Not exposed \(2\):$`,
		`(?m)^echo +beta +echo +alpha +alpha offers a tool of this name too and sorts first$`,
		`(?m)^hub_x +alpha +hub_x +hub +names starting hub_ are reserved for the hub$`,
		`(?m)^gamma +FAILED +initialize: upstream process exited: exit status 1; its last stderr line: fatal: fixture told to exit$`,
		`(?m)^delta +not run +not approved \(pending\): review it with mcp-hub approve --data-dir ` + regexp.QuoteMeta(data) + ` delta$`,
		`(?m)^\d+ tool\(s\) from 2 of 4 upstream\(s\) and the hub; 2 not exposed\.$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s", re)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
	checkNoLeaks(t, dir)
}
