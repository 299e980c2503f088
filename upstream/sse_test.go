package upstream

import (
	"errors"
	"io"
	"strings"
	"testing"

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
		r := newSSEReader(strings.NewReader(big+"\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"), max)
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
		r := newSSEReader(src, max)
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
		r := newSSEReader(&endless{prefix: "data: "}, max)
		if _, err := r.next(); !errors.Is(err, framing.ErrLineTooLong) {
			t.Fatalf("%v, want ErrLineTooLong", err)
		}
	})
	t.Run("clean end", func(t *testing.T) {
		r := newSSEReader(strings.NewReader("data: {}\n\n"), max)
		if _, err := r.next(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.next(); !errors.Is(err, io.EOF) {
			t.Errorf("%v, want EOF", err)
		}
	})
}
