package toolsearch

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Tool is one tool of one server, as the index takes it.
type Tool struct {
	// Name is the tool's name at its server.
	Name string
	// ExposedAs is its name in the hub's tools/list, "" when it is not
	// listed under any name (shadowed by another server's tool of that
	// name, or a reserved name): it is then reached with hub_call_tool.
	ExposedAs string
	// Raw is the tool's definition (an MCP Tool object).
	Raw json.RawMessage
}

// Server is one server and the tools it offers.
type Server struct {
	Name string
	// Description is what the server says about itself: its registered
	// description and the instructions of its initialize result.
	Description string
	Tools       []Tool
}

// Result is one tool a search found. The JSON names are those of
// hub_search_tools' structuredContent.
type Result struct {
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	ExposedAs   string          `json:"exposedAs"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Score       float64         `json:"score"`
	// AlsoOn are the other servers that offer the very same tool (the
	// same definition, byte for byte), in the catalog's order: a search
	// shows such a tool once, under the server that ranks it best (the
	// first of them when they rank alike, the one a call by its name
	// reaches).
	AlsoOn []string `json:"alsoOn,omitempty"`
}

// posting is one tool's occurrences of a term, by field.
type posting struct {
	doc uint32
	tf  [nFields]uint16
}

// doc is one indexed tool.
type doc struct {
	tool        Tool
	title, desc string
	schema      json.RawMessage
	lens        [nFields]float64 // terms per field
	def         uint64           // a hash of the definition (Raw), for finding copies
}

// segment is the index of one server's tools. A segment is immutable; a
// rebuild reuses the segment of each server whose tools did not change.
type segment struct {
	server Server
	docs   []doc
	post   map[string][]posting // by term
	words  []string             // the terms of post, sorted
	byName map[string]int       // docs by tool name
	lenSum [nFields]float64     // terms per field over all docs (and the server's own fields once)
	names  []string             // the terms of the server's name
}

// Index ranks the tools of a set of servers. It is immutable and safe for
// concurrent use; [Build] makes a new one when the tools change.
type Index struct {
	// lexWords and lexWordsN remember what the word table holds for
	// query words (wordLex).
	lexWords  sync.Map
	lexWordsN atomic.Int64
	segs      []*segment
	base      []int // the number of the first tool of each segment
	ndocs     int
	// ndistinct and nsrv are the tools and servers that count in the
	// statistics: copies of a tool once, a server of copies not.
	ndistinct, nsrv int
	avg             [nFields]float64 // mean terms per field per tool
	savg            [nFields]float64 // mean terms per field per server
	p               *params
	// terms are every term's postings, by segment; words are the terms,
	// sorted (for affix matching).
	terms map[string]*termEntry
	words []string
	// fw are each tool's field weights over their length normalisation
	// (BM25F: weight / (1 - b + b·length/average)), by tool number.
	fw [][nFields]float64
	// copies are the tools several servers offer with the same
	// definition: each group's tool numbers, in the catalog's order;
	// copyOf is a tool's group, by tool number (nil: no copies).
	copies [][]int32
	copyOf map[int32]int32
}

// termEntry is one term of an index.
type termEntry struct {
	df   int // tools that have it (copies of a tool once)
	sdf  int // servers that have it (a server of copies only: none)
	refs []termRef
}

// termRef is a term's postings in one segment.
type termRef struct {
	seg  int
	post []posting
}

// Len returns the number of tools indexed.
func (ix *Index) Len() int {
	if ix == nil {
		return 0
	}
	return ix.ndocs
}

// Build indexes the tools of servers. Segments of prev (which may be nil)
// whose server, description and tools (names and definition bytes) are
// the same are reused, so a rebuild after one server changed re-reads only
// that server's tools.
func Build(servers []Server, prev *Index) *Index {
	return build(servers, prev, &defaultParams)
}

func build(servers []Server, prev *Index, p *params) *Index {
	old := map[string]*segment{}
	if prev != nil && prev.p == p {
		for _, s := range prev.segs {
			old[s.server.Name] = s
		}
	}
	ix := &Index{p: p}
	sorted := slices.Clone(servers)
	slices.SortFunc(sorted, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	for _, srv := range sorted {
		if len(srv.Tools) == 0 {
			continue
		}
		seg := old[srv.Name]
		if seg == nil || !sameServer(seg.server, srv) {
			seg = newSegment(srv)
		}
		ix.base = append(ix.base, ix.ndocs)
		ix.segs = append(ix.segs, seg)
		ix.ndocs += len(seg.docs)
	}
	if prev != nil && prev.p == p && slices.Equal(ix.segs, prev.segs) {
		return prev // nothing changed: a catalog rebuild for another reason
	}
	if ix.ndocs == 0 {
		return ix
	}
	// Copies of a tool count once in the statistics (how many tools
	// and servers have a word, the mean lengths): a catalog with a
	// server registered twice ranks as with it once.
	ix.findCopies()
	dup := ix.extraCopies()
	ix.ndistinct, ix.nsrv = ix.ndocs, len(ix.segs)
	n := 0
	for si, s := range ix.segs {
		n += len(s.words)
		extra := 0
		for d := range s.docs {
			if dup != nil && dup[ix.base[si]+d] {
				extra++
				for f := range nFields {
					ix.avg[f] -= s.docs[d].lens[f]
				}
			}
		}
		ix.ndistinct -= extra
		if extra == len(s.docs) {
			ix.nsrv--
		}
		for f := range nFields {
			ix.avg[f] += s.lenSum[f]
			if extra < len(s.docs) {
				ix.savg[f] += s.serverLen(f)
			}
		}
	}
	for f := range nFields {
		ix.savg[f] /= float64(ix.nsrv)
		ix.avg[f] /= float64(ix.ndistinct)
	}
	ix.fw = make([][nFields]float64, 0, ix.ndocs)
	for _, s := range ix.segs {
		for d := range s.docs {
			var w [nFields]float64
			for f := range nFields {
				w[f] = p.weight[f] / (1 - p.b[f] + p.b[f]*s.docs[d].lens[f]/max(ix.avg[f], 1))
			}
			ix.fw = append(ix.fw, w)
		}
	}
	ix.terms = make(map[string]*termEntry, n/2)
	entries := make([]termEntry, 0, n/2) // allocated together
	for si, s := range ix.segs {
		for _, w := range s.words {
			e := ix.terms[w]
			if e == nil {
				if len(entries) == cap(entries) {
					entries = make([]termEntry, 0, 1024)
				}
				entries = append(entries, termEntry{})
				e = &entries[len(entries)-1]
				ix.terms[w] = e
				ix.words = append(ix.words, w)
			}
			post := s.post[w]
			df := len(post)
			if dup != nil {
				for _, ps := range post {
					if dup[ix.base[si]+int(ps.doc)] {
						df--
					}
				}
			}
			e.df += df
			if df > 0 {
				e.sdf++
			}
			e.refs = append(e.refs, termRef{seg: si, post: post})
		}
	}
	slices.Sort(ix.words)
	return ix
}

// findCopies groups the tools that more than one server offers with the
// same definition (copies of one server under several names, or one tool
// every server of a kind has).
func (ix *Index) findCopies() {
	first := make(map[uint64][]int32, ix.ndocs) // by definition hash: the tools that have it
	for si, s := range ix.segs {
		for d := range s.docs {
			h := s.docs[d].def
			first[h] = append(first[h], int32(ix.base[si]+d))
		}
	}
	for _, ds := range first {
		if len(ds) < 2 {
			continue
		}
		// A hash is not proof: group the tools whose bytes are equal.
		for len(ds) > 1 {
			a := ix.doc(ds[0])
			group := []int32{ds[0]}
			rest := ds[:0:0]
			for _, x := range ds[1:] {
				if b := ix.doc(x); bytes.Equal(a.tool.Raw, b.tool.Raw) && ix.serverOf(x) != ix.serverOf(ds[0]) {
					group = append(group, x)
				} else {
					rest = append(rest, x)
				}
			}
			if len(group) > 1 {
				if ix.copyOf == nil {
					ix.copyOf = map[int32]int32{}
				}
				for _, x := range group {
					ix.copyOf[x] = int32(len(ix.copies))
				}
				ix.copies = append(ix.copies, group)
			}
			ds = rest
		}
	}
	// Groups in catalog order, so that results are the same each time.
	slices.SortFunc(ix.copies, func(a, b []int32) int { return int(a[0] - b[0]) })
	for g, ds := range ix.copies {
		for _, x := range ds {
			ix.copyOf[x] = int32(g)
		}
	}
}

// extraCopies returns, by tool number, whether a tool is a copy of one
// of an earlier server (nil: there are none).
func (ix *Index) extraCopies() []bool {
	if ix.copies == nil {
		return nil
	}
	dup := make([]bool, ix.ndocs)
	for _, g := range ix.copies {
		for _, x := range g[1:] {
			dup[x] = true
		}
	}
	return dup
}

// serverOf returns the segment of tool number x.
func (ix *Index) serverOf(x int32) int {
	i, found := slices.BinarySearch(ix.base, int(x))
	if !found {
		i--
	}
	return i
}

// doc returns tool number x.
func (ix *Index) doc(x int32) *doc {
	si := ix.serverOf(x)
	return &ix.segs[si].docs[int(x)-ix.base[si]]
}

// hashDef is FNV-1a of a tool's definition.
func hashDef(raw []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range raw {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// serverLen is the length of field f of the server as one document: its
// tools' fields together, its own (name, description) once.
func (s *segment) serverLen(f field) float64 {
	if f >= fServer {
		return s.lenSum[f] / float64(len(s.docs))
	}
	return s.lenSum[f]
}

func sameServer(a, b Server) bool {
	if a.Name != b.Name || a.Description != b.Description || len(a.Tools) != len(b.Tools) {
		return false
	}
	for i := range a.Tools {
		x, y := a.Tools[i], b.Tools[i]
		if x.Name != y.Name || x.ExposedAs != y.ExposedAs || !bytes.Equal(x.Raw, y.Raw) {
			return false
		}
	}
	return true
}

func newSegment(srv Server) *segment {
	s := &segment{server: srv, post: map[string][]posting{}, byName: map[string]int{}}
	s.server.Tools = slices.Clone(srv.Tools)
	var srvTerms [nFields][]string
	terms(srv.Name, func(t string) { srvTerms[fServer] = append(srvTerms[fServer], t) })
	terms(srv.Description, func(t string) { srvTerms[fServerDesc] = append(srvTerms[fServerDesc], t) })
	tfs := map[string]*[nFields]uint16{}
	for i, t := range srv.Tools {
		d := doc{tool: t}
		var schema json.RawMessage
		d.title, d.desc, schema = toolParts(t.Raw)
		d.schema = schema
		d.def = hashDef(t.Raw)
		pnames, pdescs := schemaText(schema)
		texts := [nFields]string{fName: t.Name, fTitle: d.title, fDesc: d.desc, fParamName: pnames, fParamDesc: pdescs}
		clear(tfs)
		add := func(f field, term string) {
			c := tfs[term]
			if c == nil {
				c = new([nFields]uint16)
				tfs[term] = c
			}
			if c[f] < math.MaxUint16 {
				c[f]++
			}
			d.lens[f]++
		}
		for f := range fServer {
			terms(texts[f], func(term string) { add(f, term) })
		}
		for _, f := range []field{fServer, fServerDesc} {
			for _, term := range srvTerms[f] {
				add(f, term)
			}
		}
		for term, c := range tfs {
			s.post[term] = append(s.post[term], posting{doc: uint32(i), tf: *c})
		}
		for f := range nFields {
			s.lenSum[f] += d.lens[f]
		}
		s.byName[t.Name] = len(s.docs)
		s.docs = append(s.docs, d)
	}
	s.names = srvTerms[fServer]
	for t := range s.post {
		s.words = append(s.words, t)
	}
	slices.Sort(s.words)
	return s
}

// Lookup returns the indexed tool of a server by its name there.
func (ix *Index) Lookup(server, tool string) (Result, bool) {
	if ix == nil {
		return Result{}, false
	}
	i, ok := slices.BinarySearchFunc(ix.segs, server, func(s *segment, name string) int { return strings.Compare(s.server.Name, name) })
	if !ok {
		return Result{}, false
	}
	s := ix.segs[i]
	d, ok := s.byName[tool]
	if !ok {
		return Result{}, false
	}
	return s.result(d, 0), true
}

// Reuses reports whether ix indexes server with the very segment prev
// had: its tools were not read again.
func (ix *Index) Reuses(prev *Index, server string) bool {
	if ix == nil || prev == nil {
		return false
	}
	find := func(x *Index) *segment {
		for _, s := range x.segs {
			if s.server.Name == server {
				return s
			}
		}
		return nil
	}
	s := find(ix)
	return s != nil && s == find(prev)
}
