package wire

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
// the upstream wrote them. It walks the JSON with this package's scanner
// (the one that reads every message, no new dependency), and refuses
// duplicate members (ErrDuplicateKey) where a decode into a map would
// silently keep the last one. Pins hash it (hub/pin); the upstream links
// compare definitions with it.
func Canonical(raw []byte) ([]byte, error) {
	if !Valid(raw) {
		return nil, errors.New("canonical JSON: not one valid JSON value")
	}
	return canon(nil, TrimSpace(raw))
}

// canon appends the canonical form of the valid JSON value v to out.
func canon(out, v []byte) ([]byte, error) {
	v = TrimSpace(v)
	switch v[0] {
	case '{':
		type member struct {
			key string
			val []byte
		}
		var ms []member
		err := Members(v, func(k, val []byte) error {
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
			out = AppendString(out, m.key)
			out = append(out, ':')
			out = append(out, m.val...)
		}
		return append(out, '}'), nil
	case '[':
		out = append(out, '[')
		first := true
		err := Elements(v, func(e []byte) error {
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
		s, err := String(v)
		if err != nil {
			return nil, fmt.Errorf("canonical JSON: %w", err)
		}
		return AppendString(out, s), nil
	}
	return append(out, v...), nil // a number as written, true, false, null
}
