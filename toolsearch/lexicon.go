package toolsearch

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// wordnetGz is the word table internal/wordnetgen made from WordNet 3.1
// (Princeton University; see WORDNET-LICENSE beside this file): one line
// a word, "word<TAB>k:related k:related ...", sorted by word, k being s
// (a synonym in one of the word's commonest senses), d (a word derived
// from it or it from: "deletion", "delete") or h (a broader word:
// "relocate", "move"). Collocations are words joined by "_"
// ("get_rid_of"). scripts/wordnet.sh makes it again.
//
//go:embed wordnet.txt.gz
var wordnetGz []byte

// lexicon is a read-only table of English words and the words related to
// them. Its keys and relations are substrings of the table's text.
type lexicon struct {
	keys []string // sorted
	rels []string // "k:term k:term ...", by key
	// colloc are the collocations by their first word ("get":
	// get_rid_of, get_up, ...), longest first.
	colloc map[string][]collocation
}

// collocation is a key of several words: its words after the first, and
// its number.
type collocation struct {
	rest []string
	line int32
}

var (
	lexOnce sync.Once
	lex     *lexicon
)

// theLexicon returns the embedded table, read on first use (a search;
// building an index does not need it).
func theLexicon() *lexicon {
	lexOnce.Do(func() {
		l, err := readLexicon(bytes.NewReader(wordnetGz))
		if err != nil {
			panic("toolsearch: the embedded word table: " + err.Error())
		}
		lex = l
	})
	return lex
}

func readLexicon(r io.Reader) (*lexicon, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	text := string(b)
	n := strings.Count(text, "\n") + 1
	l := &lexicon{keys: make([]string, 0, n), rels: make([]string, 0, n), colloc: map[string][]collocation{}}
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok || k == "" || (len(l.keys) > 0 && k <= l.keys[len(l.keys)-1]) {
			return nil, fmt.Errorf("line %d: %w", len(l.keys)+1, errLexLine)
		}
		if first, rest, ok := strings.Cut(k, "_"); ok {
			l.colloc[first] = append(l.colloc[first], collocation{rest: strings.Split(rest, "_"), line: int32(len(l.keys))})
		}
		l.keys = append(l.keys, k)
		l.rels = append(l.rels, v)
	}
	for _, cs := range l.colloc {
		slices.SortStableFunc(cs, func(a, b collocation) int { return len(b.rest) - len(a.rest) })
	}
	return l, nil
}

var errLexLine = errors.New("not a word and its related words, in order")

// related calls fn with each index term the table relates to its i-th
// word, and the kind of relation ('s', 'd' or 'h').
func (l *lexicon) related(i int32, fn func(kind byte, term string)) {
	for r := range strings.SplitSeq(l.rels[i], " ") {
		if len(r) > 2 && r[1] == ':' {
			fn(r[0], r[2:])
		}
	}
}

// lemmas calls fn with the number of each dictionary form of the
// lowercase word w that the table has: w itself when it has it, else the
// forms WordNet's morphy looks up by its detachment rules ("files" →
// file, "deleted" → delete, "copies" → copy), and with a doubled final
// consonant undone ("stopped" → stop). Morphy would try the rules on a
// word it has too, for another part of speech ("running": run); not
// knowing a query word's part of speech, lemmas does not ("news" would
// give "new"). WordNet's lists of irregular forms are not used.
func (l *lexicon) lemmas(w string, fn func(i int32)) {
	if i, ok := l.find(w); ok {
		fn(i)
		return
	}
	l.forms(w, func(f []byte) {
		if i, ok := l.find(string(f)); ok {
			fn(i)
		}
	})
}

// forms calls fn with each form of w that morphy's rules give (a
// scratch buffer: it is valid during the call only); the same form may
// come twice.
func (l *lexicon) forms(w string, fn func(f []byte)) {
	var buf [64]byte
	if len(w)+2 > len(buf) {
		return
	}
	for _, r := range morphRules {
		if !strings.HasSuffix(w, r[0]) {
			continue
		}
		b := append(append(buf[:0], w[:len(w)-len(r[0])]...), r[1]...)
		if len(b) < 2 {
			continue
		}
		fn(b)
		if n := len(b); r[1] == "" && n >= 3 && b[n-1] == b[n-2] && !strings.ContainsRune("aeiouy", rune(b[n-1])) {
			fn(b[:n-1])
		}
	}
}

// collocationStarts returns w and the forms of it that begin a
// collocation of the table.
func (l *lexicon) collocationStarts(w string) []string {
	var out []string
	if l.colloc[w] != nil {
		out = append(out, w)
	}
	l.forms(w, func(f []byte) {
		if l.colloc[string(f)] != nil && !slices.Contains(out, string(f)) {
			out = append(out, string(f))
		}
	})
	return out
}

// find returns the number of w in the table. (A search looks words up
// once: wordCache and Index.relatedOf remember what it found.)
func (l *lexicon) find(w string) (int32, bool) {
	i, ok := slices.BinarySearch(l.keys, w)
	return int32(i), ok
}

// morphRules are WordNet's morphy detachment rules (suffix, ending) of
// nouns, verbs and adjectives, together: a query word's part of speech is
// not known.
var morphRules = [][2]string{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"},
	{"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}
