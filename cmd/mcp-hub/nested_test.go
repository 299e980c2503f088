package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHubUnderHub (issue 29 item 2): a hub serving a config file that holds
// entries launching mcp-hub itself. The one with a config file and a store
// of its own starts, a hub under this hub whose tools are served and
// called through both; the ones that would take this hub's own config file
// or store, or a name no upstream may have, are not run and are named as
// such by the log, list and doctor, instead of failing with a config
// error. The marker the hub puts in its children's environment is no
// setting.
func TestHubUnderHub(t *testing.T) {
	dir := t.TempDir()
	outerData, innerData := filepath.Join(dir, "outer-data"), filepath.Join(dir, "inner-data")
	inner := writeFile(t, "inner.yaml", fmt.Sprintf("mcpServers:\n  fx:\n    command: %q\n    args: [\"-only\", \"echo\"]\n", fixtureBin))
	outer := filepath.Join(dir, "claude_desktop_config.json")
	writeAt(t, outer, fmt.Sprintf(`{"mcpServers": {
  "inner": {"command": %[1]q, "args": ["--config", %[2]q, "--data-dir", %[3]q]},
  "again": {"command": %[1]q, "args": ["--config", %[4]q]},
  "twin": {"command": %[1]q, "args": ["--data-dir", %[5]q]},
  "hub": {"command": %[1]q, "args": ["--data-dir", %[5]q]}
}}`, hubBin, inner, innerData, outer, outerData))

	c := startRaw(t, []string{"MCP_HUB_UPSTREAM=4242.1.1"}, hubBin, "--config", outer, "--data-dir", outerData, "--log-level", "debug")
	if init := c.initialize(); init.Result == nil {
		t.Fatalf("initialize: %s\n%s", init.Error, c.stderr.String())
	}
	if names := withoutHubTools(toolNames(t, c.call("tools/list", "").Result)); !slices.Equal(names, []string{"echo"}) {
		t.Fatalf("tools %v; want the inner hub's echo\n%s", names, c.stderr.String())
	}
	if text := textOf(t, c.call("tools/call", `{"name":"echo","arguments":{"text":"through two hubs"}}`).Result); !strings.Contains(text, "through two hubs") {
		t.Errorf("echo through the inner hub: %q", text)
	}
	notRun := map[string]string{
		"again": "it launches mcp-hub itself, with this config file (" + outer + "): that hub would start another, without end",
		"twin":  "it launches mcp-hub itself, on this hub's store (" + filepath.Join(outerData, "hub.db") + "): it would run this hub's servers a second time",
		"hub":   "it launches mcp-hub itself, on this hub's store (" + filepath.Join(outerData, "hub.db") + "): it would run this hub's servers a second time",
	}
	log := c.stderr.String()
	for name, why := range notRun {
		if want := fmt.Sprintf("level=WARN msg=%q entry=%s", "config entry not run: "+why, name); !strings.Contains(log, want) {
			t.Errorf("the log does not say %s", want)
		}
	}
	if want := `msg="upstream launches mcp-hub itself: a hub under this hub" upstream=inner config=` + inner; !strings.Contains(log, want) {
		t.Errorf("the log does not say %s", want)
	}
	if strings.Contains(log, "unknown key") || strings.Contains(log, "sets no mcp-hub setting") {
		t.Errorf("a config error in the log:\n%s", log)
	}

	out, code := runCLI(t, outerData, outer, "", []string{"MCP_HUB_UPSTREAM=4242.1.1"}, "list")
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	for name, why := range notRun {
		if re := regexp.MustCompile(`(?m)^` + name + ` +stdio +config +not run +- +- +- +nothing: ` + regexp.QuoteMeta(why) + `$`); !re.MatchString(out) {
			t.Errorf("list has no row %s in\n%s", re, out)
		}
	}
	if want := "(it launches mcp-hub itself: a hub under this hub, with the config file " + inner + " and " + filepath.Join(innerData, "hub.db") + ")"; !strings.Contains(out, want) {
		t.Errorf("list does not say %s:\n%s", want, out)
	}

	out, code = runCLI(t, outerData, outer, "", nil, "doctor")
	if code != 0 {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	for name, why := range notRun {
		if !strings.Contains(out, "\n"+name+": not run\n  note:  not run: "+why+"\n") {
			t.Errorf("doctor does not say %s: %s:\n%s", name, why, out)
		}
	}
	if !regexp.MustCompile(`(?m)^inner +config +ok +`).MatchString(out) || !strings.Contains(out, "\ninner: ok\n  note:  it launches mcp-hub itself: a hub under this hub") {
		t.Errorf("doctor of the hub under this hub:\n%s", out)
	}
	if code, _ := c.closeStdin(20 * time.Second); code != 0 {
		t.Errorf("outer hub exit %d", code)
	}
}

// TestHubsWithoutEnd (issue 29 item 2): entries that lead from hub to hub
// and back, through config files and stores that are not the running
// hub's own, stop at the fourth hub, which says why, instead of starting
// hubs without end.
func TestHubsWithoutEnd(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	entry := func(name, cfg, data string) string {
		return fmt.Sprintf(`{"mcpServers": {%q: {"command": %q, "args": ["--config", %q, "--data-dir", %q]}}}`, name, hubBin, cfg, filepath.Join(dir, data))
	}
	writeAt(t, a, entry("b", b, "b-data"))
	writeAt(t, b, entry("a", a, "a2-data"))
	c := startRaw(t, nil, hubBin, "--config", a, "--data-dir", filepath.Join(dir, "a-data"), "--log-level", "debug")
	if init := c.initialize(); init.Result == nil {
		t.Fatalf("initialize: %s", init.Error)
	}
	waitFor(t, 60*time.Second, "a hub refusing to start", func() bool {
		return strings.Contains(c.stderr.String(), "3 hubs run above this one, each started by the one above it")
	})
	if code, _ := c.closeStdin(30 * time.Second); code != 0 {
		t.Errorf("outer hub exit %d", code)
	}
}

// writeAt writes content to path.
func writeAt(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestHintsNameTheBinary (issue 29 item 9): run as ./mcp-hub, not found on
// PATH, the binary's hints name it ./mcp-hub, as typed.
func TestHintsNameTheBinary(t *testing.T) {
	data := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("./mcp-hub", args...)
		cmd.Dir = filepath.Dir(hubBin)
		cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin", "MCP_HUB_DATA_DIR="+data, "MCP_HUB_CONFIG=")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	for args, want := range map[string]string{
		"sever":                                 "mcp-hub: unknown command \"sever\"; did you mean \"serve\"?\nRun './mcp-hub help' for every command.\n",
		"list":                                  "Add one with: ./mcp-hub add NAME -- COMMAND [ARGS...]\n",
		"add -- sh /srv/weather-mcp/weather.sh": "mcp-hub add: missing NAME: the upstream's name goes before \"--\", for example:\n  ./mcp-hub add weather -- sh /srv/weather-mcp/weather.sh\n",
	} {
		if got := run(strings.Fields(args)...); !strings.HasSuffix(got, want) {
			t.Errorf("./mcp-hub %s:\ngot  %q\nwant it to end %q", args, got, want)
		}
	}
}
