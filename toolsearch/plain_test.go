package toolsearch

import (
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var plainSplit = regexp.MustCompile(`[^a-z0-9]+`)

func plainTok(s string) []string {
	var out []string
	for _, w := range plainSplit.Split(strings.ToLower(s), -1) {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

func TestPlainBM25(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	g := loadGolden(t, dataDir(t))
	var docs [][]string
	for _, tl := range g.tools {
		names, _ := schemaText(tl.schema)
		docs = append(docs, plainTok(tl.server+" "+tl.name+" "+tl.description+" "+names))
	}
	df := map[string]int{}
	avg := 0.0
	for _, d := range docs {
		seen := map[string]bool{}
		for _, w := range d {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
		avg += float64(len(d))
	}
	avg /= float64(len(docs))
	n := float64(len(docs))
	var r5a, r5b, r5c float64
	for _, q := range g.queries {
		sc := make([]float64, len(docs))
		for _, w := range plainTok(q.query) {
			if df[w] == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
			for i, d := range docs {
				tf := 0.0
				for _, x := range d {
					if x == w {
						tf++
					}
				}
				sc[i] += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(len(d))/avg))
			}
		}
		idx := make([]int, len(docs))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			if sc[a] > sc[b] {
				return -1
			}
			if sc[a] < sc[b] {
				return 1
			}
			return 0
		})
		pos, all := 0, len(q.labels)
		for _, r := range q.labels {
			if r > 0 {
				pos++
			}
		}
		ina, inb := 0, 0
		for _, i := range idx[:5] {
			if sc[i] == 0 {
				continue
			}
			id := g.tools[i].server + ":" + g.tools[i].name
			if r, ok := q.labels[id]; ok {
				ina++
				if r > 0 {
					inb++
				}
			}
		}
		r5a += float64(ina) / float64(all)
		r5b += float64(inb) / float64(all)
		r5c += float64(inb) / float64(pos)
	}
	nq := float64(len(g.queries))
	t.Logf("plain BM25 golden R@5: zeros relevant %.3f; zeros in denominator %.3f; zeros excluded %.3f", r5a/nq, r5b/nq, r5c/nq)
}
