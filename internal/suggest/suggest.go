// Package suggest finds the word meant by a mistyped one: the command,
// flag or config key closest to what was typed, for "did you mean"
// messages.
package suggest

import "strings"

// Closest returns the candidate nearest to word by edit distance (ignoring
// case), "" when none is within reach: at most 2 edits, and fewer than half
// of word's length, so that short words are not matched with anything.
func Closest(word string, candidates []string) string {
	best, bestDist := "", min(3, max(1, (len(word)+1)/2))
	for _, c := range candidates {
		if d := Distance(strings.ToLower(c), strings.ToLower(word)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
