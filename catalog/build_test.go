package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
