package toolsearch

import (
	"slices"
)

// related returns qt with the indexed words that the embedded WordNet
// table relates to a query word ("permitted": allow; "connect": relate;
// "information": info; "relocate": move), each at a share of the query
// word's weight by kind of relation (params.syn, deriv, hyper), at most
// maxRelated a query word. Words no tool has are left out; so is a word
// already in the query or standing for another of its words.
func (ix *Index) related(qt []queryTerm, seq []string) []queryTerm {
	p := ix.p
	lx := theLexicon()
	in := make(map[string]bool, 4*len(qt))
	for _, q := range qt {
		in[q.term] = true
	}
	var colloc map[int][]int32
	if p.colloc {
		colloc = ix.collocations(lx, qt, seq)
	}
	out := qt
	for qi, q := range qt {
		if q.from != "" {
			continue // an affix term (they follow the query's own)
		}
		added := 0
		add := func(kind byte, t string) {
			var wt float64
			switch kind {
			case 's':
				wt = p.syn
			case 'd':
				wt = p.deriv
			case 'h':
				wt = p.hyper
			}
			// The table's words are index terms already (stemmed).
			if wt == 0 || added == maxRelated || in[t] || ix.terms[t] == nil {
				return
			}
			in[t] = true
			added++
			out = append(out, queryTerm{term: t, n: 1, w: wt * float64(q.n), from: q.term, kind: kind})
		}
		for _, w := range q.words {
			for _, r := range ix.wordLex(lx, w).rels {
				add(r.kind, r.term)
			}
		}
		for _, i := range colloc[qi] {
			lx.related(i, add)
		}
	}
	return out
}

// collocations finds the runs of two to four words of a query (seq, its
// words in order) that the table has as one ("get rid of", "look up";
// the first word in any inflection: "getting rid of"), longest first,
// and returns their table lines by the query term of their first word
// that is not a stop word.
func (ix *Index) collocations(lx *lexicon, qt []queryTerm, ws []string) map[int][]int32 {
	var starts [][]string
	for i, w := range ws[:max(len(ws)-1, 0)] {
		if stopWords[w] {
			continue // "at least", "as well as": no words a tool would use
		}
		if s := ix.wordLex(lx, w).starts; s != nil {
			if starts == nil {
				starts = make([][]string, len(ws))
			}
			starts[i] = s
		}
	}
	if starts == nil {
		return nil
	}
	var out map[int][]int32
	for i := 0; i < len(ws)-1; i++ {
		found, k := int32(-1), 0
		for _, f := range starts[i] {
			for _, c := range lx.colloc[f] {
				if len(c.rest) > k && len(c.rest) < len(ws)-i && slices.Equal(c.rest, ws[i+1:i+1+len(c.rest)]) {
					found, k = c.line, len(c.rest)
					break // the longest of this form's
				}
			}
		}
		if found >= 0 {
			k++ // the first word too
			for _, w := range ws[i : i+k] {
				if stopWords[w] {
					continue
				}
				t := stem(w)
				if c := slices.IndexFunc(qt, func(q queryTerm) bool { return q.from == "" && q.term == t }); c >= 0 {
					if out == nil {
						out = map[int][]int32{}
					}
					out[c] = append(out[c], found)
				}
				break
			}
			i += k - 1
		}
	}
	return out
}

// wordLex is what the table holds for one word of a query.
type wordLex struct {
	rels   []relTerm // the related terms of its dictionary forms that the index has
	starts []string  // its forms that begin a collocation
}

type relTerm struct {
	kind byte
	term string
}

// maxWordCache bounds the words an Index remembers (Index.wordLex).
const maxWordCache = 20_000

// wordLex returns what the table holds for the lowercase query word w,
// remembered by ix (which is immutable): requests repeat their words,
// and finding a word's forms in the table costs a dozen lookups.
func (ix *Index) wordLex(lx *lexicon, w string) *wordLex {
	if v, ok := ix.lexWords.Load(w); ok {
		return v.(*wordLex)
	}
	x := &wordLex{starts: lx.collocationStarts(w)}
	var seen []int32
	lx.lemmas(w, func(i int32) {
		if slices.Contains(seen, i) {
			return
		}
		seen = append(seen, i)
		lx.related(i, func(kind byte, t string) {
			if ix.terms[t] != nil {
				x.rels = append(x.rels, relTerm{kind, t})
			}
		})
	})
	if ix.lexWordsN.Load() < maxWordCache {
		if _, loaded := ix.lexWords.LoadOrStore(w, x); !loaded {
			ix.lexWordsN.Add(1)
		}
	}
	return x
}
