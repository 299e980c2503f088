package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"
)

// Kind is the kind of a catalog item.
type Kind string

// The four kinds of catalog items.
const (
	KindTool     Kind = "tool"
	KindPrompt   Kind = "prompt"
	KindResource Kind = "resource"
	KindTemplate Kind = "resourceTemplate"
)

// Item is one parsed upstream item: a tool, prompt, resource or resource
// template, kept as the raw JSON object the upstream sent.
//
// Items must be made by [ParseTool], [ParsePrompt], [ParseResource] or
// [ParseTemplate] and not modified afterwards; [Build] reports an Item it
// did not get from them, or whose Kind or Key was changed, as "invalid".
// Raw and Fixes must not be modified either: catalogs share them.
type Item struct {
	// Kind is the kind of item.
	Kind Kind
	// Key identifies the item: the name of a tool or prompt, the uri of a
	// resource, the uriTemplate of a resource template, decoded from JSON.
	Key string
	// Raw is the item's JSON object after normalisation. Bytes that
	// normalisation did not touch are the upstream's bytes.
	Raw json.RawMessage
	// Fixes are human-readable notes of what normalisation changed.
	Fixes []string

	// key is Key as parsed; Build rejects an Item whose Key was changed.
	key string
	// keyStart and keyEnd delimit the key's JSON string value, quotes
	// included, inside Raw.
	keyStart, keyEnd int32
	// pk is packName(key) when nameOK.
	pk nameKey
	// nameOK reports ValidName(key).
	nameOK bool
}

// ParseTool parses one tool object of a tools/list result and normalises its
// inputSchema to a JSON object with "type":"object".
func ParseTool(raw []byte) (Item, error) { return parse(KindTool, raw) }

// ParsePrompt parses one prompt object of a prompts/list result.
func ParsePrompt(raw []byte) (Item, error) { return parse(KindPrompt, raw) }

// ParseResource parses one resource object of a resources/list result.
func ParseResource(raw []byte) (Item, error) { return parse(KindResource, raw) }

// ParseTemplate parses one resource template object of a
// resources/templates/list result.
func ParseTemplate(raw []byte) (Item, error) { return parse(KindTemplate, raw) }

// keyField is the name of the member that identifies an item of kind k.
func keyField(k Kind) string {
	switch k {
	case KindResource:
		return "uri"
	case KindTemplate:
		return "uriTemplate"
	default:
		return "name"
	}
}

// kindNoun names a kind in messages.
func kindNoun(k Kind) string {
	if k == KindTemplate {
		return "resource template"
	}
	return string(k)
}

// member is one member of a JSON object: the decoded key and the offsets of
// the key (quotes included) and of the value.
type member struct {
	key    string
	ks, ke int
	vs, ve int
}

// edit replaces b[start:end] with text.
type edit struct {
	start, end int
	text       string
}

const objectSchema = `{"type":"object"}`

func parse(kind Kind, raw []byte) (Item, error) {
	noun := kindNoun(kind)
	field := keyField(kind)
	if !json.Valid(raw) {
		return Item{}, fmt.Errorf("catalog: %s: invalid JSON", noun)
	}
	start := skipWS(raw, 0)
	if raw[start] != '{' {
		return Item{}, fmt.Errorf("catalog: %s: not a JSON object", noun)
	}
	ms, _ := objectMembers(raw, start)
	seen := make(map[string]struct{}, len(ms))
	key := -1
	schema := -1
	for i, m := range ms {
		if _, dup := seen[m.key]; dup {
			return Item{}, fmt.Errorf("catalog: %s: duplicate member %q", noun, m.key)
		}
		seen[m.key] = struct{}{}
		switch m.key {
		case field:
			key = i
		case "inputSchema":
			schema = i
		}
	}
	if key < 0 {
		return Item{}, fmt.Errorf("catalog: %s: %q is missing", noun, field)
	}
	k := ms[key]
	if raw[k.vs] != '"' {
		return Item{}, fmt.Errorf("catalog: %s: %q is not a string", noun, field)
	}
	name := decodeString(raw[k.vs:k.ve])
	if name == "" {
		return Item{}, fmt.Errorf("catalog: %s: %q is empty", noun, field)
	}

	var edits []edit
	var fixes []string
	if kind == KindTool {
		edits, fixes = normaliseSchema(raw, ms, schema)
	}
	out, ks, ke := applyEdits(raw, edits, k.vs, k.ve)
	if len(out) > math.MaxInt32 {
		return Item{}, fmt.Errorf("catalog: %s: too large", noun)
	}
	it := Item{
		Kind: kind, Key: name, Raw: out, Fixes: fixes,
		key: name, keyStart: int32(ks), keyEnd: int32(ke), nameOK: ValidName(name),
	}
	if it.nameOK {
		it.pk = packName(name)
	}
	return it, nil
}

// normaliseSchema returns the edits that make a tool's inputSchema a JSON
// object with "type":"object", and notes describing them. schema is the
// index of the inputSchema member in ms, or -1.
func normaliseSchema(raw []byte, ms []member, schema int) ([]edit, []string) {
	if schema < 0 {
		end := ms[len(ms)-1].ve
		return []edit{{end, end, `,"inputSchema":` + objectSchema}},
			[]string{`inputSchema: missing; set to ` + objectSchema}
	}
	s := ms[schema]
	switch raw[s.vs] {
	case '{':
	case 'n':
		return []edit{{s.vs, s.ve, objectSchema}},
			[]string{`inputSchema: null; replaced with ` + objectSchema}
	default:
		return []edit{{s.vs, s.ve, objectSchema}},
			[]string{`inputSchema: ` + jsonType(raw[s.vs]) + ` is not an object; replaced with ` + objectSchema}
	}
	inner, _ := objectMembers(raw, s.vs)
	var edits []edit
	var fixes []string
	hasType := false
	for _, m := range inner {
		if m.key != "type" {
			continue
		}
		hasType = true
		v := raw[m.vs:m.ve]
		if v[0] == '"' && decodeString(v) == "object" {
			continue
		}
		edits = append(edits, edit{m.vs, m.ve, `"object"`})
		fixes = append(fixes, `inputSchema: "type" was `+abbrev(v)+`; set to "object"`)
	}
	if !hasType {
		text := `"type":"object"`
		if len(inner) > 0 {
			text += ","
		}
		at := s.vs + 1
		edits = append(edits, edit{at, at, text})
		fixes = append(fixes, `inputSchema: added "type":"object"`)
	}
	return edits, fixes
}

// applyEdits applies edits, which are sorted and do not overlap the key
// value raw[ks:ke], to a copy of raw and returns it with the key's new
// offsets.
func applyEdits(raw []byte, edits []edit, ks, ke int) ([]byte, int, int) {
	size := len(raw)
	for _, e := range edits {
		size += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, size)
	prev := 0
	shift := 0
	for _, e := range edits {
		out = append(out, raw[prev:e.start]...)
		out = append(out, e.text...)
		prev = e.end
		if e.end <= ks {
			shift += len(e.text) - (e.end - e.start)
		}
	}
	out = append(out, raw[prev:]...)
	return out, ks + shift, ke + shift
}

// jsonType names the JSON type of the value starting with c.
func jsonType(c byte) string {
	switch c {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// abbrev shortens a JSON value for a note.
func abbrev(v []byte) string {
	const max = 40
	if len(v) <= max {
		return string(v)
	}
	n := max
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return string(v[:n]) + "…"
}

// The scanner below walks JSON that json.Valid has accepted, so it does not
// check syntax.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the offset just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// objectMembers lists the members of the object starting at b[start] == '{'
// and returns them with the offset just past the object.
func objectMembers(b []byte, start int) ([]member, int) {
	var ms []member
	i := skipWS(b, start+1)
	if b[i] == '}' {
		return ms, i + 1
	}
	for {
		ks := i
		ke := skipString(b, ks)
		i = skipWS(b, ke)    // at ':'
		vs := skipWS(b, i+1) // value
		ve := skipValue(b, vs)
		ms = append(ms, member{key: decodeString(b[ks:ke]), ks: ks, ke: ke, vs: vs, ve: ve})
		i = skipWS(b, ve)
		if b[i] != ',' {
			return ms, i + 1
		}
		i = skipWS(b, i+1)
	}
}

// decodeString decodes a valid JSON string literal, quotes included.
func decodeString(b []byte) string {
	inner := b[1 : len(b)-1]
	plain := utf8.Valid(inner)
	for _, c := range inner {
		if c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(b, &s) // cannot fail: b is a valid string literal
	return s
}
