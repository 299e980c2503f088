package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// h8 independently computes the 8 hex digits appended to rewritten names.
func h8(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:4])
}

func mustParse(t testing.TB, parse func([]byte) (Item, error), raw string) Item {
	t.Helper()
	it, err := parse([]byte(raw))
	if err != nil {
		t.Fatalf("parse %s: %v", raw, err)
	}
	return it
}

func tool(t testing.TB, name string) Item {
	t.Helper()
	b, _ := json.Marshal(name)
	return mustParse(t, ParseTool, `{"name":`+string(b)+`,"inputSchema":{"type":"object"}}`)
}

func tools(t testing.TB, names ...string) []Item {
	t.Helper()
	var out []Item
	for _, n := range names {
		out = append(out, tool(t, n))
	}
	return out
}

func prompts(t testing.TB, names ...string) []Item {
	t.Helper()
	var out []Item
	for _, n := range names {
		b, _ := json.Marshal(n)
		out = append(out, mustParse(t, ParsePrompt, `{"name":`+string(b)+`}`))
	}
	return out
}

func resources(t testing.TB, uris ...string) []Item {
	t.Helper()
	var out []Item
	for _, u := range uris {
		b, _ := json.Marshal(u)
		out = append(out, mustParse(t, ParseResource, `{"uri":`+string(b)+`,"name":"r"}`))
	}
	return out
}

func templates(t testing.TB, uts ...string) []Item {
	t.Helper()
	var out []Item
	for _, u := range uts {
		b, _ := json.Marshal(u)
		out = append(out, mustParse(t, ParseTemplate, `{"uriTemplate":`+string(b)+`,"name":"t"}`))
	}
	return out
}

// exposed is the short form of an Entry compared by the naming tests.
type exposed struct {
	Name, Server, Original string
	Fixes                  []string
}

func summarise(es []Entry) []exposed {
	out := []exposed{}
	for _, e := range es {
		var fixes []string
		for _, f := range e.Fixes {
			if strings.HasPrefix(f, "name:") {
				fixes = append(fixes, f)
			}
		}
		out = append(out, exposed{e.Name, e.Server, e.Original, fixes})
	}
	return out
}

// checkCatalog verifies invariants that hold for every catalog.
func checkCatalog(t *testing.T, c *Catalog) {
	t.Helper()
	for _, kind := range []struct {
		name    string
		entries []Entry
		result  []byte
		field   string
		key     string
	}{
		{"tools", c.Tools(), c.ToolsResult(), "tools", "name"},
		{"prompts", c.Prompts(), c.PromptsResult(), "prompts", "name"},
		{"resources", c.Resources(), c.ResourcesResult(), "resources", "uri"},
		{"templates", c.Templates(), c.TemplatesResult(), "resourceTemplates", "uriTemplate"},
	} {
		if !json.Valid(kind.result) {
			t.Fatalf("%s result is not valid JSON: %s", kind.name, kind.result)
		}
		var res map[string][]json.RawMessage
		if err := json.Unmarshal(kind.result, &res); err != nil || len(res) != 1 || res[kind.field] == nil {
			t.Fatalf("%s result %s: %v", kind.name, kind.result, err)
		}
		raws := res[kind.field]
		if len(raws) != len(kind.entries) {
			t.Fatalf("%s: %d raws, %d entries", kind.name, len(raws), len(kind.entries))
		}
		var buf bytes.Buffer
		buf.WriteString(`{"` + kind.field + `":[`)
		for i, e := range kind.entries {
			if i > 0 {
				buf.WriteByte(',')
				if kind.entries[i-1].Name >= e.Name {
					t.Errorf("%s not sorted: %q before %q", kind.name, kind.entries[i-1].Name, e.Name)
				}
			}
			buf.Write(e.Raw)
			var obj map[string]any
			if err := json.Unmarshal(e.Raw, &obj); err != nil || obj[kind.key] != e.Name {
				t.Errorf("%s: entry %q raw %s: %v", kind.name, e.Name, e.Raw, err)
			}
		}
		buf.WriteString(`]}`)
		if !bytes.Equal(buf.Bytes(), kind.result) {
			t.Errorf("%s result is not the entries' Raw joined:\n%s\n%s", kind.name, buf.Bytes(), kind.result)
		}
	}
	for _, e := range append(c.Tools(), c.Prompts()...) {
		if !ValidName(e.Name) {
			t.Errorf("invalid exposed name %q", e.Name)
		}
		if e.Server != "" && strings.HasPrefix(e.Name, ReservedPrefix) {
			t.Errorf("upstream %q exposes reserved %q", e.Server, e.Name)
		}
	}
}

func TestBuildMerge(t *testing.T) {
	srcs := []Source{
		{Server: "charlie", Tools: tools(t, "search", "fetch", "c_only")},
		{Server: "alpha", Tools: tools(t, "search", "a_only", "fetch")},
		{Server: "bravo", Tools: tools(t, "fetch", "search", "b_only", "read")},
	}
	c := Build(srcs, nil)
	checkCatalog(t, c)
	want := []exposed{
		{"a_only", "alpha", "a_only", nil},
		{"b_only", "bravo", "b_only", nil},
		{"c_only", "charlie", "c_only", nil},
		{"fetch", "alpha", "fetch", nil},
		{"read", "bravo", "read", nil},
		{"search", "alpha", "search", nil},
	}
	if diff := cmp.Diff(want, summarise(c.Tools())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantShadows := []Shadow{
		{KindTool, "fetch", "bravo", "fetch", "alpha", "collision"},
		{KindTool, "fetch", "charlie", "fetch", "alpha", "collision"},
		{KindTool, "search", "bravo", "search", "alpha", "collision"},
		{KindTool, "search", "charlie", "search", "alpha", "collision"},
	}
	if diff := cmp.Diff(wantShadows, c.Shadowed()); diff != "" {
		t.Errorf("shadows (-want +got):\n%s", diff)
	}
	// Explicit merge policy is the default.
	c2 := Build(srcs, &Options{Policy: PolicyMerge, Separator: "."})
	if !bytes.Equal(c.ToolsResult(), c2.ToolsResult()) {
		t.Error("PolicyMerge differs from the default")
	}
}

func TestBuildPrefix(t *testing.T) {
	tests := []struct {
		name    string
		sep     string
		srcs    []Source
		want    []exposed
		shadows []Shadow
	}{
		{
			name: "default separator",
			srcs: []Source{
				{Server: "b", Tools: tools(t, "x", "y")},
				{Server: "a", Tools: tools(t, "x")},
			},
			want: []exposed{{"a__x", "a", "x", nil}, {"b__x", "b", "x", nil}, {"b__y", "b", "y", nil}},
		},
		{
			name: "separator __",
			sep:  "__",
			srcs: []Source{{Server: "a", Tools: tools(t, "x")}},
			want: []exposed{{"a__x", "a", "x", nil}},
		},
		{
			name: "separator _",
			sep:  "_",
			srcs: []Source{{Server: "gh", Tools: tools(t, "list", "get")}},
			want: []exposed{{"gh_get", "gh", "get", nil}, {"gh_list", "gh", "list", nil}},
		},
		{
			name: "separator -",
			sep:  "-",
			srcs: []Source{{Server: "gh", Tools: tools(t, "list")}},
			want: []exposed{{"gh-list", "gh", "list", nil}},
		},
		{
			name: "separator . is invalid in names",
			sep:  ".",
			srcs: []Source{{Server: "gh", Tools: tools(t, "list")}},
			want: []exposed{{"gh_list_" + h8("gh", "list"), "gh", "list",
				[]string{`name: "gh.list" is not a valid client tool name; exposed as "gh_list_` + h8("gh", "list") + `"`}}},
		},
		{
			name: "separator ambiguity",
			srcs: []Source{
				{Server: "a__b", Tools: tools(t, "c")},
				{Server: "a", Tools: tools(t, "b__c")},
			},
			want: []exposed{
				{"a__b__c", "a", "b__c", nil},
				{"a__b__c_" + h8("a__b", "c", "1"), "a__b", "c",
					[]string{`name: "a__b__c" is already exposed for tool "b__c" of server "a"; exposed as "a__b__c_` + h8("a__b", "c", "1") + `"`}},
			},
		},
		{
			name: "salted name taken verbatim",
			srcs: []Source{
				{Server: "a__b", Tools: tools(t, "c")},
				{Server: "a", Tools: tools(t, "b__c", "b__c_"+h8("a__b", "c", "1"))},
			},
			want: []exposed{
				{"a__b__c", "a", "b__c", nil},
				{"a__b__c_" + h8("a__b", "c", "1"), "a", "b__c_" + h8("a__b", "c", "1"), nil},
				{"a__b__c_" + h8("a__b", "c", "2"), "a__b", "c",
					[]string{`name: "a__b__c" is already exposed for tool "b__c" of server "a"; exposed as "a__b__c_` + h8("a__b", "c", "2") + `"`}},
			},
		},
		{
			name: "separator _ ambiguity, three ways",
			sep:  "_",
			srcs: []Source{
				{Server: "a_b", Tools: tools(t, "c")},
				{Server: "a", Tools: tools(t, "b_c")},
				{Server: "a_b_c", Tools: tools(t, "x")},
				{Server: "a_b_c_x", Tools: tools(t, "1")},
				{Server: "a_b_c", Tools: tools(t, "x_1")},
			},
			want: []exposed{
				{"a_b_c", "a", "b_c", nil},
				{"a_b_c_" + h8("a_b", "c", "1"), "a_b", "c",
					[]string{`name: "a_b_c" is already exposed for tool "b_c" of server "a"; exposed as "a_b_c_` + h8("a_b", "c", "1") + `"`}},
				{"a_b_c_x", "a_b_c", "x", nil},
				{"a_b_c_x_1", "a_b_c", "x_1", nil},
				{"a_b_c_x_1_" + h8("a_b_c_x", "1", "1"), "a_b_c_x", "1",
					[]string{`name: "a_b_c_x_1" is already exposed for tool "x_1" of server "a_b_c"; exposed as "a_b_c_x_1_` + h8("a_b_c_x", "1", "1") + `"`}},
			},
		},
		{
			name: "long candidate",
			srcs: []Source{{Server: "srv", Tools: tools(t, strings.Repeat("n", 60))}},
			want: []exposed{{"srv__" + strings.Repeat("n", 50) + "_" + h8("srv", strings.Repeat("n", 60)), "srv", strings.Repeat("n", 60),
				[]string{`name: "srv__` + strings.Repeat("n", 60) + `" is not a valid client tool name; exposed as "srv__` + strings.Repeat("n", 50) + "_" + h8("srv", strings.Repeat("n", 60)) + `"`}}},
		},
		{
			name: "duplicates and reserved only drops",
			srcs: []Source{
				{Server: "hub_x", Tools: tools(t, "t")},
				{Server: "s", Tools: tools(t, "t", "t")},
			},
			want: []exposed{{"s__t", "s", "t", nil}},
			shadows: []Shadow{
				{KindTool, "hub_x__t", "hub_x", "t", "hub", "reserved"},
				{KindTool, "s__t", "s", "t", "s", "duplicate"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Build(tc.srcs, &Options{Policy: PolicyPrefix, Separator: tc.sep})
			checkCatalog(t, c)
			slices.SortFunc(tc.want, func(a, b exposed) int { return strings.Compare(a.Name, b.Name) })
			if diff := cmp.Diff(tc.want, summarise(c.Tools())); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if tc.shadows == nil {
				tc.shadows = []Shadow{}
			}
			if diff := cmp.Diff(tc.shadows, c.Shadowed()); diff != "" {
				t.Errorf("shadows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrefixRawRewrite(t *testing.T) {
	in := `{"title":"T","name":"x","inputSchema":{"type":"object"},"z":[1]}`
	c := Build([]Source{{Server: "s", Tools: []Item{mustParse(t, ParseTool, in)}}}, &Options{Policy: PolicyPrefix})
	want := `{"title":"T","name":"s__x","inputSchema":{"type":"object"},"z":[1]}`
	e, ok := c.Tool("s__x")
	if !ok || string(e.Raw) != want {
		t.Fatalf("Tool(s__x) = %s, %v; want %s", e.Raw, ok, want)
	}
	if got := string(c.ToolsResult()); got != `{"tools":[`+want+`]}` {
		t.Errorf("ToolsResult = %s", got)
	}
	if _, ok := c.Tool("x"); ok {
		t.Error("original name is exposed too")
	}
}

func TestNames(t *testing.T) {
	long := func(n int) string { return strings.Repeat("abcdefghij", 30)[:n] }
	tests := []struct {
		name     string
		original string
		want     string // exposed name; "" = shadowed
		fix      bool
	}{
		{"64 chars kept", long(64), long(64), false},
		{"65 chars", long(65), long(55) + "_" + h8("s", long(65)), true},
		{"200 chars", long(200), long(55) + "_" + h8("s", long(200)), true},
		{"dot", "read.file", "read_file_" + h8("s", "read.file"), true},
		{"space", "read file", "read_file_" + h8("s", "read file"), true},
		{"slash and colon", "fs/read:v2", "fs_read_v2_" + h8("s", "fs/read:v2"), true},
		{"unicode one _ per rune", "héllo", "h_llo_" + h8("s", "héllo"), true},
		{"only unicode", "日本", "___" + h8("s", "日本"), true},
		{"dash and underscore kept", "a-b_C9", "a-b_C9", false},
		{"sanitises into reserved", "hub.x", "", false},
		{"reserved", "hub_x", "", false},
		{"reserved prefix is case-sensitive", "HUB_x", "HUB_x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Build([]Source{{Server: "s", Tools: tools(t, tc.original), Prompts: prompts(t, tc.original)}}, nil)
			checkCatalog(t, c)
			for _, kind := range []Kind{KindTool, KindPrompt} {
				es := c.Tools()
				if kind == KindPrompt {
					es = c.Prompts()
				}
				if tc.want == "" {
					if len(es) != 0 {
						t.Fatalf("%s: exposed %+v", kind, es)
					}
					sh := c.Shadowed()
					if len(sh) != 2 || sh[0].Reason != ReasonReserved || sh[0].Winner != HubWinner || sh[0].Original != tc.original {
						t.Fatalf("shadows %+v", sh)
					}
					continue
				}
				if len(es) != 1 || es[0].Name != tc.want || es[0].Original != tc.original {
					t.Fatalf("%s: got %+v, want %q", kind, es, tc.want)
				}
				var wantFixes []string
				if tc.fix {
					cand, _ := json.Marshal(tc.original)
					wantFixes = []string{fmt.Sprintf("name: %s is not a valid client %s name; exposed as %q", cand, kind, tc.want)}
				}
				if diff := cmp.Diff(wantFixes, es[0].Fixes); diff != "" {
					t.Errorf("%s fixes (-want +got):\n%s", kind, diff)
				}
			}
		})
	}
}

func TestNameFixLiteral(t *testing.T) {
	// Pin the hash so that exposed names stay stable across releases.
	c := Build([]Source{{Server: "fs", Tools: tools(t, "read.file")}}, nil)
	e := c.Tools()[0]
	if e.Name != "read_file_"+h8("fs", "read.file") || len(e.Name) != len("read_file_")+8 {
		t.Fatalf("name %q", e.Name)
	}
	if want := `name: "read.file" is not a valid client tool name; exposed as "` + e.Name + `"`; e.Fixes[0] != want {
		t.Errorf("fix %q, want %q", e.Fixes[0], want)
	}
}

func TestRewrittenNameNeverStealsVerbatim(t *testing.T) {
	// "a.b" from alpha rewrites to a name bravo lists verbatim: both
	// are distinct names or one of them is shadowed, never duplicated.
	rewritten := "a_b_" + h8("alpha", "a.b")
	c := Build([]Source{
		{Server: "bravo", Tools: tools(t, rewritten)},
		{Server: "alpha", Tools: tools(t, "a.b")},
	}, nil)
	checkCatalog(t, c)
	if n := len(c.Tools()); n != 1 {
		t.Fatalf("tools %+v", c.Tools())
	}
	want := []Shadow{{KindTool, rewritten, "bravo", rewritten, "alpha", "collision"}}
	if diff := cmp.Diff(want, c.Shadowed()); diff != "" {
		t.Errorf("shadows (-want +got):\n%s", diff)
	}
}

func TestReserved(t *testing.T) {
	own := []Item{tool(t, "hub_status"), tool(t, "hub_list"), tool(t, "hub_status"), tool(t, "not_hub"), tool(t, "hub_bad.name")}
	srcs := []Source{
		{Server: "x", Tools: tools(t, "hub_status", "status", "hub_other")},
		{Server: "hub_srv", Tools: tools(t, "t")},
	}
	ownShadows := []Shadow{
		{KindTool, "hub_bad.name", "", "hub_bad.name", "", "invalid"},
		{KindTool, "hub_status", "", "hub_status", "hub", "duplicate"},
		{KindTool, "not_hub", "", "not_hub", "", "invalid"},
	}
	tests := []struct {
		name    string
		policy  Policy
		want    []exposed
		shadows []Shadow
	}{
		{
			name:   "merge",
			policy: PolicyMerge,
			want: []exposed{
				{"hub_list", "", "hub_list", nil}, {"hub_status", "", "hub_status", nil},
				{"status", "x", "status", nil}, {"t", "hub_srv", "t", nil},
			},
			shadows: []Shadow{
				ownShadows[0],
				{KindTool, "hub_other", "x", "hub_other", "hub", "reserved"},
				ownShadows[1],
				{KindTool, "hub_status", "x", "hub_status", "hub", "reserved"},
				ownShadows[2],
			},
		},
		{
			name:   "prefix",
			policy: PolicyPrefix,
			want: []exposed{
				{"hub_list", "", "hub_list", nil}, {"hub_status", "", "hub_status", nil},
				{"x__hub_other", "x", "hub_other", nil}, {"x__hub_status", "x", "hub_status", nil},
				{"x__status", "x", "status", nil},
			},
			shadows: []Shadow{
				ownShadows[0],
				{KindTool, "hub_srv__t", "hub_srv", "t", "hub", "reserved"},
				ownShadows[1],
				ownShadows[2],
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Build(srcs, &Options{Policy: tc.policy, Own: own})
			checkCatalog(t, c)
			if diff := cmp.Diff(tc.want, summarise(c.Tools())); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.shadows, c.Shadowed()); diff != "" {
				t.Errorf("shadows (-want +got):\n%s", diff)
			}
			e, ok := c.Tool("hub_status")
			if !ok || e.Server != "" || e.Stale || string(e.Raw) != string(own[0].Raw) {
				t.Errorf("own hub_status = %+v", e)
			}
			if got := c.ServerEntries(""); len(got) != 2 {
				t.Errorf("ServerEntries(\"\") = %+v", got)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	re := regexp.MustCompile(NamePattern)
	for _, s := range []string{"", "a", "A-z_09", strings.Repeat("x", 64), strings.Repeat("x", 65), "a.b", "a b", "é", "a\x00", "hub_x", "-", "_"} {
		if got, want := ValidName(s), re.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, regexp says %v", s, got, want)
		}
	}
}

func TestDuplicates(t *testing.T) {
	first := mustParse(t, ParseTool, `{"name":"dup","description":"first","inputSchema":{"type":"object"}}`)
	second := mustParse(t, ParseTool, `{"name":"dup","description":"second","inputSchema":{"type":"object"}}`)
	for _, policy := range []Policy{PolicyMerge, PolicyPrefix} {
		t.Run(string(policy), func(t *testing.T) {
			c := Build([]Source{
				{Server: "s", Tools: []Item{tool(t, "z"), first, tool(t, "a"), second, first}},
				{Server: "r", Tools: tools(t, "dup")},
			}, &Options{Policy: policy})
			checkCatalog(t, c)
			name, winner := "dup", "r"
			if policy == PolicyPrefix {
				name, winner = "s__dup", "s"
			}
			es := c.ServerEntries("s")
			if len(es) != map[Policy]int{PolicyMerge: 2, PolicyPrefix: 3}[policy] {
				t.Fatalf("entries of s: %+v", es)
			}
			e, _ := c.Tool(name)
			if policy == PolicyPrefix && !strings.Contains(string(e.Raw), "first") {
				t.Errorf("later listing won: %s", e.Raw)
			}
			var want []Shadow
			if policy == PolicyMerge {
				want = []Shadow{
					{KindTool, "dup", "s", "dup", "r", "collision"},
					{KindTool, "dup", "s", "dup", "s", "duplicate"},
					{KindTool, "dup", "s", "dup", "s", "duplicate"},
				}
			} else {
				want = []Shadow{
					{KindTool, name, "s", "dup", winner, "duplicate"},
					{KindTool, name, "s", "dup", winner, "duplicate"},
				}
			}
			if diff := cmp.Diff(want, c.Shadowed()); diff != "" {
				t.Errorf("shadows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterMatch(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		in     string
		want   bool
	}{
		{"empty keeps all", Filter{}, "anything", true},
		{"allow exact", Filter{Allow: []string{"read"}}, "read", true},
		{"allow exact other", Filter{Allow: []string{"read"}}, "reader", false},
		{"allow prefix glob", Filter{Allow: []string{"read_*"}}, "read_file", true},
		{"allow prefix glob empty run", Filter{Allow: []string{"read_*"}}, "read_", true},
		{"allow suffix glob", Filter{Allow: []string{"*_file"}}, "write_file", true},
		{"allow middle glob", Filter{Allow: []string{"a*b*c"}}, "a1b2b3c", true},
		{"allow middle glob miss", Filter{Allow: []string{"a*b*c"}}, "a1b2b3", false},
		{"allow star", Filter{Allow: []string{"*"}}, "", true},
		{"allow one of many", Filter{Allow: []string{"x", "y*"}}, "yes", true},
		{"deny", Filter{Deny: []string{"delete_*"}}, "delete_repo", false},
		{"deny other", Filter{Deny: []string{"delete_*"}}, "create_repo", true},
		{"deny wins", Filter{Allow: []string{"*"}, Deny: []string{"*_repo"}}, "delete_repo", false},
		{"both kept", Filter{Allow: []string{"*_repo"}, Deny: []string{"delete_*"}}, "create_repo", true},
		{"both not allowed", Filter{Allow: []string{"*_repo"}, Deny: []string{"delete_*"}}, "create_issue", false},
		{"literal dot", Filter{Allow: []string{"a.b"}}, "axb", false},
		{"unicode", Filter{Allow: []string{"日*"}}, "日本", true},
		{"consecutive stars", Filter{Allow: []string{"**a**"}}, "bab", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.filter.Match(tc.in); got != tc.want {
				t.Errorf("%+v.Match(%q) = %v", tc.filter, tc.in, got)
			}
		})
	}
}

func TestBuildFilter(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"none", Filter{}, []string{"create_issue", "delete_repo", "get_repo", "list_repos"}},
		{"allow", Filter{Allow: []string{"*_repo", "list_*"}}, []string{"delete_repo", "get_repo", "list_repos"}},
		{"deny", Filter{Deny: []string{"delete_*"}}, []string{"create_issue", "get_repo", "list_repos"}},
		{"both", Filter{Allow: []string{"*_repo*"}, Deny: []string{"delete_*", "*s"}}, []string{"get_repo"}},
		{"deny all", Filter{Deny: []string{"*"}}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, policy := range []Policy{PolicyMerge, PolicyPrefix} {
				c := Build([]Source{{
					Server:  "gh",
					Tools:   tools(t, "list_repos", "get_repo", "delete_repo", "create_issue"),
					Prompts: prompts(t, "list_repos", "get_repo", "delete_repo", "create_issue"),
					Filter:  tc.filter,
				}}, &Options{Policy: policy, Separator: "_"})
				checkCatalog(t, c)
				for _, es := range [][]Entry{c.Tools(), c.Prompts()} {
					got := []string{}
					for _, e := range es {
						got = append(got, e.Original)
					}
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("%s (-want +got):\n%s", policy, diff)
					}
				}
				if sh := c.Shadowed(); len(sh) != 0 {
					t.Errorf("filtered items are shadowed: %+v", sh)
				}
			}
		})
	}
}

func TestToolsResultPreservesBytes(t *testing.T) {
	raws := []string{
		`{"zeta":1,"name":"b","inputSchema":{"type":"object","$defs":{"x":{}}},"_meta":{"a":"b"},"outputSchema":{"type":"object","properties":{"r":{"type":"string"}}}}`,
		"{\n  \"name\": \"a\",\n  \"unknown\": [1, 2.50, \"\\u00e9\"],\n  \"inputSchema\": {\"type\": \"object\"}\n}",
	}
	var items []Item
	for _, r := range raws {
		items = append(items, mustParse(t, ParseTool, r))
	}
	c := Build([]Source{{Server: "s", Tools: items}}, nil)
	checkCatalog(t, c)
	want := `{"tools":[` + raws[1] + `,` + raws[0] + `]}`
	if got := string(c.ToolsResult()); got != want {
		t.Errorf("ToolsResult:\n got %s\nwant %s", got, want)
	}
}

func TestSchemaFixesInEntries(t *testing.T) {
	c := Build([]Source{{Server: "s", Tools: []Item{mustParse(t, ParseTool, `{"name":"a.b","inputSchema":{"type":"array"}}`)}}}, nil)
	e := c.Tools()[0]
	want := []string{
		`inputSchema: "type" was "array"; set to "object"`,
		`name: "a.b" is not a valid client tool name; exposed as "` + e.Name + `"`,
	}
	if diff := cmp.Diff(want, e.Fixes); diff != "" {
		t.Errorf("fixes (-want +got):\n%s", diff)
	}
	if want := `{"name":"` + e.Name + `","inputSchema":{"type":"object"}}`; string(e.Raw) != want {
		t.Errorf("raw %s, want %s", e.Raw, want)
	}
}

func TestResourcesAndTemplates(t *testing.T) {
	srcs := []Source{
		{Server: "b", Resources: resources(t, "file:///shared", "file:///b"),
			Templates: templates(t, "file:///{path}", "db://{table}/{id}", "file:///{+path}", "bad{")},
		{Server: "a", Resources: resources(t, "file:///shared", "file:///a", "file:///a"),
			Templates: templates(t, "db://{table}/{id}", "mem://{key}")},
	}
	c := Build(srcs, nil)
	checkCatalog(t, c)
	got := map[string]string{}
	for _, e := range c.Resources() {
		got[e.Name] = e.Server
	}
	if diff := cmp.Diff(map[string]string{"file:///shared": "a", "file:///a": "a", "file:///b": "b"}, got); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	var names []string
	for _, e := range c.Templates() {
		names = append(names, e.Server+" "+e.Name)
	}
	if diff := cmp.Diff([]string{"a db://{table}/{id}", "b file:///{+path}", "b file:///{path}", "a mem://{key}"}, names); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	wantShadows := []Shadow{
		{KindResource, "file:///a", "a", "file:///a", "a", "duplicate"},
		{KindResource, "file:///shared", "b", "file:///shared", "a", "collision"},
		{KindTemplate, "bad{", "b", "bad{", "", "invalid"},
		{KindTemplate, "db://{table}/{id}", "b", "db://{table}/{id}", "a", "collision"},
	}
	if diff := cmp.Diff(wantShadows, c.Shadowed()); diff != "" {
		t.Errorf("shadows (-want +got):\n%s", diff)
	}
	if e, ok := c.Resource("file:///b"); !ok || e.Server != "b" {
		t.Errorf("Resource(file:///b) = %+v, %v", e, ok)
	}
	if _, ok := c.Resource("file:///none"); ok {
		t.Error("Resource(file:///none) found")
	}

	matches := []struct{ uri, want string }{
		{"db://users/42", "db://{table}/{id}"},
		{"file:///etc", "file:///{path}"},         // b lists {path} before {+path}
		{"file:///etc/passwd", "file:///{+path}"}, // {path} does not match '/'
		{"mem://k1", "mem://{key}"},
		{"http://x", ""},
		{"", ""},
	}
	for _, m := range matches {
		e, ok := c.MatchTemplate(m.uri)
		if ok != (m.want != "") || e.Name != m.want {
			t.Errorf("MatchTemplate(%q) = %q, %v; want %q", m.uri, e.Name, ok, m.want)
		}
	}
}

func TestTemplateThatPanicsInUritemplate(t *testing.T) {
	// uritemplate accepts this template but panics building its regexp
	// (repeat count over 1000); Build must report it, not crash.
	vars := make([]string, 1005)
	for i := range vars {
		vars[i] = fmt.Sprintf("v%d", i)
	}
	tmpl := "x://{" + strings.Join(vars, ",") + "}"
	c := Build([]Source{{Server: "s", Templates: templates(t, tmpl, "y://{a}")}}, nil)
	checkCatalog(t, c)
	if len(c.Templates()) != 1 {
		t.Fatalf("templates %+v", c.Templates())
	}
	sh := c.Shadowed()
	if len(sh) != 1 || sh[0].Reason != ReasonInvalid || sh[0].Name != tmpl {
		t.Errorf("shadows %+v", sh)
	}
}

func TestStale(t *testing.T) {
	c := Build([]Source{
		{Server: "live", Tools: tools(t, "a"), Prompts: prompts(t, "p"), Resources: resources(t, "r://1"), Templates: templates(t, "t://{x}")},
		{Server: "cached", Stale: true, Tools: tools(t, "b"), Prompts: prompts(t, "q"), Resources: resources(t, "r://2"), Templates: templates(t, "u://{x}")},
	}, &Options{Own: []Item{tool(t, "hub_x")}})
	for _, e := range append(c.ServerEntries("live"), c.ServerEntries("")...) {
		if e.Stale {
			t.Errorf("%s %q is stale", e.Kind, e.Name)
		}
	}
	es := c.ServerEntries("cached")
	if len(es) != 4 {
		t.Fatalf("ServerEntries(cached) = %+v", es)
	}
	kinds := []Kind{KindTool, KindPrompt, KindResource, KindTemplate}
	for i, e := range es {
		if !e.Stale || e.Kind != kinds[i] {
			t.Errorf("entry %d: %+v", i, e)
		}
	}
}

func TestEmpty(t *testing.T) {
	for name, c := range map[string]*Catalog{"nil sources": Build(nil, nil), "nil catalog": nil, "zero catalog": {}} {
		t.Run(name, func(t *testing.T) {
			got := []string{string(c.ToolsResult()), string(c.PromptsResult()), string(c.ResourcesResult()), string(c.TemplatesResult())}
			want := []string{`{"tools":[]}`, `{"prompts":[]}`, `{"resources":[]}`, `{"resourceTemplates":[]}`}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if len(c.Tools())+len(c.Prompts())+len(c.Resources())+len(c.Templates())+len(c.Shadowed())+len(c.ServerEntries("")) != 0 {
				t.Error("not empty")
			}
			if _, ok := c.Tool("x"); ok {
				t.Error("Tool found")
			}
			if _, ok := c.Prompt("x"); ok {
				t.Error("Prompt found")
			}
			if _, ok := c.Resource("x"); ok {
				t.Error("Resource found")
			}
			if _, ok := c.MatchTemplate("x"); ok {
				t.Error("template found")
			}
		})
	}
}

func TestInvalidItems(t *testing.T) {
	good := tool(t, "ok")
	c := Build([]Source{{
		Server:    "s",
		Tools:     []Item{{Kind: KindTool, Key: "handmade", Raw: json.RawMessage(`{"name":"handmade"}`)}, {}, prompts(t, "p")[0], good},
		Resources: []Item{{Kind: KindResource, Key: "r://x"}},
	}}, &Options{Own: []Item{{Kind: KindTool, Key: "hub_x"}}})
	checkCatalog(t, c)
	if len(c.Tools()) != 1 {
		t.Errorf("tools %+v", c.Tools())
	}
	want := []Shadow{
		{KindResource, "r://x", "s", "r://x", "", "invalid"},
		{KindTool, "", "s", "", "", "invalid"},
		{KindTool, "handmade", "s", "handmade", "", "invalid"},
		{KindTool, "hub_x", "", "hub_x", "", "invalid"},
		{KindTool, "p", "s", "p", "", "invalid"},
	}
	if diff := cmp.Diff(want, c.Shadowed()); diff != "" {
		t.Errorf("shadows (-want +got):\n%s", diff)
	}
}

func TestPromptsSeparateFromTools(t *testing.T) {
	c := Build([]Source{
		{Server: "b", Tools: tools(t, "x"), Prompts: prompts(t, "x", "hub_p")},
		{Server: "a", Prompts: prompts(t, "x", "y.z")},
	}, &Options{Own: []Item{tool(t, "hub_p")}})
	checkCatalog(t, c)
	if diff := cmp.Diff([]exposed{{"hub_p", "", "hub_p", nil}, {"x", "b", "x", nil}}, summarise(c.Tools())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	yz := "y_z_" + h8("a", "y.z")
	want := []exposed{{"x", "a", "x", nil}, {yz, "a", "y.z", []string{`name: "y.z" is not a valid client prompt name; exposed as "` + yz + `"`}}}
	if diff := cmp.Diff(want, summarise(c.Prompts())); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	if e, ok := c.Prompt(yz); !ok || e.Kind != KindPrompt {
		t.Errorf("Prompt(%q) = %+v", yz, e)
	}
	wantShadows := []Shadow{
		{KindPrompt, "hub_p", "b", "hub_p", "hub", "reserved"},
		{KindPrompt, "x", "b", "x", "a", "collision"},
	}
	if diff := cmp.Diff(wantShadows, c.Shadowed()); diff != "" {
		t.Errorf("shadows (-want +got):\n%s", diff)
	}
}

// snapshot renders everything observable about a catalog.
func snapshot(c *Catalog) string {
	var b strings.Builder
	for _, r := range [][]byte{c.ToolsResult(), c.PromptsResult(), c.ResourcesResult(), c.TemplatesResult()} {
		b.Write(r)
		b.WriteByte('\n')
	}
	for _, es := range [][]Entry{c.Tools(), c.Prompts(), c.Resources(), c.Templates()} {
		for _, e := range es {
			fmt.Fprintf(&b, "%s|%s|%s|%s|%q|%v|%s\n", e.Kind, e.Name, e.Server, e.Original, e.Fixes, e.Stale, e.Raw)
		}
	}
	for _, s := range c.Shadowed() {
		fmt.Fprintf(&b, "%+v\n", s)
	}
	return b.String()
}

func TestDeterminism(t *testing.T) {
	mk := func() []Source {
		return []Source{
			{Server: "c", Tools: tools(t, "s", "x.y", "a"), Templates: templates(t, "f://{a}", "f://{b}")},
			{Server: "a", Tools: tools(t, "s", "b__x"), Prompts: prompts(t, "p"), Resources: resources(t, "r://1")},
			{Server: "a__b", Tools: tools(t, "x", "s"), Prompts: prompts(t, "p"), Resources: resources(t, "r://1")},
			{Server: "b", Tools: tools(t, "s", "s", "hub_q"), Templates: templates(t, "f://{a}")},
			// Two sources with the same name (a caller bug) must not make
			// the result depend on their order either.
			{Server: "d", Tools: tools(t, "d1", "shared"), Stale: true},
			{Server: "d", Tools: tools(t, "d2", "shared")},
		}
	}
	perms := [][]int{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}, {2, 0, 5, 1, 4, 3}, {4, 5, 0, 2, 3, 1}}
	for _, opts := range []*Options{nil, {Policy: PolicyPrefix}, {Policy: PolicyPrefix, Separator: "_"}, {Own: []Item{tool(t, "hub_q")}}} {
		var first string
		for i, p := range perms {
			base := mk()
			srcs := make([]Source, len(p))
			for j, k := range p {
				srcs[j] = base[k]
			}
			c := Build(srcs, opts)
			checkCatalog(t, c)
			got := snapshot(c)
			if again := snapshot(Build(srcs, opts)); again != got {
				t.Fatalf("Build twice differs:\n%s\n%s", got, again)
			}
			if i == 0 {
				first = got
			} else if got != first {
				t.Fatalf("permutation %v differs:\n%s\n---\n%s", p, first, got)
			}
		}
	}
}

func TestBuildDoesNotModifyInput(t *testing.T) {
	srcs := []Source{
		{Server: "b", Tools: tools(t, "y", "x.z", "a")},
		{Server: "a", Tools: tools(t, "x.z")},
	}
	before := fmt.Sprintf("%+v", srcs)
	c := Build(srcs, &Options{Policy: PolicyPrefix})
	if after := fmt.Sprintf("%+v", srcs); after != before {
		t.Errorf("input modified:\n%s\n%s", before, after)
	}
	// Appending to a returned Fixes must not affect the catalog.
	e := c.Tools()[0]
	_ = append(e.Fixes, "extra")
	if snapshot(c) != snapshot(Build(srcs, &Options{Policy: PolicyPrefix})) {
		t.Error("catalog changed")
	}
}

func TestSame(t *testing.T) {
	a := tools(t, "alpha", "beta")
	b := tools(t, "gamma")
	changed, err := ParseTool([]byte(`{"name":"beta","description":"changed","inputSchema":{"type":"object"}}`))
	if err != nil {
		t.Fatal(err)
	}
	base := Build([]Source{{Server: "a", Tools: a}, {Server: "b", Tools: b}}, nil)
	tests := []struct {
		name string
		srcs []Source
		opts *Options
		want bool
	}{
		{"same items", []Source{{Server: "a", Tools: a}, {Server: "b", Tools: b}}, nil, true},
		{"same items, parsed again", []Source{{Server: "a", Tools: tools(t, "alpha", "beta")}, {Server: "b", Tools: tools(t, "gamma")}}, nil, true},
		{"an item changed", []Source{{Server: "a", Tools: []Item{a[0], changed}}, {Server: "b", Tools: b}}, nil, false},
		{"an item gone", []Source{{Server: "a", Tools: a}}, nil, false},
		{"another server", []Source{{Server: "a", Tools: a}, {Server: "c", Tools: b}}, nil, false},
		{"stale", []Source{{Server: "a", Tools: a}, {Server: "b", Tools: b, Stale: true}}, nil, false},
		{"renamed by policy", []Source{{Server: "a", Tools: a}, {Server: "b", Tools: b}}, &Options{Policy: PolicyPrefix}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := Build(tt.srcs, tt.opts)
			if got := next.Same(base, KindTool); got != tt.want {
				t.Errorf("Same = %v, want %v", got, tt.want)
			}
			// Same implies equal rendered lists (the converse fails only
			// for an owner or staleness change with identical bytes).
			if eq := string(next.ToolsResult()) == string(base.ToolsResult()); tt.want && !eq {
				t.Errorf("rendered lists equal = %v, want %v", eq, tt.want)
			}
		})
	}
	var none *Catalog
	if !none.Same(Build(nil, nil), KindTool) || base.Same(none, KindTool) {
		t.Error("nil catalogs: want equal to an empty one, unequal to a full one")
	}
}
