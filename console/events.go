package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/hub"
)

// Live updates. An open page listens on /ui/events (server-sent events);
// when what the console shows changes (an upstream's state or tools, what
// waits for approval, new calls), the stream sends a "refresh" event and
// the page's script fetches the page again and swaps its live regions. The
// stream wakes when the hub rebuilds its catalog (any upstream change) and
// every Poll for what the hub does not announce (the command line changed
// the store, calls); it sends at most one event per Poll.

// maxStreams bounds the console's open event streams.
const maxStreams = 32

// keepAlive is how often an idle stream gets a comment line.
const keepAlive = 15 * time.Second

func (c *Console) serveEvents(w http.ResponseWriter, r *http.Request) {
	select {
	case c.streams <- struct{}{}:
		defer func() { <-c.streams }()
	default:
		w.Header().Set("Retry-After", "10")
		c.refuse(w, r, http.StatusServiceUnavailable, "too many open console pages")
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		c.refuse(w, r, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "retry: 2000\n\n")
	flusher.Flush()

	ctx := r.Context()
	last := c.stateDigest(ctx)
	// The page names the state it shows: when that is not the state now,
	// it missed a change, and refreshes at once.
	var sent uint64
	if since := r.URL.Query().Get("since"); since != "" && since != digestHex(last) {
		sent++
		if _, err := fmt.Fprintf(w, "event: refresh\ndata: %d\n\n", sent); err != nil {
			return
		}
		flusher.Flush()
	}
	poll := time.NewTicker(c.opts.Poll)
	defer poll.Stop()
	idle := time.NewTicker(keepAlive)
	defer idle.Stop()
	lastSend := time.Time{}
	for {
		changed := c.h.Changed()
		select {
		case <-ctx.Done():
			return
		case <-c.ctx.Done():
			return
		case <-idle.C:
			_, _ = io.WriteString(w, ": keep-alive\n\n")
			flusher.Flush()
			continue
		case <-changed:
			// Coalesce a burst of changes into one look, at most one
			// event per Poll.
			if wait := c.opts.Poll - time.Since(lastSend); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return
				case <-c.ctx.Done():
					return
				}
			}
		case <-poll.C:
		}
		d := c.stateDigest(ctx)
		if d == last {
			continue
		}
		last = d
		sent++
		lastSend = time.Now()
		if _, err := fmt.Fprintf(w, "event: refresh\ndata: %d\n\n", sent); err != nil {
			return
		}
		flusher.Flush()
	}
}

// stateDigest sums up everything a page shows that can change, but the
// clock: two equal digests mean no page needs a refresh.
func (c *Console) stateDigest(ctx context.Context) [32]byte {
	views, _ := c.h.Servers(ctx)
	type stamp struct {
		Views   []hub.ServerView
		Tools   []string
		Shadows int
		Waiting []string
		Calls   uint64
		Stderr  []int
	}
	s := stamp{Views: views, Shadows: len(c.h.Catalog().Shadowed())}
	for _, e := range c.h.Catalog().Tools() {
		s.Tools = append(s.Tools, e.Server+"/"+e.Name)
	}
	for _, v := range views {
		if u, ok := c.h.Manager().Get(v.Name); ok {
			s.Stderr = append(s.Stderr, len(u.StderrTail()))
		}
	}
	if p, err := c.approvalsData(ctx); err == nil {
		for _, ps := range p.Servers {
			s.Waiting = append(s.Waiting, ps.Name+"/"+ps.Digest)
		}
		for _, ch := range p.Changes {
			s.Waiting = append(s.Waiting, ch.Name+"/"+ch.Digest)
		}
	}
	_, s.Calls = c.h.RecentCalls()
	b, _ := json.Marshal(s)
	return sha256.Sum256(b)
}

// digestHex renders a state digest for a page (and back in its stream's
// since parameter).
func digestHex(d [32]byte) string { return hex.EncodeToString(d[:16]) }

// Per-server rates: the call totals of the hub's metrics, sampled every
// rateEvery; a rate is the growth over the last rateWindow.
const (
	rateEvery  = 5 * time.Second
	rateWindow = time.Minute
)

// rates keeps the samples of the call totals.
type rates struct {
	mu      sync.Mutex
	samples []rateSample // oldest first, spanning at most rateWindow+rateEvery
}

type rateSample struct {
	at     time.Time
	totals map[string]hub.CallTotals
}

// serverRate is one upstream on the activity page.
type serverRate struct {
	hub.CallTotals
	PerMinute float64 // calls per minute over the window
	Mean      time.Duration
}

func (rs *rates) sample(totals []hub.CallTotals, now time.Time) {
	m := make(map[string]hub.CallTotals, len(totals))
	for _, t := range totals {
		m[t.Server] = t
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.samples = append(rs.samples, rateSample{at: now, totals: m})
	for len(rs.samples) > 1 && now.Sub(rs.samples[1].at) >= rateWindow {
		rs.samples = rs.samples[1:]
	}
}

// current returns every called upstream's rate now, over the window it
// covers (the time since the console started, until that is a minute).
func (rs *rates) current(totals []hub.CallTotals, now time.Time) ([]serverRate, time.Duration) {
	rs.mu.Lock()
	var base rateSample
	if len(rs.samples) > 0 {
		base = rs.samples[0]
	}
	rs.mu.Unlock()
	window := now.Sub(base.at)
	var out []serverRate
	for _, t := range totals {
		r := serverRate{CallTotals: t}
		if t.Calls > 0 {
			r.Mean = time.Duration(t.Seconds / float64(t.Calls) * float64(time.Second))
		}
		if window > 0 {
			r.PerMinute = float64(t.Calls-base.totals[t.Server].Calls) / window.Minutes()
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b serverRate) int {
		switch {
		case a.PerMinute > b.PerMinute:
			return -1
		case a.PerMinute < b.PerMinute:
			return 1
		}
		return 0
	})
	return out, window
}

// sampleRates samples the call totals until the console closes.
func (c *Console) sampleRates() {
	t := time.NewTicker(rateEvery)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case now := <-t.C:
			c.rates.sample(c.h.CallTotals(), now)
		}
	}
}
