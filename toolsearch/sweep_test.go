package toolsearch

import (
	"fmt"
	"os"
	"testing"
)

func TestSweep(t *testing.T) {
	if os.Getenv("SWEEP") == "" {
		t.Skip()
	}
	dir := dataDir(t)
	g := loadGolden(t, dir)
	s := loadToolE(t, dir)
	run := func(name string, p params) {
		gm := goldenEval(t, g, &p)
		sm := toolEEval(t, s, s.single, &p)
		mm := toolEEval(t, s, s.multi, &p)
		t.Logf("%-28s golden R@5 %.3f R@1 %.3f MRR %.3f | ToolE hit@1 %.3f hit@5 %.3f | multi R@5 %.3f", name, gm.recall[5], gm.recall[1], gm.mrr, sm.hit[1], sm.hit[5], mm.recall[5])
	}
	plain := params{k1: 1.2, weight: [nFields]float64{fName: 1, fDesc: 1, fParamName: 1, fServer: 1},
		b: [nFields]float64{0.75, 0.75, 0.75, 0.75, 0.75, 0.75, 0.75}}
	run("plain", plain)
	run("default", defaultParams)
}

func ftoa(f float64) string { return strconvF(f) }

func strconvF(f float64) string { return fmt.Sprintf("%g", f) }
