package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestSetParamsMeta(t *testing.T) {
	tp := Member{Key: "traceparent", Value: []byte(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)}
	tests := []struct {
		name, in string
		set      []Member
		want     string
		wantErr  error
	}{
		{"no params", ``, []Member{tp}, `{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`, nil},
		{"empty params", `{}`, []Member{{Key: "a", Value: []byte(`1`)}}, `{"_meta":{"a":1}}`, nil},
		{"no _meta: first member, the rest byte for byte", `{"name":"x","arguments":{"b" : [1, 2]}}`, []Member{{Key: "a", Value: []byte(`1`)}},
			`{"_meta":{"a":1},"name":"x","arguments":{"b" : [1, 2]}}`, nil},
		{"replaced in place, others kept", `{"name":"x","_meta":{"progressToken":7,"traceparent":"old","z":{}},"arguments":{}}`,
			[]Member{{Key: "traceparent", Value: []byte(`"new"`)}, {Key: "tracestate", Value: []byte(`"k=v"`)}},
			`{"name":"x","_meta":{"progressToken":7,"traceparent":"new","z":{},"tracestate":"k=v"},"arguments":{}}`, nil},
		{"nil value removes", `{"_meta":{"a":1,"b":2}}`, []Member{{Key: "a"}, {Key: "c"}}, `{"_meta":{"b":2}}`, nil},
		{"duplicate key of set collapses", `{"_meta":{"a":1,"a":2}}`, []Member{{Key: "a", Value: []byte(`3`)}}, `{"_meta":{"a":3}}`, nil},
		{"escaped key", `{"_meta":{"a\u0062":1}}`, []Member{{Key: "ab", Value: []byte(`2`)}}, `{"_meta":{"ab":2}}`, nil},
		{"whitespace", " { \"x\" : 1 } ", []Member{{Key: "a", Value: []byte(`1`)}}, `{"_meta":{"a":1},"x" : 1 }`, nil},
		{"_meta not an object", `{"_meta":[]}`, []Member{tp}, ``, ErrEnvelope},
		{"duplicate _meta", `{"_meta":{},"_meta":{}}`, []Member{tp}, ``, ErrSyntax},
		{"invalid", `{"a":}`, []Member{tp}, ``, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetParamsMeta([]byte(tt.in), tt.set)
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
}

func TestSetMeta(t *testing.T) {
	set := []Member{{Key: "traceparent", Value: []byte(`"t"`)}}
	tests := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"q":"a b"}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"t"},"name":"x","arguments":{"q":"a b"}}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"traceparent":"t"}}}`},
		{`{"jsonrpc":"2.0","method":"n","params":{"_meta":{"x":true}},"id":"a"}`, `{"jsonrpc":"2.0","method":"n","params":{"_meta":{"x":true,"traceparent":"t"}},"id":"a"}`},
	}
	for _, tt := range tests {
		got, err := SetMeta([]byte(tt.in), set)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	if _, err := SetMeta([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`), set); !errors.Is(err, ErrEnvelope) {
		t.Errorf("array params: err = %v", err)
	}
}

// BenchmarkSetParamsMeta edits the _meta of a tools/call with 1 KiB of
// arguments: one allocation, the arguments copied as they are.
func BenchmarkSetParamsMeta(b *testing.B) {
	params := []byte(`{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 1024) + `"},"_meta":{"progressToken":1}}`)
	set := []Member{
		{Key: "traceparent", Value: []byte(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)},
		{Key: "tracestate", Value: []byte(`"congo=t61rcWkgMzE"`)},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SetParamsMeta(params, set); err != nil {
			b.Fatal(err)
		}
	}
}
