package redact

import (
	"regexp"
	"strings"
)

var (
	urlRE    = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'<>`]+")
	assignRE = regexp.MustCompile("(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)=([^\\s\"'`&,;]+)")
	bearerRE = regexp.MustCompile(`(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})`)
)

// Text masks what looks secret in free text: an error message, a log
// message or attribute, a line an upstream wrote. It masks
//
//   - every URL's userinfo and parameter values ([URL]), which covers the
//     URLs that Go's errors and go-retryablehttp's log lines quote;
//   - the value of --flag=VALUE and NAME=VALUE where the name looks secret
//     ([SecretName]): "--api-key=…", "GITHUB_TOKEN=…", "password=…";
//   - the token after "Bearer " (8 characters or more).
//
// It cannot know a secret that looks like none of these: output of an
// upstream is also scrubbed of the exact values the hub gave it (see
// [Scrubber]).
func Text(s string) string {
	if !strings.ContainsAny(s, ":=") && !strings.Contains(strings.ToLower(s), "bearer") {
		return s
	}
	m := new(Masker)
	if strings.Contains(s, "://") {
		s = m.urls(s)
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = replaceAt(s, assignRE, func(sm []string) string {
			if !SecretName(sm[1]) {
				return sm[0]
			}
			return sm[1] + "=" + m.Value(sm[2])
		})
	}
	return bearerRE.ReplaceAllString(s, "${1}"+Mask)
}

// urls masks every URL in s.
func (m *Masker) urls(s string) string {
	return urlRE.ReplaceAllStringFunc(s, m.URL)
}

// replaceAt replaces the matches of re in s that start a word (the byte
// before is not part of a name) by f of their submatches.
func replaceAt(s string, re *regexp.Regexp, f func(sm []string) string) string {
	var b strings.Builder
	last := 0
	for _, ix := range re.FindAllStringSubmatchIndex(s, -1) {
		if ix[0] > 0 && isNameByte(s[ix[0]-1]) {
			continue
		}
		sm := make([]string, len(ix)/2)
		for i := range sm {
			if ix[2*i] >= 0 {
				sm[i] = s[ix[2*i]:ix[2*i+1]]
			}
		}
		b.WriteString(s[last:ix[0]])
		b.WriteString(f(sm))
		last = ix[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isNameByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}
