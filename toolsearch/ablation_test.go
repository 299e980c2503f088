package toolsearch

import (
	"os"
	"testing"
)

// TestAblation prints what each step of the ranking adds, on the shared
// retrieval sets: the ranking without it, beside the whole. Run it with
// MCPHUB_EVAL_SEARCH=ablation go test -run TestAblation -v ./toolsearch/.
func TestAblation(t *testing.T) {
	if os.Getenv("MCPHUB_EVAL_SEARCH") != "ablation" {
		t.Skip("MCPHUB_EVAL_SEARCH=ablation runs it")
	}
	dir := dataDir(t)
	g := loadGolden(t, dir)
	s := loadToolE(t, dir)
	run := func(name string, p params) {
		gm := goldenEval(t, g, &p)
		sm := toolEEval(t, s, s.single, &p)
		mm := toolEEval(t, s, s.multi, &p)
		t.Logf("%-44s golden R@5 %.3f MRR %.3f | ToolE hit@1 %.3f hit@5 %.3f | multi R@5 %.3f", name, gm.recall[5], gm.mrr, sm.hit[1], sm.hit[5], mm.recall[5])
	}
	run("all of it", defaultParams)
	p := defaultParams
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
	p = params{k1: 1.2, weight: [nFields]float64{fName: 1, fDesc: 1, fParamName: 1, fServer: 1}, b: [nFields]float64{0.75, 0.75, 0.75, 0.75, 0.75, 0.75, 0.75}}
	run("BM25F, k1 1.2, b 0.75, name+desc+params+server", p)
}
