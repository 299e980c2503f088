package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// searchConfig declares two fixture servers with overlapping tools.
func searchConfig(t *testing.T) string {
	return writeFile(t, "hub.yaml", fmt.Sprintf(`
mcpServers:
  alpha:
    command: %[1]s
    args: ["-only", "echo,add,pid,getenv,cwd,argv"]
  beta:
    command: %[1]s
    args: ["-only", "echo,pid,sleep_ms,progress"]
`, fixtureBin))
}

// rankOf returns "server/tool" of each tool of a {tools, total} object,
// with the other servers that offer it ("alpha/pid[beta]").
func rankOf(t *testing.T, raw []byte) []string {
	t.Helper()
	var r struct {
		Tools []struct {
			Server, Tool string
			AlsoOn       []string
		}
		Total *int
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Total == nil {
		t.Fatalf("not {tools, total}: %v: %s", err, raw)
	}
	var out []string
	for _, x := range r.Tools {
		s := x.Server + "/" + x.Tool
		if len(x.AlsoOn) > 0 {
			s += fmt.Sprint(x.AlsoOn)
		}
		out = append(out, s)
	}
	return out
}

// TestSearchModeAndSameOrder: mcp-hub --catalog-expose search lists only
// the hub's own tools and tells the model to search; hub_search_tools and
// mcp-hub tools --search rank the same catalog in the same order.
func TestSearchModeAndSameOrder(t *testing.T) {
	cfg, data := searchConfig(t), t.TempDir()
	c := startRaw(t, nil, hubBin, "--config", cfg, "--data-dir", data, "--catalog-expose", "search")
	init := c.initialize()
	if !strings.Contains(string(init.Result), "hub_search_tools") {
		t.Errorf("initialize says nothing of hub_search_tools: %s", init.Result)
	}
	list := c.call("tools/list", "")
	for _, n := range toolNames(t, list.Result) {
		if !strings.HasPrefix(n, "hub_") {
			t.Errorf("search mode lists %s", n)
		}
	}
	for _, q := range []string{"the process id", "working directory of the server", "wait some milliseconds", "environment variable"} {
		m := c.call("tools/call", fmt.Sprintf(`{"name":"hub_search_tools","arguments":{"query":%q,"limit":20}}`, q))
		var res struct{ StructuredContent json.RawMessage }
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatal(err)
		}
		viaHub := rankOf(t, res.StructuredContent)
		stdout, stderr, code := cliSplit(t, data, cfg, "tools", "--search", q, "--json")
		if code != exitOK {
			t.Fatalf("tools --search %q: exit %d: %s", q, code, stderr)
		}
		viaCLI := rankOf(t, []byte(stdout))
		if len(viaHub) == 0 || !slices.Equal(viaHub, viaCLI) {
			t.Errorf("%q: hub_search_tools ranks %v, mcp-hub tools --search %v", q, viaHub, viaCLI)
		}
		// alpha and beta offer the same pid: one result, alpha's, naming
		// beta, in both.
		if q == "the process id" && (!slices.Contains(viaCLI, "alpha/pid[beta]") || slices.Contains(viaCLI, "beta/pid")) {
			t.Errorf("%q: tools --search --json %v, want alpha/pid[beta] and no beta/pid", q, viaCLI)
		}
	}
	// The table names the best match first; alpha and beta offer the
	// same pid, which is one line, alpha's (the one listed as pid),
	// naming beta.
	out, code := cliConfig(t, data, cfg, "tools", "--search", "process id")
	if lines := strings.Split(out, "\n"); code != exitOK || len(lines) < 3 || !strings.Contains(lines[1], "alpha") || !strings.Contains(lines[1], "pid") ||
		!strings.Contains(lines[1], "(the same on beta)") || strings.Contains(lines[2], "pid") {
		t.Errorf("tools --search table (exit %d):\n%s", code, out)
	}
	m := c.call("tools/call", `{"name":"hub_search_tools","arguments":{"query":"process id"}}`)
	var res struct {
		Content           []struct{ Text string }
		StructuredContent struct {
			Tools []struct {
				Server, Tool string
				AlsoOn       []string
			}
		}
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || len(res.StructuredContent.Tools) == 0 || len(res.Content) == 0 {
		t.Fatalf("hub_search_tools: %v: %s", err, m.Result)
	}
	if first := res.StructuredContent.Tools[0]; first.Server != "alpha" || first.Tool != "pid" || !slices.Equal(first.AlsoOn, []string{"beta"}) ||
		!strings.Contains(res.Content[0].Text, `the same tool is on "beta" too`) {
		t.Errorf("hub_search_tools \"process id\": %+v\n%s", res.StructuredContent.Tools, res.Content[0].Text)
	}
}
