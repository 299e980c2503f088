package redact

import (
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// The lengths that decide which exact values a Scrubber removes. A value
// shorter than MinScrubLen bytes is never scrubbed ("1", "yes", "on", "dev"
// would mangle ordinary text). One shorter than WordScrubLen is scrubbed
// only where it stands as a whole word (not inside a longer run of letters,
// digits and '_'), and not at all when it is only digits (ports, sizes,
// counts: 8080, 1000). Longer values are scrubbed wherever they occur.
const (
	MinScrubLen  = 4
	WordScrubLen = 8
)

// Scrubber removes exact secret values from text: what an upstream writes
// (its stderr, stdout lines that are not JSON-RPC, error messages) is
// scrubbed of the values the hub passed to it. Its methods are safe for
// concurrent use; a nil *Scrubber scrubs nothing.
type Scrubber struct {
	vals atomic.Pointer[[]string] // longest first
}

// NewScrubber returns a Scrubber of values; see [Scrubber.Set].
func NewScrubber(values ...string) *Scrubber {
	s := &Scrubber{}
	s.Set(values...)
	return s
}

// Set replaces the values to scrub. A value of the form "Scheme token" with
// an authorization scheme (Bearer, Basic, Token, …) adds its token too, so
// that an upstream echoing only the token is scrubbed.
func (s *Scrubber) Set(values ...string) {
	var vs []string
	add := func(v string) {
		if len(v) >= MinScrubLen && !(len(v) < WordScrubLen && allDigits(v)) && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	for _, v := range values {
		add(v)
		if scheme, rest, ok := strings.Cut(v, " "); ok && scheme != "" && authSchemeRE.MatchString(scheme) {
			add(strings.TrimSpace(rest))
		}
	}
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	s.vals.Store(&vs)
}

// Add adds values to scrub to those already set (as [Scrubber.Set] takes
// them). Values already present cost a lookup and nothing else.
func (s *Scrubber) Add(values ...string) {
	if s == nil {
		return
	}
	for {
		old := s.vals.Load()
		var cur []string
		if old != nil {
			cur = *old
		}
		fresh := false
		for _, v := range values {
			if len(v) >= MinScrubLen && !slices.Contains(cur, v) {
				fresh = true
			}
		}
		if !fresh {
			return
		}
		n := &Scrubber{}
		n.Set(append(slices.Clone(cur), values...)...)
		if s.vals.CompareAndSwap(old, n.vals.Load()) {
			return
		}
	}
}

// Scrub replaces every occurrence of the values in text by [Mask].
func (s *Scrubber) Scrub(text string) string {
	if s == nil {
		return text
	}
	p := s.vals.Load()
	if p == nil {
		return text
	}
	for _, v := range *p {
		if !strings.Contains(text, v) {
			continue
		}
		if len(v) >= WordScrubLen {
			text = strings.ReplaceAll(text, v, Mask)
		} else {
			text = replaceWord(text, v)
		}
	}
	return text
}

// replaceWord replaces the occurrences of v in text that are not part of a
// longer word.
func replaceWord(text, v string) string {
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(text[i:], v)
		if j < 0 {
			break
		}
		j += i
		end := j + len(v)
		if (j == 0 || !isWordByte(text[j-1])) && (end == len(text) || !isWordByte(text[end])) {
			b.WriteString(text[i:j])
			b.WriteString(Mask)
			i = end
		} else {
			b.WriteString(text[i : j+1])
			i = j + 1
		}
	}
	b.WriteString(text[i:])
	return b.String()
}

func isWordByte(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c == '_' }

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// CutSlack is how much more than it shows a caller that cuts an upstream's
// output short should hand to [Cut], so that the rules of [Text] see a
// little past the cut.
const CutSlack = 512

// Cut scrubs text of s's values (s may be nil), masks it by [Text] and cuts
// it to at most n bytes (at a character boundary), reporting whether it is
// cut. text is the start of an upstream's output, whole unless more is set
// (pass up to n+[CutSlack] bytes of a longer one). Where the text is cut,
// the start of a secret value that the cut splits is masked too: a text
// ending in the first MinScrubLen bytes or more of a value ends in [Mask].
func Cut(s *Scrubber, text string, n int, more bool) (string, bool) {
	text = Text(s.Scrub(text))
	cut := more
	if len(text) > n {
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text, cut = text[:n], true
	}
	if cut {
		text = s.scrubTail(text)
	}
	return text, cut
}

// scrubTail masks the end of text when it is the start of a value (at
// least MinScrubLen bytes of it): what is left of a value a cut split.
func (s *Scrubber) scrubTail(text string) string {
	if s == nil {
		return text
	}
	p := s.vals.Load()
	if p == nil {
		return text
	}
	for _, v := range *p {
		for k := min(len(v)-1, len(text)); k >= MinScrubLen; k-- {
			if strings.HasSuffix(text, v[:k]) {
				return text[:len(text)-k] + Mask
			}
		}
	}
	return text
}
