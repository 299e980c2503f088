package toolsearch

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

var fieldNames = [nFields]string{"name", "title", "desc", "param", "paramdesc", "server", "serverdesc"}

// explain says where a tool's score for a query comes from: each query
// term that matches it (and what it stands for), its weight, the fields
// it is in, what it adds; then the server evidence. It recomputes the
// score as Index.score does.
func explain(ix *Index, query, server, tool string) string {
	qt := ix.expand(query)
	var b strings.Builder
	si := -1
	for i, s := range ix.segs {
		if s.server.Name == server {
			si = i
		}
	}
	if si < 0 {
		return "no server " + server
	}
	s := ix.segs[si]
	d, ok := s.byName[tool]
	if !ok {
		return "no tool " + tool
	}
	p := ix.p
	n := float64(ix.ndistinct)
	nsrv := float64(ix.nsrv)
	total, srv := 0.0, 0.0
	fmt.Fprintf(&b, "%s/%s for %q:\n", server, tool, query)
	for _, q := range qt {
		e := ix.terms[q.term]
		if e == nil {
			continue
		}
		qw := float64(q.n)
		if q.w > 0 {
			qw = q.w
		}
		df := float64(max(e.df, 1)) // a word of copies only (a server name) counts as one tool's
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		sdf := float64(max(e.sdf, 1))
		sidf := math.Log(1 + (nsrv-sdf+0.5)/(sdf+0.5))
		for _, ref := range e.refs {
			if ref.seg != si {
				continue
			}
			var stf [nFields]float64
			for _, ps := range ref.post {
				fw := &ix.fw[ix.base[si]+int(ps.doc)]
				tf := 0.0
				var fs []string
				for f := range nFields {
					if c := float64(ps.tf[f]); c > 0 {
						tf += c * fw[f]
						stf[f] += c
						if int(ps.doc) == d {
							fs = append(fs, fmt.Sprintf("%s×%d", fieldNames[f], ps.tf[f]))
						}
					}
				}
				if int(ps.doc) == d {
					sc := qw * idf * tf * (p.k1 + 1) / (tf + p.k1)
					total += sc
					via := ""
					if q.from != "" {
						via = fmt.Sprintf(" (%c of %s)", q.kind, q.from)
					}
					fmt.Fprintf(&b, "  %-12s%-22s w %.2f idf %.2f %v: %.3f\n", q.term, via, qw, idf, fs, sc)
				}
			}
			tf := 0.0
			for f := range nFields {
				if stf[f] == 0 {
					continue
				}
				if f >= fServer {
					stf[f] /= float64(len(s.docs))
				}
				tf += p.weight[f] * stf[f] / (1 - p.b[f] + p.b[f]*s.serverLen(f)/max(ix.savg[f], 1))
			}
			srv += qw * sidf * tf * (p.k1 + 1) / (tf + p.k1)
		}
	}
	fmt.Fprintf(&b, "  tool %.3f + server %.3f × %.1f = %.3f\n", total, srv, p.server, total+p.server*srv)
	return b.String()
}

// TestExplain prints explain for MCPHUB_EXPLAIN="query|server/tool|server/tool…"
// over the real-servers catalog (MCPHUB_EXPLAIN_FIXTURES fixture copies).
func TestExplain(t *testing.T) {
	spec := os.Getenv("MCPHUB_EXPLAIN")
	if spec == "" {
		t.Skip("MCPHUB_EXPLAIN=query|server/tool runs it")
	}
	fx := 0
	fmt.Sscan(os.Getenv("MCPHUB_EXPLAIN_FIXTURES"), &fx)
	ix := build(realCatalog(t, fx), nil, &defaultParams)
	parts := strings.Split(spec, "|")
	res, _ := ix.Search(parts[0], 8)
	for i, r := range res {
		t.Logf("%d. %s/%s %.3f %s", i+1, r.Server, r.Tool, r.Score, oneLineDesc(r.Description))
	}
	var added []string
	for _, x := range ix.expand(parts[0]) {
		if x.from != "" {
			added = append(added, fmt.Sprintf("%s→%s(%c %.2f)", x.from, x.term, x.kind, x.w))
		}
	}
	t.Logf("added: %v", added)
	for _, st := range parts[1:] {
		srv, tool, _ := strings.Cut(st, "/")
		t.Log(explain(ix, parts[0], srv, tool))
	}
}

func oneLineDesc(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 70 {
		s = s[:70]
	}
	return s
}
