package catalog

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// Source is everything one upstream server contributes to a catalog.
type Source struct {
	// Server is the upstream's name. Callers validate it
	// (^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$, never "hub" or "hub_…"); Build does
	// not, but stays deterministic if two sources share a name.
	Server string
	// Tools, Prompts, Resources and Templates are the upstream's items in
	// the order the upstream listed them.
	Tools, Prompts, Resources, Templates []Item
	// Filter selects the tools and prompts to expose, by original name.
	Filter Filter
	// Stale marks items that come from a cache, not a live listing. It is
	// copied into every Entry of the source.
	Stale bool
}

// Policy chooses how upstream tool and prompt names become exposed names.
type Policy string

// The naming policies.
const (
	// PolicyMerge exposes names unchanged; when two servers offer the same
	// name the server sorting first wins.
	PolicyMerge Policy = "merge"
	// PolicyPrefix exposes Server + Separator + name.
	PolicyPrefix Policy = "prefix"
)

// Options configure [Build]. The zero value is the default.
type Options struct {
	// Policy is the naming policy; "" (or any unknown value) means merge.
	Policy Policy
	// Separator joins server and name under PolicyPrefix; "" means "__".
	Separator string
	// Own are the hub's own tools (KindTool). Their names must be valid and
	// start with ReservedPrefix; they are exposed unchanged and always win.
	Own []Item
}

// DefaultSeparator is the prefix separator used when Options.Separator is "".
const DefaultSeparator = "__"

// Shadow reasons.
const (
	// ReasonCollision: another server (or, rarely, another item of the same
	// server) already holds the exposed name, uri or uriTemplate.
	ReasonCollision = "collision"
	// ReasonDuplicate: the server listed the same name, uri or uriTemplate
	// more than once; the first listing wins.
	ReasonDuplicate = "duplicate"
	// ReasonReserved: the exposed name would start with ReservedPrefix.
	ReasonReserved = "reserved"
	// ReasonInvalid: an invalid URI template, an own tool whose name is
	// invalid or lacks ReservedPrefix, or an Item not made by a Parse
	// function (or of the wrong kind).
	ReasonInvalid = "invalid"
)

// HubWinner is the Shadow.Winner of items that lose to the hub itself.
const HubWinner = "hub"

// maxSalt bounds the search for a free disambiguated name. With 32-bit
// hashes it is never reached in practice.
const maxSalt = 1 << 16

// Build merges the hub's own tools and the sources into a catalog. It is
// pure and deterministic: the same sources, in any order, and options give
// the same catalog, byte for byte. It never panics and never modifies its
// arguments. opts may be nil.
func Build(srcs []Source, opts *Options) *Catalog {
	var o Options
	if opts != nil {
		o = *opts
	}
	b := builder{prefix: o.Policy == PolicyPrefix, sep: o.Separator}
	if b.sep == "" {
		b.sep = DefaultSeparator
	}
	b.sepOK = validChars(b.sep)
	b.groups = groupSources(srcs)
	c := &Catalog{srcs: make([]srcInfo, 0, len(srcs))}
	var nt, np, nr, nm int
	for _, g := range b.groups {
		for _, s := range g {
			c.srcs = append(c.srcs, srcInfo{s.Server, s.Stale})
			nt += len(s.Tools)
			np += len(s.Prompts)
			nr += len(s.Resources)
			nm += len(s.Templates)
		}
	}
	b.srcs = c.srcs
	b.named(&c.tools, KindTool, o.Own, nt)
	b.named(&c.prompts, KindPrompt, nil, np)
	b.keyed(&c.resources, KindResource, nr)
	b.keyed(&c.templates, KindTemplate, nm)
	slices.SortFunc(b.shadows, compareShadows)
	c.shadows = b.shadows
	return c
}

type builder struct {
	prefix  bool
	sep     string
	sepOK   bool        // sep consists of name bytes
	groups  [][]*Source // sources by Server
	srcs    []srcInfo   // flattened groups
	shadows []Shadow
}

func (b *builder) shadow(kind Kind, name, server, original, winner, reason string) {
	b.shadows = append(b.shadows, Shadow{Kind: kind, Name: name, Server: server, Original: original, Winner: winner, Reason: reason})
}

// validChars reports whether s consists of bytes allowed in names.
func validChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

// groupSources sorts the sources by Server and groups those sharing a
// Server. Within a group (a caller error) sources are ordered by a hash of
// their content, so that the order of srcs never matters.
func groupSources(srcs []Source) [][]*Source {
	ptrs := make([]*Source, len(srcs))
	for i := range srcs {
		ptrs[i] = &srcs[i]
	}
	slices.SortFunc(ptrs, func(a, b *Source) int { return strings.Compare(a.Server, b.Server) })
	groups := make([][]*Source, 0, len(ptrs))
	for i := 0; i < len(ptrs); {
		j := i + 1
		for j < len(ptrs) && ptrs[j].Server == ptrs[i].Server {
			j++
		}
		g := ptrs[i:j:j]
		if len(g) > 1 {
			sums := make(map[*Source][32]byte, len(g))
			for _, s := range g {
				sums[s] = fingerprint(s)
			}
			slices.SortFunc(g, func(a, b *Source) int {
				x, y := sums[a], sums[b]
				return bytes.Compare(x[:], y[:])
			})
		}
		groups = append(groups, g)
		i = j
	}
	return groups
}

// fingerprint hashes everything of s that Build uses.
func fingerprint(s *Source) [32]byte {
	h := sha256.New()
	put := func(p []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	num := func(n int) { put(binary.LittleEndian.AppendUint64(nil, uint64(n))) }
	if s.Stale {
		num(1)
	} else {
		num(0)
	}
	for _, ps := range [][]string{s.Filter.Allow, s.Filter.Deny} {
		num(len(ps))
		for _, p := range ps {
			put([]byte(p))
		}
	}
	for _, items := range [][]Item{s.Tools, s.Prompts, s.Resources, s.Templates} {
		num(len(items))
		for i := range items {
			it := &items[i]
			put([]byte(it.Kind))
			put([]byte(it.Key))
			put([]byte(it.key))
			put(it.Raw)
			num(int(it.keyStart))
			num(int(it.keyEnd))
			num(len(it.Fixes))
			for _, f := range it.Fixes {
				put([]byte(f))
			}
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// valid reports whether it is an unmodified Item of the given kind made by
// a Parse function, so that Build can trust its key offsets. It does not
// touch Raw's bytes.
func (it *Item) valid(kind Kind) bool {
	return it.Kind == kind && it.Key != "" && it.Key == it.key &&
		it.keyStart >= 0 && it.keyEnd-it.keyStart >= 2 && int(it.keyEnd) <= len(it.Raw)
}

func itemsOf(s *Source, kind Kind) []Item {
	switch kind {
	case KindTool:
		return s.Tools
	case KindPrompt:
		return s.Prompts
	case KindResource:
		return s.Resources
	default:
		return s.Templates
	}
}

// sortWork is a tool or prompt being named, laid out for a fast sort by
// name (packed key first), then by server (rank), original name and listing
// order (seq, which also indexes the matching workItem).
type sortWork struct {
	k    nameKey
	name string
	rank int32 // index of the source group; -1 for own tools
	seq  int32
}

// workItem is the rest of what Build needs of an item, copied in listing
// order so that the passes in name order touch little memory.
type workItem struct {
	it        *Item
	orig      string // it.Key
	srcIdx    int32  // index in b.srcs; -1 for own tools
	rewritten bool   // the name is the sanitised candidate
	fixes     bool   // len(it.Fixes) > 0
}

func newWorkItem(it *Item, srcIdx int32, rewritten bool) workItem {
	return workItem{it: it, orig: it.Key, srcIdx: srcIdx, rewritten: rewritten, fixes: len(it.Fixes) > 0}
}

// server returns the server of w, "" for own tools.
func (b *builder) server(w *workItem) string {
	if w.srcIdx < 0 {
		return ""
	}
	return b.srcs[w.srcIdx].server
}

// winner returns the Shadow.Winner naming w's server.
func (b *builder) winner(w *workItem) string {
	if w.srcIdx < 0 {
		return HubWinner
	}
	return b.srcs[w.srcIdx].server
}

// loser is a tool or prompt that lost its name under PolicyPrefix.
type loser struct {
	w, holder int32 // indices in ws (and side)
}

// output collects the exposed entries of a list.
type output struct {
	side  []workItem       // the items, by seq
	recs  []rec            // the entries
	seqs  []int32          // parallel to recs: the entry's seq in side
	fixes map[int][]string // by index in recs
}

func (o *output) add(name string, seq int32, fixes []string) {
	if len(fixes) > 0 {
		if o.fixes == nil {
			o.fixes = make(map[int][]string)
		}
		o.fixes[len(o.recs)] = slices.Clip(fixes)
	}
	o.recs = append(o.recs, rec{name: name, orig: o.side[seq].orig, src: o.side[seq].srcIdx})
	o.seqs = append(o.seqs, seq)
}

// named builds l from the tools or prompts of own and b.groups.
//
// Every item gets its candidate name first (sanitised if invalid); one sort
// by (name, server, original, listing order) then both orders the output and
// puts the claimants of each name next to each other, first claimant first.
func (b *builder) named(l *list, kind Kind, own []Item, total int) {
	n := total + len(own)
	ws := make([]sortWork, 0, n)
	side := make([]workItem, 0, n)
	for i := range own {
		it := &own[i]
		if !it.valid(KindTool) || !it.nameOK || !strings.HasPrefix(it.Key, ReservedPrefix) {
			b.shadow(kind, it.Key, "", it.Key, "", ReasonInvalid)
			continue
		}
		ws = append(ws, sortWork{it.pk, it.Key, -1, int32(len(side))})
		side = append(side, newWorkItem(it, -1, false))
	}
	var arena strings.Builder
	if b.prefix {
		size := 0
		for _, g := range b.groups {
			for _, src := range g {
				items := itemsOf(src, kind)
				size += len(items) * (len(src.Server) + len(b.sep))
				for i := range items {
					size += len(items[i].Key)
				}
			}
		}
		arena.Grow(size)
	}
	srcIdx := int32(0)
	for r, g := range b.groups {
		for _, src := range g {
			items := itemsOf(src, kind)
			srvOK := b.sepOK && validChars(src.Server)
			for i := range items {
				it := &items[i]
				if !it.valid(kind) {
					b.shadow(kind, it.Key, src.Server, it.Key, "", ReasonInvalid)
					continue
				}
				if !src.Filter.Match(it.Key) {
					continue
				}
				w := sortWork{rank: int32(r), seq: int32(len(side))}
				rewritten := false
				switch {
				case !b.prefix && it.nameOK:
					w.name, w.k = it.Key, it.pk
				case b.prefix && it.nameOK && srvOK && len(src.Server)+len(b.sep)+len(it.Key) <= maxNameLen:
					start := arena.Len()
					arena.WriteString(src.Server)
					arena.WriteString(b.sep)
					arena.WriteString(it.Key)
					w.name = arena.String()[start:]
					w.k = packName(w.name)
				default:
					w.name = sanitise(b.candidate(src.Server, it.Key)) + "_" + nameHash(src.Server, it.Key, 0)
					w.k = packName(w.name)
					rewritten = true
				}
				ws = append(ws, w)
				side = append(side, newWorkItem(it, srcIdx, rewritten))
			}
			srcIdx++
		}
	}

	order := (&workSorter{ws: ws, side: side}).sort()

	out := output{side: side, recs: make([]rec, 0, len(ws)), seqs: make([]int32, 0, len(ws))}
	var losers []loser
	for i := 0; i < len(order); {
		first := &ws[order[i]]
		j := i + 1
		for j < len(order) && ws[order[j]].k == first.k && ws[order[j]].name == first.name {
			j++
		}
		holder := int32(-1)
		for k := i; k < j; k++ {
			w := &ws[order[k]]
			sd := &side[w.seq]
			switch {
			case k > i && ws[order[k-1]].rank == w.rank && side[order[k-1]].orig == sd.orig:
				b.shadow(kind, w.name, b.server(sd), sd.orig, b.winner(sd), ReasonDuplicate)
			case sd.srcIdx >= 0 && w.k[0]>>32 == reservedKey:
				b.shadow(kind, w.name, b.server(sd), sd.orig, HubWinner, ReasonReserved)
			case holder < 0:
				holder = w.seq
				out.add(w.name, w.seq, b.fixes(kind, w.name, sd, nil))
			case !b.prefix:
				b.shadow(kind, w.name, b.server(sd), sd.orig, b.winner(&side[holder]), ReasonCollision)
			default:
				losers = append(losers, loser{w.seq, holder})
			}
		}
		i = j
	}
	if len(losers) > 0 {
		b.rename(kind, ws, side, losers, &out)
	}
	l.finish(kind, &out)
}

// reservedKey is ReservedPrefix as the top half of a nameKey word.
const reservedKey = uint64('h')<<24 | uint64('u')<<16 | uint64('b')<<8 | uint64('_')

// candidate is the name an item is exposed as before sanitising.
func (b *builder) candidate(server, original string) string {
	if b.prefix {
		return server + b.sep + original
	}
	return original
}

// fixes returns the Fixes of sd exposed as name: the item's and notes.
func (b *builder) fixes(kind Kind, name string, sd *workItem, notes []string) []string {
	if !sd.rewritten && !sd.fixes && len(notes) == 0 {
		return nil
	}
	if sd.rewritten {
		cand := b.candidate(b.server(sd), sd.orig)
		notes = append([]string{fmt.Sprintf("name: %q is not a valid client %s name; exposed as %q", cand, kind, name)}, notes...)
	}
	fixes := slices.Clip(sd.it.Fixes)
	if len(notes) > 0 {
		fixes = append(fixes, notes...) // cap == len: copies
	}
	return fixes
}

// rename gives the losers of PolicyPrefix name collisions, in (server,
// original) order, the first free name base + "_" + 8 hex digits of
// sha256(server "\x00" original "\x00" salt), salt = 1, 2, …, and adds them
// to out, keeping it sorted.
func (b *builder) rename(kind Kind, ws []sortWork, side []workItem, losers []loser, out *output) {
	slices.SortFunc(losers, func(x, y loser) int {
		a, c := &ws[x.w], &ws[y.w]
		if a.rank != c.rank {
			return cmp.Compare(a.rank, c.rank)
		}
		if d := strings.Compare(side[a.seq].orig, side[c.seq].orig); d != 0 {
			return d
		}
		return cmp.Compare(a.seq, c.seq)
	})
	sorted := out.recs[:len(out.recs):len(out.recs)] // the names so far, sorted
	taken := make(map[string]bool, len(losers))      // the names given here
	free := func(name string) bool {
		_, found := slices.BinarySearchFunc(sorted, name, func(r rec, n string) int { return strings.Compare(r.name, n) })
		return !found && !taken[name]
	}
	for _, lo := range losers {
		w := &ws[lo.w]
		sd := &side[w.seq]
		hd := &side[lo.holder]
		server, orig := b.server(sd), sd.orig
		base := sanitise(b.candidate(server, orig))
		name := ""
		for salt := 1; salt <= maxSalt && name == ""; salt++ {
			if n := base + "_" + nameHash(server, orig, salt); free(n) {
				name = n
			}
		}
		if name == "" {
			b.shadow(kind, w.name, server, orig, b.winner(hd), ReasonCollision)
			continue
		}
		taken[name] = true
		note := fmt.Sprintf("name: %q is already exposed for %s %q of server %q; exposed as %q", w.name, kind, hd.orig, b.server(hd), name)
		out.add(name, w.seq, b.fixes(kind, name, sd, []string{note}))
	}
	out.sort()
}

// sort sorts out by name, for the few outputs not built in order.
func (o *output) sort() {
	perm := make([]int, len(o.recs))
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(x, y int) int { return strings.Compare(o.recs[x].name, o.recs[y].name) })
	recs := make([]rec, len(perm))
	seqs := make([]int32, len(perm))
	var fixes map[int][]string
	for j, i := range perm {
		recs[j], seqs[j] = o.recs[i], o.seqs[i]
		if f, ok := o.fixes[i]; ok {
			if fixes == nil {
				fixes = make(map[int][]string, len(o.fixes))
			}
			fixes[j] = f
		}
	}
	o.recs, o.seqs, o.fixes = recs, seqs, fixes
}

// keyed builds l from the resources or templates of b.groups: the first
// server to offer a uri (uriTemplate) wins.
func (b *builder) keyed(l *list, kind Kind, total int) {
	index := make(map[string]int32, total)
	out := output{side: make([]workItem, 0, total), recs: make([]rec, 0, total), seqs: make([]int32, 0, total)}
	var res []*regexp.Regexp
	srcIdx := int32(0)
	for _, g := range b.groups {
		for _, src := range g {
			list := itemsOf(src, kind)
			for i := range list {
				it := &list[i]
				if !it.valid(kind) {
					b.shadow(kind, it.Key, src.Server, it.Key, "", ReasonInvalid)
					continue
				}
				if h, taken := index[it.Key]; taken {
					winner := b.srcs[out.recs[h].src].server
					reason := ReasonCollision
					if winner == src.Server {
						reason = ReasonDuplicate
					}
					b.shadow(kind, it.Key, src.Server, it.Key, winner, reason)
					continue
				}
				if kind == KindTemplate {
					re, err := compileTemplate(it.Key)
					if err != nil {
						b.shadow(kind, it.Key, src.Server, it.Key, "", ReasonInvalid)
						continue
					}
					res = append(res, re)
				}
				index[it.Key] = int32(len(out.recs))
				out.side = append(out.side, newWorkItem(it, srcIdx, false))
				out.add(it.Key, int32(len(out.side)-1), slices.Clip(it.Fixes))
			}
			srcIdx++
		}
	}
	// out is in server order; remember it for MatchTemplate, then sort.
	n := len(out.recs)
	out.sort()
	if kind == KindTemplate {
		l.res = res
		l.match = make([]int32, n)
		for j := range out.recs {
			l.match[index[out.recs[j].name]] = int32(j)
		}
	}
	l.finish(kind, &out)
}

// compileTemplate compiles an RFC 6570 URI template to the regexp that
// matches its expansions. uritemplate panics on some templates it accepts
// (too many variables for a regexp repeat count); that is an error here.
func compileTemplate(s string) (re *regexp.Regexp, err error) {
	defer func() {
		if r := recover(); r != nil {
			re, err = nil, fmt.Errorf("catalog: uri template %q: %v", s, r)
		}
	}()
	t, err := uritemplate.New(s)
	if err != nil {
		return nil, err
	}
	return t.Regexp(), nil
}

func compareShadows(a, b Shadow) int {
	if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := strings.Compare(a.Server, b.Server); c != 0 {
		return c
	}
	if c := strings.Compare(a.Original, b.Original); c != 0 {
		return c
	}
	if c := strings.Compare(a.Winner, b.Winner); c != 0 {
		return c
	}
	return strings.Compare(a.Reason, b.Reason)
}
