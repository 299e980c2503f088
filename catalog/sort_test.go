package catalog

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestWorkSorter checks the radix sort against a plain comparison sort.
func TestWorkSorter(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		alphabet string
		prefix   string
		maxLen   int
	}{
		{"empty", 0, "ab", "", 3},
		{"tiny", 5, "ab", "", 3},
		{"small alphabet, many equal names", 500, "ab", "", 4},
		{"varied", 3000, "-09AZ_az", "", 30},
		{"long shared prefix beyond the key", 2000, "xy", strings.Repeat("p", 30), 6},
		{"prefix ending inside a word", 1000, "ab_", "server0", 12},
		{"full alphabet", 5000, "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz", "", 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			ws := make([]sortWork, tc.n)
			side := make([]workItem, tc.n)
			for i := range ws {
				b := []byte(tc.prefix)
				for range 1 + r.IntN(tc.maxLen) {
					b = append(b, tc.alphabet[r.IntN(len(tc.alphabet))])
				}
				name := string(b[:min(len(b), maxNameLen)])
				ws[i] = sortWork{k: packName(name), name: name, rank: int32(r.IntN(4)) - 1, seq: int32(i)}
				side[i] = workItem{orig: string(rune('a' + r.IntN(3)))}
			}
			got := (&workSorter{ws: ws, side: side}).sort()
			want := make([]int32, tc.n)
			for i := range want {
				want[i] = int32(i)
			}
			slices.SortFunc(want, func(x, y int32) int {
				a, b := &ws[x], &ws[y]
				return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.rank, b.rank),
					strings.Compare(side[x].orig, side[y].orig), cmp.Compare(x, y))
			})
			if !slices.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("order differs at %d: got %q, want %q", i, ws[got[i]].name, ws[want[i]].name)
					}
				}
			}
		})
	}
}

func TestWorkSorterHeapFallback(t *testing.T) {
	// Depth 0 forces heapsort.
	ws := make([]sortWork, 200)
	for i := range ws {
		name := string(rune('a' + (i*7919)%26))
		ws[i] = sortWork{k: packName(name), name: name, seq: int32(i)}
	}
	s := &workSorter{ws: ws, side: make([]workItem, len(ws)), order: make([]int32, len(ws))}
	for i := range s.order {
		s.order[i] = int32(i)
	}
	s.quick(0, len(ws), 0)
	if !slices.IsSortedFunc(s.order, func(x, y int32) int {
		return cmp.Or(strings.Compare(ws[x].name, ws[y].name), cmp.Compare(x, y))
	}) {
		t.Fatal("not sorted")
	}
}
