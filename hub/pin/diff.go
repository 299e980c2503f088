package pin

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Render shows a person what changed, in full (never truncated): for a
// changed item the old and new description (or instructions), schema
// changes as added, removed and changed properties, and every other member
// that changed; for a new item its whole definition; then the heuristic
// warnings, one per line starting "⚠ ".
func (f Finding) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", f.Key(), f.What())
	if f.Old != nil && f.Old.ApprovedBy != "" {
		fmt.Fprintf(&b, "; pinned by %s", f.Old.ApprovedBy)
		if !f.Old.ApprovedAt.IsZero() {
			fmt.Fprintf(&b, " on %s", f.Old.ApprovedAt.UTC().Format("2006-01-02 15:04 UTC"))
		}
	}
	b.WriteString("):")
	var lines []string
	if f.Old == nil {
		lines = describe(f.Item.Kind, f.Item.Definition)
	} else {
		lines = Diff(f.Item.Kind, f.Old.Definition, f.Item.Definition)
	}
	for _, l := range lines {
		b.WriteString("\n  ")
		b.WriteString(strings.ReplaceAll(Visible(l), "\n", "\n  "))
	}
	for _, w := range f.Warnings {
		b.WriteString("\n  ⚠ ")
		b.WriteString(w)
	}
	return b.String()
}

// Visible makes every invisible or deceptive character of s visible as
// ⟨U+XXXX⟩ (control characters but newline and tab, bidi controls,
// zero-width and tag characters), so that what a person reads in a
// terminal or a dialog is what the upstream sent: an ANSI escape cannot
// repaint the screen and hidden text cannot hide.
func Visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	switch r {
	case '\n', '\t':
		return false
	case '\r': // returns to the line's start: what follows overwrites it
		return true
	}
	for _, c := range runeClasses {
		if c.in(r) {
			return true
		}
	}
	return false
}

// describe lists a new item's definition, member by member.
func describe(kind upstream.PinKind, def json.RawMessage) []string {
	if kind == upstream.PinInstructions {
		var s string
		_ = json.Unmarshal(def, &s)
		return []string{"text:\n" + indentText(s)}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(def, &m) != nil {
		return []string{string(def)}
	}
	var out []string
	for _, k := range sortedKeys(m) {
		if s, ok := text(m[k]); ok && (k == "description" || k == "title") {
			out = append(out, k+": "+s)
			continue
		}
		out = append(out, k+": "+string(m[k]))
	}
	return out
}

// Diff lists what changed from old to new (canonical JSON definitions of
// an item of kind): text members as "was:" and "now:", schema properties
// added, removed or changed, and the members of other objects (annotations,
// _meta) one level deep.
func Diff(kind upstream.PinKind, old, new json.RawMessage) []string {
	if kind == upstream.PinInstructions {
		var o, n string
		_ = json.Unmarshal(old, &o)
		_ = json.Unmarshal(new, &n)
		return []string{"was:\n" + indentText(o), "now:\n" + indentText(n)}
	}
	var om, nm map[string]json.RawMessage
	if json.Unmarshal(old, &om) != nil || json.Unmarshal(new, &nm) != nil {
		return []string{"was: " + string(old), "now: " + string(new)}
	}
	var out []string
	for _, k := range unionKeys(om, nm) {
		o, inOld := om[k]
		n, inNew := nm[k]
		switch {
		case inOld && inNew && string(o) == string(n):
		case !inOld:
			out = append(out, fmt.Sprintf("%s added: %s", k, show(n)))
		case !inNew:
			out = append(out, fmt.Sprintf("%s removed (was %s)", k, show(o)))
		case k == "inputSchema" || k == "outputSchema":
			out = append(out, schemaDiff(k, o, n)...)
		default:
			out = append(out, memberDiff(k, o, n)...)
		}
	}
	return out
}

// memberDiff shows a changed member: text as was/now, objects member by
// member, anything else as old → new.
func memberDiff(k string, o, n json.RawMessage) []string {
	os, ok1 := text(o)
	ns, ok2 := text(n)
	if ok1 && ok2 {
		return []string{k + ":\n  was: " + os + "\n  now: " + ns}
	}
	var om, nm map[string]json.RawMessage
	if json.Unmarshal(o, &om) != nil || json.Unmarshal(n, &nm) != nil {
		return []string{fmt.Sprintf("%s: %s → %s", k, o, n)}
	}
	var out []string
	for _, sk := range unionKeys(om, nm) {
		ov, inOld := om[sk]
		nv, inNew := nm[sk]
		switch {
		case inOld && inNew && string(ov) == string(nv):
		case !inOld:
			out = append(out, fmt.Sprintf("%s.%s added: %s", k, sk, nv))
		case !inNew:
			out = append(out, fmt.Sprintf("%s.%s removed (was %s)", k, sk, ov))
		default:
			out = append(out, fmt.Sprintf("%s.%s: %s → %s", k, sk, ov, nv))
		}
	}
	return out
}

// schemaDiff shows a changed JSON schema as properties added, removed and
// changed, a changed required list, and other members that changed.
func schemaDiff(k string, o, n json.RawMessage) []string {
	var om, nm map[string]json.RawMessage
	if json.Unmarshal(o, &om) != nil || json.Unmarshal(n, &nm) != nil {
		return []string{fmt.Sprintf("%s: %s → %s", k, o, n)}
	}
	var out []string
	var op, np map[string]json.RawMessage
	_ = json.Unmarshal(om["properties"], &op)
	_ = json.Unmarshal(nm["properties"], &np)
	for _, p := range unionKeys(op, np) {
		ov, inOld := op[p]
		nv, inNew := np[p]
		switch {
		case inOld && inNew && string(ov) == string(nv):
		case !inOld:
			out = append(out, fmt.Sprintf("%s: property %q added: %s", k, p, nv))
		case !inNew:
			out = append(out, fmt.Sprintf("%s: property %q removed (was %s)", k, p, ov))
		default:
			out = append(out, fmt.Sprintf("%s: property %q changed: %s → %s", k, p, ov, nv))
		}
	}
	for _, sk := range unionKeys(om, nm) {
		if sk == "properties" {
			continue
		}
		ov, inOld := om[sk]
		nv, inNew := nm[sk]
		switch {
		case inOld && inNew && string(ov) == string(nv):
		case !inOld:
			out = append(out, fmt.Sprintf("%s: %s added: %s", k, sk, nv))
		case !inNew:
			out = append(out, fmt.Sprintf("%s: %s removed (was %s)", k, sk, ov))
		default:
			out = append(out, fmt.Sprintf("%s: %s: %s → %s", k, sk, ov, nv))
		}
	}
	if len(out) == 0 && (op == nil) != (np == nil) {
		out = append(out, fmt.Sprintf("%s: %s → %s", k, o, n))
	}
	return out
}

// text decodes a JSON string.
func text(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// show renders a value: a string as its text (quoted), anything else as
// JSON.
func show(raw json.RawMessage) string {
	if s, ok := text(raw); ok {
		return fmt.Sprintf("%q", s)
	}
	return string(raw)
}

func indentText(s string) string {
	if s == "" {
		return "  (none)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func unionKeys(a, b map[string]json.RawMessage) []string {
	keys := sortedKeys(a)
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
