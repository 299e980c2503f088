package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBound(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tt := range []struct {
		name, in string
		max      int
		want     []string
	}{
		{"short stays", `invalid name "a b": must match ^x$`, 100, []string{`invalid name "a b": must match ^x$`}},
		{"a megabyte of name", `invalid name "` + long + `": must match ^[A-Za-z0-9]$`, 400,
			[]string{`invalid name "xxx`, "…(1048579 bytes)", `must match ^[A-Za-z0-9]$`}},
		{"a run at the bound stays", strings.Repeat("y", MaxRun) + " ok", MaxRun + 3, []string{strings.Repeat("y", MaxRun) + " ok"}},
		{"runs with spaces", `field "` + strings.Repeat("ab ", 1<<18) + `": unknown (known: a, b)`, MaxError + 100,
			[]string{`field "ab ab`, "bytes cut)…", "unknown (known: a, b)"}},
		{"characters are not split", strings.Repeat("é", 1<<12) + " end", 400, []string{"…(8192 bytes) end"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Bound(tt.in)
			if len(got) > tt.max || !utf8.ValidString(got) {
				t.Errorf("Bound gave %d bytes (valid UTF-8: %v), want at most %d", len(got), utf8.ValidString(got), tt.max)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Bound(…) = %.300q, want it to contain %q", got, w)
				}
			}
			if again := Bound(got); again != got {
				t.Errorf("Bound is not idempotent: %.200q", again)
			}
		})
	}
}
