package hub

// The catalog the hub serves: rebuilt from every upstream's inventory
// whenever one changes (off the request path, lists pre-rendered), swapped
// in whole, and the sessions told what changed.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/toolsearch"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// catalogState is one immutable version of what the hub serves.
type catalogState struct {
	cat     *catalog.Catalog
	version uint64
	search  *toolsearch.Index // the catalog's tools, for hub_search_tools
	// searching is set when tools/list is served in search mode; listed
	// and listResult are then its tools before any session's own.
	searching  bool
	listed     []catalog.Entry
	listResult []byte
}

// parsedInventory caches an upstream's parsed items per inventory version.
type parsedInventory struct {
	version   uint64
	stale     bool
	tools     []catalog.Item
	prompts   []catalog.Item
	resources []catalog.Item
	templates []catalog.Item
	bad       []string // items that could not be parsed, with the reason
}

// upstreamChanged is the manager's OnChange hook.
func (h *Hub) upstreamChanged(string) {
	select {
	case h.rebuild <- struct{}{}:
	default:
	}
	select {
	case h.saveKick <- struct{}{}:
	default:
	}
}

// rebuildLoop rebuilds the catalog whenever an upstream changes. It exits
// when the hub closes.
func (h *Hub) rebuildLoop() {
	defer close(h.done)
	for {
		select {
		case <-h.stop:
			return
		case <-h.rebuild:
			h.rebuildNow()
		}
	}
}

// rebuildNow builds the catalog from every upstream's inventory, swaps it in
// and, when a list changed, tells every session (at the end of a change
// of several upstreams: notebatch.go).
func (h *Hub) rebuildNow() {
	gen := h.mgr.Generation() // before reading the upstreams
	var srcs []catalog.Source
	descs := map[string]string{}
	for _, u := range h.mgr.List() {
		st := u.Status()
		if st.State == upstream.StateDisabled || st.Manual {
			continue
		}
		h.revetInstances(u) // first: it may adopt what a person approved
		inv := u.Inventory()
		if inv.Version == 0 && !inv.Stale {
			continue // never listed
		}
		p := h.vetted(u.Name(), inv) // without what the trust policy holds back
		spec := u.Spec()
		descs[u.Name()] = toolsearch.ServerDescription(spec.Description, inv.ServerInfo)
		srcs = append(srcs, catalog.Source{
			Server:    u.Name(),
			Tools:     p.tools,
			Prompts:   p.prompts,
			Resources: p.resources,
			Templates: p.templates,
			Filter:    catalog.Filter{Allow: spec.Tools.Allow, Deny: spec.Tools.Deny},
			Stale:     inv.Stale,
		})
	}
	h.sweepVerdicts()
	next := catalog.Build(srcs, h.catalogOptions())
	prev := h.cat.Load()
	toolsChanged := !next.Same(prev.cat, catalog.KindTool)
	promptsChanged := !next.Same(prev.cat, catalog.KindPrompt)
	resourcesChanged := !next.Same(prev.cat, catalog.KindResource) || !next.Same(prev.cat, catalog.KindTemplate)
	// Render the lists now, off the request path, so that no client's
	// request pays for it.
	next.ToolsResult()
	next.PromptsResult()
	next.ResourcesResult()
	next.TemplatesResult()
	h.logShadows(next)
	st := h.newCatalogState(next, srcs, descs, prev)
	h.cat.Store(st)
	h.doneGen.Store(gen)
	if h.opts.Expose.Mode == toolsearch.ModeAuto && st.searching != prev.searching {
		h.logExposeSwitch(st)
	}
	h.metrics.observe(h)

	h.mu.Lock()
	close(h.changed)
	h.changed = make(chan struct{})
	sessions := make([]*session, 0, len(h.sessions))
	for s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		h.notifyLists(s, listKinds{tools: s.toolsChanged(prev, st, toolsChanged), prompts: promptsChanged, resources: resourcesChanged})
	}
	h.endQuietBatches()
	h.renewSubscriptions()
	h.applyLogLevel()
}

// parse returns the parsed items of an inventory, cached per version.
func (h *Hub) parse(name string, inv upstream.Inventory) *parsedInventory {
	h.mu.Lock()
	p := h.parsed[name]
	h.mu.Unlock()
	if p != nil && p.version == inv.Version && p.stale == inv.Stale {
		return p
	}
	p = &parsedInventory{version: inv.Version, stale: inv.Stale}
	parseAll := func(raws []json.RawMessage, parse func([]byte) (catalog.Item, error), what string) []catalog.Item {
		var out []catalog.Item
		for _, raw := range raws {
			it, err := parse(raw)
			if err != nil {
				p.bad = append(p.bad, err.Error())
				h.logger.Warn("upstream "+what+" rejected", "upstream", name, "err", err)
				continue
			}
			out = append(out, it)
		}
		return out
	}
	p.tools = parseAll(inv.Tools, catalog.ParseTool, "tool")
	p.prompts = parseAll(inv.Prompts, catalog.ParsePrompt, "prompt")
	p.resources = parseAll(inv.Resources, catalog.ParseResource, "resource")
	p.templates = parseAll(inv.Templates, catalog.ParseTemplate, "resource template")
	h.mu.Lock()
	h.parsed[name] = p
	h.mu.Unlock()
	return p
}

// logShadows logs each shadowed tool once per (winner, loser, name): one
// line per loser, winner and reason for what this catalog shadows anew
// (two copies of a server would log a line per tool otherwise).
func (h *Hub) logShadows(c *catalog.Catalog) {
	type group struct {
		kind                   catalog.Kind
		server, winner, reason string
	}
	var (
		order []group
		names = map[group][]string{}
	)
	h.mu.Lock()
	for _, s := range c.Shadowed() {
		key := string(s.Kind) + "\x00" + s.Name + "\x00" + s.Winner + "\x00" + s.Server
		if h.shadowed[key] {
			continue
		}
		h.shadowed[key] = true
		g := group{s.Kind, s.Server, s.Winner, string(s.Reason)}
		if _, ok := names[g]; !ok {
			order = append(order, g)
		}
		name := s.Name
		if s.Original != s.Name {
			name += " (" + s.Original + ")"
		}
		names[g] = append(names[g], name)
	}
	h.mu.Unlock()
	const shown = 20
	for _, g := range order {
		list := names[g]
		text := strings.Join(list[:min(len(list), shown)], ", ")
		if len(list) > shown {
			text += fmt.Sprintf(" and %d more", len(list)-shown)
		}
		h.logger.Warn(string(g.kind)+"s shadowed", "upstream", g.server, "winner", g.winner, "reason", g.reason,
			"count", len(list), "names", text)
	}
}

// waitSettled waits until no upstream is on its first connect attempt, or
// until the first-list deadline passes.
func (h *Hub) waitSettled(ctx context.Context) {
	if h.opts.FirstListWait < 0 {
		return
	}
	deadline := time.NewTimer(h.opts.FirstListWait)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		ch := h.changed
		h.mu.Unlock()
		if h.settled() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		case <-h.stop:
			return
		}
	}
}

// settled reports whether every upstream's first attempt is over and the
// catalog reflects it.
func (h *Hub) settled() bool {
	for _, u := range h.mgr.List() {
		// An upstream served from the capability cache (warm start) is as
		// good as settled: its tools are listed while it connects.
		if st := u.Status(); !st.Settled && !st.Stale {
			return false
		}
	}
	// The catalog must reflect the last change, not only the upstreams.
	return h.doneGen.Load() == h.mgr.Generation()
}
