package toolsearch

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// params are the ranking's constants.
type params struct {
	k1     float64
	weight [nFields]float64 // BM25F field weights
	b      [nFields]float64 // BM25F length normalisation per field
	// server is the weight of the server's score (BM25F over all the
	// text of a server's tools) added to each of its tools' scores.
	server float64
	// affix is the weight of an indexed word that a query word extends or
	// is extended by, by at most affixLen letters, both at least 4
	// letters long ("rent" for "rental"; 0: none).
	affix    float64
	affixLen int
	// syn, deriv and hyper are the weights, as a share of a query word's
	// own, of the indexed words the embedded WordNet table relates to
	// it: synonyms in its commonest senses, words derived from it or it
	// from them, broader words (0: not used). colloc: collocations of the
	// query ("get rid of") count as words too.
	syn, deriv, hyper float64
	colloc            bool
}

var defaultParams = params{
	k1:       1.5,
	weight:   [nFields]float64{fName: 4, fTitle: 2, fDesc: 1, fParamName: 1, fParamDesc: 0.5, fServer: 1, fServerDesc: 0.5},
	b:        [nFields]float64{fName: 0.5, fTitle: 0.5, fDesc: 0.5, fParamName: 0.75, fParamDesc: 0.75, fServer: 0.5, fServerDesc: 0.75},
	server:   0.5,
	affix:    0.3,
	affixLen: 3,
	syn:      0.3,
	deriv:    0.5,
	hyper:    0.1,
	colloc:   true,
}

// queryTerm is one distinct term of a query.
type queryTerm struct {
	term string
	w    float64 // weight instead of n (affix and related terms); 0: n
	from string  // the query term an affix or related term stands for
	// kind is how it stands for it: 'a' an affix, 'p' a completion of a
	// word typed in part, 's', 'd', 'h' a synonym, derived or broader
	// word of the table; 0 for the query's own terms.
	kind byte
	n    int // times in the query
	// words are the query's words that gave this term (before
	// stemming), the query's own terms only.
	words []string
}

func queryTerms(q string) []queryTerm {
	qt, _ := parseQuery(q)
	return qt
}

// parseQuery returns the distinct terms of a query, and its first
// 2·maxQueryTerms words in order, stop words too (for collocations).
func parseQuery(q string) (out []queryTerm, seq []string) {
	at := map[string]int{}
	words(q, func(w string) {
		if len(seq) < 2*maxQueryTerms {
			seq = append(seq, w)
		}
		if stopWords[w] {
			return
		}
		t := stem(w)
		if i, ok := at[t]; ok {
			out[i].n++
			if len(out[i].words) < 4 && !slices.Contains(out[i].words, w) {
				out[i].words = append(out[i].words, w)
			}
			return
		}
		if len(out) == maxQueryTerms {
			return
		}
		at[t] = len(out)
		out = append(out, queryTerm{term: t, n: 1, words: []string{w}})
	})
	return out, seq
}

// maxQueryTerms bounds the distinct words of a query that count (a request
// in words has far fewer); maxCompletions bounds the words a word typed in
// part stands for, maxRelated the related words of a query word. A query
// costs at most so much, whatever its length.
const (
	maxQueryTerms  = 64
	maxCompletions = 16
	maxRelated     = 16
)

// Search returns the limit best tools for query, best first, and how many
// tools match at all (a tool matches when a word of the query, or a form
// of it, is in any of its fields). An empty query (or one of stop words
// only) matches every tool with score 0, by server name, then in the order
// the server lists them. Equal scores rank by server name, then listing.
func (ix *Index) Search(query string, limit int) (results []Result, total int) {
	return ix.Page(query, 0, limit)
}

// Page is [Index.Search] from the offset-th result on.
func (ix *Index) Page(query string, offset, limit int) (results []Result, total int) {
	if ix == nil || ix.ndocs == 0 || limit <= 0 {
		return nil, 0
	}
	offset = min(max(offset, 0), ix.ndocs) // past the last tool: nothing
	qt := ix.expand(query)
	if len(qt) == 0 {
		i := 0
		for si, s := range ix.segs {
			for d := range s.docs {
				x := int32(ix.base[si] + d)
				if g, ok := ix.copyOf[x]; ok && ix.copies[g][0] != x {
					continue // listed with the first copy
				}
				if i >= offset && len(results) < limit {
					results = append(results, ix.result(x, 0))
				}
				i++
			}
		}
		return results, i
	}
	buf := ix.score(qt)
	defer scorePool.Put(buf)
	scores := *buf
	ix.collapse(scores, qt)
	// The best offset+limit, kept in order as the scores are read: a
	// full sort of every match cost more than the scoring.
	k := offset + limit
	var top []hit
	base := 0
	for si, s := range ix.segs {
		for d := range s.docs {
			sc := scores[base+d]
			if sc <= 0 {
				continue
			}
			total++
			h := hit{si, d, sc}
			if len(top) == k && !h.before(top[k-1]) {
				continue
			}
			i, _ := slices.BinarySearchFunc(top, h, func(a, b hit) int {
				if a.before(b) {
					return -1
				}
				return 1
			})
			if len(top) < k {
				top = append(top, hit{})
			}
			copy(top[i+1:], top[i:len(top)-1])
			top[i] = h
		}
		base += len(s.docs)
	}
	for i := offset; i < len(top); i++ {
		h := top[i]
		results = append(results, ix.result(int32(ix.base[h.seg]+h.doc), h.score))
	}
	return results, total
}

// collapse makes each group of copies of one tool (the same definition
// on several servers) one result: the first copy in the catalog's order
// (the server a call by the tool's name reaches), or the first whose
// server the query names ("cwd on fx3"), at the best score of them all;
// the others' scores are zeroed. A ranking shows a tool once, whatever
// the number of servers that offer it.
func (ix *Index) collapse(scores []float64, qt []queryTerm) {
	for _, g := range ix.copies {
		best := 0.0
		keep := int32(-1)
		for _, x := range g {
			best = max(best, scores[x])
			if keep < 0 && scores[x] > 0 && ix.namesServer(x, qt) {
				keep = x
			}
		}
		if keep < 0 {
			keep = g[0]
		}
		for _, x := range g {
			scores[x] = 0
		}
		scores[keep] = best
	}
}

// namesServer reports whether the query's own terms (not those standing
// for them) hold every word of the name of tool x's server.
func (ix *Index) namesServer(x int32, qt []queryTerm) bool {
	names := ix.segs[ix.serverOf(x)].names
	for _, n := range names {
		if !slices.ContainsFunc(qt, func(q queryTerm) bool { return q.from == "" && q.term == n }) {
			return false
		}
	}
	return len(names) > 0
}

// result returns tool number x as a Result, with the other servers that
// offer the same tool.
func (ix *Index) result(x int32, score float64) Result {
	si := ix.serverOf(x)
	r := ix.segs[si].result(int(x)-ix.base[si], score)
	if g, ok := ix.copyOf[x]; ok {
		for _, y := range ix.copies[g] {
			if y != x {
				r.AlsoOn = append(r.AlsoOn, ix.segs[ix.serverOf(y)].server.Name)
			}
		}
	}
	return r
}

// expand returns the terms of a query and the terms that stand for them
// (affixes, completions, related words); none for a query of stop words.
func (ix *Index) expand(query string) []queryTerm {
	qt, seq := parseQuery(query)
	if len(qt) == 0 {
		return nil
	}
	if ix.p.affix > 0 {
		qt = ix.affixes(qt)
	}
	if ix.p.syn > 0 || ix.p.deriv > 0 || ix.p.hyper > 0 {
		qt = ix.related(qt, seq)
	}
	return qt
}

// hit is a scored tool.
type hit struct {
	seg, doc int
	score    float64
}

// before orders hits: higher score first, then by server and listing.
func (a hit) before(b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.seg != b.seg {
		return a.seg < b.seg
	}
	return a.doc < b.doc
}

func (s *segment) result(d int, score float64) Result {
	x := &s.docs[d]
	schema := x.schema
	if len(schema) == 0 {
		schema = []byte(`{"type":"object"}`)
	}
	return Result{Server: s.server.Name, Tool: x.tool.Name, ExposedAs: x.tool.ExposedAs, Title: x.title,
		Description: x.desc, InputSchema: schema, Score: math.Round(score*1000) / 1000}
}

// score returns the score of every tool, by tool number, in a buffer of
// scorePool.
func (ix *Index) score(qt []queryTerm) *[]float64 {
	p := ix.p
	buf := scoreBuffer(ix.ndocs)
	scores := *buf
	n := float64(ix.ndistinct)
	nsrv := float64(ix.nsrv)
	var srvScore []float64
	if p.server > 0 {
		srvScore = make([]float64, len(ix.segs))
	}
	for _, q := range qt {
		e := ix.terms[q.term]
		if e == nil {
			continue
		}
		qw := float64(q.n)
		if q.w > 0 {
			qw = q.w
		}
		df := float64(max(e.df, 1)) // a word of copies only (a server name) counts as one tool's
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		sdf := float64(max(e.sdf, 1))
		sidf := math.Log(1 + (nsrv-sdf+0.5)/(sdf+0.5))
		for _, ref := range e.refs {
			s := ix.segs[ref.seg]
			base := ix.base[ref.seg]
			var stf [nFields]float64
			for _, ps := range ref.post {
				fw := &ix.fw[base+int(ps.doc)]
				tf := 0.0
				for f := range nFields {
					if c := float64(ps.tf[f]); c > 0 {
						tf += c * fw[f]
						stf[f] += c
					}
				}
				scores[base+int(ps.doc)] += qw * idf * tf * (p.k1 + 1) / (tf + p.k1)
			}
			if srvScore != nil {
				tf := 0.0
				for f := range nFields {
					if stf[f] == 0 {
						continue
					}
					if f >= fServer { // once per tool: once for the server
						stf[f] /= float64(len(s.docs))
					}
					tf += p.weight[f] * stf[f] / (1 - p.b[f] + p.b[f]*s.serverLen(f)/max(ix.savg[f], 1))
				}
				srvScore[ref.seg] += qw * sidf * tf * (p.k1 + 1) / (tf + p.k1)
			}
		}
	}
	if srvScore != nil {
		for si, s := range ix.segs {
			if srvScore[si] == 0 {
				continue
			}
			base := ix.base[si]
			for d := range s.docs {
				if scores[base+d] > 0 {
					scores[base+d] += p.server * srvScore[si]
				}
			}
		}
	}
	return buf
}

// affixes returns qt with the indexed words that extend a query word, or
// that it extends, by a few letters: what a stemmer left apart ("rental",
// "rent"; "financi", "financ").
func (ix *Index) affixes(qt []queryTerm) []queryTerm {
	p := ix.p
	in := map[string]bool{}
	for _, q := range qt {
		in[q.term] = true
	}
	out := slices.Clone(qt)
	add := func(t string, q queryTerm, kind byte) {
		if in[t] {
			return
		}
		in[t] = true
		out = append(out, queryTerm{term: t, n: 1, w: p.affix * float64(q.n), from: q.term, kind: kind})
	}
	// extensions calls fn with each indexed word that starts with t.
	extensions := func(t string, fn func(w string)) {
		i, _ := slices.BinarySearch(ix.words, t)
		for ; i < len(ix.words) && strings.HasPrefix(ix.words[i], t); i++ {
			if ix.words[i] != t {
				fn(ix.words[i])
			}
		}
	}
	for _, q := range qt {
		if len(q.term) < 4 {
			continue
		}
		for l := max(4, len(q.term)-p.affixLen); l < len(q.term); l++ {
			if pre := q.term[:l]; ix.terms[pre] != nil {
				add(pre, q, 'a')
			}
		}
		extensions(q.term, func(w string) {
			if len(w)-len(q.term) <= p.affixLen {
				add(w, q, 'a')
			}
		})
	}
	// A word no tool has, and that no indexed word extends or is extended
	// by, may be the start of one (typed in part: "dir" for directory).
	for _, q := range qt {
		if len(q.term) < 2 || ix.terms[q.term] != nil || slices.ContainsFunc(out[len(qt):], func(x queryTerm) bool { return x.from == q.term }) {
			continue
		}
		var ws []string
		extensions(q.term, func(w string) { ws = append(ws, w) })
		// The closest completions: the shortest first.
		slices.SortStableFunc(ws, func(a, b string) int { return len(a) - len(b) })
		for _, w := range ws[:min(len(ws), maxCompletions)] {
			add(w, q, 'p')
		}
	}
	return out
}

// scorePool keeps score buffers: a query at 5,000 tools would otherwise
// allocate 40 KB for the garbage collector.
var scorePool sync.Pool // *[]float64

// scoreBuffer returns a zeroed buffer of n scores from scorePool.
func scoreBuffer(n int) *[]float64 {
	if b, _ := scorePool.Get().(*[]float64); b != nil && cap(*b) >= n {
		*b = (*b)[:n]
		clear(*b)
		return b
	}
	b := make([]float64, n)
	return &b
}
