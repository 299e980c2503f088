package wire

import (
	"fmt"
	"slices"
)

// Member is one object member with a raw JSON value.
type Member struct {
	Key   string
	Value []byte
}

// EditObject returns a new JSON object built from obj: members named in set
// take the new raw value in place; members named in drop are removed;
// members of set that obj lacks are appended. Every other member keeps its
// value bytes and its position. Duplicate keys in obj are an error.
func EditObject(obj []byte, set []Member, drop ...string) ([]byte, error) {
	out := make([]byte, 0, len(obj)+64)
	out = append(out, '{')
	done := make([]bool, len(set))
	var seen []string
	err := Members(obj, func(k, v []byte) error {
		key := string(k)
		if slices.Contains(seen, key) {
			return fmt.Errorf("%w: duplicate key %q", ErrSyntax, key)
		}
		seen = append(seen, key)
		if slices.Contains(drop, key) {
			return nil
		}
		for i, m := range set {
			if m.Key == key {
				v = m.Value
				done[i] = true
				break
			}
		}
		out = appendMember(out, key, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, m := range set {
		if !done[i] {
			out = appendMember(out, m.Key, m.Value)
		}
	}
	return append(out, '}'), nil
}

func appendMember(out []byte, key string, v []byte) []byte {
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = AppendString(out, key)
	out = append(out, ':')
	return append(out, v...)
}

// RebuildObject returns obj with each member passed through fn: fn returns
// the member's new raw value and whether to keep it. Members keep their
// order and, where fn returns them unchanged, their bytes. It is for edits
// EditObject cannot say (a nested member changed, members dropped by a
// rule); obj is scanned once.
func RebuildObject(obj []byte, fn func(key, val []byte) (newVal []byte, keep bool)) ([]byte, error) {
	out := make([]byte, 0, len(obj))
	out = append(out, '{')
	err := Members(obj, func(k, v []byte) error {
		nv, keep := fn(k, v)
		if keep {
			out = appendRawMember(out, k, nv)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}
