package pin

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// MaxDescription is the length (in characters) above which a description
// (or the instructions) draws a warning: text that long hides instructions
// to the model in plain sight. The reference servers stay well below it.
const MaxDescription = 2000

// modelAddressed matches text that addresses the model rather than
// describing a tool: attempts to override its instructions, to keep
// something from the person, and the pseudo-tags tool-poisoning attacks
// wrap their orders in.
var modelAddressed = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|other)\b`,
	`\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|show|reveal|notify|alert)\b[^.\n]{0,40}?\b(?:user|human|person|anyone)\b`,
	`\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?(?:user|human|person)\b`,
	`\b(?:hide|conceal)\b[^.\n]{0,40}?\bfrom\s+the\s+(?:user|human|person)\b`,
	`<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin)\s*>`,
}, "|"))

// credentialPath matches references to files that hold credentials.
var credentialPath = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`(?:~|\$HOME|%USERPROFILE%)?[/\\]?\.ssh\b`,
	`\bid_(?:rsa|dsa|ecdsa|ed25519)\b`,
	`\.aws[/\\]credentials`,
	`(?:^|[^\w.$])\.env(?:\.[a-z]+)?(?:$|[^\w])`,
	`\.netrc\b`, `\.git-credentials\b`, `\.npmrc\b`, `\.pgpass\b`, `\.pypirc\b`,
	`\.kube[/\\]config\b`, `\.docker[/\\]config\.json`, `\.gnupg\b`, `/etc/shadow\b`,
}, "|"))

// Warnings returns what deserves a careful look in an item's definition
// (a JSON object, or the instructions as a JSON string): in any string of
// it, text that addresses the model, references to credential files,
// hidden Unicode (tag characters, bidi controls, zero-width characters) and
// control characters (ANSI escapes); and a description (or instructions)
// longer than [MaxDescription]. Each names where it was found
// ("inputSchema.properties.notes.description: …"). They are shown beside
// the item, never acted on: nothing is blocked for a warning.
func Warnings(kind upstream.PinKind, def json.RawMessage) []string {
	var v any
	if json.Unmarshal(def, &v) != nil {
		return nil
	}
	var out []string
	root := ""
	if kind == upstream.PinInstructions {
		root = "instructions"
	}
	walk(v, root, func(path string, s string, isDesc bool) {
		for _, w := range textWarnings(s, isDesc || kind == upstream.PinInstructions) {
			if path != "" {
				w = path + ": " + w
			}
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	})
	return out
}

// walk calls fn for every string of v (object keys included), with its
// path; isDesc is set for the values of "description" members.
func walk(v any, path string, fn func(path, s string, isDesc bool)) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch t := v.(type) {
	case string:
		fn(path, t, path == "description" || strings.HasSuffix(path, ".description"))
	case []any:
		for i, e := range t {
			walk(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fn(join(k), k, false) // a key is text the model reads too
			walk(t[k], join(k), fn)
		}
	}
}

// textWarnings returns the warnings about one string.
func textWarnings(s string, isDesc bool) []string {
	var out []string
	if m := modelAddressed.FindString(s); m != "" {
		out = append(out, fmt.Sprintf("addresses the model (%q)", shorten(m)))
	}
	if m := credentialPath.FindString(s); m != "" {
		out = append(out, fmt.Sprintf("refers to a credential file (%q)", strings.TrimSpace(shorten(m))))
	}
	out = append(out, hiddenRunes(s)...)
	if n := utf8.RuneCountInString(s); isDesc && n > MaxDescription {
		out = append(out, fmt.Sprintf("very long text (%d characters; more than %d)", n, MaxDescription))
	}
	return out
}

// hiddenRunes reports the invisible or deceptive characters of s, one
// warning per class, with the first code point found.
func hiddenRunes(s string) []string {
	var out []string
	for _, c := range runeClasses {
		for _, r := range s {
			if c.in(r) {
				out = append(out, fmt.Sprintf("%s: U+%04X", c.what, r))
				break
			}
		}
	}
	return out
}

// runeClasses are the classes of invisible or deceptive characters.
var runeClasses = []struct {
	what string
	in   func(r rune) bool
}{
	{"hidden Unicode tag characters (invisible text)", func(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }},
	{"bidirectional control characters (text that reads other than it is)", func(r rune) bool {
		return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
	}},
	{"zero-width characters", func(r rune) bool {
		return (r >= 0x200B && r <= 0x200D) || r == 0x2060 || r == 0xFEFF || r == 0x180E || r == 0x00AD
	}},
	{"control characters (ANSI escapes can hide text in a terminal)", func(r rune) bool {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7F && r <= 0x9F)
	}},
}

func shorten(s string) string {
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	return string([]rune(s)[:57]) + "..."
}
