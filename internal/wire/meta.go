package wire

import "fmt"

// Editing a request's params._meta. The hub adds, replaces or removes a few
// keys there on the way to the next hop (the W3C trace context of SEP-414,
// the per-request protocol version, capabilities and client info of the
// 2026-07-28 revision, the reserved keys that described the previous hop)
// while the rest of the message, a tool's arguments above all, must travel
// byte for byte. EditMeta splices: it scans params once to find _meta, and
// writes the edited _meta with every other byte copied around it into one
// allocation (none when nothing changes). Measured on a tools/call with
// 1 KiB of arguments and two trace members set (BenchmarkEditMeta): 1
// allocation of 1280 B, where a map[string]any round trip of the params
// costs a dozen allocations and reorders the members, and where the two
// editors this one replaced cost 1 (a splice without the checks below) and
// 2 (a separate _meta buffer copied in).

// EditMeta returns params with params._meta edited: each member of set
// with a value takes it (a member of that name replaced in place, a new one
// appended), each member of set with a nil Value is removed, and so is each
// member whose decoded key drop reports true (drop may be nil; a key drop
// removes and set names is appended anew). When _meta is absent it is
// appended as the last member of params (or replaces a null). params may be
// nil or null (a request without params). When nothing changes (set empty
// or only removing absent keys, nothing dropped) params itself is returned
// without a copy: most requests need no edit and must cost nothing.
// Every byte outside _meta keeps its place. params must be an object; a
// duplicate _meta, a duplicate key in it, or a _meta that is neither an
// object nor null is an error, as is a set of more than 64 members.
func EditMeta(params []byte, set []Member, drop func(key []byte) bool) ([]byte, error) {
	if len(set) > 64 {
		return nil, fmt.Errorf("%w: too many members to set", ErrSyntax)
	}
	writes := false // set has a member with a value: the result differs
	for i := range set {
		if set[i].Value != nil {
			writes = true
			break
		}
	}
	p := TrimSpace(params)
	if len(p) == 0 || string(p) == "null" {
		if !writes {
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
	if !writes {
		// Only removals: find out whether any applies before copying.
		changed, err := removes(obj, set, drop)
		if err != nil {
			return nil, fmt.Errorf("params._meta: %w", err)
		}
		if !changed {
			return params, nil
		}
	}
	size := len(p) + 10
	for i := range set {
		size += len(set[i].Key) + len(set[i].Value) + 4
	}
	out := make([]byte, 0, size)
	if found {
		// Splice the new value over the old one: meta points into p.
		off := cap(p) - cap(meta)
		out = append(out, p[:off]...)
		if out, err = appendEdited(out, obj, set, drop); err != nil {
			return nil, fmt.Errorf("params._meta: %w", err)
		}
		return append(out, p[off+len(meta):]...), nil
	}
	// Append "_meta" as the last member of params.
	last := len(p) - 1 // p is trimmed: its last byte is '}'
	out = append(out, p[:last]...)
	if len(TrimSpace(p[1:last])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"_meta":`...)
	out, _ = appendEdited(out, nil, set, drop)
	return append(out, '}'), nil
}

// removes reports whether editing the _meta object obj (nil: none) by set,
// whose members all have nil values, and drop removes anything.
func removes(obj []byte, set []Member, drop func([]byte) bool) (bool, error) {
	changed := false
	_, err := editMembers(obj, set, drop, func(_, v []byte) {
		if v == nil {
			changed = true
		}
	})
	return changed, err
}

// appendEdited appends the _meta object obj (nil: none) edited by set and
// drop.
func appendEdited(out, obj []byte, set []Member, drop func([]byte) bool) ([]byte, error) {
	out = append(out, '{')
	first := len(out)
	add := func(k string, v []byte) {
		if len(out) > first {
			out = append(out, ',')
		}
		out = AppendString(out, k)
		out = append(out, ':')
		out = append(out, v...)
	}
	done, err := editMembers(obj, set, drop, func(k, v []byte) {
		if v != nil {
			add(string(k), v)
		}
	})
	if err != nil {
		return nil, err
	}
	for i := range set {
		if done&(1<<i) == 0 && set[i].Value != nil {
			add(set[i].Key, set[i].Value)
		}
	}
	return append(out, '}'), nil
}

// editMembers calls emit for each member of the object obj (nil: none), in
// order, with its value after the edit: set's value for a key set names,
// nil for a member set or drop removes. It returns the bits of the members
// of set that obj has (len(set) <= 64). A duplicate key is an error.
func editMembers(obj []byte, set []Member, drop func([]byte) bool, emit func(k, v []byte)) (done uint64, err error) {
	if obj == nil {
		return 0, nil
	}
	var keyBuf [16][]byte // duplicate detection; _meta objects are small
	keys := keyBuf[:0]
	err = Members(obj, func(k, v []byte) error {
		for _, seen := range keys {
			if string(seen) == string(k) {
				return fmt.Errorf("%w: duplicate key %q", ErrSyntax, k)
			}
		}
		keys = append(keys, k)
		if drop != nil && drop(k) {
			emit(k, nil)
			return nil
		}
		for i := range set {
			if set[i].Key == string(k) {
				v = set[i].Value
				done |= 1 << i
				break
			}
		}
		emit(k, v)
		return nil
	})
	return done, err
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
