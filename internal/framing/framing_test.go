package framing

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// endless is a reader of an endless line: prefix, then x forever.
type endless struct{ prefix string }

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.prefix)
	e.prefix = e.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestOversizeLines(t *testing.T) {
	// Lines longer than the reader's buffer (256 KiB) arrive in pieces,
	// shorter than the drain limit (64 × 8 KiB).
	const max = 8 << 10
	big := strings.Repeat("y", 300<<10)
	in := `{"id":1,"result":"ok"}` + "\n" +
		`{"jsonrpc":"2.0","id":"a","result":"` + big + `"}` + "\n" + // id first: reported early
		`{"jsonrpc":"2.0","result":"` + big + `","id":7}` + "\n" + // id last: reported at the newline
		`{"id":2,"result":"after"}` + "\n"
	r := NewReader(strings.NewReader(in), max)
	next := func() ([]byte, error) {
		t.Helper()
		return r.Next()
	}
	if l, err := next(); err != nil || string(l) != `{"id":1,"result":"ok"}` {
		t.Fatalf("first = %q, %v", l, err)
	}
	var o *Oversize
	if _, err := next(); !errors.As(err, &o) || string(o.ID) != `"a"` || !o.Partial || o.Size > 256<<10 {
		t.Fatalf("second = %v (%+v), want an early partial report with id \"a\"", err, o)
	}
	if _, err := next(); !errors.As(err, &o) || string(o.ID) != `7` || o.Partial || o.Size != len(big)+len(`{"jsonrpc":"2.0","result":"","id":7}`)+1 {
		t.Fatalf("third = %v (%+v), want a full report with id 7", err, o)
	}
	if l, err := next(); err != nil || string(l) != `{"id":2,"result":"after"}` {
		t.Fatalf("fourth = %q, %v", l, err)
	}
	if _, err := next(); !errors.Is(err, io.EOF) {
		t.Fatalf("end = %v, want EOF", err)
	}
}

func TestEndlessLine(t *testing.T) {
	for _, prefix := range []string{`{"jsonrpc":"2.0","id":5,"result":"`, `{"jsonrpc":"2.0","result":"`} {
		r := NewReader(&endless{prefix: prefix}, 1<<10)
		_, err := r.Next()
		var o *Oversize
		if strings.Contains(prefix, `"id"`) {
			if !errors.As(err, &o) || string(o.ID) != "5" || !o.Partial {
				t.Fatalf("%s: first = %v, want an early report with id 5", prefix, err)
			}
			_, err = r.Next()
		}
		if !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("%s: err = %v, want ErrLineTooLong", prefix, err)
		}
		if _, again := r.Next(); !errors.Is(again, ErrLineTooLong) {
			t.Errorf("%s: after the end: %v, want ErrLineTooLong again", prefix, again)
		}
	}
}

func TestLineReaderKeepsEmptyLines(t *testing.T) {
	r := NewLineReader(strings.NewReader("data: a\r\n\r\n\ndata: b"), 64)
	var got []string
	for {
		l, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		if l == nil {
			t.Fatal("an empty line came back nil")
		}
		got = append(got, string(l))
	}
	if want := []string{"data: a", "", "", "data: b"}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

func TestLineReaderViews(t *testing.T) {
	long := strings.Repeat("z", 40<<10) // longer than the pooled 16 KiB buffer
	in := "a\r\n\nbb\n" + long + "\n" + strings.Repeat("o", 200) + "\nlast"
	for round := range 3 { // the second and third rounds reuse pooled readers
		r := NewLineReader(strings.NewReader(in), 100<<10)
		var got []string
		for {
			l, err := r.NextView()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			got = append(got, string(l)) // copied: a view lives until the next call
		}
		r.Release()
		want := []string{"a", "", "bb", long, strings.Repeat("o", 200), "last"}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d lines, want %d", round, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("round %d, line %d: %.20q (%d bytes), want %.20q (%d bytes)", round, i, got[i], len(got[i]), want[i], len(want[i]))
			}
		}
	}
	t.Run("oversize line in view mode", func(t *testing.T) {
		r := NewLineReader(strings.NewReader(`{"id":5,"x":"`+strings.Repeat("x", 64<<10)+"\"}\nnext\n"), 1<<10)
		defer r.Release()
		_, err := r.NextView()
		var o *Oversize
		if !errors.As(err, &o) || string(o.ID) != "5" {
			t.Fatalf("%v, want Oversize with id 5", err)
		}
		if l, err := r.NextView(); err != nil || string(l) != "next" {
			t.Fatalf("after the oversize line: %q %v", l, err)
		}
	})
}

// BenchmarkLineReaderView reads a short text/event-stream answer with a
// pooled reader: no allocation per stream or per line.
func BenchmarkLineReaderView(b *testing.B) {
	body := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
	src := bytes.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(body)
		r := NewLineReader(src, DefaultMax)
		for {
			if _, err := r.NextView(); err != nil {
				break
			}
		}
		r.Release()
	}
}
