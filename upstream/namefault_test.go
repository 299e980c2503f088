package upstream

import (
	"strings"
	"testing"
)

// A name of many distinct bad characters names a few of them: nameFault
// compared each with every one named before, quadratic work (minutes for
// a megabyte of distinct characters) for a list nobody reads (issue 26:
// bad input).
func TestNameFaultBounded(t *testing.T) {
	var b strings.Builder
	for r := rune(0x4E00); r < 0x4E00+2000; r++ {
		b.WriteRune(r)
	}
	got := nameFault(b.String())
	if strings.Count(got, ", ") > maxNameFaults || !strings.HasSuffix(got, "…") {
		t.Errorf("nameFault of 2000 distinct characters = %.300q, want %d of them and …", got, maxNameFaults)
	}
}
