package upstream

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// What an instance may not serve. The catalog comes from the registered
// upstream's listing, but a per-session instance runs a process of its own,
// which may list other definitions (a package update between the two
// starts). The hub decides, at every listing of an instance
// (Options.VetInstance) and before any request reaches the instance after
// it, which of the tools and prompts it listed the instance withholds;
// a request for one of them fails with a [*WithheldError] without reaching
// the instance.

// Withheld is what an instance withholds: by method ("tools/call",
// "prompts/get"), the names refused, each with the text of its refusal.
// A nil or empty Withheld withholds nothing.
type Withheld map[string]map[string]string

// WithheldError is the error of a request for an item its instance
// withholds (see [Withheld]).
type WithheldError struct {
	Method, Item string
	// Message says why, for the client.
	Message string
}

func (e *WithheldError) Error() string { return e.Message }

// Withhold sets what the instance withholds from now on, replacing what it
// withheld before.
func (u *Upstream) Withhold(w Withheld) {
	for _, names := range w {
		if len(names) > 0 {
			c := maps.Clone(w)
			u.withheld.Store(&c)
			return
		}
	}
	u.withheld.Store(nil)
}

// withholds returns the error of a request the upstream withholds, or nil.
// This is on every call's path: for an upstream that withholds nothing it
// is one atomic load.
func (u *Upstream) withholds(method string, params []byte) error {
	w := u.withheld.Load()
	if w == nil {
		return nil
	}
	names := (*w)[method]
	if len(names) == 0 {
		return nil
	}
	v, err := wire.Get(params, "name")
	if err != nil || v == nil {
		return nil
	}
	name, err := wire.String(v)
	if err != nil {
		return nil
	}
	if msg, ok := names[name]; ok {
		return &WithheldError{Method: method, Item: name, Message: msg}
	}
	return nil
}

// vetInstance asks the hub what instance u withholds of inv, the listing
// it just made, before any request can reach it after that listing.
func (u *Upstream) vetInstance(inv Inventory) {
	if u.parent == nil || u.m.opts.VetInstance == nil {
		return
	}
	u.Withhold(u.m.opts.VetInstance(u, inv))
}

// Adopt puts definitions that instances of the registered upstream u
// listed into u's listing, the catalog's source: each replaces the item of
// its name (a resource template: of its uriTemplate), or is added when
// there is none. The hub adopts the definitions of an instance that a
// person approved, so that the catalog describes what was approved. A
// definition whose name cannot be read is left out; nothing changes when
// every one is in the listing already.
func (u *Upstream) Adopt(defs Inventory) {
	u.update(func(_ *Status, cur *Inventory) {
		changed := false
		for _, k := range []struct {
			list  *[]json.RawMessage
			defs  []json.RawMessage
			field string
		}{
			{&cur.Tools, defs.Tools, "name"},
			{&cur.Prompts, defs.Prompts, "name"},
			{&cur.Templates, defs.Templates, "uriTemplate"},
		} {
			for _, d := range k.defs {
				if l, ok := adoptItem(*k.list, d, k.field); ok {
					*k.list, changed = l, true
				}
			}
		}
		if changed {
			cur.Version++
		}
	})
}

// adoptItem returns list with d in place of the item of d's name (field),
// or d added; ok is false when nothing changes.
func adoptItem(list []json.RawMessage, d json.RawMessage, field string) (_ []json.RawMessage, ok bool) {
	name, known := itemName(d, field)
	if !known {
		return list, false
	}
	for i, it := range list {
		if n, _ := itemName(it, field); n == name {
			if string(it) == string(d) {
				return list, false
			}
			l := slices.Clone(list)
			l[i] = d
			return l, true
		}
	}
	return append(slices.Clip(list), d), true
}

func itemName(item json.RawMessage, field string) (string, bool) {
	v, err := wire.Get(item, field)
	if err != nil || v == nil {
		return "", false
	}
	s, err := wire.String(v)
	return s, err == nil && s != ""
}
