// Package stemmer is the English stemmer of toolsearch's index, apart so
// that internal/wordnetgen stems the word table's entries with the very
// same function the index stems its words with.
package stemmer

import (
	"sync"
	"sync/atomic"
	"unicode"

	snowball "github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// cache remembers stems: tool texts repeat their words, and the snowball
// stemmer costs about a microsecond a word.
var cache sync.Map // string → string

// maxCache bounds cache; past it, stems are computed each time.
const maxCache = 200_000

var cached atomic.Int64 // entries of cache

// Stem returns the English (Porter2) stem of a lowercase word. Words of
// three runes or fewer and words with digits are kept as they are.
func Stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	if s, ok := cache.Load(w); ok {
		return s.(string)
	}
	for _, r := range w {
		if unicode.IsDigit(r) {
			return w
		}
	}
	env := snowball.NewEnv(w)
	english.Stem(env)
	s := env.Current()
	if cached.Load() < maxCache {
		if _, loaded := cache.LoadOrStore(w, s); !loaded {
			cached.Add(1)
		}
	}
	return s
}
