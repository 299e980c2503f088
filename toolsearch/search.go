package toolsearch

import (
	"math"
	"slices"
	"strings"
)

// params are the ranking's constants.
type params struct {
	k1     float64
	weight [nFields]float64 // BM25F field weights
	b      [nFields]float64 // BM25F length normalisation per field
	// server is the weight of the server's score (BM25F over all the
	// text of a server's tools) added to each of its tools' scores.
	server float64
	// fbDocs, fbTerms and fbWeight configure pseudo-relevance feedback:
	// the fbTerms words with the most weight in the fbDocs best tools,
	// added to the query with weight fbWeight (0: none).
	fbDocs, fbTerms int
	fbWeight        float64
	// affix is the weight of an indexed word that a query word extends or
	// is extended by, by at most affixLen letters, both at least 4
	// letters long ("rent" for "rental"; 0: none).
	affix    float64
	affixLen int
}

var defaultParams = params{
	k1:       1.5,
	weight:   [nFields]float64{fName: 4, fTitle: 2, fDesc: 1, fParamName: 1, fParamDesc: 0.5, fServer: 1, fServerDesc: 0.5},
	b:        [nFields]float64{fName: 0.5, fTitle: 0.5, fDesc: 0.5, fParamName: 0.75, fParamDesc: 0.75, fServer: 0.5, fServerDesc: 0.75},
	server:   0.5,
	affix:    0.3,
	affixLen: 3,
}

// queryTerm is one distinct term of a query.
type queryTerm struct {
	term string
	w    float64 // weight beyond n (feedback terms); 0 means 1
	from string  // the query word an affix term stands for
	n    int     // times in the query
}

func queryTerms(q string) []queryTerm {
	var out []queryTerm
	terms(q, func(t string) {
		for i := range out {
			if out[i].term == t {
				out[i].n++
				return
			}
		}
		out = append(out, queryTerm{term: t, n: 1})
	})
	return out
}

// Search returns the limit best tools for query, best first, and how many
// tools match at all. An empty query (or one of stop words only) matches
// every tool, in server then tool name order, with score 0; so does
// [Index.Page] with an offset.
func (ix *Index) Search(query string, limit int) (results []Result, total int) {
	return ix.Page(query, 0, limit)
}

// Page is [Index.Search] from the offset-th result on.
func (ix *Index) Page(query string, offset, limit int) (results []Result, total int) {
	if ix == nil || ix.ndocs == 0 || limit <= 0 {
		return nil, 0
	}
	offset = max(offset, 0)
	qt := queryTerms(query)
	if len(qt) == 0 {
		total = ix.ndocs
		i := 0
		for _, s := range ix.segs {
			for d := range s.docs {
				if i >= offset && len(results) < limit {
					results = append(results, s.result(d, 0))
				}
				i++
			}
		}
		return results, total
	}
	type hit struct {
		seg   int
		doc   int
		score float64
	}
	if ix.p.affix > 0 {
		qt = ix.affixes(qt)
	}
	scores := ix.score(qt)
	if ix.p.fbWeight > 0 {
		scores = ix.score(ix.feedback(qt, scores))
	}
	var hits []hit
	base := 0
	for si, s := range ix.segs {
		for d := range s.docs {
			if sc := scores[base+d]; sc > 0 {
				hits = append(hits, hit{si, d, sc})
			}
		}
		base += len(s.docs)
	}
	slices.SortFunc(hits, func(a, b hit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		case a.seg != b.seg:
			return a.seg - b.seg
		}
		return a.doc - b.doc
	})
	total = len(hits)
	for i := offset; i < len(hits) && len(results) < limit; i++ {
		h := hits[i]
		results = append(results, ix.segs[h.seg].result(h.doc, h.score))
	}
	return results, total
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

// score returns the score of every tool, in segment then doc order.
func (ix *Index) score(qt []queryTerm) []float64 {
	p := ix.p
	scores := make([]float64, ix.ndocs)
	n := float64(ix.ndocs)
	nsrv := float64(len(ix.segs))
	var srvScore []float64
	if p.server > 0 {
		srvScore = make([]float64, len(ix.segs))
	}
	for _, q := range qt {
		qw := float64(q.n)
		if q.w > 0 {
			qw = q.w
		}
		df := 0
		sdf := 0
		for _, s := range ix.segs {
			if l := len(s.post[q.term]); l > 0 {
				df += l
				sdf++
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		sidf := math.Log(1 + (nsrv-float64(sdf)+0.5)/(float64(sdf)+0.5))
		base := 0
		for si, s := range ix.segs {
			post := s.post[q.term]
			var stf [nFields]float64
			for _, ps := range post {
				d := &s.docs[ps.doc]
				tf := 0.0
				for f := range nFields {
					if ps.tf[f] == 0 {
						continue
					}
					norm := 1 - p.b[f] + p.b[f]*d.lens[f]/max(ix.avg[f], 1)
					tf += p.weight[f] * float64(ps.tf[f]) / norm
					stf[f] += float64(ps.tf[f])
				}
				scores[base+int(ps.doc)] += qw * idf * tf * (p.k1 + 1) / (tf + p.k1)
			}
			if srvScore != nil && len(post) > 0 {
				tf := 0.0
				for f := range nFields {
					if stf[f] == 0 {
						continue
					}
					l := s.lenSum[f]
					if f >= fServer { // counted once per tool: once per server
						stf[f] /= float64(len(s.docs))
						l /= float64(len(s.docs))
					}
					norm := 1 - p.b[f] + p.b[f]*l/max(ix.savg[f], 1)
					tf += p.weight[f] * stf[f] / norm
				}
				srvScore[si] += qw * sidf * tf * (p.k1 + 1) / (tf + p.k1)
			}
			base += len(s.docs)
		}
	}
	if srvScore != nil {
		base := 0
		for si, s := range ix.segs {
			for d := range s.docs {
				if scores[base+d] > 0 {
					scores[base+d] += p.server * srvScore[si]
				}
			}
			base += len(s.docs)
		}
	}
	return scores
}

// feedback returns qt with the words that weigh most in the best tools
// of a first ranking added.
func (ix *Index) feedback(qt []queryTerm, scores []float64) []queryTerm {
	p := ix.p
	type ref struct {
		seg, doc int
		score    float64
	}
	var top []ref
	base := 0
	for si, s := range ix.segs {
		for d := range s.docs {
			if sc := scores[base+d]; sc > 0 {
				top = append(top, ref{si, d, sc})
			}
		}
		base += len(s.docs)
	}
	slices.SortFunc(top, func(a, b ref) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	if len(top) > p.fbDocs {
		top = top[:p.fbDocs]
	}
	if len(top) == 0 {
		return qt
	}
	in := map[string]bool{}
	for _, q := range qt {
		in[q.term] = true
	}
	weight := map[string]float64{}
	n := float64(ix.ndocs)
	for _, r := range top {
		d := &ix.segs[r.seg].docs[r.doc]
		for _, t := range d.terms {
			if in[t] {
				continue
			}
			df := 0
			for _, s := range ix.segs {
				df += len(s.post[t])
			}
			idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
			weight[t] += r.score / top[0].score * idf
		}
	}
	type tw struct {
		t string
		w float64
	}
	var cand []tw
	for t, w := range weight {
		cand = append(cand, tw{t, w})
	}
	slices.SortFunc(cand, func(a, b tw) int {
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return strings.Compare(a.t, b.t)
	})
	if len(cand) > p.fbTerms {
		cand = cand[:p.fbTerms]
	}
	out := slices.Clone(qt)
	for _, c := range cand {
		out = append(out, queryTerm{term: c.t, n: 1, w: p.fbWeight * c.w / cand[0].w})
	}
	return out
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
	add := func(t string, q queryTerm) {
		if in[t] {
			return
		}
		in[t] = true
		out = append(out, queryTerm{term: t, n: 1, w: p.affix * float64(q.n), from: q.term})
	}
	for _, q := range qt {
		if len(q.term) < 4 {
			continue
		}
		for l := max(4, len(q.term)-p.affixLen); l < len(q.term); l++ {
			pre := q.term[:l]
			for _, s := range ix.segs {
				if _, ok := s.post[pre]; ok {
					add(pre, q)
					break
				}
			}
		}
		for _, s := range ix.segs {
			i, _ := slices.BinarySearch(s.words, q.term)
			for ; i < len(s.words) && strings.HasPrefix(s.words[i], q.term); i++ {
				if w := s.words[i]; len(w) > len(q.term) && len(w)-len(q.term) <= p.affixLen {
					add(w, q)
				}
			}
		}
	}
	// A word no tool has, and that no indexed word extends or is extended
	// by, may be the start of one (typed in part: "dir" for directory).
	for _, q := range qt {
		if len(q.term) < 2 || ix.has(q.term) || slices.ContainsFunc(out[len(qt):], func(x queryTerm) bool { return x.from == q.term }) {
			continue
		}
		for _, s := range ix.segs {
			i, _ := slices.BinarySearch(s.words, q.term)
			for ; i < len(s.words) && strings.HasPrefix(s.words[i], q.term); i++ {
				add(s.words[i], q)
			}
		}
	}
	return out
}

// has reports whether any tool has the term.
func (ix *Index) has(t string) bool {
	for _, s := range ix.segs {
		if _, ok := s.post[t]; ok {
			return true
		}
	}
	return false
}
