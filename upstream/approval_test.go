package upstream

import (
	"maps"
	"reflect"
	"slices"
	"testing"
)

// Issue 12 item 1: every field of Spec is covered by the approval
// fingerprint unless tagged approval:"exempt", so a field added later is
// covered without anyone remembering to add it.
func TestFingerprintCoversEveryField(t *testing.T) {
	base := Spec{Name: "x", Command: "srv"}
	fp := base.Fingerprint()
	typ := reflect.TypeFor[Spec]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		s := base
		setNonZero(t, reflect.ValueOf(&s).Elem().Field(i))
		changed := s.Fingerprint() != fp
		if exempt := f.Tag.Get("approval") == "exempt"; changed == exempt {
			t.Errorf("field %s (exempt %v): fingerprint changed = %v", f.Name, exempt, changed)
		}
	}
}

// setNonZero gives v a value other than its zero value and other than the
// base spec's.
func setNonZero(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "-changed")
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.ValueOf("v")))
	case reflect.Map:
		v.Set(reflect.ValueOf(map[string]string{"K": "v"}))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		setNonZero(t, p.Elem())
		v.Set(p)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Struct:
		setNonZero(t, v.Field(0))
	default:
		t.Fatalf("setNonZero: unhandled kind %s", v.Kind())
	}
}

// Issue 12 item 1: any change to a value, a value's source, the query, the
// cwd, or the set of env vars or headers changes the fingerprint.
func TestFingerprintChanges(t *testing.T) {
	stdio := func() Spec {
		return Spec{Name: "s", Command: "node", Args: []string{"a"}, Cwd: "/srv",
			Env: map[string]string{"NODE_OPTIONS": "--max-old-space-size=256", "TOKEN": "${TOKEN}"}}
	}
	web := func() Spec {
		return Spec{Name: "w", URL: "https://h/mcp?x=1", Headers: map[string]string{"X-A": "a"}}
	}
	webOAuth := func() Spec { // issue 13: the oauth section is part of what is approved
		s := web()
		s.OAuth = &OAuth{ClientID: "c", ClientSecret: "${S}", Scopes: []string{"read"}, ClientMetadataURL: "https://h/c.json", RedirectPort: 8765}
		return s
	}
	for _, tc := range []struct {
		name string
		base Spec
		edit func(*Spec)
	}{
		{"env value", stdio(), func(s *Spec) { s.Env["NODE_OPTIONS"] = "--require /tmp/evil.js" }},
		{"env source", stdio(), func(s *Spec) { s.Env["TOKEN"] = "${AWS_SECRET_ACCESS_KEY}" }},
		{"env to a file", stdio(), func(s *Spec) { s.Env["TOKEN"] = "file:/etc/shadow" }},
		{"env added", stdio(), func(s *Spec) { s.Env["LD_PRELOAD"] = "/tmp/x.so" }},
		{"env removed", stdio(), func(s *Spec) { delete(s.Env, "TOKEN") }},
		{"cwd", stdio(), func(s *Spec) { s.Cwd = "/tmp" }},
		{"args", stdio(), func(s *Spec) { s.Args = append(s.Args, "b") }},
		{"header value", web(), func(s *Spec) { s.Headers["X-A"] = "file:/some/secret" }},
		{"header to a hub variable", web(), func(s *Spec) { s.Headers["X-A"] = "${SOME_VAR}" }},
		{"header added", web(), func(s *Spec) { s.Headers["X-B"] = "b" }},
		{"query", web(), func(s *Spec) { s.URL = "https://h/mcp?x=2" }},
		{"transport", web(), func(s *Spec) { s.Transport = TransportSSE }},
		{"oauth added", web(), func(s *Spec) { s.OAuth = &OAuth{} }},
		{"oauth client id", webOAuth(), func(s *Spec) { s.OAuth.ClientID = "other" }},
		{"oauth secret source", webOAuth(), func(s *Spec) { s.OAuth.ClientSecret = "file:/etc/shadow" }},
		{"oauth scopes", webOAuth(), func(s *Spec) { s.OAuth.Scopes = append(s.OAuth.Scopes, "admin") }},
		{"oauth metadata document", webOAuth(), func(s *Spec) { s.OAuth.ClientMetadataURL = "https://evil.example/c.json" }},
		{"oauth redirect port", webOAuth(), func(s *Spec) { s.OAuth.RedirectPort = 9999 }},
	} {
		before := tc.base.Fingerprint()
		s := tc.base
		s.Env, s.Headers = maps.Clone(tc.base.Env), maps.Clone(tc.base.Headers)
		if tc.base.OAuth != nil {
			o := *tc.base.OAuth
			o.Scopes = slices.Clone(o.Scopes)
			s.OAuth = &o
		}
		tc.edit(&s)
		if s.Fingerprint() == before {
			t.Errorf("%s: fingerprint unchanged", tc.name)
		}
	}
	// The encoding is canonical: map order and the inferred transport do
	// not matter.
	a := Spec{Name: "s", Command: "c", Env: map[string]string{"A": "1", "B": "2", "C": "3"}}
	b := Spec{Name: "t", Command: "c", Transport: TransportStdio, Env: map[string]string{"C": "3", "B": "2", "A": "1"}}
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("the same launch has two fingerprints")
	}
}
