package toolsearch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/catalog"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"read_file", []string{"read", "file"}},
		{"list-directory.with_sizes", []string{"list", "directory", "with", "sizes"}},
		{"readFile", []string{"read", "file"}},
		{"HTTPServer getURL", []string{"http", "server", "get", "url"}},
		{"base64 decode", []string{"base", "64", "decode"}},
		{"ResearchHelper", []string{"research", "helper"}},
		{"  Ünïcode Wörter  ", []string{"ünïcode", "wörter"}},
		{"", nil},
	} {
		var got []string
		words(tc.in, func(w string) { got = append(got, w) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTerms(t *testing.T) {
	var got []string
	terms("Show me the files in a directory; listing directories", func(s string) { got = append(got, s) })
	if want := []string{"show", "file", "directori", "list", "directori"}; !slices.Equal(got, want) {
		t.Errorf("terms = %q, want %q (stop words dropped, stemmed)", got, want)
	}
}

// small is a fixed catalog of three servers.
func small(t testing.TB) *Index {
	t.Helper()
	tool := func(name, desc, schema string) Tool {
		raw := `{"name":"` + name + `","description":"` + desc + `","inputSchema":` + schema + `}`
		return Tool{Name: name, ExposedAs: name, Raw: json.RawMessage(raw)}
	}
	return Build([]Server{
		{Name: "filesystem", Description: "Files on this machine", Tools: []Tool{
			tool("read_text_file", "Read the complete contents of a file as text.", `{"type":"object","properties":{"path":{"type":"string"}}}`),
			tool("list_directory", "Get a detailed listing of all files and directories in a specified path.", `{"type":"object","properties":{"path":{"type":"string"}}}`),
			tool("move_file", "Move or rename files and directories.", `{"type":"object","properties":{"source":{"type":"string"},"destination":{"type":"string"}}}`),
		}},
		{Name: "git", Tools: []Tool{
			tool("git_log", "Shows the commit logs.", `{"type":"object","properties":{"repo_path":{"type":"string"},"max_count":{"type":"integer","description":"Maximum number of commits"}}}`),
			tool("git_status", "Shows the working tree status.", `{"type":"object","properties":{"repo_path":{"type":"string"}}}`),
		}},
		{Name: "weather", Tools: []Tool{
			tool("get_forecast", "Weather forecast for a location.", `{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}}}`),
		}},
	}, nil)
}

// TestRankingSmallCatalog: the ranking of a few requests in plain words
// over a fixed catalog.
func TestRankingSmallCatalog(t *testing.T) {
	ix := small(t)
	for _, tc := range []struct {
		query string
		first string // server/tool
	}{
		{"read a file", "filesystem/read_text_file"},
		{"what is in this folder listing", "filesystem/list_directory"},
		{"rename a file", "filesystem/move_file"},
		{"recent commits of the repository", "git/git_log"},
		{"which files are modified in my working tree", "git/git_status"},
		{"will it rain tomorrow? weather forecast", "weather/get_forecast"},
		{"coordinates latitude", "weather/get_forecast"}, // a schema property name
		{"forecasting", "weather/get_forecast"},          // stemmed
		{"dir", "filesystem/list_directory"},             // a word typed in part
	} {
		res, total := ix.Search(tc.query, 3)
		if len(res) == 0 || total < len(res) {
			t.Errorf("%q: %d results of %d", tc.query, len(res), total)
			continue
		}
		if got := res[0].Server + "/" + res[0].Tool; got != tc.first {
			t.Errorf("%q: first %s (%v), want %s", tc.query, got, res, tc.first)
		}
		for i := 1; i < len(res); i++ {
			if res[i].Score > res[i-1].Score {
				t.Errorf("%q: not ordered by score: %v", tc.query, res)
			}
		}
	}
	if res, total := ix.Search("zebra quantum", 5); len(res) != 0 || total != 0 {
		t.Errorf("unrelated words found %v", res)
	}
	// An empty query (or only stop words) lists every tool, paged, in
	// server then listing order.
	res, total := ix.Page("", 2, 2)
	if total != 6 || len(res) != 2 || res[0].Tool != "move_file" || res[1].Tool != "git_log" || res[0].Score != 0 {
		t.Errorf("Page(\"\", 2, 2) = %v, %d", res, total)
	}
	if _, total := ix.Search("the of and", 1); total != 6 {
		t.Errorf("stop words only: total %d, want every tool", total)
	}
	// An offset past the end (or a huge one) gives nothing, and no panic.
	for _, off := range []int{6, 1 << 62, int(^uint(0) >> 1)} {
		if res, total := ix.Page("file", off, 100); len(res) != 0 || total == 0 {
			t.Errorf("Page(file, %d, 100) = %v, %d", off, res, total)
		}
	}
	// Paging a ranking gives its parts.
	all, _ := ix.Page("file", 0, 10)
	second, _ := ix.Page("file", 1, 1)
	if len(all) < 2 || len(second) != 1 || second[0].Tool != all[1].Tool {
		t.Errorf("Page(file, 1, 1) = %v; the ranking: %v", second, all)
	}
}

// TestBuildReuses: a rebuild reads again only the servers that changed.
func TestBuildReuses(t *testing.T) {
	a := []Server{
		{Name: "a", Tools: []Tool{{Name: "x", ExposedAs: "x", Raw: json.RawMessage(`{"name":"x","description":"alpha"}`)}}},
		{Name: "b", Tools: []Tool{{Name: "y", ExposedAs: "y", Raw: json.RawMessage(`{"name":"y","description":"beta"}`)}}},
	}
	ix := Build(a, nil)
	if Build(slices.Clone(a), ix) != ix {
		t.Error("nothing changed, yet a new index")
	}
	b := slices.Clone(a)
	b[1] = Server{Name: "b", Tools: []Tool{{Name: "y", ExposedAs: "y", Raw: json.RawMessage(`{"name":"y","description":"gamma"}`)}}}
	re := Build(b, ix)
	if !re.Reuses(ix, "a") || re.Reuses(ix, "b") {
		t.Error("want a reused, b read again")
	}
	if r, _ := re.Search("gamma", 1); len(r) != 1 || r[0].Tool != "y" {
		t.Errorf("gamma: %v", r)
	}
	if r, _ := re.Search("beta", 1); len(r) != 0 {
		t.Errorf("beta still found: %v", r)
	}
	// A tool renamed in the catalog (ExposedAs) is a change too.
	c := slices.Clone(a)
	c[0] = Server{Name: "a", Tools: []Tool{{Name: "x", ExposedAs: "", Raw: a[0].Tools[0].Raw}}}
	if Build(c, ix).Reuses(ix, "a") {
		t.Error("a reused after its exposure changed")
	}
	if r, ok := Build(c, ix).Lookup("a", "x"); !ok || r.ExposedAs != "" {
		t.Errorf("Lookup a/x = %+v %v", r, ok)
	}
}

// TestFromCatalog: filters, shadowing, duplicates and invalid tools.
func TestFromCatalog(t *testing.T) {
	parse := func(name string) catalog.Item {
		it, err := catalog.ParseTool([]byte(`{"name":"` + name + `","description":"d"}`))
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	srcs := []catalog.Source{
		{Server: "a", Tools: []catalog.Item{parse("echo"), parse("secret_tool")}, Filter: catalog.Filter{Deny: []string{"secret*"}}},
		{Server: "b", Tools: []catalog.Item{parse("echo"), parse("echo"), parse("hub_thing")}},
	}
	cat := catalog.Build(srcs, nil)
	got := FromCatalog(cat, srcs, map[string]string{"a": "A server"})
	var lines []string
	for _, s := range got {
		for _, tl := range s.Tools {
			lines = append(lines, s.Name+"/"+tl.Name+"="+tl.ExposedAs)
		}
	}
	if want := []string{"a/echo=echo", "b/echo=", "b/hub_thing="}; !slices.Equal(lines, want) {
		t.Errorf("FromCatalog = %q, want %q (filtered out, shadowed kept once, reserved kept)", lines, want)
	}
	if got[0].Description != "A server" {
		t.Errorf("description %q", got[0].Description)
	}
}

func TestServerDescription(t *testing.T) {
	got := ServerDescription("Registered.", json.RawMessage(`{"instructions":"Use me.","serverInfo":{"name":"x","title":"X Tools"}}`))
	if got != "Registered.\nX Tools\nUse me." {
		t.Errorf("ServerDescription = %q", got)
	}
}

func TestText(t *testing.T) {
	ix := small(t)
	res, total := ix.Search("read a file", 2)
	txt := Text("read a file", res, total, 0)
	if !strings.Contains(txt, `1. server "filesystem" tool "read_text_file": Read the complete contents of a file as text.`) ||
		!strings.Contains(txt, `input schema: {"type":"object","properties":{"path":{"type":"string"}}}`) || !strings.Contains(txt, "offset 2 for more") {
		t.Errorf("Text:\n%s", txt)
	}
	shadowed := []Result{{Server: "b", Tool: "echo", Description: strings.Repeat("long ", 100), InputSchema: json.RawMessage(`{}`)}}
	if txt := Text("echo", shadowed, 1, 0); !strings.Contains(txt, "call it with hub_call_tool") || !strings.Contains(txt, "…") {
		t.Errorf("Text of a shadowed tool with a long description:\n%s", txt)
	}
	if txt := Text("zebra", nil, 0, 0); !strings.Contains(txt, "No tool matches") {
		t.Errorf("no match: %s", txt)
	}
}

func TestRecent(t *testing.T) {
	var r Recent
	for _, tc := range []struct {
		name    string
		changed bool
		names   []string
	}{
		{"a", true, []string{"a"}},
		{"b", true, []string{"a", "b"}},
		{"a", false, []string{"b", "a"}},
		{"c", true, []string{"a", "c"}}, // b, least recently used, goes
	} {
		if got := r.Use(tc.name, 2); got != tc.changed {
			t.Errorf("Use(%s) = %v", tc.name, got)
		}
		if got := r.Names(); !slices.Equal(got, tc.names) {
			t.Errorf("after %s: %v, want %v", tc.name, got, tc.names)
		}
	}
}

func TestExposure(t *testing.T) {
	parse := func(name string) catalog.Item {
		it, _ := catalog.ParseTool([]byte(`{"name":"` + name + `"}`))
		return it
	}
	own := parse("hub_search_tools")
	var items []catalog.Item
	for _, n := range []string{"t1", "t2", "t3", "keep_me"} {
		items = append(items, parse(n))
	}
	cat := catalog.Build([]catalog.Source{{Server: "s", Tools: items}}, &catalog.Options{Own: []catalog.Item{own}})
	for _, tc := range []struct {
		e    Exposure
		want bool
	}{
		{Exposure{}, false},
		{Exposure{Mode: ModeSearch}, true},
		{Exposure{Mode: ModeAuto, SearchAbove: 4}, false},
		{Exposure{Mode: ModeAuto, SearchAbove: 3}, true},
		{Exposure{Mode: ModeAuto}, false}, // 60
	} {
		if got := tc.e.Searching(cat); got != tc.want {
			t.Errorf("%+v: Searching = %v", tc.e, got)
		}
	}
	e := Exposure{Mode: ModeSearch, Always: []string{"keep*"}}
	list := ToolsResult(cat, e.Listed(cat), []string{"t2", "gone"})
	if string(list) != `{"tools":[{"name":"hub_search_tools","inputSchema":{"type":"object"}},{"name":"keep_me","inputSchema":{"type":"object"}},{"name":"t2","inputSchema":{"type":"object"}}]}` {
		t.Errorf("ToolsResult = %s", list)
	}
	if err := (Exposure{Mode: "some"}).Check(); err == nil {
		t.Error("a bad mode passed Check")
	}
}

// TestAppendCallResult: the hand-written JSON is what encoding/json makes
// of the same result.
func TestAppendCallResult(t *testing.T) {
	ix := small(t)
	for _, q := range []string{"read a \"file\" <now>", "", "zebra"} {
		res, total := ix.Page(q, 1, 2)
		got := AppendCallResult(nil, q, res, total, 1)
		if res == nil {
			res = []Result{}
		}
		want, _ := json.Marshal(map[string]any{
			"content":           []map[string]string{{"type": "text", "text": Text(q, res, total, 1)}},
			"structuredContent": map[string]any{"tools": res, "total": total},
		})
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%q: %v: %s", q, err, got)
		}
		_ = json.Unmarshal(want, &w)
		if gb, _ := json.Marshal(g); string(gb) != string(mustMarshal(w)) {
			t.Errorf("%q:\n got %s\nwant %s", q, gb, want)
		}
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestLongQuery: a query of a million words costs what its first distinct
// words cost (quadratic work here would time the test out).
func TestLongQuery(t *testing.T) {
	ix := small(t)
	var b strings.Builder
	for i := range 1_000_000 {
		fmt.Fprintf(&b, "qux%d ", i%100_000) // no tool's word, nor one the word table relates to one
	}
	b.WriteString("forecast")
	if res, _ := ix.Search(b.String(), 3); len(res) != 0 {
		t.Errorf("the 64 first distinct words found %v; \"forecast\" comes after them", res)
	}
	if qt := queryTerms(b.String()); len(qt) != maxQueryTerms {
		t.Errorf("%d query terms", len(qt))
	}
	if res, _ := ix.Search("forecast "+b.String(), 3); len(res) == 0 || res[0].Tool != "get_forecast" {
		t.Errorf("forecast first: %v", res)
	}
}

// FuzzSearch: any query, offset and limit rank without a panic, in order,
// within the bounds.
func FuzzSearch(f *testing.F) {
	for _, q := range []string{"", "read a file", "dir", "ÄÖÜ ß", "a_b-c.d eFg", "\x00\xff", strings.Repeat("x", 300)} {
		f.Add(q, 0, 10)
	}
	f.Add("file", -5, -1)
	f.Add("file", 3, 1<<40)
	ix := small(f)
	f.Fuzz(func(t *testing.T, q string, offset, limit int) {
		res, total := ix.Page(q, offset, limit)
		if len(res) > max(limit, 0) || len(res) > total || total > ix.Len() {
			t.Fatalf("Page(%q, %d, %d): %d results of %d", q, offset, limit, len(res), total)
		}
		for i := 1; i < len(res); i++ {
			if res[i].Score > res[i-1].Score {
				t.Fatalf("not in order: %v", res)
			}
		}
	})
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct{ title, desc, want string }{
		{"", "Reads a file.\n\nOnly within allowed directories.", "Reads a file."},
		{"", "  Reads\ta   file,\nwhole.  ", "Reads a file, whole."},
		{"Read File", "Reads a file.", "Read File — Reads a file."},
		{"Read file", "read FILE", "read FILE"}, // the title says nothing more
		{"Title only", "", "Title only"},
		{"", strings.Repeat("ab ", 200), strings.TrimSpace(strings.Repeat("ab ", 80)) + "…"}, // 239 runes, then the cut
	} {
		if got := summary(tc.title, tc.desc); got != tc.want {
			t.Errorf("summary(%q, %q) = %q, want %q", tc.title, tc.desc, got, tc.want)
		}
	}
}
