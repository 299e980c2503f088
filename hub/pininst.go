package hub

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/hub/pin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Tool pins of per-session instances (issues 16, 17). The catalog comes
// from the registered upstream's listing, which pins.go checks, but each
// per-session instance runs a process of its own, which may list other
// definitions (an `npx -y` that picked up a release between the two
// starts). So every listing of an instance is checked against the pins
// too, once, before a request reaches the instance after it
// (upstream.Options.VetInstance): under trust pin, the instance withholds
// what changed or is new (its session's calls get the quarantine error the
// shared listing's would), under warn it serves it, logged once per
// instance and flagged; under off nothing is checked. Either way what it
// lists that the pins do not cover is shown for approval with the shared
// listing's changes (liveChanges) and saved with the capability cache
// (Inventory.Variants) for mcp-hub approve. Instances whose listing matches
// the pins are not affected.
//
// An instance's listing is checked when it is made, and only that: when
// the pins change later (a person approved a change), what it withheld and
// is pinned now is released, and nothing it served is taken back, so
// approving one session's new definition does not stop another session
// that uses the definition approved before. The approved definition
// becomes the registered upstream's (upstream.Upstream.Adopt), so the
// catalog describes what was approved.

// instanceVerdict is what the hub decided of an instance's last listing.
type instanceVerdict struct {
	name, label string
	approve     string // the command that approves its upstream's changes
	gen         uint64 // the pins generation it is current for
	unpinned    bool   // the upstream had no pins: decided again once it has
	policy      upstream.Trust
	// findings are what the listing has that the pins do not cover, in
	// listing order.
	findings []pin.Finding
	logged   map[string]bool // findings logged, for this instance
}

// vetInstance is the manager's VetInstance hook: it checks an instance's
// listing against its upstream's pins and returns what the instance
// withholds.
func (h *Hub) vetInstance(i *upstream.Upstream, inv upstream.Inventory) upstream.Withheld {
	name := i.Name()
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	prev := h.pins.insts[i]
	policy, stored := h.pins.policy[name]
	if !stored || policy == upstream.TrustOff {
		delete(h.pins.insts, i)
		return nil
	}
	findings, unpinned := pin.Check(h.pins.pins[name], pin.Items(inv))
	v := &instanceVerdict{name: name, label: i.Label(), approve: h.approveCmd(name), gen: h.pins.gen, unpinned: unpinned, policy: policy, findings: findings}
	if prev != nil {
		v.logged = prev.logged
	}
	if h.pins.insts == nil {
		h.pins.insts = map[*upstream.Upstream]*instanceVerdict{}
	}
	h.pins.insts[i] = v
	h.logInstanceLocked(v)
	return v.withheld()
}

// withheld returns what the instance may not serve: under pin, its changed
// and new tools and prompts. (Resource templates are held back from the
// catalog, which the registered upstream's listing makes.)
func (v *instanceVerdict) withheld() upstream.Withheld {
	var w upstream.Withheld
	for _, f := range v.findings {
		method := ""
		switch f.Item.Kind {
		case upstream.PinTool:
			method = "tools/call"
		case upstream.PinPrompt:
			method = "prompts/get"
		}
		if method == "" || !held(v.policy, f) {
			continue
		}
		if w == nil {
			w = upstream.Withheld{}
		}
		if w[method] == nil {
			w[method] = map[string]string{}
		}
		w[method][f.Item.Name] = quarantineText(v.name, v.approve, f)
	}
	return w
}

// logInstanceLocked logs each finding of an instance once per definition
// and policy.
func (h *Hub) logInstanceLocked(v *instanceVerdict) {
	for _, f := range v.findings {
		key := string(v.policy) + "\x00" + string(f.Item.Kind) + "\x00" + f.Item.Name + "\x00" + f.Item.Hash
		if v.logged[key] {
			continue
		}
		if v.logged == nil {
			v.logged = map[string]bool{}
		}
		v.logged[key] = true
		args := append(h.findingArgs(v.name, v.policy, f), "session", v.label)
		switch {
		case held(v.policy, f):
			h.logger.Warn("quarantined in a per-session instance: it lists a definition that differs from what was pinned; its session's calls to it are refused until a person approves it", args...)
		case f.Item.Kind == upstream.PinInstructions:
			h.logger.Warn("a per-session instance's instructions differ from what was pinned (the hub does not forward them); flagged until a person approves them", args...)
		default:
			h.logger.Warn("served by a per-session instance although it differs from what was pinned (trust warn); flagged until a person approves it", args...)
		}
	}
}

// revetInstances brings the verdicts of u's instances up to date with the
// pins and policies: what the pins cover now is released (and adopted into
// u's listing), what they still do not cover stays as decided; a verdict
// made before the upstream had pins is made again.
func (h *Hub) revetInstances(u *upstream.Upstream) {
	insts := u.Instances()
	if len(insts) == 0 {
		return
	}
	type update struct {
		i *upstream.Upstream
		w upstream.Withheld
	}
	var updates []update
	var approved []pin.Item
	name := u.Name()
	h.pins.mu.Lock()
	policy, stored := h.pins.policy[name]
	pins := h.pins.pins[name]
	for _, i := range insts {
		v := h.pins.insts[i]
		if v == nil || v.gen == h.pins.gen {
			continue
		}
		if !stored || policy == upstream.TrustOff {
			delete(h.pins.insts, i)
			updates = append(updates, update{i, nil})
			continue
		}
		n := *v
		n.gen, n.policy, n.findings = h.pins.gen, policy, nil
		if v.unpinned {
			n.findings, n.unpinned = pin.Check(pins, pin.Items(i.Inventory()))
		} else {
			for _, f := range v.findings {
				if j := slices.IndexFunc(pins, func(p upstream.Pin) bool { return pin.KeyOf(p) == f.Key() }); j >= 0 && pins[j].Hash == f.Item.Hash {
					approved = append(approved, f.Item)
					continue
				}
				n.findings = append(n.findings, f)
			}
		}
		h.pins.insts[i] = &n
		h.logInstanceLocked(&n)
		updates = append(updates, update{i, n.withheld()})
	}
	h.pins.mu.Unlock()
	for _, up := range updates {
		up.i.Withhold(up.w)
	}
	h.adopt(u, approved)
}

// adopt puts the approved definitions of instances into u's listing where
// it lists another definition, or none.
func (h *Hub) adopt(u *upstream.Upstream, approved []pin.Item) {
	if len(approved) == 0 {
		return
	}
	listed := map[pin.Key]string{}
	for _, it := range pin.Items(u.Inventory()) {
		listed[pin.Key{Kind: it.Kind, Name: it.Name}] = it.Hash
	}
	var defs upstream.Inventory
	var names []string
	for _, it := range approved {
		if listed[pin.Key{Kind: it.Kind, Name: it.Name}] == it.Hash {
			continue
		}
		switch it.Kind {
		case upstream.PinTool:
			defs.Tools = append(defs.Tools, it.Definition)
		case upstream.PinPrompt:
			defs.Prompts = append(defs.Prompts, it.Definition)
		case upstream.PinTemplate:
			defs.Templates = append(defs.Templates, it.Definition)
		default:
			continue
		}
		names = append(names, pin.Key{Kind: it.Kind, Name: it.Name}.String())
	}
	if len(names) == 0 {
		return
	}
	u.Adopt(defs)
	h.logger.Info("the catalog describes the definitions a person approved, as a per-session instance listed them", "upstream", u.Name(), "items", strings.Join(names, ", "))
}

// sweepVerdicts forgets the verdicts of instances that stopped.
func (h *Hub) sweepVerdicts() {
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	for i := range h.pins.insts {
		if i.Stopping() {
			delete(h.pins.insts, i)
		}
	}
}

// instanceFindingsLocked returns what the live instances of the upstream
// name list that its pins do not cover, one finding per item (the first
// instance's, by session label).
func (h *Hub) instanceFindingsLocked(name string) []pin.Finding {
	var vs []*instanceVerdict
	for i, v := range h.pins.insts {
		if v.name == name && len(v.findings) > 0 && !i.Stopping() {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b *instanceVerdict) int { return cmp.Compare(a.label, b.label) })
	var out []pin.Finding
	for _, v := range vs {
		out = addFindings(out, v.findings)
	}
	return out
}

// addFindings appends to findings those of more whose item none of them
// is.
func addFindings(findings, more []pin.Finding) []pin.Finding {
	for _, f := range more {
		if !slices.ContainsFunc(findings, func(g pin.Finding) bool { return g.Key() == f.Key() }) {
			findings = append(findings, f)
		}
	}
	return findings
}

// heldByInstanceLocked is heldMessage for what the instances of session s
// withhold: match reports whether a finding of the upstream name is the
// one asked for.
func (h *Hub) heldByInstanceLocked(s *session, match func(name string, f pin.Finding) bool) (string, bool) {
	var vs []*instanceVerdict
	for i, v := range h.pins.insts {
		if i.Owner() == any(s) {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b *instanceVerdict) int { return cmp.Compare(a.name, b.name) })
	for _, v := range vs {
		for _, f := range v.findings {
			if held(v.policy, f) && match(v.name, f) {
				return quarantineText(v.name, v.approve, f), true
			}
		}
	}
	return "", false
}

// instanceVariants returns what the live instances of the upstream name
// list that its pins do not cover, to save with its capability cache, and
// a digest that changes when they do.
func (h *Hub) instanceVariants(name string) (*upstream.Variants, string) {
	h.pins.mu.Lock()
	findings := h.instanceFindingsLocked(name)
	h.pins.mu.Unlock()
	var v upstream.Variants
	var digest strings.Builder
	for _, f := range findings {
		switch f.Item.Kind {
		case upstream.PinTool:
			v.Tools = append(v.Tools, f.Item.Definition)
		case upstream.PinPrompt:
			v.Prompts = append(v.Prompts, f.Item.Definition)
		case upstream.PinTemplate:
			v.Templates = append(v.Templates, f.Item.Definition)
		default:
			continue
		}
		digest.WriteString(f.Item.Hash)
	}
	if digest.Len() == 0 {
		return nil, ""
	}
	return &v, digest.String()
}

// variantFindings returns the findings of the variants saved with an
// upstream's capability cache that its pins still do not cover.
func variantFindings(pins []upstream.Pin, v *upstream.Variants) []pin.Finding {
	if v == nil {
		return nil
	}
	findings, _ := pin.Check(pins, pin.Items(upstream.Inventory{Tools: v.Tools, Prompts: v.Prompts, Templates: v.Templates}))
	return findings
}
