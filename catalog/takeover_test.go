package catalog

import (
	"fmt"
	"slices"
	"testing"
)

func toolItems(t *testing.T, names ...string) []Item {
	t.Helper()
	var out []Item
	for _, n := range names {
		it, err := ParseTool([]byte(fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, n)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, it)
	}
	return out
}

func TestTakeovers(t *testing.T) {
	srcs := []Source{
		{Server: "mid", Tools: toolItems(t, "echo", "add")},
		{Server: "zgood", Tools: toolItems(t, "echo", "search")},
	}
	for _, tt := range []struct {
		name string
		cand Source
		opts *Options
		want []Takeover
	}{
		{"sorts first: takes both servers' names", Source{Server: "agood", Tools: toolItems(t, "echo", "search", "new")}, nil,
			[]Takeover{{"echo", "mid"}, {"search", "zgood"}}},
		{"sorts last: takes nothing", Source{Server: "zzz", Tools: toolItems(t, "echo", "search")}, nil, nil},
		{"in between", Source{Server: "n", Tools: toolItems(t, "echo", "search")}, nil, []Takeover{{"search", "zgood"}}},
		{"filtered out", Source{Server: "agood", Tools: toolItems(t, "echo"), Filter: Filter{Deny: []string{"echo"}}}, nil, nil},
		{"prefix policy: no collisions", Source{Server: "agood", Tools: toolItems(t, "echo")}, &Options{Policy: PolicyPrefix}, nil},
		{"a server it replaces keeps its names", Source{Server: "mid", Tools: toolItems(t, "echo", "search")}, nil, []Takeover{{"search", "zgood"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Takeovers(srcs, tt.cand, tt.opts); !slices.Equal(got, tt.want) {
				t.Errorf("Takeovers = %v, want %v", got, tt.want)
			}
		})
	}
	if got, want := Exposable(srcs, "agood", nil), []Takeover{{"add", "mid"}, {"echo", "mid"}, {"search", "zgood"}}; !slices.Equal(got, want) {
		t.Errorf("Exposable(agood) = %v, want %v", got, want)
	}
	if got, want := Exposable(srcs, "n", nil), []Takeover{{"search", "zgood"}}; !slices.Equal(got, want) {
		t.Errorf("Exposable(n) = %v, want %v", got, want)
	}
}
