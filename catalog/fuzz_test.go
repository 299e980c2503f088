package catalog

import (
	"encoding/json"
	"strings"
	"testing"
)

// fuzzSources turns a fuzzed spec into sources and own tools. Each line is
// "k|server|value":
//
//	t, p, r, m  a tool, prompt, resource or template of server named value
//	a, d        an Allow or Deny pattern of server
//	s           marks server stale
//	n           starts another source with the same server name
//
// Lines with server "" and kind t add own tools.
func fuzzSources(spec string) ([]Source, []Item) {
	var srcs []Source
	var own []Item
	last := map[string]int{}
	for line := range strings.SplitSeq(spec, "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 || parts[0] == "" {
			continue
		}
		kind, server, value := parts[0][0], parts[1], parts[2]
		v, _ := json.Marshal(value)
		if server == "" {
			if kind == 't' {
				if it, err := ParseTool([]byte(`{"name":` + string(v) + `}`)); err == nil {
					own = append(own, it)
				}
			}
			continue
		}
		i, ok := last[server]
		if !ok || kind == 'n' {
			srcs = append(srcs, Source{Server: server})
			i = len(srcs) - 1
			last[server] = i
		}
		s := &srcs[i]
		var err error
		var it Item
		switch kind {
		case 't':
			if it, err = ParseTool([]byte(`{"name":` + string(v) + `,"inputSchema":{}}`)); err == nil {
				s.Tools = append(s.Tools, it)
			}
		case 'p':
			if it, err = ParsePrompt([]byte(`{"name":` + string(v) + `}`)); err == nil {
				s.Prompts = append(s.Prompts, it)
			}
		case 'r':
			if it, err = ParseResource([]byte(`{"uri":` + string(v) + `}`)); err == nil {
				s.Resources = append(s.Resources, it)
			}
		case 'm':
			if it, err = ParseTemplate([]byte(`{"uriTemplate":` + string(v) + `}`)); err == nil {
				s.Templates = append(s.Templates, it)
			}
		case 'a':
			s.Filter.Allow = append(s.Filter.Allow, value)
		case 'd':
			s.Filter.Deny = append(s.Filter.Deny, value)
		case 's':
			s.Stale = true
		}
	}
	return srcs, own
}

type origin struct {
	kind           Kind
	server, origin string
}

func FuzzBuild(f *testing.F) {
	f.Add(uint8(0), "", "t|a|x\nt|b|x\nt|c|x\nt|a|hub_x\nt||hub_x\nt||hub_y")
	f.Add(uint8(1), "__", "t|a__b|c\nt|a|b__c\nt|a|b__c\np|a|p\np|b|p")
	f.Add(uint8(1), "_", "t|a_b|c\nt|a|b_c\nt|a_b_c|x\nt|a_b_c_x|1\nt|a_b_c|x_1")
	f.Add(uint8(1), ".", "t|s|read.file\nt|s|read_file\nt|s.x|y")
	f.Add(uint8(0), "", "t|s|read.file\nt|t|read_file_5b9bb2ea\nt|s|"+strings.Repeat("x", 70)+"\nt|s|日本\nt|s| ")
	f.Add(uint8(0), "", "r|a|u://1\nr|b|u://1\nm|a|f://{x}\nm|b|f://{x}\nm|a|bad{\nm|b|{+p}")
	f.Add(uint8(2), "-", "t|a|x\na|a|x*\nd|a|*y\nt|a|xy\nt|a|z\ns|a|\nn|a|\nt|a|x\nt|a|w")
	f.Add(uint8(1), "", "t|hub|x\nt|hub_a|y\nt|x|hub_z\np|hub|q")
	f.Fuzz(func(t *testing.T, policy uint8, sep, spec string) {
		srcs, own := fuzzSources(spec)
		opts := &Options{Separator: sep, Own: own}
		switch policy % 3 {
		case 1:
			opts.Policy = PolicyPrefix
		case 2:
			opts.Policy = PolicyMerge
		}
		c := Build(srcs, opts)
		checkCatalog(t, c)
		snap := snapshot(c)

		// Every input item is accounted for: exposed exactly once, or
		// shadowed, or filtered out.
		inputs := map[origin]int{}
		for _, it := range own {
			inputs[origin{KindTool, "", it.Key}]++
		}
		for _, s := range srcs {
			for _, l := range []struct {
				kind  Kind
				items []Item
			}{{KindTool, s.Tools}, {KindPrompt, s.Prompts}, {KindResource, s.Resources}, {KindTemplate, s.Templates}} {
				for _, it := range l.items {
					if (l.kind == KindTool || l.kind == KindPrompt) && !s.Filter.Match(it.Key) {
						continue
					}
					inputs[origin{l.kind, s.Server, it.Key}]++
				}
			}
		}
		seen := map[origin]bool{}
		total := 0
		for _, es := range [][]Entry{c.Tools(), c.Prompts(), c.Resources(), c.Templates()} {
			names := map[string]bool{}
			for _, e := range es {
				if names[e.Name] {
					t.Fatalf("two %ss exposed as %q", e.Kind, e.Name)
				}
				names[e.Name] = true
				o := origin{e.Kind, e.Server, e.Original}
				if seen[o] || inputs[o] == 0 {
					t.Fatalf("entry %+v: seen %v, inputs %d", o, seen[o], inputs[o])
				}
				seen[o] = true
				total++
				if e.Kind == KindTool || e.Kind == KindPrompt {
					if e.Server != "" && strings.HasPrefix(e.Name, ReservedPrefix) {
						t.Fatalf("upstream entry %+v has a reserved name", e)
					}
				} else if e.Name != e.Original {
					t.Fatalf("%s renamed: %+v", e.Kind, e)
				}
				if got, ok := lookup(c, e.Kind, e.Name); !ok || got.Server != e.Server || got.Original != e.Original {
					t.Fatalf("lookup %s %q = %+v, %v", e.Kind, e.Name, got, ok)
				}
			}
		}
		sh := c.Shadowed()
		for i, s := range sh {
			if inputs[origin{s.Kind, s.Server, s.Original}] == 0 {
				t.Fatalf("shadow of nothing: %+v", s)
			}
			if opts.Policy == PolicyPrefix && s.Reason == ReasonCollision && (s.Kind == KindTool || s.Kind == KindPrompt) {
				t.Fatalf("prefix mode dropped %+v", s)
			}
			if i > 0 && compareShadows(sh[i-1], s) > 0 {
				t.Fatalf("shadows not sorted: %+v > %+v", sh[i-1], s)
			}
		}
		want := 0
		for _, n := range inputs {
			want += n
		}
		if total+len(sh) != want {
			t.Fatalf("%d entries + %d shadows != %d inputs", total, len(sh), want)
		}

		// Determinism: again, and with the sources reversed.
		if again := snapshot(Build(srcs, opts)); again != snap {
			t.Fatalf("Build is not deterministic:\n%s\n---\n%s", snap, again)
		}
		rev := make([]Source, len(srcs))
		for i := range srcs {
			rev[len(srcs)-1-i] = srcs[i]
		}
		if got := snapshot(Build(rev, opts)); got != snap {
			t.Fatalf("reversed sources differ:\n%s\n---\n%s", snap, got)
		}
	})
}

func lookup(c *Catalog, kind Kind, name string) (Entry, bool) {
	switch kind {
	case KindTool:
		return c.Tool(name)
	case KindPrompt:
		return c.Prompt(name)
	case KindResource:
		return c.Resource(name)
	default:
		for _, e := range c.Templates() {
			if e.Name == name {
				return e, true
			}
		}
		return Entry{}, false
	}
}
