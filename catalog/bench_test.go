package catalog

import (
	"fmt"
	"testing"
)

// benchSources returns n sources of m realistic (~300-byte) tools each. A
// tenth of the names are shared by every server, as with popular tool names.
func benchSources(b *testing.B, n, m int) []Source {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "read", "write", "sync", "run"}
	srcs := make([]Source, n)
	for i := range srcs {
		server := fmt.Sprintf("server%03d", (i*37)%n) // not in sorted order
		srcs[i].Server = server
		for j := range m {
			name := fmt.Sprintf("%s_%s_item%02d", verbs[(j*7)%len(verbs)], server, j)
			if j%10 == 0 {
				name = fmt.Sprintf("%s_common%02d", verbs[j%len(verbs)], j)
			}
			raw := fmt.Sprintf(`{"name":%q,"description":"%s the %s of %s; returns a JSON document describing the result.",`+
				`"inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"Identifier"},"limit":{"type":"integer","minimum":1}},"required":["id"]},`+
				`"annotations":{"readOnlyHint":%v}}`, name, verbs[j%len(verbs)], "item", server, j%2 == 0)
			it, err := ParseTool([]byte(raw))
			if err != nil {
				b.Fatal(err)
			}
			srcs[i].Tools = append(srcs[i].Tools, it)
		}
	}
	return srcs
}

func BenchmarkBuild100x100(b *testing.B) {
	srcs := benchSources(b, 100, 100)
	own := []Item{tool(b, "hub_status"), tool(b, "hub_search")}
	for _, policy := range []Policy{PolicyMerge, PolicyPrefix} {
		b.Run(string(policy), func(b *testing.B) {
			opts := &Options{Policy: policy, Own: own}
			b.ReportAllocs()
			var c *Catalog
			for b.Loop() {
				c = Build(srcs, opts)
			}
			b.ReportMetric(float64(len(c.Tools())), "tools")
			b.ReportMetric(float64(len(c.ToolsResult())), "result-bytes")
		})
	}
}

// BenchmarkCopyFloor100x100 measures the floor under BenchmarkBuild100x100:
// allocating the tools result and copying every Raw into it, nothing else.
func BenchmarkCopyFloor100x100(b *testing.B) {
	srcs := benchSources(b, 100, 100)
	size := 0
	for _, s := range srcs {
		for _, it := range s.Tools {
			size += len(it.Raw) + 1
		}
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		buf := make([]byte, 0, size)
		for _, s := range srcs {
			for i := range s.Tools {
				buf = append(buf, s.Tools[i].Raw...)
				buf = append(buf, ',')
			}
		}
		n += len(buf)
	}
	if n == 0 {
		b.Fatal("nothing copied")
	}
}
