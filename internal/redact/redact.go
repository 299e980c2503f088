// Package redact owns mcp-hub's rules for keeping secret values out of
// everything the hub shows: tool results, the REST API, the command line,
// logs and doctor. It imports nothing of the hub's, so that every package
// (upstream, hub, cmd) can use it.
//
// What is a secret value:
//
//   - env and header values, unless they only name where the value comes
//     from ("${VAR}", optionally after an authorization scheme such as
//     "Bearer ", or "file:<path>"): see [IsReference];
//   - the values of a URL's query parameters and fragment parameters, and
//     its userinfo (the password, or the user when there is no password);
//   - the value after a secret-looking flag in an argv, in both the
//     "--flag value" and "--flag=value" forms, NAME=VALUE arguments whose
//     NAME looks secret, and the value of "--header"/"-H" arguments: see
//     [Argv] for the list;
//   - in free text (errors, log messages): URLs, "--flag=value" and
//     NAME=VALUE with a secret-looking name, and "Bearer <token>": see
//     [Text].
//
// Each is replaced by [Mask]. Output an upstream writes (its stderr, stdout
// lines that are not JSON-RPC, its error messages) is also scrubbed of the
// exact values the hub passed to it: see [Scrubber].
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask is what a secret value is shown as.
const Mask = "***"

var (
	varRefRE     = regexp.MustCompile(`\$\{[^}]*\}`)
	authSchemeRE = regexp.MustCompile(`(?i)^(bearer|basic|token|apikey|api-key)?$`)
)

// IsReference reports whether v names where a value comes from rather than
// being one: "file:<path>", or ${VAR} references with at most an
// authorization scheme around them ("Bearer ${TOKEN}"). References are not
// secrets and are shown as written.
func IsReference(v string) bool {
	if strings.HasPrefix(v, "file:") {
		return true
	}
	if !varRefRE.MatchString(v) {
		return false
	}
	rest := strings.TrimSpace(varRefRE.ReplaceAllString(v, ""))
	return !strings.Contains(rest, "${") && authSchemeRE.MatchString(rest)
}

// Masker applies the rules and counts the values it masked. Its zero value
// masks; with Reveal set it changes nothing (mcp-hub export --reveal).
type Masker struct {
	Reveal bool
	// Masked counts the values replaced by Mask.
	Masked int
	// found, when set, receives every value masked (for a Scrubber).
	found func(string)
}

func (m *Masker) mask(v string) string {
	m.Masked++
	if m.found != nil {
		m.found(v)
	}
	return Mask
}

// Value masks a secret value: an env or header value. Empty values and
// references are kept.
func (m *Masker) Value(v string) string {
	if m.Reveal || v == "" || IsReference(v) {
		return v
	}
	return m.mask(v)
}

// Values masks every value of kv (env or headers); nil stays nil.
func (m *Masker) Values(kv map[string]string) map[string]string {
	if kv == nil {
		return nil
	}
	out := make(map[string]string, len(kv))
	for k, v := range kv {
		out[k] = m.Value(v)
	}
	return out
}

// URL masks the userinfo and the query and fragment parameter values of a
// URL, keeping the rest of it byte for byte (it need not parse). Parameter
// values that are references are kept.
func (m *Masker) URL(raw string) string {
	if m.Reveal {
		return raw
	}
	rest := raw
	var b strings.Builder
	if i := strings.Index(rest, "://"); i >= 0 {
		b.WriteString(rest[:i+3])
		rest = rest[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			user, pass, hasPass := strings.Cut(rest[:at], ":")
			if hasPass {
				b.WriteString(user + ":" + m.part(pass))
			} else {
				b.WriteString(m.part(user))
			}
			rest = rest[at:]
		}
	}
	base, query, hasQuery := strings.Cut(rest, "?")
	frag, hasFrag := "", false
	if hasQuery {
		query, frag, hasFrag = strings.Cut(query, "#")
	} else {
		base, frag, hasFrag = strings.Cut(base, "#")
	}
	b.WriteString(base)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(m.params(query))
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(m.params(frag))
	}
	return b.String()
}

// part masks one escaped URL component unless it is empty or a reference.
func (m *Masker) part(v string) string {
	if v == "" {
		return v
	}
	if dv, err := url.PathUnescape(v); err == nil && IsReference(dv) {
		return v
	}
	if m.found != nil {
		if dv, err := url.QueryUnescape(v); err == nil && dv != v {
			m.found(dv)
		}
	}
	return m.mask(v)
}

// params masks the values of k=v&k=v.
func (m *Masker) params(s string) string {
	ps := strings.Split(s, "&")
	for i, p := range ps {
		k, v, ok := strings.Cut(p, "=")
		if ok {
			ps[i] = k + "=" + m.part(v)
		}
	}
	return strings.Join(ps, "&")
}

// Value masks a secret value (env or header); see [Masker.Value].
func Value(v string) string { return new(Masker).Value(v) }

// Values masks every value of an env or headers map; see [Masker.Values].
func Values(kv map[string]string) map[string]string { return new(Masker).Values(kv) }

// URL masks a URL's userinfo and parameter values; see [Masker.URL].
func URL(raw string) string { return new(Masker).URL(raw) }

// Argv returns a copy of argv (the command, then its arguments) with secret
// argument values masked; see [Masker.Argv].
func Argv(argv []string) []string { return new(Masker).Argv(argv) }

// Secrets returns the values that m's rules would mask in argv and in the
// URL raw (either may be empty), for a [Scrubber].
func Secrets(argv []string, raw string) []string {
	var out []string
	m := &Masker{found: func(v string) { out = append(out, v) }}
	m.Argv(argv)
	m.URL(raw)
	return out
}
