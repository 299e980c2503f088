package toolsearch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/catalog"
)

// copiesCatalog is a catalog, read as the hub reads it (catalog.ParseTool,
// catalog.Build, FromCatalog), where fx1, fx2 and fx3 offer the very same
// cwd, fx1 and fx2 the very same pid, and two servers a cwd that is
// another tool: "mover" with another description, "wide" with the same
// description and another input schema; fx2 describes itself as working
// directory helpers. The sources are not in name
// order: the catalog's rule (the first server by name holds the name)
// decides which copy is listed. It returns the index and each server's
// tools' definitions.
func copiesCatalog(t testing.TB) (*Index, map[string]map[string]json.RawMessage) {
	t.Helper()
	const (
		cwd  = `{"name":"cwd","description":"Returns the working directory.","inputSchema":{"type":"object"}}`
		pid  = `{"name":"pid","description":"Returns the process id.","inputSchema":{"type":"object"}}`
		cwd2 = `{"name":"cwd","description":"Changes the working directory.","inputSchema":{"type":"object"}}`
		cwd3 = `{"name":"cwd","description":"Returns the working directory.","inputSchema":{"type":"object","properties":{"of":{"type":"string","description":"the process"}}}}`
		run  = `{"name":"run","description":"Runs a command in a directory.","inputSchema":{"type":"object"}}`
	)
	defs := map[string][]string{
		"fx2":   {cwd, pid},
		"fx3":   {cwd},
		"mover": {cwd2},
		"fx1":   {cwd, pid},
		"wide":  {cwd3},
		"shell": {run},
	}
	raw := map[string]map[string]json.RawMessage{}
	var srcs []catalog.Source
	for _, name := range []string{"fx2", "fx3", "mover", "fx1", "wide", "shell"} {
		src := catalog.Source{Server: name}
		raw[name] = map[string]json.RawMessage{}
		for _, d := range defs[name] {
			it, err := catalog.ParseTool([]byte(d))
			if err != nil {
				t.Fatal(err)
			}
			src.Tools = append(src.Tools, it)
			raw[name][it.Key] = it.Raw
		}
		srcs = append(srcs, src)
	}
	cat := catalog.Build(srcs, nil)
	return Build(FromCatalog(cat, srcs, map[string]string{"shell": "Runs commands", "fx2": "Working directory helpers"}), nil), raw
}

// TestCopiesCollapse: a tool several servers offer with the same
// definition is one result, under the first server by name (the one a
// call by the tool's name reaches) or the one the query names, naming the
// others in AlsoOn; a tool of the same name and another definition is a
// result of its own; the first k results are k different tools.
func TestCopiesCollapse(t *testing.T) {
	ix, raw := copiesCatalog(t)
	for _, tc := range []struct {
		name          string
		query         string
		offset, limit int
		want          []string // server/tool[alsoOn], in order
		total         int
	}{
		{"three copies are one result, under the first server by name", "working directory", 0, 10,
			[]string{"fx1/cwd[fx2 fx3]", "mover/cwd[]", "wide/cwd[]", "fx1/pid[fx2]", "shell/run[]"}, 5},
		{"two copies are one result", "process id", 0, 10,
			[]string{"fx1/pid[fx2]", "wide/cwd[]"}, 2},
		{"the first k are k different tools", "working directory", 0, 2,
			[]string{"fx1/cwd[fx2 fx3]", "mover/cwd[]"}, 5},
		{"the next page goes on with the next tool", "working directory", 1, 2,
			[]string{"mover/cwd[]", "wide/cwd[]"}, 5},
		{"a query naming a server takes that server's copy", "fx3 working directory", 0, 1,
			[]string{"fx3/cwd[fx1 fx2]"}, 5},
		{"the copy of the second server by name", "cwd on fx2", 0, 1,
			[]string{"fx2/cwd[fx1 fx3]"}, 4},
		{"naming a server of two copies", "fx2 process id", 0, 2,
			[]string{"fx2/pid[fx1]", "fx2/cwd[fx1 fx3]"}, 3},
		{"naming a server that has no copy: the first by name", "working directory of mover", 0, 2,
			[]string{"mover/cwd[]", "fx1/cwd[fx2 fx3]"}, 5},
		{"an empty query lists each tool once", "", 0, 100,
			[]string{"fx1/cwd[fx2 fx3]", "fx1/pid[fx2]", "mover/cwd[]", "shell/run[]", "wide/cwd[]"}, 5},
		{"an empty query, paged", "", 3, 2,
			[]string{"shell/run[]", "wide/cwd[]"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, total := ix.Page(tc.query, tc.offset, tc.limit)
			var got []string
			for _, r := range res {
				got = append(got, r.Server+"/"+r.Tool+fmt.Sprint(r.AlsoOn))
			}
			if !slices.Equal(got, tc.want) || total != tc.total {
				t.Errorf("Page(%q, %d, %d) = %q (total %d), want %q (%d)", tc.query, tc.offset, tc.limit, got, total, tc.want, tc.total)
			}
			// Each result is another tool, and AlsoOn names exactly the
			// other servers with its very definition.
			var seen [][]byte
			for _, r := range res {
				def := raw[r.Server][r.Tool]
				for _, d := range seen {
					if bytes.Equal(d, def) {
						t.Errorf("%s/%s: a copy of a tool ranked above it", r.Server, r.Tool)
					}
				}
				seen = append(seen, def)
				var same []string
				for srv, tools := range raw {
					if srv != r.Server && bytes.Equal(tools[r.Tool], def) {
						same = append(same, srv)
					}
				}
				slices.Sort(same)
				if !slices.Equal(same, r.AlsoOn) {
					t.Errorf("%s/%s: AlsoOn %q, want %q", r.Server, r.Tool, r.AlsoOn, same)
				}
			}
		})
	}
	// The first copy is the one the catalog lists under the tool's name.
	if res, _ := ix.Search("working directory", 1); len(res) != 1 || res[0].ExposedAs != "cwd" {
		t.Errorf("the first copy is the one listed as cwd: %+v", res)
	}
	// The result of a query naming a server is its copy, reached by
	// hub_call_tool (it is not listed under the name).
	if res, _ := ix.Search("fx3 working directory", 1); len(res) != 1 || res[0].ExposedAs != "" {
		t.Errorf("fx3's copy is shadowed: %+v", res)
	}
}

// TestCopiesScore: the one result of a group of copies has the best
// score of them, whichever copy it shows: fx2 describes itself with the
// words of the query, so its copy scores best, and the result is fx1's
// copy (the query names no server) at fx2's copy's score.
func TestCopiesScore(t *testing.T) {
	ix, _ := copiesCatalog(t)
	const q = "working directory"
	buf := ix.score(ix.expand(q))
	scores := slices.Clone(*buf)
	scorePool.Put(buf)
	copyScore := func(server string) float64 {
		for si, s := range ix.segs {
			if s.server.Name == server {
				return scores[ix.base[si]+s.byName["cwd"]]
			}
		}
		t.Fatalf("no server %s", server)
		return 0
	}
	fx1, fx2, fx3 := copyScore("fx1"), copyScore("fx2"), copyScore("fx3")
	if fx2 <= fx1 || fx2 <= fx3 {
		t.Fatalf("fx2's copy should score best (its description has the words): fx1 %v fx2 %v fx3 %v", fx1, fx2, fx3)
	}
	res, _ := ix.Search(q, 1)
	if len(res) != 1 || res[0].Server != "fx1" || res[0].Score != math.Round(fx2*1000)/1000 {
		t.Errorf("%q: %+v, want fx1's cwd at fx2's score %.3f", q, res, fx2)
	}
}

// TestCopiesOutputs: the text for the model names the other servers of
// a tool (the first maxAlsoOn), and the structured result lists them.
func TestCopiesOutputs(t *testing.T) {
	ix, _ := copiesCatalog(t)
	res, total := ix.Search("process id", 1)
	txt := Text("process id", res, total, 0)
	if !strings.Contains(txt, `1. server "fx1" tool "pid": Returns the process id.`+"\n"+`   the same tool is on "fx2" too`) {
		t.Errorf("Text:\n%s", txt)
	}
	var out struct {
		StructuredContent struct {
			Tools []map[string]any
		}
	}
	if err := json.Unmarshal(AppendCallResult(nil, "process id", res, total, 0), &out); err != nil || len(out.StructuredContent.Tools) != 1 ||
		fmt.Sprint(out.StructuredContent.Tools[0]["alsoOn"]) != "[fx2]" {
		t.Errorf("structured result: %+v %v", out, err)
	}
	// A tool on no other server has no alsoOn at all.
	res, total = ix.Search("runs a command", 1)
	if b := AppendCallResult(nil, "runs a command", res, total, 0); bytes.Contains(b, []byte("alsoOn")) {
		t.Errorf("a tool of one server: %s", b)
	}
}

func TestWriteServers(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"a"}, `"a"`},
		{[]string{"a", "b", "c", "d", "e"}, `"a", "b", "c", "d", "e"`},
		{[]string{"a", "b", "c", "d", "e", "f", "g"}, `"a", "b", "c", "d", "e" and 2 more`},
	} {
		var b strings.Builder
		writeServers(&b, tc.in)
		if got := b.String(); got != tc.want {
			t.Errorf("writeServers(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestCopiesCountOnce: copies of a server's tools count once in the
// statistics, so a catalog with a server registered under several
// names ranks, score for score, as with it once.
func TestCopiesCountOnce(t *testing.T) {
	base := []Server{
		{Name: "fs", Tools: []Tool{
			{Name: "read_file", ExposedAs: "read_file", Raw: json.RawMessage(`{"name":"read_file","description":"Reads a file. Only works within allowed directories."}`)},
			{Name: "list_dir", ExposedAs: "list_dir", Raw: json.RawMessage(`{"name":"list_dir","description":"Lists a directory. Only works within allowed directories."}`)},
		}},
		{Name: "fx1", Tools: []Tool{
			{Name: "cwd", ExposedAs: "cwd", Raw: json.RawMessage(`{"name":"cwd","description":"Returns the working directory."}`)},
			{Name: "pid", ExposedAs: "pid", Raw: json.RawMessage(`{"name":"pid","description":"Returns the process id."}`)},
		}},
	}
	many := slices.Clone(base)
	for i := 2; i <= 22; i++ {
		many = append(many, Server{Name: fmt.Sprintf("fx%d", i), Tools: base[1].Tools})
	}
	one, all := Build(base, nil), Build(many, nil)
	for _, q := range []string{"works at a directory", "the working directory", "process id", "read a file"} {
		a, _ := one.Search(q, 10)
		b, _ := all.Search(q, 10)
		if len(a) != len(b) {
			t.Errorf("%q: %d results with one copy, %d with 22", q, len(a), len(b))
			continue
		}
		for i := range a {
			if a[i].Server != b[i].Server || a[i].Tool != b[i].Tool || a[i].Score != b[i].Score {
				t.Errorf("%q: %d. %s/%s %.3f with one copy, %s/%s %.3f with 22", q, i+1, a[i].Server, a[i].Tool, a[i].Score, b[i].Server, b[i].Tool, b[i].Score)
			}
		}
	}
}
