package hub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/toolsearch"
)

// golden527 returns 527 tools of 70 servers made of the 45 real tool
// definitions (descriptions and input schemas) of mcpproxy-go's golden
// corpus, dealt round-robin; it skips without MCPHUB_EVAL_SEARCH (make
// eval-search sets it) or without shared/data/tool-retrieval.
func golden527(t *testing.T) []catalog.Source {
	if os.Getenv("MCPHUB_EVAL_SEARCH") == "" {
		t.Skip("make eval-search runs it (MCPHUB_EVAL_SEARCH=1)")
	}
	dir := os.Getenv("MCPHUB_SEARCH_DATA")
	for d, _ := os.Getwd(); dir == "" && d != filepath.Dir(d); d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, "shared", "data", "tool-retrieval")); err == nil && st.IsDir() {
			dir = filepath.Join(d, "shared", "data", "tool-retrieval")
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "mcpproxy-golden", "corpus_v2.tools.json"))
	if err != nil {
		t.Skipf("the retrieval data sets are absent: %v", err)
	}
	var corpus struct {
		Tools []struct {
			Tool, Description string
			Schema            json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	srcs := make([]catalog.Source, 70)
	for i := range 527 {
		c := corpus.Tools[i%len(corpus.Tools)]
		raw, _ := json.Marshal(map[string]any{"name": c.Tool, "description": c.Description, "inputSchema": c.Schema})
		it, err := catalog.ParseTool(raw)
		if err != nil {
			t.Fatal(err)
		}
		s := &srcs[i%70]
		s.Server = fmt.Sprintf("server%02d", i%70)
		s.Tools = append(s.Tools, it)
	}
	return srcs
}

// TestSearchModeListSize measures what tools/list costs a model in each
// mode for a catalog of 527 tools of 70 servers (the figure of issue 28),
// made of the 45 real tool definitions (descriptions and input schemas) of
// mcpproxy-go's golden corpus, dealt round-robin to 70 servers under the
// prefix policy (so that every one is listed). make eval-search runs it
// (MCPHUB_EVAL_SEARCH=1); it needs shared/data/tool-retrieval.
func TestSearchModeListSize(t *testing.T) {
	srcs := golden527(t)
	for _, admin := range []AdminMode{AdminOff, AdminOn} {
		sizes := map[toolsearch.Mode]int{}
		for _, mode := range []toolsearch.Mode{toolsearch.ModeAll, toolsearch.ModeSearch} {
			h, err := New(&Options{Admin: admin, Catalog: catalog.Options{Policy: catalog.PolicyPrefix}, Expose: toolsearch.Exposure{Mode: mode}})
			if err != nil {
				t.Fatal(err)
			}
			cat := catalog.Build(srcs, h.catalogOptions())
			st := h.newCatalogState(cat, srcs, nil, nil)
			list := st.listResult
			if !st.searching {
				list = cat.ToolsResult()
			}
			sizes[mode] = len(list)
			if mode == toolsearch.ModeAll && len(cat.Tools()) < 527 {
				t.Errorf("%d tools listed, want 527 and the hub's own", len(cat.Tools()))
			}
			h.Close()
		}
		all, search := sizes[toolsearch.ModeAll], sizes[toolsearch.ModeSearch]
		t.Logf("admin tools %s: tools/list of 527 tools of 70 servers: all %d characters of JSON (~%d tokens at 4 a token); search %d (~%d tokens): %.1f%% less",
			admin, all, all/4, search, search/4, 100*(1-float64(search)/float64(all)))
		if admin == AdminOff && search > 6000 {
			t.Errorf("search mode tools/list is %d characters with admin tools off, want ≤ 6000", search)
		}
	}
}

// bigCatalog returns sources of n generated tools over servers servers.
func bigCatalog(n, servers int) []catalog.Source {
	words := []string{"read", "write", "list", "create", "delete", "file", "directory", "issue", "branch", "commit", "message", "user",
		"project", "task", "invoice", "order", "report", "database", "document", "calendar", "event", "email", "image", "weather",
		"forecast", "flight", "hotel", "recipe", "article", "news", "secret", "cluster", "container", "bucket", "log", "alert"}
	srcs := make([]catalog.Source, servers)
	for i := range n {
		desc := ""
		for j := range 24 {
			desc += words[(i*7+j*j)%len(words)] + " "
		}
		raw, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("%s_%s_%d", words[i%len(words)], words[(i/3)%len(words)], i), "description": desc,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{words[i%11]: map[string]any{"type": "string", "description": desc[:40]}}}})
		it, _ := catalog.ParseTool(raw)
		s := &srcs[i%servers]
		s.Server = fmt.Sprintf("server%02d", i%servers)
		s.Tools = append(s.Tools, it)
	}
	return srcs
}

// BenchmarkSearchVsHubCall: a hub_search_tools call through a client
// session over 527 tools, beside a tools/call the hub answers itself
// (hub_list_servers, go-sdk's path) on the same session.
func BenchmarkSearchVsHubCall(b *testing.B) {
	h, c := startHub(b, &Options{})
	srcs := bigCatalog(527, 70)
	h.cat.Store(h.newCatalogState(catalog.Build(srcs, h.catalogOptions()), srcs, nil, h.cat.Load()))
	for _, bc := range []struct{ name, params string }{
		{"hub_search_tools", `{"name":"hub_search_tools","arguments":{"query":"create a calendar event and email the invoice","limit":5}}`},
		{"hub_list_servers", `{"name":"hub_list_servers","arguments":{}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			id := 100
			for b.Loop() {
				id++
				c.call(b, id, "tools/call", bc.params)
			}
		})
	}
}

// TestSearchCostVsHubCall compares, in the same run and interleaved, a
// hub_search_tools call through a client session over 527 tools (70
// servers) with a tools/call the hub answers itself (hub_list_servers):
// the median of 15 batches of 200 calls each. make eval-search runs it.
func TestSearchCostVsHubCall(t *testing.T) {
	srcs := golden527(t)
	// Prefixed names: no shadowed tools for hub_list_servers to report.
	h, c := startHub(t, &Options{Catalog: catalog.Options{Policy: catalog.PolicyPrefix}})
	h.cat.Store(h.newCatalogState(catalog.Build(srcs, h.catalogOptions()), srcs, nil, h.cat.Load()))
	calls := []string{
		`{"name":"hub_search_tools","arguments":{"query":"show me the recent commits of the repository","limit":5}}`,
		`{"name":"hub_list_servers","arguments":{}}`,
	}
	var batches [2][]time.Duration
	id := 100
	for range searchCostRounds {
		for i, params := range calls {
			start := time.Now()
			for range 200 {
				id++
				c.call(t, id, "tools/call", params)
			}
			batches[i] = append(batches[i], time.Since(start)/200)
		}
	}
	for i := range batches {
		slices.Sort(batches[i])
	}
	s, l := batches[0][len(batches[0])/2], batches[1][len(batches[1])/2]
	t.Logf("through a stdio session, 527 tools: hub_search_tools (limit 5) %v a call, hub_list_servers %v: ratio %.2f (medians of 15 interleaved batches of 200; the 527 tools of TestSearchModeListSize)",
		s.Round(time.Microsecond), l.Round(time.Microsecond), float64(s)/float64(l))
}

// searchCostRounds is the batches of TestSearchCostVsHubCall (more to
// profile it: MCPHUB_SEARCH_ROUNDS).
var searchCostRounds = func() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("MCPHUB_SEARCH_ROUNDS"), &n); err == nil && n > 0 {
		return n
	}
	return 15
}()
