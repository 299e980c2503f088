package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// NamePattern is the regular expression every exposed tool and prompt name
// matches. [ValidName] implements it without a regexp.
const NamePattern = `^[A-Za-z0-9_-]{1,64}$`

// ReservedPrefix starts the names of the hub's own tools. Upstream tools and
// prompts whose exposed name would start with it are never exposed.
const ReservedPrefix = "hub_"

const (
	maxNameLen = 64
	// baseLen is the length a rewritten name is cut to before "_" and eight
	// hex digits of hash are appended.
	baseLen = maxNameLen - 9
)

// ValidName reports whether name matches [NamePattern].
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// Filter selects tools and prompts by their original (upstream) name with
// '*' globs, where '*' matches any run of characters, including none.
type Filter struct {
	// Allow keeps only names matching one of its patterns; empty keeps all.
	Allow []string
	// Deny drops names matching one of its patterns; it wins over Allow.
	Deny []string
}

// Match reports whether the filter keeps name: Allow is empty or one of its
// patterns matches, and no Deny pattern matches.
func (f Filter) Match(name string) bool {
	if len(f.Allow) > 0 {
		ok := false
		for _, p := range f.Allow {
			if glob(p, name) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, p := range f.Deny {
		if glob(p, name) {
			return false
		}
	}
	return true
}

// glob matches s against pattern, in which '*' matches any run of bytes and
// every other byte matches itself. It runs in O(len(pattern)*len(s)) at
// worst.
func glob(pattern, s string) bool {
	p, n := 0, 0
	star, starN := -1, 0
	for n < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, starN = p, n
			p++
		case p < len(pattern) && pattern[p] == s[n]:
			p++
			n++
		case star >= 0:
			starN++
			p, n = star+1, starN
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// sanitise replaces every rune of s outside [A-Za-z0-9_-] with '_' and cuts
// the result to baseLen bytes.
func sanitise(s string) string {
	b := make([]byte, 0, min(len(s), baseLen))
	for _, r := range s {
		if len(b) == baseLen {
			break
		}
		if r < 0x80 && nameByte(byte(r)) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

// nameHash returns the first 8 hex digits of sha256(server "\x00" original),
// or of sha256(server "\x00" original "\x00" salt) when salt > 0.
func nameHash(server, original string, salt int) string {
	b := make([]byte, 0, len(server)+len(original)+24)
	b = append(b, server...)
	b = append(b, 0)
	b = append(b, original...)
	if salt > 0 {
		b = append(b, 0)
		b = strconv.AppendInt(b, int64(salt), 10)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:4])
}

// keyBytes is how many leading name bytes a nameKey holds.
const keyBytes = 24

// nameKey holds the first keyBytes bytes of a name, big-endian, 8 a word,
// so that comparing keys word by word orders names by those bytes. A
// shorter name is padded with 0, which sorts before every name byte (names
// contain no NUL).
type nameKey [3]uint64

// packName returns the nameKey of s.
func packName(s string) nameKey {
	var b [keyBytes]byte
	copy(b[:], s)
	return nameKey{
		binary.BigEndian.Uint64(b[0:]),
		binary.BigEndian.Uint64(b[8:]),
		binary.BigEndian.Uint64(b[16:]),
	}
}
