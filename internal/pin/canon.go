// Package pin pins what an upstream tells the model: each tool, prompt and
// resource template it lists, and its instructions, as the SHA-256 of the
// canonical JSON of the whole definition. It compares a listing with the
// pins (Check), renders what changed for a person (Finding.Render) and
// flags descriptions that deserve a careful look (Warnings). It is pure:
// the hub decides what a finding means (the upstream's trust policy) and
// the store keeps the pins.
package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// float64, under which two different large integers can become one;
// a pin must never let two different definitions hash alike, so numbers
// stay as the upstream wrote them. It uses encoding/json's tokenizer (no
// dependency), and refuses duplicate members (ErrDuplicateKey) where a map
// round trip would silently keep the last one.
func Canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := canon(dec, &out); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("canonical JSON: data after the value")
	}
	return out.Bytes(), nil
}

// canon writes the canonical form of the next value of dec to out.
func canon(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("canonical JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return canonObject(dec, out)
		case '[':
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := canon(dec, out); err != nil {
					return err
				}
			}
			_, err := dec.Token() // ']'
			out.WriteByte(']')
			return err
		}
		return fmt.Errorf("canonical JSON: unexpected %v", t)
	case string:
		writeString(out, t)
	case json.Number:
		out.WriteString(string(t))
	case bool:
		out.WriteString(fmt.Sprint(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

func canonObject(dec *json.Decoder, out *bytes.Buffer) error {
	type member struct {
		key string
		val []byte
	}
	var ms []member
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return fmt.Errorf("canonical JSON: %w", err)
		}
		key, _ := kt.(string)
		var v bytes.Buffer
		if err := canon(dec, &v); err != nil {
			return err
		}
		ms = append(ms, member{key, v.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("canonical JSON: %w", err)
	}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	out.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			if ms[i-1].key == m.key {
				return fmt.Errorf("canonical JSON: %w %q", ErrDuplicateKey, m.key)
			}
			out.WriteByte(',')
		}
		writeString(out, m.key)
		out.WriteByte(':')
		out.Write(m.val)
	}
	out.WriteByte('}')
	return nil
}

// writeString writes s as a JSON string, as encoding/json does without
// HTML escaping.
func writeString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	out.Truncate(out.Len() - 1) // Encode's newline
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
