package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/toolsearch"
	"github.com/mcp-hub/mcp-hub/upstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listNames returns the tool names of a tools/list response line.
func listNames(t *testing.T, line []byte) []string {
	t.Helper()
	var r struct {
		Result struct {
			Tools []struct{ Name string }
		}
	}
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("tools/list: %v: %s", err, line)
	}
	var names []string
	for _, tl := range r.Result.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// waitNote waits for a notification of method on c, failing after d.
func waitNote(t *testing.T, c *pipeClient, method string, d time.Duration) bool {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case n := <-c.notes:
			if m, _ := wire.Parse(n); m.Method == method {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

// TestSearchModeStdio: with expose search, tools/list holds the hub's own
// tools and alwaysExpose, whatever the catalog; a tool found with
// hub_search_tools and called with hub_call_tool joins that session's list
// only (list_changed to it alone), at most sessionTools of them.
func TestSearchModeStdio(t *testing.T) {
	h, c := startHub(t, &Options{Admin: AdminOff, Expose: toolsearch.Exposure{Mode: toolsearch.ModeSearch, Always: []string{"ad*"}, SessionTools: 2}},
		fixtureSpec("a", "-only", "echo,add"), fixtureSpec("b", "-only", "echo,pid,progress,sleep_ms"))
	eventually(t, 10*time.Second, "both upstreams", func() bool { return h.settled() && len(h.Catalog().ServerEntries("b")) > 0 })
	other := stdioClient(t, h)

	line := c.call(t, 2, "tools/list", `{}`)
	if got, want := listNames(t, line), []string{"add", "hub_call_tool", "hub_search_tools"}; !slices.Equal(got, want) {
		t.Errorf("search mode tools/list = %v, want %v", got, want)
	}
	var res struct{ Result json.RawMessage }
	_ = json.Unmarshal(line, &res)
	if len(res.Result) > 6000 {
		t.Errorf("search mode tools/list is %d characters of JSON, want ≤ 6000", len(res.Result))
	}

	// The search finds b's pid by what it does.
	found := c.call(t, 3, "tools/call", `{"name":"hub_search_tools","arguments":{"query":"which process id is it","limit":3}}`)
	var sr struct {
		Result struct {
			Content           []struct{ Text string }
			StructuredContent struct {
				Tools []toolsearch.Result
				Total int
			}
		}
	}
	if err := json.Unmarshal(found, &sr); err != nil || len(sr.Result.StructuredContent.Tools) == 0 {
		t.Fatalf("hub_search_tools: %s", found)
	}
	if top := sr.Result.StructuredContent.Tools[0]; top.Server != "b" || top.Tool != "pid" || top.ExposedAs != "pid" || top.Score <= 0 || len(top.InputSchema) == 0 {
		t.Errorf("best match = %+v, want b's pid", top)
	}
	if txt := sr.Result.Content[0].Text; !strings.Contains(txt, `server "b" tool "pid"`) || !strings.Contains(txt, "hub_call_tool") {
		t.Errorf("text for the model: %q", txt)
	}

	// Called through hub_call_tool, it joins this session's list.
	c.call(t, 4, "tools/call", `{"name":"hub_call_tool","arguments":{"server":"b","tool":"pid"}}`)
	if !waitNote(t, c, "notifications/tools/list_changed", 5*time.Second) {
		t.Fatal("no list_changed after a found tool was called")
	}
	if got := listNames(t, c.call(t, 5, "tools/list", `{}`)); !slices.Contains(got, "pid") {
		t.Errorf("after calling pid, tools/list = %v", got)
	}
	// The other session is not told, and its list is unchanged.
	if waitNote(t, other, "notifications/tools/list_changed", 300*time.Millisecond) {
		t.Error("another session got list_changed")
	}
	if got := listNames(t, other.call(t, 2, "tools/list", `{}`)); slices.Contains(got, "pid") {
		t.Errorf("another session's tools/list = %v, has pid", got)
	}
	// A shadowed tool (b's echo) has no name to be listed under.
	c.call(t, 6, "tools/call", `{"name":"hub_call_tool","arguments":{"server":"b","tool":"echo"}}`)
	if got := listNames(t, c.call(t, 7, "tools/list", `{}`)); slices.Contains(got, "echo") {
		t.Errorf("a shadowed tool joined the list: %v", got)
	}
	// Calling a tool by its exposed name counts too; sessionTools (2)
	// bounds the list, the least recently used goes.
	c.call(t, 8, "tools/call", `{"name":"echo","arguments":{}}`)            // a's echo
	c.call(t, 9, "tools/call", `{"name":"progress","arguments":{}}`)        // pid goes
	c.call(t, 10, "tools/call", `{"name":"add","arguments":{"a":1,"b":2}}`) // listed anyway
	got := listNames(t, c.call(t, 11, "tools/list", `{}`))
	if want := []string{"add", "echo", "hub_call_tool", "hub_search_tools", "progress"}; !slices.Equal(got, want) {
		t.Errorf("tools/list after 3 more calls = %v, want %v", got, want)
	}

	// An empty query lists every tool, paged, each once: a's and b's
	// echo are the same tool (a's, naming b); a filtered or unknown word
	// finds nothing.
	all := c.call(t, 12, "tools/call", `{"name":"hub_search_tools","arguments":{"query":"","limit":2,"offset":2}}`)
	if err := json.Unmarshal(all, &sr); err != nil || sr.Result.StructuredContent.Total != 5 || len(sr.Result.StructuredContent.Tools) != 2 ||
		sr.Result.StructuredContent.Tools[0].Server != "b" || sr.Result.StructuredContent.Tools[0].Tool != "pid" {
		t.Errorf("empty query, offset 2, limit 2: %s", all)
	}
	// a's and b's echo are one result: a's (listed as echo), naming b;
	// a query naming b gives b's copy (reached by hub_call_tool), naming a.
	for i, tc := range []struct {
		query, server, exposedAs, also string
	}{
		{"echo the message", "a", "echo", "b"},
		{"echo the message on b", "b", "", "a"},
	} {
		line := c.call(t, 13+i, "tools/call", `{"name":"hub_search_tools","arguments":{"query":"`+tc.query+`","limit":5}}`)
		if err := json.Unmarshal(line, &sr); err != nil || len(sr.Result.StructuredContent.Tools) == 0 || len(sr.Result.Content) == 0 {
			t.Fatalf("hub_search_tools %q: %s", tc.query, line)
		}
		var echoes []string
		for _, r := range sr.Result.StructuredContent.Tools {
			if r.Tool == "echo" {
				echoes = append(echoes, r.Server)
			}
		}
		top := sr.Result.StructuredContent.Tools[0]
		if top.Server != tc.server || top.Tool != "echo" || top.ExposedAs != tc.exposedAs || !slices.Equal(top.AlsoOn, []string{tc.also}) || len(echoes) != 1 {
			t.Errorf("%q: best %+v, echoes on %v; want %s's echo, alsoOn [%s], once", tc.query, top, echoes, tc.server, tc.also)
		}
		if txt := sr.Result.Content[0].Text; !strings.Contains(txt, `the same tool is on "`+tc.also+`" too`) {
			t.Errorf("%q: the text for the model does not name %s: %q", tc.query, tc.also, txt)
		}
	}
}

// TestSearchModeHTTP: the same over streamable HTTP with go-sdk's client:
// initialize's instructions say to search, the list is small, and a tool
// found and called is listed after list_changed.
func TestSearchModeHTTP(t *testing.T) {
	h, srv := startHTTPHubOpts(t, &Options{Instructions: "Own words.", Expose: toolsearch.Exposure{Mode: toolsearch.ModeSearch}}, nil,
		fixtureSpec("a", "-only", "echo,add"))
	eventually(t, 10*time.Second, "a", func() bool { return h.settled() && len(h.Catalog().ServerEntries("a")) > 0 })
	changed := make(chan struct{}, 8)
	cs := sdkSession(t, srv.URL, false, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if ins := cs.InitializeResult().Instructions; !strings.HasPrefix(ins, "Own words.") || !strings.Contains(ins, "hub_search_tools") || !strings.Contains(ins, "hub_call_tool") {
		t.Errorf("instructions = %q", ins)
	}
	names := sdkTools(t, cs)
	if slices.Contains(names, "add") || !slices.Contains(names, "hub_search_tools") || !slices.Contains(names, "hub_list_servers") {
		t.Errorf("search mode tools (admin on) = %v", names)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hub_search_tools", Arguments: map[string]any{"query": "sum of two numbers"}})
	if err != nil || res.IsError {
		t.Fatalf("hub_search_tools: %v %+v", err, res)
	}
	var sc struct {
		Tools []toolsearch.Result
		Total int
	}
	b, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(b, &sc) != nil || sc.Total != 1 || sc.Tools[0].Server != "a" || sc.Tools[0].Tool != "add" || sc.Tools[0].ExposedAs != "add" {
		t.Errorf("structuredContent = %s", b)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hub_call_tool", Arguments: map[string]any{"server": "a", "tool": "add", "arguments": map[string]any{"a": 1, "b": 2}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no list_changed over HTTP")
	}
	if names := sdkTools(t, cs); !slices.Contains(names, "add") {
		t.Errorf("after calling add: %v", names)
	}
}

// TestExposeAuto: auto serves search mode above searchAbove tools of
// upstreams and every tool at or below it, and tells sessions when it
// switches; the index follows upstreams added and removed.
func TestExposeAuto(t *testing.T) {
	logs := &testbin.Buffer{}
	h, c := startHub(t, &Options{Admin: AdminOff, Expose: toolsearch.Exposure{Mode: toolsearch.ModeAuto, SearchAbove: 2}, Logger: slog.New(slog.NewTextHandler(logs, nil))},
		fixtureSpec("a", "-only", "echo,add"))
	eventually(t, 10*time.Second, "a", func() bool { return h.settled() && len(h.Catalog().ServerEntries("a")) > 0 })
	if got := listNames(t, c.call(t, 2, "tools/list", `{}`)); !slices.Contains(got, "echo") || !slices.Contains(got, "add") {
		t.Errorf("2 tools, searchAbove 2: %v, want every tool", got)
	}
	if _, total := h.SearchTools("process id", 5); total != 0 {
		t.Errorf("pid found before b was added")
	}
	if err := h.AddUpstream(fixtureSpec("b", "-only", "pid"), upstream.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if !waitNote(t, c, "notifications/tools/list_changed", 10*time.Second) {
		t.Fatal("no list_changed when the catalog went above searchAbove")
	}
	eventually(t, 10*time.Second, "search mode", func() bool { return h.cat.Load().searching })
	if got := listNames(t, c.call(t, 3, "tools/list", `{}`)); slices.Contains(got, "echo") || !slices.Contains(got, "hub_search_tools") {
		t.Errorf("3 tools, searchAbove 2: %v, want the hub's own", got)
	}
	if r, _ := h.SearchTools("process id", 5); len(r) == 0 || r[0].Tool != "pid" {
		t.Errorf("search after b was added: %+v", r)
	}
	// The switch is in the log, with the count that made it.
	if want := `msg="catalog.expose auto: tools/list now holds the hub's own tools; the others are found with hub_search_tools" tools=3 searchAbove=2`; !strings.Contains(logs.String(), want) {
		t.Errorf("the log does not say the hub switched to search mode:\n%s", logs.String())
	}
	if err := h.RemoveUpstream(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	if !waitNote(t, c, "notifications/tools/list_changed", 10*time.Second) {
		t.Fatal("no list_changed when the catalog went back to searchAbove")
	}
	eventually(t, 10*time.Second, "all mode", func() bool { return !h.cat.Load().searching })
	if got := listNames(t, c.call(t, 4, "tools/list", `{}`)); !slices.Contains(got, "echo") {
		t.Errorf("back to 2 tools: %v", got)
	}
	if want := `msg="catalog.expose auto: tools/list holds every tool again" tools=2 searchAbove=2`; !strings.Contains(logs.String(), want) {
		t.Errorf("the log does not say the hub switched back:\n%s", logs.String())
	}
	if _, total := h.SearchTools("process id", 5); total != 0 {
		t.Errorf("pid found after b was removed")
	}
}

// TestSearchIndexFollowsListChanged: a tool an upstream adds (list_changed)
// is found, and the index of the servers that did not change is reused.
func TestSearchIndexFollowsListChanged(t *testing.T) {
	h, c := startHub(t, nil, fixtureSpec("a", "-only", "echo,add,add_tool"), fixtureSpec("b", "-only", "pid"))
	eventually(t, 10*time.Second, "both", func() bool { return h.settled() && len(h.Catalog().ServerEntries("b")) > 0 })
	before := h.SearchIndex()
	line := c.call(t, 2, "tools/call", `{"name":"add_tool","arguments":{"name":"weather_forecast"}}`)
	if !strings.Contains(string(line), `"result"`) {
		t.Fatalf("add_tool: %s", line)
	}
	eventually(t, 10*time.Second, "the new tool indexed", func() bool {
		r, _ := h.SearchTools("weather forecast", 1)
		return len(r) == 1 && r[0].Tool == "weather_forecast"
	})
	if !h.SearchIndex().Reuses(before, "b") {
		t.Error("b's tools were indexed again though they did not change")
	}
}

// TestSearchNeverFindsUnapproved: a registration nobody approved, or whose
// approval an edit took back, is never found; approved, it is.
func TestSearchNeverFindsUnapproved(t *testing.T) {
	h, srv := startHTTPHub(t, nil)
	api := srv.URL + "/api/servers"
	if code, out := apiJSON(t, "POST", api, map[string]any{"name": "newbie", "command": fixture, "args": []string{"-only", "pid"}}); code != 201 {
		t.Fatalf("add: %d %v", code, out)
	}
	found := func() int {
		_, total := h.SearchTools("the process id", 5)
		return total
	}
	storePolls()
	if n := found(); n != 0 {
		t.Errorf("pending: the search finds %d tools", n)
	}
	apiApprove(t, api, "newbie")
	eventually(t, 10*time.Second, "pid found once approved", func() bool { return found() == 1 })
	if code, out := apiJSON(t, "PUT", api+"/newbie", map[string]any{"args": []string{"-only", "pid,echo"}}); code != 200 || out["approval"] != "pending" {
		t.Fatalf("edit: %d %v", code, out)
	}
	eventually(t, 10*time.Second, "pid gone once the edit needs approval", func() bool { return found() == 0 })
}

// TestSearchModeQuietOnUnlistedChanges: in search mode a session is told
// of a catalog change only when its own list changed.
func TestSearchModeQuietOnUnlistedChanges(t *testing.T) {
	h, c := startHub(t, &Options{Admin: AdminOff, Expose: toolsearch.Exposure{Mode: toolsearch.ModeSearch}}, fixtureSpec("a", "-only", "echo,add_tool,remove_tool"))
	eventually(t, 10*time.Second, "a", func() bool { return h.settled() && len(h.Catalog().ServerEntries("a")) > 0 })
	c.call(t, 2, "tools/call", `{"name":"hub_call_tool","arguments":{"server":"a","tool":"echo"}}`)
	if !waitNote(t, c, "notifications/tools/list_changed", 5*time.Second) {
		t.Fatal("no list_changed when echo joined the session's list")
	}
	c.call(t, 5, "tools/call", `{"name":"remove_tool","arguments":{"name":"nothing"}}`)
	waitNote(t, c, "notifications/tools/list_changed", 2*time.Second) // remove_tool joined
	c.call(t, 3, "tools/call", `{"name":"hub_call_tool","arguments":{"server":"a","tool":"add_tool","arguments":{"name":"weather_forecast"}}}`)
	waitNote(t, c, "notifications/tools/list_changed", 2*time.Second) // add_tool joined
	eventually(t, 10*time.Second, "weather_forecast indexed", func() bool { _, n := h.SearchTools("weather forecast", 1); return n > 0 })
	if waitNote(t, c, "notifications/tools/list_changed", 500*time.Millisecond) {
		t.Error("list_changed for a tool the session does not list")
	}
	// Removing a tool it lists is news (remove_tool is listed already).
	c.call(t, 4, "tools/call", `{"name":"remove_tool","arguments":{"name":"echo"}}`)
	if !waitNote(t, c, "notifications/tools/list_changed", 5*time.Second) {
		t.Error("no list_changed when a listed tool went")
	}
}

// TestInstructionsByMode: initialize's instructions say to search in
// search mode, say when to search in auto mode (initialize comes before the
// servers list their tools), and say nothing of it in all mode.
func TestInstructionsByMode(t *testing.T) {
	for mode, want := range map[toolsearch.Mode]string{
		toolsearch.ModeSearch: "lists only a few of them. To do",
		toolsearch.ModeAuto:   "When they are many, it lists only a few",
		toolsearch.ModeAll:    "",
	} {
		_, srv := startHTTPHubOpts(t, &Options{Expose: toolsearch.Exposure{Mode: mode}}, nil)
		ins := sdkSession(t, srv.URL, false, nil).InitializeResult().Instructions
		if want == "" && strings.Contains(ins, "hub_search_tools") || want != "" && !strings.Contains(ins, want) {
			t.Errorf("%s: instructions %q", mode, ins)
		}
	}
}

// TestShadowsLoggedPerServer: the tools a server loses to another are
// logged in one line per loser and winner, not one per tool (two copies
// of a server logged a line per tool at every start).
func TestShadowsLoggedPerServer(t *testing.T) {
	logs := &testbin.Buffer{}
	h, _ := startHub(t, &Options{Logger: slog.New(slog.NewTextHandler(logs, nil))},
		fixtureSpec("a", "-only", "echo,add,pid"), fixtureSpec("b", "-only", "echo,add,pid"))
	eventually(t, 10*time.Second, "both", func() bool { return h.settled() && len(h.Catalog().Shadowed()) == 3 })
	lines := strings.Count(logs.String(), "shadowed")
	if want := `level=WARN msg="tools shadowed" upstream=b winner=a reason=collision count=3 names="add, echo, pid"`; lines != 1 || !strings.Contains(logs.String(), want) {
		t.Errorf("%d lines about shadowed tools, want one: %s\n%s", lines, want, logs.String())
	}
}
