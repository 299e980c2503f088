package upstream

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pauseTag relays a pause of its request's stream (or declines to), and
// resumes it at once when told to.
type pauseTag struct {
	relay, resume bool
	retry         atomic.Int64 // the retry of the last pause, ns
}

func (p *pauseTag) Paused(pz *Pause) bool {
	p.retry.Store(int64(pz.Retry))
	if p.relay && p.resume {
		pz.Resume() // the client came back at once
	}
	return p.relay
}

// TestPauseRelay: when the upstream closes a call's stream before the
// answer (the fixture's test_reconnection, asking for a retry of 30 s), the
// request's tag hears of the pause with the upstream's retry; the link
// resumes the stream when the tag resumes it, long before the retry (this
// test gives up after 10 s). A tag that relays the pause but whose client
// never comes back, or one that declines it, has the link wait the retry
// (shorter there), as before.
func TestPauseRelay(t *testing.T) {
	url := startHTTPFixture(t, "http", "-conformance", "-only", "echo")
	m := newManager(t, fastOptions(t))
	u, err := m.Add(Spec{Name: "poll", URL: url}, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, u, 10*time.Second, StateConnected)
	call := func(tag *pauseTag, retryMs string) time.Duration {
		t.Helper()
		ctx, cancel := context.WithTimeout(WithTag(context.Background(), tag), 10*time.Second)
		defer cancel()
		start := time.Now()
		r, err := u.Call(ctx, "tools/call", []byte(`{"name":"test_reconnection","arguments":{"retryMs":`+retryMs+`}}`))
		if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "Reconnection test completed") {
			t.Fatalf("retry %sms: %s %s %v", retryMs, r.Result, r.Error, err)
		}
		return time.Since(start)
	}

	resumed := &pauseTag{relay: true, resume: true}
	call(resumed, "30000")
	if got := time.Duration(resumed.retry.Load()); got != 30*time.Second {
		t.Errorf("the tag heard of a pause with retry %s, want the upstream's 30s", got)
	}
	for _, tag := range []*pauseTag{{relay: true}, {}} {
		if d := call(tag, "400"); d < 400*time.Millisecond {
			t.Errorf("relay %v, nobody resumed: answered after %s, before the retry (400ms)", tag.relay, d)
		}
	}
}
