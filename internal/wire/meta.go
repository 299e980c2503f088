package wire

import "fmt"

// Setting members of a request's params._meta. The hub adds or replaces a
// few keys there on the way to an upstream (the W3C trace context of
// SEP-414: traceparent, tracestate, baggage) while the rest of the message,
// a tool's arguments above all, must travel byte for byte. These functions
// splice: they scan the envelope once to find _meta, write the edited _meta
// and copy every other byte around it, in one allocation. Editing a 1 KiB
// tools/call this way costs one scan and one copy; decoding and encoding the
// params (what a map[string]any round trip would do) costs a dozen
// allocations and reorders the members.

// SetParamsMeta returns a copy of params (a request's or notification's
// raw params object; nil or empty for none) whose _meta object holds the
// members of set: a key _meta has takes the new value in its place, the
// others are appended, and a member of set with a nil Value is removed.
// _meta is created, as the first member of params, when absent. Every other
// member of params keeps its bytes and position. params must be an object;
// a _meta that is not an object, or a duplicate _meta, is an error.
func SetParamsMeta(params []byte, set []Member) ([]byte, error) {
	params = TrimSpace(params)
	if len(params) == 0 {
		out := append(make([]byte, 0, metaSize(set)+12), `{"_meta":`...)
		out = appendMeta(out, nil, set)
		return append(out, '}'), nil
	}
	var meta []byte
	empty := true
	err := Members(params, func(k, v []byte) error {
		empty = false
		if string(k) != "_meta" {
			return nil
		}
		if meta != nil {
			return fmt.Errorf("%w: duplicate key \"_meta\"", ErrSyntax)
		}
		if v[0] != '{' {
			return fmt.Errorf("%w: _meta must be an object", ErrEnvelope)
		}
		meta = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(params)+metaSize(set)+12)
	if meta == nil {
		out = append(out, `{"_meta":`...)
		out = appendMeta(out, nil, set)
		if !empty {
			out = append(out, ',')
		}
		rest := TrimSpace(params[1:]) // after '{'
		return append(out, rest...), nil
	}
	// meta is a sub-slice of params: its offset follows from the capacities.
	start := cap(params) - cap(meta)
	out = append(out, params[:start]...)
	out = appendMeta(out, meta, set)
	return append(out, params[start+len(meta):]...), nil
}

// SetMeta is SetParamsMeta for a whole JSON-RPC request or notification:
// it returns a copy of msg with params._meta edited (params is added when
// msg has none). Every other byte of msg is kept.
func SetMeta(msg []byte, set []Member) ([]byte, error) {
	msg = TrimSpace(msg)
	var params []byte
	seen := false
	err := Members(msg, func(k, v []byte) error {
		if string(k) != "params" {
			return nil
		}
		if seen {
			return fmt.Errorf("%w: duplicate member \"params\"", ErrEnvelope)
		}
		seen = true
		if v[0] != '{' {
			return fmt.Errorf("%w: params must be an object to carry _meta", ErrEnvelope)
		}
		params = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if params == nil {
		// msg ends with '}': add params as its last member.
		newParams, _ := SetParamsMeta(nil, set)
		out := make([]byte, 0, len(msg)+len(newParams)+12)
		out = append(out, TrimSpace(msg[:len(msg)-1])...)
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, `"params":`...)
		out = append(out, newParams...)
		return append(out, '}'), nil
	}
	newParams, err := SetParamsMeta(params, set)
	if err != nil {
		return nil, err
	}
	start := cap(msg) - cap(params)
	out := make([]byte, 0, len(msg)-len(params)+len(newParams))
	out = append(out, msg[:start]...)
	out = append(out, newParams...)
	return append(out, msg[start+len(params):]...), nil
}

// appendMeta appends the _meta object meta (nil: none) edited by set.
// meta has been validated by the caller's scan.
func appendMeta(out, meta []byte, set []Member) []byte {
	out = append(out, '{')
	first := len(out)
	var done uint64 // bit i: set[i] was written (set has a few members)
	var doneMore []bool
	if len(set) > 64 {
		doneMore = make([]bool, len(set))
	}
	mark := func(i int) {
		if doneMore != nil {
			doneMore[i] = true
		} else {
			done |= 1 << i
		}
	}
	marked := func(i int) bool {
		if doneMore != nil {
			return doneMore[i]
		}
		return done&(1<<i) != 0
	}
	if meta != nil {
		_ = Members(meta, func(k, v []byte) error {
			for i := range set {
				if set[i].Key == string(k) {
					if marked(i) {
						return nil // a duplicate of a key set replaces: one is written
					}
					mark(i)
					v = set[i].Value
					break
				}
			}
			if v == nil {
				return nil // removed
			}
			if len(out) > first {
				out = append(out, ',')
			}
			out = AppendString(out, string(k))
			out = append(out, ':')
			out = append(out, v...)
			return nil
		})
	}
	for i := range set {
		if marked(i) || set[i].Value == nil {
			continue
		}
		if len(out) > first {
			out = append(out, ',')
		}
		out = AppendString(out, set[i].Key)
		out = append(out, ':')
		out = append(out, set[i].Value...)
	}
	return append(out, '}')
}

// metaSize is room for the members of set.
func metaSize(set []Member) int {
	n := 2
	for _, m := range set {
		n += len(m.Key) + len(m.Value) + 4
	}
	return n
}

// EditMeta returns params with each member of set written into params._meta
// (a member of that name replaced in place, a new one appended; _meta itself
// appended as the last member of params when absent, or replacing a null)
// and the members whose decoded key drop reports true for removed; drop may
// be nil. Unlike SetParamsMeta it checks params._meta for duplicate keys and
// returns params itself when nothing changes (set empty, nothing dropped),
// which is what the era translation wants: most requests need no edit and
// must cost no copy. params may be nil or null (a request without params).
// A duplicate key, or a _meta that is not an object (or null), is an error.
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
