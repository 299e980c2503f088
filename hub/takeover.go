package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// A server whose name sorts first wins a tool name another server serves
// too (catalog policy merge), and the other's tool is hidden from then on:
// approving a server can take over names people's clients already call.
// Every approval prompt says so (mcp-hub approve, the console,
// elicitation, the REST API's view): which names it takes over and from
// whom, as far as the store's listings tell (package catalog computes it,
// with every rule of the catalog).

// maxTakeovers bounds the names a note lists.
const maxTakeovers = 10

// StoredTakeoverNote says which tool names approving r would take over
// from the servers that serve them now, by the listings the store keeps
// (the running hub's): exactly, when the store has r's own listing, or
// else every name that a tool it may list would take over. It is "" when
// there is none (or under the prefix policy, where names never collide).
func StoredTakeoverNote(ctx context.Context, st Store, opts catalog.Options, r upstream.Registration) string {
	if st == nil {
		return ""
	}
	regs, err := st.List(ctx)
	if err != nil {
		return ""
	}
	invs, err := st.Inventories(ctx)
	if err != nil {
		return ""
	}
	var srcs []catalog.Source
	for _, o := range regs {
		inv, listed := invs[o.Spec.Name]
		if o.Spec.Name == r.Spec.Name || !o.Approved() || !o.Enabled || !listed {
			continue
		}
		srcs = append(srcs, sourceOf(o.Spec, inv))
	}
	if inv, listed := invs[r.Spec.Name]; listed {
		return takeoverNote(catalog.Takeovers(srcs, sourceOf(r.Spec, inv), &opts), true)
	}
	return takeoverNote(catalog.Exposable(srcs, r.Spec.Name, &opts), false)
}

// TakeoverNote is [StoredTakeoverNote] for this hub's store and catalog.
func (h *Hub) TakeoverNote(ctx context.Context, r upstream.Registration) string {
	return StoredTakeoverNote(ctx, h.opts.Store, h.opts.Catalog, r)
}

// sourceOf is the catalog source of spec's listing inv.
func sourceOf(spec upstream.Spec, inv upstream.Inventory) catalog.Source {
	s := catalog.Source{Server: spec.Name, Filter: catalog.Filter{Allow: spec.Tools.Allow, Deny: spec.Tools.Deny}}
	for _, raw := range inv.Tools {
		if it, err := catalog.ParseTool(json.RawMessage(raw)); err == nil {
			s.Tools = append(s.Tools, it)
		}
	}
	return s
}

// takeoverNote words takeovers for an approval prompt; known says whether
// they are of the server's own listing or of what it may list.
func takeoverNote(ts []catalog.Takeover, known bool) string {
	if len(ts) == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(ts), maxTakeovers)+1)
	for i, t := range ts {
		if i == maxTakeovers {
			parts = append(parts, fmt.Sprintf("and %d more", len(ts)-maxTakeovers))
			break
		}
		parts = append(parts, fmt.Sprintf("`%s` from `%s`", t.Name, t.From))
	}
	list := strings.Join(parts, ", ")
	const why = "the server whose name sorts first wins a tool name, and the other's tool is hidden from clients"
	if known {
		return fmt.Sprintf("⚠ Approving it takes over %s (by its last listing; %s).", list, why)
	}
	return fmt.Sprintf("⚠ It has not listed its tools yet. A tool it lists under one of these names takes it over: %s (%s).", list, why)
}
