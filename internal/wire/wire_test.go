package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{}`, true},
		{` {"a":1} `, true},
		{`[]`, true},
		{`[1,2,[3,{"x":null}]]`, true},
		{`"abc"`, true},
		{`"a\"b\\c\/\b\f\n\r\t\u00e9"`, true},
		{`"\u00g0"`, false},
		{`"\x"`, false},
		{"\"a\tb\"", false},
		{`"unterminated`, false},
		{`-0.5e+10`, true},
		{`01`, false},
		{`1.`, false},
		{`1e`, false},
		{`-`, false},
		{`true`, true},
		{`tru`, false},
		{`nul`, false},
		{`{"a":}`, false},
		{`{"a" 1}`, false},
		{`{"a":1,}`, false},
		{`[1,]`, false},
		{`{1:2}`, false},
		{`{"a":1}}`, false},
		{`[`, false},
		{``, false},
		{`"` + strings.Repeat("x", 1000) + `\"` + strings.Repeat("y", 33) + `"`, true},
		{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), true},
		{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), false},
	}
	for _, tt := range tests {
		if got := Valid([]byte(tt.in)); got != tt.want {
			t.Errorf("Valid(%.60q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Message
		wantErr error
	}{
		{"request", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`,
			Message{ID: []byte(`7`), Method: "tools/call", Params: []byte(`{"name":"x"}`)}, nil},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			Message{Method: "notifications/initialized"}, nil},
		{"response any order", `{"result":{"a":[1,2]},"jsonrpc":"2.0","id":"h12"}`,
			Message{ID: []byte(`"h12"`), Result: []byte(`{"a":[1,2]}`)}, nil},
		{"error response", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
			Message{ID: []byte(`null`), Error: []byte(`{"code":-32700,"message":"x"}`)}, nil},
		{"escaped method", `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
			Message{ID: []byte(`1`), Method: "tools/call"}, nil},
		{"unknown member tolerated", `{"jsonrpc":"2.0","id":1,"method":"ping","x":1}`,
			Message{ID: []byte(`1`), Method: "ping"}, nil},
		{"batch", `[{"jsonrpc":"2.0","method":"a"}]`, Message{}, ErrBatch},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, Message{}, ErrEnvelope},
		{"case variant", `{"jsonrpc":"2.0","id":1,"method":"a","Method":"b"}`, Message{}, ErrEnvelope},
		{"escaped duplicate", `{"jsonrpc":"2.0","id":1,"method":"a","\u006dethod":"b"}`, Message{}, ErrEnvelope},
		{"bad version", `{"jsonrpc":"1.0","id":1,"method":"a"}`, Message{}, ErrEnvelope},
		{"missing version", `{"id":1,"method":"a"}`, Message{}, ErrEnvelope},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, Message{}, ErrEnvelope},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, Message{}, ErrEnvelope},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"a","result":1}`, Message{}, ErrEnvelope},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"a"}`, Message{}, ErrEnvelope},
		{"params string", `{"jsonrpc":"2.0","id":1,"method":"a","params":"x"}`, Message{}, ErrEnvelope},
		{"not json", `fixture banner: hello`, Message{}, ErrSyntax},
		{"truncated", `{"jsonrpc":"2.0","id":1,"result":{"a":`, Message{}, ErrSyntax},
		{"empty", ``, Message{}, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Parse() error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if !bytes.Equal(got.ID, tt.want.ID) || got.Method != tt.want.Method ||
				!bytes.Equal(got.Params, tt.want.Params) || !bytes.Equal(got.Result, tt.want.Result) ||
				!bytes.Equal(got.Error, tt.want.Error) {
				t.Errorf("Parse() = %+q, want %+q", got, tt.want)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{string(AppendResult(nil, []byte(`"a"`), []byte(`{"x":1}`))), `{"jsonrpc":"2.0","id":"a","result":{"x":1}}`},
		{string(AppendError(nil, nil, -32700, "bad \"x\"\n", nil)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"x\"\n"}}`},
		{string(AppendError(nil, []byte(`3`), -1, "m", []byte(`{"d":2}`))), `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m","data":{"d":2}}}`},
		{string(AppendErrorObject(nil, []byte(`3`), []byte(`{"code":1,"message":"m"}`))), `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}`},
		{string(AppendRequest(nil, HubID(nil, 42), "tools/call", []byte(`{}`))), `{"jsonrpc":"2.0","id":"h42","method":"tools/call","params":{}}`},
		{string(AppendNotification(nil, "notifications/cancelled", nil)), `{"jsonrpc":"2.0","method":"notifications/cancelled"}`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
		if !json.Valid([]byte(tt.got)) {
			t.Errorf("%s is not valid JSON", tt.got)
		}
	}
	if n, ok := ParseHubID([]byte(`"h42"`)); !ok || n != 42 {
		t.Errorf("ParseHubID(h42) = %d, %v", n, ok)
	}
	for _, bad := range []string{`42`, `"42"`, `"h"`, `"hx1"`, `"h-1"`} {
		if _, ok := ParseHubID([]byte(bad)); ok {
			t.Errorf("ParseHubID(%s) ok, want not ok", bad)
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\"back\\slash", "ctl\x00\x01\x1f", "tab\tnl\nrt\r",
		"héllo 世界", "bad\xffutf8", "sep\u2028\u2029", "<html>&"} {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s: invalid JSON: %v", s, got, err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if back != want {
			t.Errorf("round trip of %q = %q, want %q", s, back, want)
		}
	}
}

func TestEditObject(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		set  []Member
		drop []string
		want string
	}{
		{"replace keeps order", `{"name":"a","arguments":{"z":1, "a":2},"x":true}`,
			[]Member{{"name", []byte(`"b"`)}}, nil, `{"name":"b","arguments":{"z":1, "a":2},"x":true}`},
		{"append", `{"a":1}`, []Member{{"_meta", []byte(`{"progressToken":"h1"}`)}}, nil,
			`{"a":1,"_meta":{"progressToken":"h1"}}`},
		{"drop", `{"a":1,"b":2,"c":3}`, nil, []string{"b"}, `{"a":1,"c":3}`},
		{"empty", `{}`, []Member{{"k", []byte(`1`)}}, nil, `{"k":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EditObject([]byte(tt.obj), tt.set, tt.drop...)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("EditObject() = %s, want %s", got, tt.want)
			}
		})
	}
	if _, err := EditObject([]byte(`{"a":1,"a":2}`), nil); err == nil {
		t.Error("EditObject accepted duplicate keys")
	}
}

func TestGetAndString(t *testing.T) {
	v, err := Get([]byte(`{"name":"x\u0041","arguments":{}}`), "name")
	if err != nil {
		t.Fatal(err)
	}
	s, err := String(v)
	if err != nil || s != "xA" {
		t.Errorf("String(%s) = %q, %v; want xA", v, s, err)
	}
	if v, _ := Get([]byte(`{"a":1}`), "b"); v != nil {
		t.Errorf("Get missing = %s, want nil", v)
	}
	if _, err := Get([]byte(`{"a":1,"a":2}`), "a"); err == nil {
		t.Error("Get accepted duplicate keys")
	}
}

// FuzzValid checks the scanner against encoding/json on arbitrary input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"b\\"}`, `[1,{"x":[true,false,null]}]`, `"\u12ab"`, `-1.5e3`, "\"\x01\"", `{"a":1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Valid(b)
		want := json.Valid(b)
		if got != want {
			// Nesting beyond MaxDepth is the one intended difference.
			if want && !got && bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) > MaxDepth {
				return
			}
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// FuzzParse checks that whatever Parse accepts, encoding/json reads the same
// envelope from.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":"h1","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","Method":"b"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		var env stdEnvelope
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("Parse accepted %q but encoding/json fails: %v", b, err)
		}
		if env.Method != m.Method || env.JSONRPC != "2.0" {
			t.Fatalf("Parse(%q) method %q, encoding/json %q", b, m.Method, env.Method)
		}
		if !bytes.Equal(env.ID, m.ID) && !(m.ID == nil && string(env.ID) == "null") {
			t.Fatalf("Parse(%q) id %q, encoding/json %q", b, m.ID, env.ID)
		}
	})
}

func BenchmarkParseLargeResult(b *testing.B) {
	line := largeResult()
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSmallRequest(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}

func TestElements(t *testing.T) {
	var got []string
	err := Elements([]byte(` [ {"a":1}, "x" ,[2], null ] `), func(e []byte) error {
		got = append(got, string(e))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"a":1}`, `"x"`, `[2]`, `null`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Elements = %q, want %q", got, want)
	}
	for _, bad := range []string{`[1,]`, `[1 2]`, `{}`, `[`, `[]x`} {
		if err := Elements([]byte(bad), func([]byte) error { return nil }); err == nil {
			t.Errorf("Elements(%s) accepted", bad)
		}
	}
}

func TestValues(t *testing.T) {
	var got []string
	err := Values([]byte(" {\"a\":1}\n{\"b\":[2]}{\"c\":3}\n\n"), func(v []byte) error {
		got = append(got, string(v))
		return nil
	})
	if err != nil || strings.Join(got, "|") != `{"a":1}|{"b":[2]}|{"c":3}` {
		t.Errorf("Values = %q, %v", got, err)
	}
	if err := Values([]byte(`{"a":1} {"b"`), func([]byte) error { return nil }); err == nil {
		t.Error("a truncated value: want an error")
	}
	if err := Values([]byte("  "), func([]byte) error { t.Error("called for nothing"); return nil }); err != nil {
		t.Error(err)
	}
}

func TestCanonical(t *testing.T) {
	got, err := Canonical([]byte(" {\"b\": [1, 2.50, {\"z\":null, \"a\":\"<&>\"}], \"a\": true} "))
	if want := `{"a":true,"b":[1,2.50,{"a":"<&>","z":null}]}`; err != nil || string(got) != want {
		t.Errorf("Canonical = %s, %v; want %s", got, err, want)
	}
	if _, err := Canonical([]byte(`{"a":{"x":1,"x":2}}`)); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("duplicate member: err = %v", err)
	}
	if _, err := Canonical([]byte(`{"a":`)); err == nil {
		t.Error("invalid JSON: want an error")
	}
}
