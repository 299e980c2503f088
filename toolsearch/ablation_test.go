package toolsearch

import (
	"math"
	"os"
	"slices"
	"testing"
)

// withoutLexicon is the ranking without the WordNet word table.
func withoutLexicon() params {
	p := defaultParams
	p.syn, p.deriv, p.hyper, p.colloc = 0, 0, 0, false
	return p
}

// TestAblation prints what each step of the ranking adds, on the shared
// retrieval sets and the real-servers check (hit@1 and hit@5 as counts of
// its 29 requests, and of 32 with the fixture servers): the ranking
// without it, beside the whole. ToolE's hit@5 is a count too, in
// brackets: a change of one query of 20,614 shows. Run it with
// MCPHUB_EVAL_SEARCH=ablation go test -run TestAblation -v ./toolsearch/.
func TestAblation(t *testing.T) {
	if os.Getenv("MCPHUB_EVAL_SEARCH") != "ablation" {
		t.Skip("MCPHUB_EVAL_SEARCH=ablation runs it")
	}
	dir := dataDir(t)
	g := loadGolden(t, dir)
	s := loadToolE(t, dir)
	three := realCatalog(t, 0)
	many := realCatalog(t, fixtureCopies)
	manyCases := append(slices.Clone(realCases), realFixtureCases...)
	run := func(name string, p params) {
		gm := goldenEval(t, g, &p)
		sm := toolEEval(t, s, s.single, &p)
		mm := toolEEval(t, s, s.multi, &p)
		a := realEval(three, realCases, &p)
		b := realEval(many, manyCases, &p)
		t.Logf("%-44s golden R@5 %.3f MRR %.3f nDCG@10 %.3f | ToolE hit@1 %.4f hit@5 %.4f (%d) | multi R@5 %.3f | real hit@1 %d hit@5 %d MRR %.3f | +fixtures %d %d %.3f",
			name, gm.recall[5], gm.mrr, gm.ndcg10, sm.hit[1], sm.hit[5], int(math.Round(sm.hit[5]*float64(sm.n))), mm.recall[5], a.hit1, a.hit5, a.mrr/float64(a.n), b.hit1, b.hit5, b.mrr/float64(b.n))
	}
	run("all of it", defaultParams)
	p := withoutLexicon()
	run("without the word table", p)
	p = defaultParams
	p.syn = 0
	run("without synonyms", p)
	p = defaultParams
	p.deriv = 0
	run("without derivations", p)
	p = defaultParams
	p.hyper = 0
	run("without broader words", p)
	p = defaultParams
	p.colloc = false
	run("without collocations", p)
	p = defaultParams
	p.server = 0
	run("without server evidence", p)
	p = defaultParams
	p.affix = 0
	run("without affixes", p)
	p = defaultParams
	p.weight = [nFields]float64{fName: 1, fTitle: 1, fDesc: 1, fParamName: 1, fParamDesc: 1, fServer: 1, fServerDesc: 1}
	run("all field weights 1", p)
	p = defaultParams
	p.weight[fParamName], p.weight[fParamDesc] = 0, 0
	run("without schema terms", p)
	p = defaultParams
	p.affixLen = 4
	run("affixes of up to 4 letters", p)
	p = params{k1: 1.2, weight: [nFields]float64{fName: 1, fDesc: 1, fParamName: 1, fServer: 1}, b: [nFields]float64{0.75, 0.75, 0.75, 0.75, 0.75, 0.75, 0.75}}
	run("BM25F, k1 1.2, b 0.75, name+desc+params+server", p)
}

// TestGoldenMisses prints the golden set's queries whose relevant tools
// are not all in the first 5, with what was found and the words the
// table added: what to read before changing the ranking. Run it with
// MCPHUB_EVAL_SEARCH=misses.
func TestGoldenMisses(t *testing.T) {
	if os.Getenv("MCPHUB_EVAL_SEARCH") != "misses" {
		t.Skip("MCPHUB_EVAL_SEARCH=misses runs it")
	}
	g := loadGolden(t, dataDir(t))
	ix := indexOf(t, g.tools, &defaultParams)
	for _, q := range g.queries {
		res, _ := ix.Search(q.query, 5)
		var got, want []string
		in := 0
		for _, r := range res {
			got = append(got, r.Tool)
			if q.labels[r.Server+":"+r.Tool] > 0 {
				in++
			}
		}
		for k, r := range q.labels {
			if r > 0 {
				want = append(want, k)
			}
		}
		if in == len(want) {
			continue
		}
		var added []string
		qt, seq := parseQuery(q.query)
		for _, x := range ix.related(ix.affixes(qt), seq) {
			if x.from != "" {
				added = append(added, x.from+"→"+x.term)
			}
		}
		t.Logf("%d/%d %q want %v\n\tgot %v\n\tadded %v", in, len(want), q.query, want, got, added)
	}
}

// BenchmarkToolEQueries ranks ToolE's single-tool queries over its 199
// tools, without and with the word table, in one run.
func BenchmarkToolEQueries(b *testing.B) {
	s := loadToolE(b, dataDir(b))
	noLex := withoutLexicon()
	for _, v := range []struct {
		name string
		p    *params
	}{{"without-lexicon", &noLex}, {"with-lexicon", &defaultParams}} {
		ix := indexOf(b, s.tools, v.p)
		ix.Search("warm up", 5) // the table is read on first use
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ix.Search(s.single[i%len(s.single)].query, 10)
				i += 7
			}
		})
	}
}
