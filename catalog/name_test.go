package catalog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
