package toolsearch

import (
	"os"
	"testing"
)

func TestDbgGolden(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	g := loadGolden(t, dataDir(t))
	ix := indexOf(t, g.tools, &defaultParams)
	for _, q := range g.queries {
		res, _ := ix.Search(q.query, 5)
		in := 0
		var got []string
		for _, r := range res {
			id := r.Server + ":" + r.Tool
			if q.labels[id] > 0 {
				in++
				id = "*" + id
			}
			got = append(got, id)
		}
		if in < len(q.labels) {
			var terms []string
			for _, x := range queryTerms(q.query) {
				terms = append(terms, x.term)
			}
			t.Logf("\nQ %s %v\n  want %v\n  got %v", q.query, terms, q.labels, got)
		}
	}
}

func TestDbgToolE(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	s := loadToolE(t, dataDir(t))
	ix := indexOf(t, s.tools, &defaultParams)
	n := 0
	for _, q := range sample(s.single, 400, 7) {
		res, _ := ix.Search(q.query, 5)
		ok := false
		var got []string
		for _, r := range res {
			got = append(got, r.Tool)
			if r.Tool == q.tools[0] {
				ok = true
			}
		}
		if !ok && n < 40 {
			n++
			var terms []string
			for _, x := range queryTerms(q.query) {
				terms = append(terms, x.term)
			}
			t.Logf("\nQ %s %v\n  want %s\n  got %v", q.query, terms, q.tools[0], got)
		}
	}
}
