package config

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	hint "github.com/mcp-hub/mcp-hub/internal/suggest"
)

// Kind is the type a config key holds.
type Kind int

// The kinds of keys.
const (
	KindString Kind = iota
	KindDuration
	KindInt
	KindFloat
	KindBool
	KindStrings
	KindStringMap
	KindSection // a map of further keys
)

// String describes the kind for people, as error messages say it.
func (k Kind) String() string {
	return [...]string{"a string", `a duration such as "30s"`, "an integer", "a number", "true or false",
		"a list of strings", "a map of strings", "a section"}[k]
}

// Key documents one config key. Keys under mcpServers use "*" for the
// server name. Every Key comes from the struct tags of [Config] and of the
// entries of mcpServers: the koanf tag names it, the default, enum, doc and
// flag tags say the rest.
type Key struct {
	Path    string // dotted, e.g. "timeouts.call" or "mcpServers.*.args"
	Kind    Kind
	Default string   // as documented; "" when none, "<…>" when computed
	Doc     string   // one line
	Enum    []string // the values allowed, when limited
	Flag    string   // the command-line flag that sets it, if any
}

var (
	keysOnce sync.Once
	keyList  []Key
)

// Keys returns every key of the configuration, in the order the structs
// declare them.
func Keys() []Key {
	keysOnce.Do(func() { keyList = structKeys("", reflect.TypeFor[document](), nil) })
	return slices.Clone(keyList)
}

var durationType = reflect.TypeFor[time.Duration]()

// kindOf returns the kind of a field of type t; ok is false for types no
// key can hold.
func kindOf(t reflect.Type) (k Kind, ok bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return KindDuration, true
	case t.Kind() == reflect.String:
		return KindString, true
	case t.Kind() == reflect.Int:
		return KindInt, true
	case t.Kind() == reflect.Float64:
		return KindFloat, true
	case t.Kind() == reflect.Bool:
		return KindBool, true
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return KindStrings, true
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		return KindStringMap, true
	case t.Kind() == reflect.Struct, t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		return KindSection, true
	}
	return 0, false
}

// structKeys appends the keys of struct type t under prefix.
func structKeys(prefix string, t reflect.Type, out []Key) []Key {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if name == "-" {
			continue
		}
		if opts == "squash" {
			out = structKeys(prefix, f.Type, out)
			continue
		}
		kind, ok := kindOf(f.Type)
		if !ok {
			panic("config: field " + f.Name + " has no key kind") // a programming error
		}
		k := Key{Path: joinKey(prefix, name), Kind: kind, Default: f.Tag.Get("default"), Doc: f.Tag.Get("doc"), Flag: f.Tag.Get("flag")}
		if e := f.Tag.Get("enum"); e != "" {
			k.Enum = strings.Split(e, ",")
		}
		out = append(out, k)
		switch {
		case kind != KindSection:
		case f.Type.Kind() == reflect.Map:
			out = append(out, Key{Path: k.Path + ".*", Kind: KindSection})
			out = structKeys(k.Path+".*", f.Type.Elem(), out)
		default:
			out = structKeys(k.Path, f.Type, out)
		}
	}
	return out
}

func joinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// lookupKey returns the key a concrete path (mcpServers.github.args) is an
// instance of (mcpServers.*.args).
func lookupKey(path string) (Key, bool) {
	parts := strings.Split(path, ".")
	for _, k := range Keys() {
		kp := strings.Split(k.Path, ".")
		if len(kp) != len(parts) {
			continue
		}
		match := true
		for i := range kp {
			if kp[i] != "*" && kp[i] != parts[i] {
				match = false
				break
			}
		}
		if match {
			return k, true
		}
	}
	return Key{}, false
}

// suggest returns the documented key closest to an unknown one.
func suggest(path string) string {
	parts := strings.Split(path, ".")
	best, bestDist := "", 3
	for _, k := range Keys() {
		kp := strings.Split(k.Path, ".")
		if len(kp) != len(parts) {
			continue
		}
		cand := make([]string, len(kp))
		for i := range kp {
			cand[i] = kp[i]
			if kp[i] == "*" {
				cand[i] = parts[i]
			}
		}
		c := strings.Join(cand, ".")
		if dist := hint.Distance(strings.ToLower(c), strings.ToLower(path)); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	return best
}

// flagKeys maps the command-line flags to the keys they set.
func flagKeys() map[string]string {
	m := map[string]string{}
	for _, k := range Keys() {
		if k.Flag != "" {
			m[k.Flag] = k.Path
		}
	}
	return m
}
