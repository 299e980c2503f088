package catalog

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sync"
)

// Entry is one exposed item of a catalog.
//
// Raw and Fixes share memory with the catalog (Raw is a slice of the
// matching *Result bytes); callers must not modify them.
type Entry struct {
	// Kind is the kind of item.
	Kind Kind
	// Name is the exposed name of a tool or prompt, the uri of a resource
	// or the uriTemplate of a resource template.
	Name string
	// Server is the upstream that offers the item, "" for the hub's own
	// tools.
	Server string
	// Original is the item's name (uri, uriTemplate) at the upstream.
	Original string
	// Raw is the item's JSON object as exposed: the upstream's object with
	// its name replaced by Name when they differ.
	Raw json.RawMessage
	// Fixes lists what normalisation and naming changed.
	Fixes []string
	// Stale reports that the item comes from a cache, not a live listing.
	Stale bool
}

// Shadow reports an item that is not exposed.
type Shadow struct {
	// Kind is the kind of item.
	Kind Kind
	// Name is the contested exposed name, uri or uriTemplate.
	Name string
	// Server is the upstream whose item is not exposed ("" for an own tool).
	Server string
	// Original is the item's name (uri, uriTemplate) at the upstream.
	Original string
	// Winner is the server that holds Name, HubWinner for the hub, or ""
	// when Reason is ReasonInvalid.
	Winner string
	// Reason is ReasonCollision, ReasonDuplicate, ReasonReserved or
	// ReasonInvalid.
	Reason string
}

// Catalog is the merged catalog built by [Build]. It is immutable and safe
// for concurrent use. A nil *Catalog is an empty catalog.
type Catalog struct {
	tools, prompts, resources, templates list
	srcs                                 []srcInfo
	shadows                              []Shadow
}

// srcInfo is what entries need of a Source.
type srcInfo struct {
	server string
	stale  bool
}

// rec is the compact form of an Entry.
type rec struct {
	name, orig string
	src        int32 // index in Catalog.srcs; -1 for the hub's own tools
}

// list holds the entries of one kind. Its list result is rendered on first
// use: merging is done at Build, serialising once, when first needed.
type list struct {
	kind  Kind
	recs  []rec            // sorted by name
	fixes map[int][]string // Fixes by index in recs, when not empty
	side  []workItem       // the items, by seq
	seqs  []int32          // parallel to recs: the entry's seq in side
	match []int32          // templates: indices in recs, in server order
	res   []*regexp.Regexp // templates: parallel to match

	once   sync.Once
	result []byte // {"<field>":[...]}
	ends   []int  // parallel to recs: Raw is result[ends[i-1]+1 or start : ends[i]]
	starts []int  // parallel to recs
}

// resultField is the member name of the list result of kind.
func resultField(kind Kind) string {
	switch kind {
	case KindTool:
		return "tools"
	case KindPrompt:
		return "prompts"
	case KindResource:
		return "resources"
	default:
		return "resourceTemplates"
	}
}

// finish stores out, which is sorted by name. The result is rendered later,
// by render.
func (l *list) finish(kind Kind, out *output) {
	l.kind = kind
	l.recs = out.recs
	l.fixes = out.fixes
	l.side = out.side
	l.seqs = out.seqs
}

// render builds the result from the items' Raw, splicing in exposed names,
// in one allocation, once. It copies the items in listing order, which
// reads memory far more sequentially than name order.
func (l *list) render() {
	l.once.Do(func() {
		field := resultField(l.kind)
		n := len(l.recs)
		starts, ends := make([]int, n), make([]int, n)
		for i, seq := range l.seqs {
			sd := &l.side[seq]
			size := len(sd.it.Raw)
			if name := l.recs[i].name; name != sd.orig {
				size += len(name) + 2 - int(sd.it.keyEnd-sd.it.keyStart)
			}
			ends[i] = size
		}
		off := len(`{"`) + len(field) + len(`":[`)
		for i := range l.recs {
			if i > 0 {
				off++ // ','
			}
			starts[i] = off
			off += ends[i]
			ends[i] = off
		}
		buf := make([]byte, off+len(`]}`))
		copy(buf, `{"`)
		copy(buf[2:], field)
		copy(buf[2+len(field):], `":[`)
		copy(buf[off:], `]}`)
		var inv []int
		if n > 0 {
			inv = make([]int, len(l.side))
			for i := range inv {
				inv[i] = -1
			}
			for i, seq := range l.seqs {
				inv[seq] = i
			}
		}
		for seq, i := range inv {
			if i < 0 {
				continue
			}
			r := &l.recs[i]
			it := l.side[seq].it
			start, end := starts[i], ends[i]
			if i > 0 {
				buf[start-1] = ','
			}
			if r.name != r.orig {
				// Names are [A-Za-z0-9_-]+: the JSON string is the name quoted.
				p := start + copy(buf[start:], it.Raw[:it.keyStart])
				buf[p] = '"'
				p += 1 + copy(buf[p+1:], r.name)
				buf[p] = '"'
				copy(buf[p+1:end], it.Raw[it.keyEnd:])
			} else {
				copy(buf[start:end], it.Raw)
			}
		}
		l.result, l.starts, l.ends = buf, starts, ends
	})
}

// same reports whether two lists hold the same entries from the same
// servers with the same bytes, without rendering either. Items that did not
// change between builds share their Raw, so comparing them is cheap.
func (c *Catalog) same(l *list, o *Catalog, ol *list) bool {
	if len(l.recs) != len(ol.recs) {
		return false
	}
	for i := range l.recs {
		a, b := &l.recs[i], &ol.recs[i]
		if a.name != b.name || a.orig != b.orig || (a.src < 0) != (b.src < 0) {
			return false
		}
		if a.src >= 0 && (c.srcs[a.src].server != o.srcs[b.src].server || c.srcs[a.src].stale != o.srcs[b.src].stale) {
			return false
		}
		if !bytes.Equal(l.side[l.seqs[i]].it.Raw, ol.side[ol.seqs[i]].it.Raw) {
			return false
		}
	}
	return true
}

// Same reports whether c and o list the same items of kind with the same
// bytes: whether a client's list of that kind would change. Either may be
// nil (an empty catalog).
func (c *Catalog) Same(o *Catalog, kind Kind) bool {
	empty := &Catalog{}
	if c == nil {
		c = empty
	}
	if o == nil {
		o = empty
	}
	return c.same(c.list(kind), o, o.list(kind))
}

// list returns the list of kind.
func (c *Catalog) list(kind Kind) *list {
	switch kind {
	case KindTool:
		return &c.tools
	case KindPrompt:
		return &c.prompts
	case KindResource:
		return &c.resources
	default:
		return &c.templates
	}
}

// entry returns recs[i] as an Entry.
func (c *Catalog) entry(l *list, i int) Entry {
	l.render()
	r := &l.recs[i]
	e := Entry{
		Kind:     l.kind,
		Name:     r.name,
		Original: r.orig,
		Raw:      l.result[l.starts[i]:l.ends[i]:l.ends[i]],
		Fixes:    l.fixes[i],
	}
	if r.src >= 0 {
		e.Server = c.srcs[r.src].server
		e.Stale = c.srcs[r.src].stale
	}
	return e
}

// get finds the entry named name by binary search.
func (c *Catalog) get(l *list, name string) (Entry, bool) {
	lo, hi := 0, len(l.recs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l.recs[m].name < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(l.recs) && l.recs[lo].name == name {
		return c.entry(l, lo), true
	}
	return Entry{}, false
}

func (c *Catalog) all(l *list) []Entry {
	out := make([]Entry, len(l.recs))
	for i := range l.recs {
		out[i] = c.entry(l, i)
	}
	return out
}

func (l *list) resultOr(empty string) []byte {
	if l.recs == nil && l.side == nil {
		return []byte(empty)
	}
	l.render()
	return l.result
}

// Tool returns the tool exposed as name.
func (c *Catalog) Tool(name string) (Entry, bool) {
	if c == nil {
		return Entry{}, false
	}
	return c.get(&c.tools, name)
}

// Prompt returns the prompt exposed as name.
func (c *Catalog) Prompt(name string) (Entry, bool) {
	if c == nil {
		return Entry{}, false
	}
	return c.get(&c.prompts, name)
}

// Resource returns the resource with the given uri.
func (c *Catalog) Resource(uri string) (Entry, bool) {
	if c == nil {
		return Entry{}, false
	}
	return c.get(&c.resources, uri)
}

// Template returns the resource template whose uriTemplate is exactly
// uriTemplate.
func (c *Catalog) Template(uriTemplate string) (Entry, bool) {
	if c == nil {
		return Entry{}, false
	}
	return c.get(&c.templates, uriTemplate)
}

// MatchTemplate returns the first resource template, in server order and
// then in the order the server listed them, whose RFC 6570 template matches
// uri.
func (c *Catalog) MatchTemplate(uri string) (Entry, bool) {
	if c == nil {
		return Entry{}, false
	}
	for i, re := range c.templates.res {
		if re.MatchString(uri) {
			return c.entry(&c.templates, int(c.templates.match[i])), true
		}
	}
	return Entry{}, false
}

// Tools returns the exposed tools, the hub's own included, sorted by name.
// The slice is a copy; the entries' Raw and Fixes must not be modified.
func (c *Catalog) Tools() []Entry {
	if c == nil {
		return []Entry{}
	}
	return c.all(&c.tools)
}

// Prompts returns the exposed prompts sorted by name. The slice is a copy;
// the entries' Raw and Fixes must not be modified.
func (c *Catalog) Prompts() []Entry {
	if c == nil {
		return []Entry{}
	}
	return c.all(&c.prompts)
}

// Resources returns the exposed resources sorted by uri. The slice is a
// copy; the entries' Raw and Fixes must not be modified.
func (c *Catalog) Resources() []Entry {
	if c == nil {
		return []Entry{}
	}
	return c.all(&c.resources)
}

// Templates returns the exposed resource templates sorted by uriTemplate.
// The slice is a copy; the entries' Raw and Fixes must not be modified.
func (c *Catalog) Templates() []Entry {
	if c == nil {
		return []Entry{}
	}
	return c.all(&c.templates)
}

// Shadowed returns the items that are not exposed, sorted by Kind, Name and
// Server (then Original, Winner, Reason). The slice is a copy.
func (c *Catalog) Shadowed() []Shadow {
	if c == nil {
		return []Shadow{}
	}
	return append([]Shadow{}, c.shadows...)
}

// ServerEntries returns everything server contributes: its tools, prompts,
// resources and templates, each sorted as by Tools and the like. Server ""
// returns the hub's own tools.
func (c *Catalog) ServerEntries(server string) []Entry {
	out := []Entry{}
	if c == nil {
		return out
	}
	for _, l := range []*list{&c.tools, &c.prompts, &c.resources, &c.templates} {
		for i := range l.recs {
			if r := l.recs[i].src; r < 0 && server == "" || r >= 0 && c.srcs[r].server == server {
				out = append(out, c.entry(l, i))
			}
		}
	}
	return out
}

// ToolsResult returns the result of tools/list: exactly
// {"tools":[raw1,raw2,...]} in the order of Tools. The bytes are shared and
// must not be modified.
func (c *Catalog) ToolsResult() []byte {
	if c == nil {
		return []byte(`{"tools":[]}`)
	}
	return c.tools.resultOr(`{"tools":[]}`)
}

// PromptsResult returns the result of prompts/list: {"prompts":[...]}. The
// bytes are shared and must not be modified.
func (c *Catalog) PromptsResult() []byte {
	if c == nil {
		return []byte(`{"prompts":[]}`)
	}
	return c.prompts.resultOr(`{"prompts":[]}`)
}

// ResourcesResult returns the result of resources/list:
// {"resources":[...]}. The bytes are shared and must not be modified.
func (c *Catalog) ResourcesResult() []byte {
	if c == nil {
		return []byte(`{"resources":[]}`)
	}
	return c.resources.resultOr(`{"resources":[]}`)
}

// TemplatesResult returns the result of resources/templates/list:
// {"resourceTemplates":[...]}. The bytes are shared and must not be
// modified.
func (c *Catalog) TemplatesResult() []byte {
	if c == nil {
		return []byte(`{"resourceTemplates":[]}`)
	}
	return c.templates.resultOr(`{"resourceTemplates":[]}`)
}
