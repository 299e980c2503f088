// Package pin pins what an upstream tells the model: each tool, prompt and
// resource template it lists, and its instructions, as the SHA-256 of the
// canonical JSON of the whole definition. It compares a listing with the
// pins (Check), renders what changed for a person (Finding.Render) and
// flags descriptions that deserve a careful look (Warnings). It is pure:
// the hub decides what a finding means (the upstream's trust policy) and
// the store keeps the pins.
package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// ErrDuplicateKey is wrapped by Canonical's error for an object with the
// same member twice: parsers disagree on which one counts, so such a value
// has no canonical form.
var ErrDuplicateKey = errors.New("duplicate object member")

// Canonical returns the canonical JSON of raw: no insignificant whitespace,
// object members sorted by key (byte order of their UTF-8), strings
// escaped the one way encoding/json escapes them (without HTML escaping),
// and numbers exactly as written.
//
// It follows RFC 8785 (JCS) except for numbers: JCS rewrites them through
// float64, under which two different large integers can become one; a pin
// must never let two different definitions hash alike, so numbers stay as
// the upstream wrote them. It walks the JSON with the hub's own scanner
// (internal/wire: the one that reads every message, no new dependency),
// and refuses duplicate members (ErrDuplicateKey) where a decode into a map
// would silently keep the last one.
func Canonical(raw []byte) ([]byte, error) {
	if !wire.Valid(raw) {
		return nil, errors.New("canonical JSON: not one valid JSON value")
	}
	return canon(nil, wire.TrimSpace(raw))
}

// canon appends the canonical form of the valid JSON value v to out.
func canon(out, v []byte) ([]byte, error) {
	v = wire.TrimSpace(v)
	switch v[0] {
	case '{':
		type member struct {
			key string
			val []byte
		}
		var ms []member
		err := wire.Members(v, func(k, val []byte) error {
			c, err := canon(nil, val)
			ms = append(ms, member{string(k), c})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("canonical JSON: %w", err)
		}
		slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		out = append(out, '{')
		for i, m := range ms {
			if i > 0 {
				if ms[i-1].key == m.key {
					return nil, fmt.Errorf("canonical JSON: %w %q", ErrDuplicateKey, m.key)
				}
				out = append(out, ',')
			}
			out = wire.AppendString(out, m.key)
			out = append(out, ':')
			out = append(out, m.val...)
		}
		return append(out, '}'), nil
	case '[':
		out = append(out, '[')
		first := true
		err := wire.Elements(v, func(e []byte) error {
			if !first {
				out = append(out, ',')
			}
			first = false
			var err error
			out, err = canon(out, e)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("canonical JSON: %w", err)
		}
		return append(out, ']'), nil
	case '"':
		s, err := wire.String(v)
		if err != nil {
			return nil, fmt.Errorf("canonical JSON: %w", err)
		}
		return wire.AppendString(out, s), nil
	}
	return append(out, v...), nil // a number as written, true, false, null
}

// hashDomain starts the bytes every pin hashes, so a pin is never mistaken
// for another hash of the same JSON; rawDomain those of a definition with
// no canonical form.
const (
	hashDomain = "mcp-hub pin v1\n"
	rawDomain  = "mcp-hub pin v1 raw\n"
)

// Hash returns the hex SHA-256 of raw's canonical JSON, and that canonical
// JSON. A value with no canonical form (duplicate members, invalid JSON)
// is hashed byte for byte under another domain, and returned as it is: it
// keeps its pin only while the upstream sends exactly the same bytes.
func Hash(raw []byte) (hash string, canonical json.RawMessage) {
	c, err := Canonical(raw)
	domain := hashDomain
	if err != nil {
		c, domain = slices.Clone(raw), rawDomain
	}
	sum := sha256.Sum256(append([]byte(domain), c...))
	return hex.EncodeToString(sum[:]), c
}
