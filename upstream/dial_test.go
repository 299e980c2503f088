package upstream

import (
	"context"
	"testing"
	"time"
)

// TestDialEndsAsItConnects: an attempt whose context ends while its
// handshake completes fails or returns a live connection, never one the
// context's end closed meanwhile; the close that end started is over when
// dial returns (it read the connection's session while dial wrote it, a
// data race -race reported in make test). The ends are spread over one
// handshake's time and past it; an upstream of both eras has a
// session-era connection beside the stateless one.
func TestDialEndsAsItConnects(t *testing.T) {
	m := newManager(t, fastOptions(t))
	spec := Spec{Name: "u", Transport: TransportHTTP, URL: startHTTPFixture(t, "http", "-era", "both", "-only", "echo")}
	u := m.newUpstream(spec, nil)
	start := time.Now()
	c, err := u.dial(context.Background(), &spec)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	c.Close()
	const n = 200
	live := 0
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(took*time.Duration(i)/(n*3/4), cancel)
		c, err := u.dial(ctx, &spec)
		if err == nil {
			if c.Err() != nil {
				t.Errorf("dial %d: a connection closed as it was returned: %v", i, c.Err())
			} else {
				live++
			}
			c.Close()
		}
		cancel()
	}
	t.Logf("handshake %s; %d of %d dials returned a live connection", took, live, n)
}
