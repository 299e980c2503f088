package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/hub/pin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Tool pins (issue 17). Approving a launch spec does not approve what the
// server later tells the model, so the hub pins each tool, prompt and
// resource template a stored upstream lists, and its instructions: the
// first listing after the approval is the baseline (trust on first use),
// and every later listing (connect, list_changed, reconnect, the warm
// start's cache) is checked against the pins before it reaches the
// catalog. What differs, or is new, is handled by the upstream's trust
// policy (upstream.Registration.TrustPolicy): quarantined (pin), served
// and flagged (warn), or not checked (off), until a person approves the
// change (mcp-hub approve, hub_approve_tool_changes, POST …/approve).
// Upstreams the embedding program added (AddUpstream), and hubs without a
// store, keep no pins.

// pinState is what the hub knows of the pins: the store's, plus first
// listings' pins not written yet.
type pinState struct {
	mu      sync.Mutex
	pins    map[string][]upstream.Pin     // by upstream
	policy  map[string]upstream.Trust     // the stored upstreams', set at each reconcile
	unsaved map[string]upstream.PinRecord // baselines saveLoop writes
	gen     uint64                        // bumped when pins or policies change
	vetted  map[string]*vettedInventory   // by upstream
	logged  map[string]bool               // findings already logged
	// insts are the verdicts on per-session instances' listings (pininst.go).
	insts map[*upstream.Upstream]*instanceVerdict
}

// vettedInventory is an upstream's parsed inventory with what the trust
// policy holds back removed, for one parsed inventory and pins generation.
type vettedInventory struct {
	src      *parsedInventory
	gen      uint64
	out      *parsedInventory
	policy   upstream.Trust
	findings []pin.Finding
}

// held reports whether the policy keeps f out of the catalog: changed and
// new tools, prompts and resource templates under pin. (Instructions are
// never forwarded to clients: a change to them is flagged, not held.)
func held(policy upstream.Trust, f pin.Finding) bool {
	return policy == upstream.TrustPin && f.Item.Kind != upstream.PinInstructions
}

// setPolicies records the trust policy of every stored registration.
func (h *Hub) setPolicies(regs []upstream.Registration) {
	pol := make(map[string]upstream.Trust, len(regs))
	for _, r := range regs {
		pol[r.Spec.Name] = r.TrustPolicy()
	}
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	if len(pol) != len(h.pins.policy) || !mapsEqual(pol, h.pins.policy) {
		h.pins.policy = pol
		h.pins.gen++
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return len(a) == len(b)
}

// loadPins reads the store's pins (another process may have approved a
// change). Baselines not written yet are kept unless the store has pins for
// their upstream.
func (h *Hub) loadPins(ctx context.Context) error {
	all, err := h.opts.Store.Pins(ctx)
	if err != nil {
		return fmt.Errorf("read tool pins: %w", err)
	}
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	for name, rec := range h.pins.unsaved {
		if _, ok := all[name]; !ok {
			all[name] = pinsOf(rec)
		}
	}
	if !samePins(all, h.pins.pins) {
		h.pins.pins = all
		h.pins.gen++
	}
	return nil
}

func pinsOf(rec upstream.PinRecord) []upstream.Pin {
	out := make([]upstream.Pin, len(rec.Changes))
	for i, c := range rec.Changes {
		out[i] = c.Pin
	}
	return out
}

func samePins(a, b map[string][]upstream.Pin) bool {
	if len(a) != len(b) {
		return false
	}
	for name, ps := range a {
		qs, ok := b[name]
		if !ok || len(ps) != len(qs) {
			return false
		}
		for i := range ps {
			if ps[i].Kind != qs[i].Kind || ps[i].Name != qs[i].Name || ps[i].Hash != qs[i].Hash {
				return false
			}
		}
	}
	return true
}

// vetted returns the parsed inventory of an upstream as the catalog may
// serve it: without the items its trust policy holds back. The first live
// listing of an upstream that was never pinned becomes its pins.
func (h *Hub) vetted(name string, inv upstream.Inventory) *parsedInventory {
	p := h.parse(name, inv)
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	policy, stored := h.pins.policy[name]
	if !stored || policy == upstream.TrustOff {
		delete(h.pins.vetted, name)
		return p
	}
	if v := h.pins.vetted[name]; v != nil && v.src == p && v.gen == h.pins.gen {
		return v.out
	}
	items := pin.Items(inv)
	findings, unpinned := pin.Check(h.pins.pins[name], items)
	if unpinned {
		if !inv.Stale && inv.Version > 0 {
			h.baselineLocked(name, items)
		}
		// Not pinned yet (a cache from before pins, or a first listing):
		// nothing to hold back.
		return p
	}
	out := p
	hold := map[pin.Key]bool{}
	for _, f := range findings {
		h.logFindingLocked(name, policy, f)
		if held(policy, f) {
			hold[f.Key()] = true
		}
	}
	if len(hold) > 0 {
		keep := func(kind upstream.PinKind, items []catalog.Item) []catalog.Item {
			return slices.DeleteFunc(slices.Clone(items), func(it catalog.Item) bool { return hold[pin.Key{Kind: kind, Name: it.Key}] })
		}
		c := *p
		c.tools = keep(upstream.PinTool, p.tools)
		c.prompts = keep(upstream.PinPrompt, p.prompts)
		c.templates = keep(upstream.PinTemplate, p.templates)
		out = &c
	}
	if h.pins.vetted == nil {
		h.pins.vetted = map[string]*vettedInventory{}
	}
	h.pins.vetted[name] = &vettedInventory{src: p, gen: h.pins.gen, out: out, policy: policy, findings: findings}
	return out
}

// baselineLocked pins a first listing, in memory at once and in the store
// by saveLoop.
func (h *Hub) baselineLocked(name string, items []pin.Item) {
	changes := pin.Baseline(items, "hub", time.Now().UTC())
	rec := upstream.PinRecord{Actor: "hub", Action: "pin", Baseline: true, Changes: changes,
		Detail: pinDetail("the first listing after its approval", changes, nil)}
	if h.pins.pins == nil {
		h.pins.pins = map[string][]upstream.Pin{}
	}
	if h.pins.unsaved == nil {
		h.pins.unsaved = map[string]upstream.PinRecord{}
	}
	h.pins.pins[name] = pinsOf(rec)
	h.pins.unsaved[name] = rec
	h.pins.gen++
	h.logger.Info("tools pinned: later changes to what they say or do need a person's approval", "upstream", name, "items", len(changes))
	select {
	case h.saveKick <- struct{}{}:
	default:
	}
}

// pinDetail is the audit detail of recorded pins: what changed, never a
// definition (those are in the pins and their history).
func pinDetail(reason string, changes []upstream.PinChange, findings []pin.Finding) json.RawMessage {
	type item struct {
		Kind     upstream.PinKind `json:"kind"`
		Name     string           `json:"name,omitempty"`
		Old      string           `json:"old,omitempty"`
		New      string           `json:"new"`
		Warnings []string         `json:"warnings,omitempty"`
	}
	warn := map[pin.Key][]string{}
	for _, f := range findings {
		warn[f.Key()] = f.Warnings
	}
	items := make([]item, 0, len(changes))
	for _, c := range changes {
		items = append(items, item{c.Pin.Kind, c.Pin.Name, c.Prev, c.Pin.Hash, warn[pin.KeyOf(c.Pin)]})
	}
	b, _ := json.Marshal(map[string]any{"reason": reason, "pins": items})
	return b
}

// savePins writes the baselines taken since the last call (saveLoop).
func (h *Hub) savePins(ctx context.Context) {
	h.pins.mu.Lock()
	recs := h.pins.unsaved
	h.pins.unsaved = nil
	h.pins.mu.Unlock()
	reload := false
	for name, rec := range recs {
		err := h.opts.Store.RecordPins(ctx, name, rec)
		switch {
		case err == nil, errors.Is(err, upstream.ErrNotFound):
		case errors.Is(err, upstream.ErrPinned):
			reload = true // another hub pinned it first: its pins count
		default:
			// Kept in memory and tried again at the next save: until it is
			// stored, another process would take its own baseline.
			h.logger.Warn("save tool pins; will retry", "upstream", name, "err", err)
			h.pins.mu.Lock()
			if h.pins.unsaved == nil {
				h.pins.unsaved = map[string]upstream.PinRecord{}
			}
			if _, newer := h.pins.unsaved[name]; !newer {
				h.pins.unsaved[name] = rec
			}
			h.pins.mu.Unlock()
		}
	}
	if reload {
		if err := h.loadPins(ctx); err != nil {
			h.logger.Warn("reload tool pins", "err", err)
		}
		h.upstreamChanged("")
	}
}

// logFindingLocked logs a finding once per definition and policy.
func (h *Hub) logFindingLocked(name string, policy upstream.Trust, f pin.Finding) {
	key := name + "\x00" + string(policy) + "\x00" + string(f.Item.Kind) + "\x00" + f.Item.Name + "\x00" + f.Item.Hash
	if h.pins.logged == nil {
		h.pins.logged = map[string]bool{}
	}
	if h.pins.logged[key] {
		return
	}
	h.pins.logged[key] = true
	args := h.findingArgs(name, policy, f)
	switch {
	case held(policy, f):
		h.logger.Warn("quarantined: it differs from what was pinned; it stays out of the catalog and calls are refused until a person approves it", args...)
	case f.Item.Kind == upstream.PinInstructions:
		h.logger.Warn("instructions differ from what was pinned (the hub does not forward them); flagged until a person approves them", args...)
	default:
		h.logger.Warn("served although it differs from what was pinned (trust warn); flagged until a person approves it", args...)
	}
}

// findingArgs are the log attributes of a finding.
func (h *Hub) findingArgs(name string, policy upstream.Trust, f pin.Finding) []any {
	args := []any{"upstream", name, "item", f.Key().String(), "change", f.What(), "trust", string(policy),
		"approve", h.approveCmd(name), "diff", f.Render()}
	if len(f.Warnings) > 0 {
		args = append(args, "warnings", strings.Join(f.Warnings, "; "))
	}
	return args
}

// liveChanges returns what the running upstream, and its per-session
// instances, list that its pins do not cover, with its policy; ok is false
// when the hub checks nothing of it.
func (h *Hub) liveChanges(name string) (policy upstream.Trust, findings []pin.Finding, ok bool) {
	if u, running := h.mgr.Get(name); running {
		if inv := u.Inventory(); inv.Version > 0 || inv.Stale {
			h.vetted(name, inv) // current
		}
		h.revetInstances(u)
	}
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	if v := h.pins.vetted[name]; v != nil && v.gen == h.pins.gen {
		policy, findings, ok = v.policy, v.findings, true
	}
	if more := h.instanceFindingsLocked(name); len(more) > 0 {
		if !ok {
			policy, ok = h.pins.policy[name], true
		}
		findings = addFindings(slices.Clip(findings), more)
	}
	return policy, findings, ok
}

// quarantineOf splits an upstream's live findings for people: what is held
// back and what is served (or never forwarded) but flagged.
func (h *Hub) quarantineOf(name string) (quarantined, flagged []string) {
	policy, findings, ok := h.liveChanges(name)
	if !ok {
		return nil, nil
	}
	for _, f := range findings {
		s := f.Key().String() + " (" + f.What() + ")"
		if held(policy, f) {
			quarantined = append(quarantined, s)
		} else {
			flagged = append(flagged, s)
		}
	}
	return quarantined, flagged
}

// heldMessage says why a name a client asked for is refused, when it is a
// quarantined tool or prompt of a running upstream, or of one of the
// session s's instances: its name at the upstream, or that name prefixed as
// the catalog's policy exposes it.
func (h *Hub) heldMessage(s *session, kind upstream.PinKind, exposed string) (string, bool) {
	o := h.catalogOptions()
	sep := o.Separator
	if sep == "" {
		sep = catalog.DefaultSeparator
	}
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(h.pins.vetted)) {
		v := h.pins.vetted[name]
		if v.gen != h.pins.gen {
			continue
		}
		for _, f := range v.findings {
			if f.Item.Kind != kind || !held(v.policy, f) {
				continue
			}
			if exposed == f.Item.Name || (o.Policy == catalog.PolicyPrefix && exposed == name+sep+f.Item.Name) {
				return quarantineText(name, h.approveCmd(name), f), true
			}
		}
	}
	// What only a per-session instance lists is not in the catalog either.
	return h.heldByInstanceLocked(s, func(name string, f pin.Finding) bool {
		return f.Item.Kind == kind && (exposed == f.Item.Name || (o.Policy == catalog.PolicyPrefix && exposed == name+sep+f.Item.Name))
	})
}

// heldUpstreamTool is heldMessage for hub_call_tool's server and tool.
func (h *Hub) heldUpstreamTool(s *session, server, tool string) (string, bool) {
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	if v := h.pins.vetted[server]; v != nil && v.gen == h.pins.gen {
		for _, f := range v.findings {
			if f.Item.Kind == upstream.PinTool && f.Item.Name == tool && held(v.policy, f) {
				return quarantineText(server, h.approveCmd(server), f), true
			}
		}
	}
	return h.heldByInstanceLocked(s, func(name string, f pin.Finding) bool {
		return name == server && f.Item.Kind == upstream.PinTool && f.Item.Name == tool
	})
}

// quarantineText is what a call of a quarantined item answers; approve
// is the command that approves it (Hub.approveCmd).
func quarantineText(server, approve string, f pin.Finding) string {
	what := "changed since a person approved it"
	if f.New() {
		what = "is new since a person approved this server's tools"
	}
	return fmt.Sprintf("%s of MCP server %q %s, so the hub quarantined it: it is not served or called until a person reviews it. Ask the user to run this in a terminal:\n\n    %s",
		f.Key(), server, what, approve)
}
