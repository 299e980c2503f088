package pin

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Item is one pinnable item of a listing.
type Item struct {
	Kind upstream.PinKind
	// Name is the tool's or prompt's name, the template's uriTemplate, ""
	// for instructions.
	Name string
	// Hash and Definition are what [Hash] makes of the item's JSON.
	Hash       string
	Definition json.RawMessage
}

// Key identifies an item (or a pin) within one upstream.
type Key struct {
	Kind upstream.PinKind
	Name string
}

// KeyOf returns the key of a pin.
func KeyOf(p upstream.Pin) Key { return Key{p.Kind, p.Name} }

// String names the item for people: `tool "echo"`, `instructions`.
func (k Key) String() string {
	switch k.Kind {
	case upstream.PinInstructions:
		return "instructions"
	case upstream.PinTemplate:
		return fmt.Sprintf("resource template %q", k.Name)
	}
	return fmt.Sprintf("%s %q", k.Kind, k.Name)
}

// Items returns the pinnable items of a listing: its tools, prompts and
// resource templates, and its instructions when the initialize result is
// known (an upstream without instructions has "" pinned). An item whose name
// cannot be read is left out: the catalog rejects it too.
func Items(inv upstream.Inventory) []Item {
	var out []Item
	add := func(kind upstream.PinKind, raws []json.RawMessage, field string) {
		for _, raw := range raws {
			v, err := wire.Get(raw, field)
			if err != nil || v == nil {
				continue
			}
			name, err := wire.String(v)
			if err != nil || name == "" {
				continue
			}
			h, c := Hash(raw)
			out = append(out, Item{Kind: kind, Name: name, Hash: h, Definition: c})
		}
	}
	add(upstream.PinTool, inv.Tools, "name")
	add(upstream.PinPrompt, inv.Prompts, "name")
	add(upstream.PinTemplate, inv.Templates, "uriTemplate")
	if len(inv.ServerInfo) > 0 {
		var init struct {
			Instructions string `json:"instructions"`
		}
		if json.Unmarshal(inv.ServerInfo, &init) == nil {
			raw, _ := json.Marshal(init.Instructions)
			h, c := Hash(raw)
			out = append(out, Item{Kind: upstream.PinInstructions, Hash: h, Definition: c})
		}
	}
	return out
}

// Finding is an item of a listing that no pin covers.
type Finding struct {
	Item Item
	// Old is the pin it differs from; nil for an item that is new.
	Old *upstream.Pin
	// Warnings are the heuristic warnings about its new definition
	// ([Warnings]).
	Warnings []string
}

// Key returns the finding's item key.
func (f Finding) Key() Key { return Key{f.Item.Kind, f.Item.Name} }

// New reports whether the item had no pin.
func (f Finding) New() bool { return f.Old == nil }

// What says "new" or "changed".
func (f Finding) What() string {
	if f.Old == nil {
		return "new"
	}
	return "changed"
}

// Check compares a listing's items with an upstream's pins and returns the
// items no pin covers, changed or new, in listing order. An upstream with
// no pins at all was never pinned: Check reports that (unpinned) and no
// findings. A pinned item that is no longer listed is not a finding.
func Check(pins []upstream.Pin, items []Item) (findings []Finding, unpinned bool) {
	if len(pins) == 0 {
		return nil, true
	}
	byKey := make(map[Key]*upstream.Pin, len(pins))
	for i := range pins {
		byKey[KeyOf(pins[i])] = &pins[i]
	}
	seen := map[Key]bool{}
	for _, it := range items {
		k := Key{it.Kind, it.Name}
		if seen[k] {
			continue // listed twice: the catalog keeps the first
		}
		seen[k] = true
		old := byKey[k]
		if old != nil && old.Hash == it.Hash {
			continue
		}
		findings = append(findings, Finding{Item: it, Old: old, Warnings: Warnings(it.Kind, it.Definition)})
	}
	return findings, false
}

// Baseline returns the pins of a first listing: every item, accepted by
// who at at.
func Baseline(items []Item, who string, at time.Time) []upstream.PinChange {
	var out []upstream.PinChange
	seen := map[Key]bool{}
	for _, it := range items {
		if k := (Key{it.Kind, it.Name}); !seen[k] {
			seen[k] = true
			out = append(out, upstream.PinChange{Pin: it.pin(who, at)})
		}
	}
	return out
}

// Accept returns the pin changes that approve findings, by who at at.
func Accept(findings []Finding, who string, at time.Time) []upstream.PinChange {
	out := make([]upstream.PinChange, 0, len(findings))
	for _, f := range findings {
		c := upstream.PinChange{Pin: f.Item.pin(who, at)}
		if f.Old != nil {
			c.Prev = f.Old.Hash
		}
		out = append(out, c)
	}
	return out
}

func (it Item) pin(who string, at time.Time) upstream.Pin {
	return upstream.Pin{Kind: it.Kind, Name: it.Name, Hash: it.Hash, Definition: it.Definition, ApprovedBy: who, ApprovedAt: at}
}
