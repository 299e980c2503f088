package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestEditMetaEdits: the edits trace propagation makes (a traceparent set,
// a tracestate removed by a nil value) keep every byte outside _meta.
func TestEditMetaEdits(t *testing.T) {
	tp := Member{Key: "traceparent", Value: []byte(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)}
	tests := []struct {
		name, in string
		set      []Member
		want     string
		wantErr  error
	}{
		{"no _meta: last member, the rest byte for byte", `{"name":"x","arguments":{"b" : [1, 2]}}`, []Member{{Key: "a", Value: []byte(`1`)}},
			`{"name":"x","arguments":{"b" : [1, 2]},"_meta":{"a":1}}`, nil},
		{"replaced in place, others kept", `{"name":"x","_meta":{"progressToken":7,"traceparent":"old","z":{}},"arguments":{}}`,
			[]Member{{Key: "traceparent", Value: []byte(`"new"`)}, {Key: "tracestate", Value: []byte(`"k=v"`)}},
			`{"name":"x","_meta":{"progressToken":7,"traceparent":"new","z":{},"tracestate":"k=v"},"arguments":{}}`, nil},
		{"nil value removes", `{"_meta":{"a":1,"b":2}}`, []Member{{Key: "a"}, {Key: "c"}}, `{"_meta":{"b":2}}`, nil},
		{"nil value removes beside a set", `{"_meta":{"tracestate":"x","b":2}}`, []Member{tp, {Key: "tracestate"}},
			`{"_meta":{"b":2,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`, nil},
		{"removing the last member", `{"_meta":{"a":1}}`, []Member{{Key: "a"}}, `{"_meta":{}}`, nil},
		{"whitespace", " { \"x\" : 1 } ", []Member{{Key: "a", Value: []byte(`1`)}}, `{ "x" : 1 ,"_meta":{"a":1}}`, nil},
		{"_meta not an object", `{"_meta":[]}`, []Member{tp}, ``, ErrSyntax},
		{"duplicate _meta", `{"_meta":{},"_meta":{}}`, []Member{tp}, ``, ErrSyntax},
		{"duplicate key in _meta", `{"_meta":{"a":1,"a":2}}`, []Member{{Key: "a", Value: []byte(`3`)}}, ``, ErrSyntax},
		{"duplicate key in _meta, only removing", `{"_meta":{"a":1,"a":2}}`, []Member{{Key: "a"}}, ``, ErrSyntax},
		{"invalid", `{"a":}`, []Member{tp}, ``, ErrSyntax},
		{"invalid _meta, only removing", `{"_meta":{"a":}}`, []Member{{Key: "a"}}, ``, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EditMeta([]byte(tt.in), tt.set, nil)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			if !Valid(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
		})
	}
	// Removing what is not there changes nothing: the same bytes back.
	same := []byte(`{"name":"x","_meta":{"b":1}}`)
	if got, err := EditMeta(same, []Member{{Key: "a"}}, nil); err != nil || &got[0] != &same[0] {
		t.Errorf("EditMeta removing an absent key = %s, %v; want params itself", got, err)
	}
	if got, err := EditMeta(nil, []Member{{Key: "a"}}, nil); err != nil || got != nil {
		t.Errorf("EditMeta(nil) removing = %q, %v; want nil", got, err)
	}
}

func TestEditMetaSet(t *testing.T) {
	tp := Member{Key: "traceparent", Value: []byte(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)}
	const tpv = `"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`
	tests := []struct {
		name, params, want string
		set                []Member
	}{
		{"no params", ``, `{"_meta":{"traceparent":` + tpv + `}}`, []Member{tp}},
		{"null params", `null`, `{"_meta":{"traceparent":` + tpv + `}}`, []Member{tp}},
		{"empty params", `{}`, `{"_meta":{"traceparent":` + tpv + `}}`, []Member{tp}},
		{"params without _meta", `{"name":"echo","arguments":{"a":1}}`,
			`{"name":"echo","arguments":{"a":1},"_meta":{"traceparent":` + tpv + `}}`, []Member{tp}},
		{"null _meta", `{"name":"x","_meta":null}`, `{"name":"x","_meta":{"traceparent":` + tpv + `}}`, []Member{tp}},
		{"appended to _meta, bytes kept", `{ "_meta" : {"progressToken": 7 }, "name":"x" }`,
			`{ "_meta" : {"progressToken":7,"traceparent":` + tpv + `}, "name":"x" }`, []Member{tp}},
		{"replaced in place", `{"_meta":{"traceparent":"old","a":1}}`, `{"_meta":{"traceparent":` + tpv + `,"a":1}}`, []Member{tp}},
		{"several", `{"_meta":{"b":2}}`, `{"_meta":{"b":3,"c":"x"}}`,
			[]Member{{Key: "b", Value: []byte(`3`)}, {Key: "c", Value: []byte(`"x"`)}}},
		{"escaped key kept", `{"_meta":{"a\u0062":1}}`, `{"_meta":{"ab":1,"c":2}}`, []Member{{Key: "c", Value: []byte(`2`)}}},
		{"key needing escapes", `{}`, `{"_meta":{"a\"b":1}}`, []Member{{Key: `a"b`, Value: []byte(`1`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.params)
			orig := bytes.Clone(in)
			got, err := EditMeta(in, tt.set, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("EditMeta(%s) = %s, want %s", tt.params, got, tt.want)
			}
			if !Valid(got) {
				t.Errorf("invalid JSON: %s", got)
			}
			if !bytes.Equal(in, orig) {
				t.Errorf("params modified: %s", in)
			}
			if v := GetMeta(got, tt.set[0].Key); string(v) != string(tt.set[0].Value) {
				t.Errorf("GetMeta = %s, want %s", v, tt.set[0].Value)
			}
		})
	}
}

func TestEditMetaDrop(t *testing.T) {
	reserved := func(k []byte) bool { return bytes.HasPrefix(k, []byte("io.modelcontextprotocol/")) }
	in := `{"name":"x","_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c"},"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`
	got, err := EditMeta([]byte(in), []Member{{Key: "io.modelcontextprotocol/protocolVersion", Value: []byte(`"2025-11-25"`)}}, reserved)
	if err != nil {
		t.Fatal(err)
	}
	// A dropped key is not written again, even when set names it: set
	// members the drop removed are appended.
	want := `{"name":"x","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	// Nothing to change: the same bytes back.
	same := []byte(`{"name":"x","_meta":{"a":1}}`)
	got, err = EditMeta(same, nil, reserved)
	if err != nil || &got[0] != &same[0] {
		t.Errorf("EditMeta without changes = %s, %v; want params itself", got, err)
	}
	got, err = EditMeta(nil, nil, reserved)
	if err != nil || got != nil {
		t.Errorf("EditMeta(nil) = %q, %v", got, err)
	}
}

func TestEditMetaErrors(t *testing.T) {
	set := []Member{{Key: "k", Value: []byte(`1`)}}
	for _, in := range []string{`[1]`, `"x"`, `{"_meta":1}`, `{"_meta":[]}`, `{"_meta":{},"_meta":{}}`, `{"_meta":{"a":1,"a":2}}`, `{"a":`, `{"_meta":{"a":1}`} {
		if got, err := EditMeta([]byte(in), set, nil); err == nil || !errors.Is(err, ErrSyntax) {
			t.Errorf("EditMeta(%s) = %s, %v; want a syntax error", in, got, err)
		}
	}
	many := make([]Member, 65)
	for i := range many {
		many[i] = Member{Key: strings.Repeat("k", i+1), Value: []byte(`1`)}
	}
	if _, err := EditMeta([]byte(`{}`), many, nil); err == nil {
		t.Error("65 members: want an error")
	}
}

func TestGetMeta(t *testing.T) {
	for in, want := range map[string]string{
		`{"_meta":{"a":"b"}}`: `"b"`,
		`{"_meta":{}}`:        ``,
		`{}`:                  ``,
		``:                    ``,
		`{"_meta":3}`:         ``,
		`[1]`:                 ``,
	} {
		if got := GetMeta([]byte(in), "a"); string(got) != want {
			t.Errorf("GetMeta(%s) = %s, want %s", in, got, want)
		}
	}
}

// BenchmarkEditMeta sets the trace context in the _meta of a tools/call:
// one allocation, the arguments copied as they are.
func BenchmarkEditMeta(b *testing.B) {
	set := []Member{
		{Key: "traceparent", Value: []byte(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)},
		{Key: "tracestate", Value: []byte(`"congo=t61rcWkgMzE"`)},
	}
	for _, bc := range []struct{ name, params string }{
		{"1KiB", `{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 1024) + `"},"_meta":{"progressToken":1}}`},
		{"small", `{"name":"echo","arguments":{"message":"hello"},"_meta":{"progressToken":"p1"}}`},
		{"small-no-meta", `{"name":"echo","arguments":{"message":"hello"}}`},
	} {
		params := []byte(bc.params)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EditMeta(params, set, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestRebuildObject(t *testing.T) {
	got, err := RebuildObject([]byte(`{"a":1, "b" : [2], "c":{"d":3}}`), func(k, v []byte) ([]byte, bool) {
		switch string(k) {
		case "a":
			return nil, false
		case "c":
			return []byte(`{}`), true
		}
		return v, true
	})
	if err != nil || string(got) != `{"b":[2],"c":{}}` {
		t.Errorf("RebuildObject = %s, %v", got, err)
	}
	if _, err := RebuildObject([]byte(`{"a":`), func(k, v []byte) ([]byte, bool) { return v, true }); err == nil {
		t.Error("invalid JSON: want an error")
	}
}
