package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/toolsearch/internal/stemmer"
)

// words splits text into lowercase words: at every rune that is not a
// letter or a digit (so at "_", "-", "." and spaces), at a lower-to-upper
// case change ("readFile" → read, file; "HTTPServer" → http, server) and
// between letters and digits ("base64" → base, 64). It calls fn for each
// word; it allocates only the lowercased words.
func words(text string, fn func(w string)) {
	start := -1 // byte offset of the word under way
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			fn(strings.ToLower(text[start:end]))
		}
		start = -1
	}
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !word:
			flush(i)
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		case unicode.IsUpper(prev) && unicode.IsLower(r) && i-start > utf8.RuneLen(prev):
			// "HTTPServer": the upper-case run ends one rune before.
			p := i - utf8.RuneLen(prev)
			flush(p)
			start = p
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			flush(i)
			start = i
		}
		prev = r
	}
	flush(len(text))
}

// stem returns the English (Porter2) stem of a lowercase word (see
// [stemmer.Stem]).
func stem(w string) string { return stemmer.Stem(w) }

// terms calls fn with the index term of each word of text that is not a
// stop word.
func terms(text string, fn func(t string)) {
	words(text, func(w string) {
		if stopWords[w] {
			return
		}
		fn(stem(w))
	})
}

// stopWords is the Snowball project's English stop word list
// (snowballstem.org/algorithms/english/stop.txt), a generic list of
// function words: pronouns, articles, auxiliaries, prepositions,
// conjunctions. It was not derived from any query set.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		i me my myself we our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their
		theirs themselves what which who whom this that these those am is are
		was were be been being have has had having do does did doing would
		should could ought i'm you're he's she's it's we're they're i've
		you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll
		he'll she'll we'll they'll isn't aren't wasn't weren't hasn't haven't
		hadn't doesn't don't didn't won't wouldn't shan't shouldn't can't
		cannot couldn't mustn't let's that's who's what's here's there's
		when's where's why's how's a an the and but if or because as until
		while of at by for with about against between into through during
		before after above below to from up down in out on off over under
		again further then once here there when where why how all any both
		each few more most other some such no nor not only own same so than
		too very`) {
		m[w] = true
	}
	// The contractions above are split by words at the apostrophe; what
	// is left of them ("don", "t", "ll") is dropped too.
	for _, w := range strings.Fields("s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn won wouldn shan shouldn couldn mustn can") {
		m[w] = true
	}
	return m
}()
