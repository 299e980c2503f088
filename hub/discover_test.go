package hub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/toolsearch"
)

// TestDiscoveryTools: hub_search_tools finds every upstream tool the filters
// let through, shadowed ones too (a copy of a listed tool as that tool,
// naming its server); hub_call_tool calls any of them and relays the
// upstream's result byte for byte.
func TestDiscoveryTools(t *testing.T) {
	b := fixtureSpec("b", "-only", "echo,pid,sleep_ms,progress")
	b.Tools.Deny = []string{"sleep*"}
	h, c := startHub(t, nil, fixtureSpec("a", "-only", "echo,add"), b)
	eventually(t, 10*time.Second, "both upstreams", func() bool { return h.settled() && len(h.Catalog().ServerEntries("b")) > 0 })

	search := func(id int, query string) (hits []toolsearch.Result, total int) {
		line := c.call(t, id, "tools/call", fmt.Sprintf(`{"name":"hub_search_tools","arguments":{"query":%q}}`, query))
		var r struct {
			Result struct {
				IsError           bool
				StructuredContent struct {
					Tools []toolsearch.Result
					Total int
				}
			}
		}
		if err := json.Unmarshal(line, &r); err != nil || r.Result.IsError {
			t.Fatalf("search %q: %s", query, line)
		}
		return r.Result.StructuredContent.Tools, r.Result.StructuredContent.Total
	}
	// a's and b's echo are the same tool: one result, a's (listed),
	// naming b; a query naming b finds b's (shadowed), naming a.
	hits, _ := search(2, "echo")
	if len(hits) < 1 || hits[0].Server != "a" || hits[0].ExposedAs != "echo" || len(hits[0].AlsoOn) != 1 || hits[0].AlsoOn[0] != "b" || len(hits[0].InputSchema) == 0 {
		t.Errorf("search echo: %+v; want a's (listed), also on b, with its schema", hits)
	}
	hits, _ = search(9, "echo on b")
	if len(hits) < 1 || hits[0].Server != "b" || hits[0].Tool != "echo" || hits[0].ExposedAs != "" || len(hits[0].AlsoOn) != 1 || hits[0].AlsoOn[0] != "a" || len(hits[0].InputSchema) == 0 {
		t.Errorf("search echo on b: %+v; want b's (shadowed), also on a, with its schema", hits)
	}
	if hits, total := search(3, ""); total != 4 || len(hits) != 4 {
		t.Errorf("search all: %d tools, want 4 (a: echo add; b: pid progress and a's echo; b's sleep_ms filtered out)", total)
	}
	for _, q := range []string{"sleep", "sleep_ms", ""} {
		hits, _ := search(4, q)
		for _, h := range hits {
			if h.Tool == "sleep_ms" {
				t.Errorf("search %q found the filtered tool sleep_ms: %+v", q, hits)
			}
		}
	}

	// hub_call_tool reaches the shadowed tool of b.
	line := c.call(t, 5, "tools/call", `{"name":"hub_call_tool","arguments":{"server":"b","tool":"pid"}}`)
	u, _ := h.Manager().Get("b")
	if !strings.Contains(string(line), fmt.Sprintf(`"text":"%d"`, u.Status().PID)) {
		t.Errorf("hub_call_tool b/pid: %s, want b's pid %d", line, u.Status().PID)
	}
	// Its result is the upstream's bytes, as a direct call's.
	direct, _ := wire.Parse(c.call(t, 6, "tools/call", `{"name":"add","arguments":{"a":2,"b":40}}`))
	via, _ := wire.Parse(c.call(t, 7, "tools/call", `{"name":"hub_call_tool","arguments":{"server":"a","tool":"add","arguments":{"a":2,"b":40}}}`))
	if string(direct.Result) != string(via.Result) || len(direct.Result) == 0 {
		t.Errorf("hub_call_tool result differs from the direct call's:\n%s\n%s", via.Result, direct.Result)
	}
	// Progress through hub_call_tool carries the client's token.
	c.call(t, 8, "tools/call", `{"name":"hub_call_tool","arguments":{"server":"b","tool":"progress","arguments":{"steps":2}},"_meta":{"progressToken":"via-hub"}}`)
	timeout := time.After(5 * time.Second)
	for progress := false; !progress; {
		select {
		case n := <-c.notes:
			if m, _ := wire.Parse(n); m.Method == "notifications/progress" {
				progress = true
				if !strings.Contains(string(n), `"progressToken":"via-hub"`) {
					t.Errorf("progress notification %s lacks the client's token", n)
				}
			}
		case <-timeout:
			t.Fatal("no progress through hub_call_tool")
		}
	}

	for _, bad := range []struct{ args, want string }{
		{`{"server":"b","tool":"sleep_ms","arguments":{"ms":1}}`, "has no tool \"sleep_ms\""},
		{`{"server":"nope","tool":"echo"}`, "no MCP server named \"nope\""},
		{`{"server":"a"}`, "tool is required"},
		{`{"server":"a","tool":"echo","arguments":[1]}`, "arguments must be an object"},
	} {
		line := c.call(t, 9, "tools/call", `{"name":"hub_call_tool","arguments":`+bad.args+`}`)
		if !strings.Contains(string(line), `"isError":true`) || !strings.Contains(string(line), strings.ReplaceAll(bad.want, `"`, `\"`)) {
			t.Errorf("hub_call_tool %s: %s, want an error containing %q", bad.args, line, bad.want)
		}
	}
}

// TestDiscoveryWaitsForStartingServers: a model's first act, right after
// the hub started, may be hub_search_tools or hub_call_tool; an upstream
// still on its first connect attempt is waited for (bounded, as the first
// tools/list is), not answered with "no tool matches" or "has no tool".
func TestDiscoveryWaitsForStartingServers(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"hub_search_tools", `{"query":"which process id is it"}`, `"server":"slow","tool":"pid"`},
		{"hub_call_tool", `{"server":"slow","tool":"argv"}`, `"text":"[\"-only\",\"pid,argv\",\"-slow-start\",\"1s\"]"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, c := startHub(t, &Options{Expose: toolsearch.Exposure{Mode: toolsearch.ModeSearch}},
				fixtureSpec("slow", "-only", "pid,argv", "-slow-start", "1s"))
			if h.settled() {
				t.Fatal("the upstream settled before the test could call: the test proves nothing")
			}
			line := c.call(t, 2, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tc.name, tc.args))
			if !strings.Contains(string(line), tc.want) || strings.Contains(string(line), `"isError":true`) {
				t.Errorf("%s right after start: %s, want %s", tc.name, line, tc.want)
			}
		})
	}
}

// TestCallToolDidYouMean: hub_call_tool names the server or tool a
// mistyped name was meant to be, so that a model (or its script) can fix
// the call from the answer alone.
func TestCallToolDidYouMean(t *testing.T) {
	h, c := startHub(t, nil, fixtureSpec("memory", "-only", "echo,pid"))
	eventually(t, 10*time.Second, "the upstream", func() bool { return h.settled() && len(h.Catalog().ServerEntries("memory")) > 0 })
	for _, bad := range []struct{ args, want string }{
		{`{"server":"memroy","tool":"pid"}`, `no MCP server named "memroy" runs behind this hub (did you mean "memory"?)`},
		{`{"server":"memory","tool":"echoo"}`, `has no tool "echoo" (did you mean "echo"?)`},
		{`{"server":"zzzzzz","tool":"pid"}`, `no MCP server named "zzzzzz" runs behind this hub;`},
	} {
		line := c.call(t, 2, "tools/call", `{"name":"hub_call_tool","arguments":`+bad.args+`}`)
		want := strings.ReplaceAll(bad.want, `"`, `\"`)
		if strings.HasSuffix(bad.want, ";") {
			want = strings.TrimSuffix(want, ";") + `"` // the message ends there
		}
		if !strings.Contains(string(line), `"isError":true`) || !strings.Contains(string(line), want) {
			t.Errorf("hub_call_tool %s: %s, want an error containing %s", bad.args, line, want)
		}
	}
}

// TestCallToolStillStarting: when the first-list wait is over and the
// upstream has still not listed its tools, hub_call_tool says it is
// starting, not that it has no such tool.
func TestCallToolStillStarting(t *testing.T) {
	_, c := startHub(t, &Options{FirstListWait: 50 * time.Millisecond}, fixtureSpec("slow", "-only", "pid", "-slow-start", "3s"))
	line := c.call(t, 2, "tools/call", `{"name":"hub_call_tool","arguments":{"server":"slow","tool":"pid"}}`)
	if want := `MCP server \"slow\" is still starting: its tools are not known yet; call again in a moment`; !strings.Contains(string(line), want) {
		t.Errorf("hub_call_tool of a starting server: %s, want %s", line, want)
	}
}
