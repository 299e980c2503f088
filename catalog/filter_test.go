package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
