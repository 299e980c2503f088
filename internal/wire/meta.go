package wire

import (
	"fmt"
)

// A request's params._meta carries what travels beside the request itself:
// the 2026-07-28 per-request protocol version, client info and
// capabilities, a progress token, trace context. SetMeta and EditMeta set
// members of it on the raw bytes of params; everything else in params keeps
// its bytes and its place, so a forwarded request stays byte-faithful apart
// from what was set.

// SetMeta returns params with each member of set written into params._meta:
// a member of that name is replaced in place, a new one is appended. params
// may be nil or null (a request without params): the result is then
// {"_meta":{…}}. A _meta that is absent is appended, one that is null is
// replaced. params itself is never modified.
//
//	p, err := wire.SetMeta(params, wire.Member{Key: "traceparent", Value: wire.AppendString(nil, tp)})
func SetMeta(params []byte, set ...Member) ([]byte, error) {
	return EditMeta(params, set, nil)
}

// EditMeta is SetMeta that also removes the members of params._meta whose
// (decoded) key drop reports true for; drop may be nil. When nothing is to
// change (set empty and nothing dropped), params is returned as it is. A
// duplicate key in params or in its _meta, or a _meta that is not an object
// (or null), is an error.
func EditMeta(params []byte, set []Member, drop func(key []byte) bool) ([]byte, error) {
	p := TrimSpace(params)
	if len(p) == 0 || string(p) == "null" {
		if len(set) == 0 {
			return params, nil
		}
		p = []byte("{}")
	}
	if p[0] != '{' {
		return nil, fmt.Errorf("%w: params must be an object to carry _meta", ErrSyntax)
	}
	var meta []byte // the raw _meta value, a sub-slice of p
	found := false
	err := Members(p, func(k, v []byte) error {
		if string(k) != "_meta" {
			return nil
		}
		if found {
			return fmt.Errorf("%w: duplicate key \"_meta\"", ErrSyntax)
		}
		found = true
		meta = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found && meta[0] != '{' && string(meta) != "null" {
		return nil, fmt.Errorf("%w: params._meta must be an object", ErrSyntax)
	}
	obj := meta
	if found && meta[0] == 'n' {
		obj = nil
	}
	newMeta, changed, err := editObject(obj, set, drop)
	if err != nil {
		return nil, fmt.Errorf("params._meta: %w", err)
	}
	if !changed {
		return params, nil
	}
	if found {
		// Splice the new value over the old one: meta points into p.
		off := offsetIn(p, meta)
		end := off + len(meta)
		out := make([]byte, 0, len(p)-(end-off)+len(newMeta))
		out = append(out, p[:off]...)
		out = append(out, newMeta...)
		return append(out, p[end:]...), nil
	}
	// Append "_meta" as the last member of params.
	last := len(p) - 1 // p is trimmed: its last byte is '}'
	out := make([]byte, 0, len(p)+len(newMeta)+10)
	out = append(out, p[:last]...)
	if len(TrimSpace(p[1:last])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"_meta":`...)
	out = append(out, newMeta...)
	return append(out, '}'), nil
}

// GetMeta returns the raw value of params._meta[key], or nil when params,
// its _meta or the key is absent (or the JSON is invalid).
func GetMeta(params []byte, key string) []byte {
	p := TrimSpace(params)
	if len(p) == 0 || p[0] != '{' {
		return nil
	}
	meta, err := Get(p, "_meta")
	if err != nil || len(meta) == 0 || meta[0] != '{' {
		return nil
	}
	v, err := Get(meta, key)
	if err != nil {
		return nil
	}
	return v
}

// offsetIn returns the offset of sub, a sub-slice of b, in b.
func offsetIn(b, sub []byte) int { return cap(b) - cap(sub) }

// editObject returns obj (nil: an empty object) with the members of set
// written and the members drop reports true for removed, and whether
// anything changed.
func editObject(obj []byte, set []Member, drop func([]byte) bool) ([]byte, bool, error) {
	if obj == nil {
		obj = []byte("{}")
	}
	size := len(obj) + 2
	for _, m := range set {
		size += len(m.Key) + len(m.Value) + 4
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	var done uint64 // bit i: set[i] was written in place (set has few members)
	if len(set) > 64 {
		return nil, false, fmt.Errorf("%w: too many members to set", ErrSyntax)
	}
	changed := false
	var keyBuf [16][]byte // duplicate detection; _meta objects are small
	keys := keyBuf[:0]
	err := Members(obj, func(k, v []byte) error {
		for _, seen := range keys {
			if string(seen) == string(k) {
				return fmt.Errorf("%w: duplicate key %q", ErrSyntax, k)
			}
		}
		keys = append(keys, k)
		if drop != nil && drop(k) {
			changed = true
			return nil
		}
		for i, m := range set {
			if m.Key == string(k) {
				v = m.Value
				done |= 1 << i
				changed = true
				break
			}
		}
		out = appendRawMember(out, k, v)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	for i, m := range set {
		if done&(1<<i) == 0 {
			out = appendMember(out, m.Key, m.Value)
			changed = true
		}
	}
	return append(out, '}'), changed, nil
}

// appendRawMember appends "key":v (with a leading comma after the first
// member) for a decoded key.
func appendRawMember(out, key, v []byte) []byte {
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = AppendString(out, string(key))
	out = append(out, ':')
	return append(out, v...)
}
