package upstream

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/framing"
)

// endless yields prefix, then 'a' forever, counting what was read.
type endless struct {
	prefix string
	n      int64
}

func (e *endless) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		if e.n < int64(len(e.prefix)) {
			p[k] = e.prefix[e.n]
		} else {
			p[k] = 'a'
		}
		k++
		e.n++
	}
	return k, nil
}

func TestSSEReaderLimits(t *testing.T) {
	const max = 1024
	t.Run("oversize event fails its request, the next event is read", func(t *testing.T) {
		big := `data: {"jsonrpc":"2.0","id":"r1","result":{"t":"` + strings.Repeat("x", 5*max) + `"}}`
		r := newSSEReader(strings.NewReader(big+"\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"), max, "", 0)
		_, err := r.next()
		var o *framing.Oversize
		if !errors.As(err, &o) || string(o.ID) != `"r1"` {
			t.Fatalf("first event: %v, want Oversize with id \"r1\"", err)
		}
		ev, err := r.next()
		if err != nil || !strings.Contains(string(ev.data), `"id":2`) {
			t.Fatalf("next event: %q, %v", ev.data, err)
		}
	})
	t.Run("endless line: reported early, then the stream ends at the drain limit", func(t *testing.T) {
		src := &endless{prefix: `data: {"jsonrpc":"2.0","id":7,"result":{"t":"`}
		r := newSSEReader(src, max, "", 0)
		_, err := r.next()
		var o *framing.Oversize
		if !errors.As(err, &o) || string(o.ID) != "7" || !o.Partial {
			t.Fatalf("first: %v, want a partial Oversize with id 7", err)
		}
		if src.n > 64<<10 {
			t.Errorf("read %d bytes before reporting, want about the cap", src.n)
		}
		_, err = r.next()
		if !errors.Is(err, framing.ErrLineTooLong) {
			t.Fatalf("second: %v, want ErrLineTooLong", err)
		}
		if limit := int64(framing.DrainFactor*max) + 64<<10; src.n > limit {
			t.Errorf("read %d bytes, want at most about %d", src.n, limit)
		}
		if _, err := r.next(); !errors.Is(err, framing.ErrLineTooLong) {
			t.Errorf("after the end: %v, want the same error again", err)
		}
	})
	t.Run("endless line without an id ends the stream", func(t *testing.T) {
		r := newSSEReader(&endless{prefix: "data: "}, max, "", 0)
		if _, err := r.next(); !errors.Is(err, framing.ErrLineTooLong) {
			t.Fatalf("%v, want ErrLineTooLong", err)
		}
	})
	t.Run("clean end", func(t *testing.T) {
		r := newSSEReader(strings.NewReader("data: {}\n\n"), max, "", 0)
		if _, err := r.next(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.next(); !errors.Is(err, io.EOF) {
			t.Errorf("%v, want EOF", err)
		}
	})
}

func TestSSEReaderEvents(t *testing.T) {
	long := strings.Repeat("y", 40<<10) // spans several fills of the 16 KiB read buffer
	stream := ": a comment\r\n" +
		"retry: 250\r\n" +
		"id: e1\r\n" +
		"data: {\"a\":1}\r\n\r\n" +
		"event: endpoint\n" +
		"data: /messages?s=1\n\n" +
		"id: ignored\x00\n" + // ids with NUL are ignored (SSE spec)
		"data: line one\n" +
		"data:line two\n\n" +
		"event: ping\n\n" + // no data: no event, and its type does not leak into the next one
		"id: e2\n" +
		"data: " + long + "\n\n" +
		"data: cut off" // the stream ends inside an event: not dispatched (SSE spec)
	r := newSSEReader(strings.NewReader(stream), 1<<20, "e0", time.Second)
	defer r.release()
	want := []sseEvent{
		{data: []byte(`{"a":1}`)},
		{event: "endpoint", data: []byte("/messages?s=1")},
		{data: []byte("line one\nline two")},
		{data: []byte(long)},
	}
	var got []sseEvent
	for {
		ev, err := r.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, ev)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	// Every event's data is still intact after the reader moved on: the
	// caller owns it.
	for i := range want {
		if got[i].event != want[i].event || string(got[i].data) != string(want[i].data) {
			t.Errorf("event %d = %q %.40q, want %q %.40q", i, got[i].event, got[i].data, want[i].event, want[i].data)
		}
	}
	if id := r.lastEventID("e0"); id != "e2" {
		t.Errorf("last event id %q, want e2", id)
	}
	if r.retry != 250*time.Millisecond {
		t.Errorf("retry %s, want 250ms", r.retry)
	}
}

func TestSSEReaderCarriesResumeState(t *testing.T) {
	r := newSSEReader(strings.NewReader("data: x\n\n"), 1024, "e7", 3*time.Second)
	defer r.release()
	if _, err := r.next(); err != nil {
		t.Fatal(err)
	}
	if id := r.lastEventID("e7"); id != "e7" || r.retry != 3*time.Second {
		t.Errorf("after a stream without id or retry: %q %s, want e7 3s", id, r.retry)
	}
}

// BenchmarkSSEReader reads a typical POST answer: one event with a
// JSON-RPC result. The one allocation per event is its data's copy.
func BenchmarkSSEReader(b *testing.B) {
	body := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"msg\\\":\\\"hi\\\"}\"}]}}\n\n")
	src := bytes.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(body)
		r := newSSEReader(src, 1<<20, "", 0)
		if _, err := r.next(); err != nil {
			b.Fatal(err)
		}
		r.release()
	}
}
