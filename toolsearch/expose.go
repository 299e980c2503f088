package toolsearch

import (
	"fmt"
	"slices"
	"sync"

	"github.com/mcp-hub/mcp-hub/catalog"
)

// Mode says which tools a hub lists in tools/list.
type Mode string

// The modes of [Exposure].
const (
	// ModeAll lists every tool of the catalog.
	ModeAll Mode = "all"
	// ModeSearch lists the hub's own tools, the tools of
	// Exposure.Always, and the tools each session found and called;
	// the model finds the others with hub_search_tools.
	ModeSearch Mode = "search"
	// ModeAuto is ModeSearch while the catalog holds more than
	// Exposure.SearchAbove tools of upstreams, ModeAll otherwise.
	ModeAuto Mode = "auto"
)

// Exposure configures which tools a hub lists. The zero value lists every
// tool.
type Exposure struct {
	Mode Mode
	// Always are exposed tool names, or globs where "*" matches any run of
	// characters (as catalog.Filter matches), that
	// are listed in search mode too.
	Always []string
	// SessionTools bounds the tools a session found and called that are
	// added to its own list, least recently used first out (20 when 0).
	SessionTools int
	// SearchAbove is ModeAuto's threshold (60 when 0).
	SearchAbove int
}

// Defaults of Exposure's zero fields.
const (
	DefaultSessionTools = 20
	DefaultSearchAbove  = 60
)

// Check reports a mode that is not all, search or auto, and a negative
// bound.
func (e Exposure) Check() error {
	switch e.Mode {
	case "", ModeAll, ModeSearch, ModeAuto:
	default:
		return fmt.Errorf("catalog expose %q: must be all, search or auto", e.Mode)
	}
	if e.SessionTools < 0 || e.SearchAbove < 0 {
		return fmt.Errorf("catalog sessionTools and searchAbove must not be negative")
	}
	return nil
}

// SessionLimit returns SessionTools or its default.
func (e Exposure) SessionLimit() int {
	if e.SessionTools > 0 {
		return e.SessionTools
	}
	return DefaultSessionTools
}

// Searching reports whether a catalog is served in search mode.
func (e Exposure) Searching(cat *catalog.Catalog) bool {
	switch e.Mode {
	case ModeSearch:
		return true
	case ModeAuto:
		above := e.SearchAbove
		if above == 0 {
			above = DefaultSearchAbove
		}
		n := 0
		for _, t := range cat.Tools() {
			if t.Server != "" {
				n++
			}
		}
		return n > above
	}
	return false
}

// Listed returns the tools a search-mode tools/list starts from: the hub's
// own and those Always names, in the catalog's order.
func (e Exposure) Listed(cat *catalog.Catalog) []catalog.Entry {
	always := catalog.Filter{Allow: e.Always}
	var out []catalog.Entry
	for _, t := range cat.Tools() {
		if t.Server == "" || len(e.Always) > 0 && always.Match(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// ToolsResult renders a tools/list result of base plus the catalog's
// tools named in extra (names the catalog no longer has are skipped), in
// name order.
func ToolsResult(cat *catalog.Catalog, base []catalog.Entry, extra []string) []byte {
	list := slices.Clone(base)
	for _, name := range extra {
		if slices.ContainsFunc(list, func(e catalog.Entry) bool { return e.Name == name }) {
			continue
		}
		if e, ok := cat.Tool(name); ok {
			list = append(list, e)
		}
	}
	slices.SortFunc(list, func(a, b catalog.Entry) int { return compareNames(a.Name, b.Name) })
	n := len(`{"tools":[]}`)
	for _, e := range list {
		n += len(e.Raw) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, `{"tools":[`...)
	for i, e := range list {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e.Raw...)
	}
	return append(out, `]}`...)
}

func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Recent is the tools one session found and called, most recent last,
// bounded. It is safe for concurrent use.
type Recent struct {
	mu    sync.Mutex
	names []string
}

// Use records a call of the exposed name, dropping the least recently
// used name past limit. It reports whether the set of names changed (not
// only their order).
func (r *Recent) Use(name string, limit int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.names, name); i >= 0 {
		r.names = append(slices.Delete(r.names, i, i+1), name)
		return false
	}
	r.names = append(r.names, name)
	if len(r.names) > limit {
		r.names = slices.Delete(r.names, 0, len(r.names)-limit)
	}
	return true
}

// Names returns the names, least recently used first.
func (r *Recent) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.names)
}
