package toolsearch

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
)

// The evaluation reads the public retrieval sets of
// shared/data/tool-retrieval (see its README) from where they are: the
// directory $MCPHUB_SEARCH_DATA names, else the first
// shared/data/tool-retrieval found walking up from the package directory
// (../shared beside a checkout, as on the team's machines and in CI).
// Without them it skips, but fails under CI (CI set), where they are laid.

const dataEnv = "MCPHUB_SEARCH_DATA"

func dataDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(dataEnv)
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			c := filepath.Join(d, "shared", "data", "tool-retrieval")
			if st, err := os.Stat(c); err == nil && st.IsDir() {
				dir = c
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if dir == "" {
		msg := "the retrieval data sets are absent: no shared/data/tool-retrieval above " +
			"the package directory and $" + dataEnv + " is not set"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (under CI they must be there)")
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Fatalf("%s: not the tool-retrieval data sets: %v", dir, err)
	}
	return dir
}

// evalTool is one tool of a data set.
type evalTool struct {
	server, name, description string
	schema                    json.RawMessage
}

// indexOf loads tools into an index the way the hub does: each definition
// parsed by catalog.ParseTool, merged by catalog.Build, read by
// FromCatalog.
func indexOf(t testing.TB, tools []evalTool, p *params) *Index {
	t.Helper()
	bySrv := map[string]*catalog.Source{}
	var order []string
	for _, tl := range tools {
		def := map[string]any{"name": tl.name, "description": tl.description}
		if tl.schema != nil {
			def["inputSchema"] = tl.schema
		}
		raw, err := json.Marshal(def)
		if err != nil {
			t.Fatal(err)
		}
		it, err := catalog.ParseTool(raw)
		if err != nil {
			t.Fatalf("tool %s/%s: %v", tl.server, tl.name, err)
		}
		src := bySrv[tl.server]
		if src == nil {
			src = &catalog.Source{Server: tl.server}
			bySrv[tl.server] = src
			order = append(order, tl.server)
		}
		src.Tools = append(src.Tools, it)
	}
	var srcs []catalog.Source
	for _, s := range order {
		srcs = append(srcs, *bySrv[s])
	}
	cat := catalog.Build(srcs, nil)
	return build(FromCatalog(cat, srcs, nil), nil, p)
}

type goldenSet struct {
	tools   []evalTool
	queries []goldenQuery
}

type goldenQuery struct {
	id, query string
	labels    map[string]int // tool id (server:tool) → relevance
}

func loadGolden(t testing.TB, dir string) goldenSet {
	var corpus struct {
		Tools []struct {
			Server, Tool, Description string
			Schema                    json.RawMessage
		}
	}
	readJSON(t, filepath.Join(dir, "mcpproxy-golden", "corpus_v2.tools.json"), &corpus)
	var gold struct {
		Queries []struct {
			ID, Query string
			Labels    []struct {
				ToolID    string `json:"tool_id"`
				Relevance int
			}
		}
	}
	readJSON(t, filepath.Join(dir, "mcpproxy-golden", "retrieval_golden_v1.json"), &gold)
	var g goldenSet
	for _, c := range corpus.Tools {
		g.tools = append(g.tools, evalTool{server: c.Server, name: c.Tool, description: c.Description, schema: c.Schema})
	}
	for _, q := range gold.Queries {
		gq := goldenQuery{id: q.ID, query: q.Query, labels: map[string]int{}}
		for _, l := range q.Labels {
			gq.labels[l.ToolID] = l.Relevance
		}
		g.queries = append(g.queries, gq)
	}
	if len(g.tools) != 45 || len(g.queries) != 47 {
		t.Fatalf("golden set: %d tools, %d queries; want 45 and 47", len(g.tools), len(g.queries))
	}
	return g
}

type toolESet struct {
	tools  []evalTool
	single []toolEQuery
	multi  []toolEQuery
}

type toolEQuery struct {
	query string
	tools []string
}

// toolEServer is the server the ToolE tools are loaded under: ToolE's
// tools are ChatGPT plugins without a server, so they all share one.
const toolEServer = "metatool"

func loadToolE(t testing.TB, dir string) toolESet {
	var des map[string]string
	readJSON(t, filepath.Join(dir, "metatool", "plugin_des.json"), &des)
	var s toolESet
	for name, d := range des {
		s.tools = append(s.tools, evalTool{server: toolEServer, name: name, description: d})
	}
	slices.SortFunc(s.tools, func(a, b evalTool) int { return strings.Compare(a.name, b.name) })
	f, err := os.Open(filepath.Join(dir, "metatool", "all_clean_data.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil || len(head) != 2 || head[0] != "Query" || head[1] != "Tool" {
		t.Fatalf("all_clean_data.csv: header %q, %v", head, err)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s.single = append(s.single, toolEQuery{query: rec[0], tools: []string{rec[1]}})
	}
	var multi []struct {
		Query string
		Tool  []string
	}
	readJSON(t, filepath.Join(dir, "metatool", "multi_tool_query_golden.json"), &multi)
	for _, m := range multi {
		s.multi = append(s.multi, toolEQuery{query: m.Query, tools: m.Tool})
	}
	if len(s.tools) != 199 || len(s.single) != 20614 || len(s.multi) != 497 {
		t.Fatalf("ToolE: %d tools, %d single, %d multi; want 199, 20614, 497", len(s.tools), len(s.single), len(s.multi))
	}
	return s
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// metrics are the retrieval scores of one data set.
type metrics struct {
	n      int
	recall map[int]float64 // recall@k: share of a query's relevant tools in its first k, averaged
	hit    map[int]float64 // hit@k: share of queries with a relevant tool in their first k
	mrr    float64         // 1/rank of the first relevant tool, averaged
	ndcg10 float64         // nDCG@10 with the graded relevance as gain
}

var cutoffs = []int{1, 3, 5, 10}

// evaluate ranks each query and scores the ranking against labels (tool
// id → graded relevance).
func evaluate(ix *Index, queries []string, labels []map[string]int) metrics {
	m := metrics{n: len(queries), recall: map[int]float64{}, hit: map[int]float64{}}
	for i, q := range queries {
		res, _ := ix.Search(q, 10)
		lab := labels[i]
		nrel := 0
		for _, r := range lab {
			if r > 0 {
				nrel++
			}
		}
		found := 0
		first := 0
		dcg := 0.0
		for r, x := range res {
			rel := lab[x.Server+":"+x.Tool]
			if rel == 0 {
				continue
			}
			found++
			if first == 0 {
				first = r + 1
			}
			dcg += float64(rel) / math.Log2(float64(r+2))
		}
		for _, k := range cutoffs {
			in := 0
			for r := 0; r < k && r < len(res); r++ {
				if lab[res[r].Server+":"+res[r].Tool] > 0 {
					in++
				}
			}
			m.recall[k] += float64(in) / float64(nrel)
			if in > 0 {
				m.hit[k]++
			}
		}
		if first > 0 {
			m.mrr += 1 / float64(first)
		}
		rels := make([]int, 0, len(lab))
		for _, r := range lab {
			rels = append(rels, r)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(rels)))
		idcg := 0.0
		for r, rel := range rels {
			if r == 10 {
				break
			}
			idcg += float64(rel) / math.Log2(float64(r+2))
		}
		m.ndcg10 += dcg / idcg
	}
	n := float64(len(queries))
	for _, k := range cutoffs {
		m.recall[k] /= n
		m.hit[k] /= n
	}
	m.mrr /= n
	m.ndcg10 /= n
	return m
}

func (m metrics) String() string {
	return fmt.Sprintf("n=%d R@1 %.3f R@3 %.3f R@5 %.3f R@10 %.3f hit@1 %.3f hit@5 %.3f MRR %.3f nDCG@10 %.3f",
		m.n, m.recall[1], m.recall[3], m.recall[5], m.recall[10], m.hit[1], m.hit[5], m.mrr, m.ndcg10)
}

func goldenEval(t testing.TB, g goldenSet, p *params) metrics {
	ix := indexOf(t, g.tools, p)
	var qs []string
	var labs []map[string]int
	for _, q := range g.queries {
		qs = append(qs, q.query)
		labs = append(labs, q.labels)
	}
	return evaluate(ix, qs, labs)
}

func toolEEval(t testing.TB, s toolESet, queries []toolEQuery, p *params) metrics {
	ix := indexOf(t, s.tools, p)
	var qs []string
	var labs []map[string]int
	for _, q := range queries {
		qs = append(qs, q.query)
		lab := map[string]int{}
		for _, tl := range q.tools {
			lab[toolEServer+":"+tl] = 1
		}
		labs = append(labs, lab)
	}
	return evaluate(ix, qs, labs)
}

// baseline reads mcpproxy-go's own scores on the golden set.
func baseline(t testing.TB, dir string) metrics {
	var b struct {
		RecallAt map[string]float64 `json:"recall_at"`
		MRR      float64            `json:"mrr"`
		NDCG10   float64            `json:"ndcg_at_10"`
	}
	readJSON(t, filepath.Join(dir, "mcpproxy-golden", "baseline_v1.json"), &b)
	m := metrics{n: 47, recall: map[int]float64{}, mrr: b.MRR, ndcg10: b.NDCG10}
	for _, k := range cutoffs {
		m.recall[k] = b.RecallAt[fmt.Sprint(k)]
	}
	return m
}

// The floors TestRetrievalQuality holds the ranking to: the issue's
// targets, all met (golden recall@5 0.869, ToolE hit@5 0.656, multi-tool
// recall@5 0.703 measured).
const (
	floorGoldenRecall5 = 0.75
	floorToolEHit5     = 0.65
	floorMultiRecall5  = 0.55
)

// TestRetrievalQuality loads the public retrieval sets into the index the
// hub uses (catalog.ParseTool, catalog.Build, FromCatalog, Build) and holds
// the ranking to quality floors. It prints the scores beside the anchors;
// make eval-search runs it with -v (and the 5,000-tool benchmark).
func TestRetrievalQuality(t *testing.T) {
	dir := dataDir(t)
	g := loadGolden(t, dir)
	s := loadToolE(t, dir)
	gm := goldenEval(t, g, &defaultParams)
	bm := baseline(t, dir)
	start := time.Now()
	sm := toolEEval(t, s, s.single, &defaultParams)
	perQuery := time.Since(start) / time.Duration(len(s.single))
	mm := toolEEval(t, s, s.multi, &defaultParams)
	t.Logf("mcpproxy-go golden set (45 tools of 7 servers, 47 queries):")
	t.Logf("  %-22s R@1 %.3f  R@3 %.3f  R@5 %.3f  R@10 %.3f  MRR %.3f  nDCG@10 %.3f", "toolsearch", gm.recall[1], gm.recall[3], gm.recall[5], gm.recall[10], gm.mrr, gm.ndcg10)
	t.Logf("  %-22s R@1 %.3f  R@3 %.3f  R@5 %.3f  R@10 %.3f  MRR %.3f  nDCG@10 %.3f", "mcpproxy-go baseline_v1", bm.recall[1], bm.recall[3], bm.recall[5], bm.recall[10], bm.mrr, bm.ndcg10)
	t.Logf("ToolE single-tool queries (all %d, 199 tools): hit@1 %.3f  hit@5 %.4f  (plain BM25 anchor: hit@5 0.540); %v a query with the scoring",
		sm.n, sm.hit[1], sm.hit[5], perQuery.Round(100*time.Nanosecond))
	t.Logf("ToolE multi-tool queries (%d): recall@5 %.3f  (plain BM25 anchor: 0.453)", mm.n, mm.recall[5])
	if gm.recall[5] < floorGoldenRecall5 {
		t.Errorf("golden recall@5 %.3f < %.2f", gm.recall[5], floorGoldenRecall5)
	}
	if sm.hit[5] < floorToolEHit5 {
		t.Errorf("ToolE hit@5 %.3f < %.2f", sm.hit[5], floorToolEHit5)
	}
	if mm.recall[5] < floorMultiRecall5 {
		t.Errorf("ToolE multi-tool recall@5 %.3f < %.2f", mm.recall[5], floorMultiRecall5)
	}
}
