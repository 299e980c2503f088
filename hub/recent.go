package hub

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// Recent calls, for people watching the hub (the web console's activity
// page): a small ring of the last requests forwarded to upstreams, fed by
// the call metrics (metrics.call), and the per-upstream totals of the
// metrics themselves. Never arguments or results: only which tool of which
// upstream, the outcome and how long it took.

// Call is one request the hub forwarded to an upstream.
type Call struct {
	// End is when its outcome was known.
	End time.Time
	// Server is the upstream ("" for a call of a tool no upstream has).
	Server string
	// Tool is the tool's name for tools/call, the method for any other
	// request.
	Tool string
	// Outcome is ok, tool_error, rpc_error, unavailable, timeout, failed,
	// cancelled or unknown_tool (the outcome label of mcphub_calls_total).
	Outcome  string
	Duration time.Duration
}

// recentCap is how many calls the ring keeps.
const recentCap = 200

// recentCalls is a ring of the last recentCap calls. add costs a lock and
// a copy: nothing next to a forwarded call.
type recentCalls struct {
	mu   sync.Mutex
	ring [recentCap]Call
	seq  uint64 // calls added so far
}

func (r *recentCalls) add(server, tool, outcome string, d time.Duration) {
	now := time.Now()
	r.mu.Lock()
	r.ring[r.seq%recentCap] = Call{End: now, Server: server, Tool: tool, Outcome: outcome, Duration: d}
	r.seq++
	r.mu.Unlock()
}

// RecentCalls returns the last calls the hub forwarded (at most 200), the
// latest first, and how many calls it has seen in all (which grows with
// every call: a watcher compares it to see whether anything happened).
func (h *Hub) RecentCalls() (calls []Call, seen uint64) {
	r := &h.metrics.recent
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(r.seq, recentCap)
	calls = make([]Call, 0, n)
	for i := uint64(1); i <= n; i++ {
		calls = append(calls, r.ring[(r.seq-i)%recentCap])
	}
	return calls, r.seq
}

// CallTotals are an upstream's calls since the hub started, from the
// metrics (mcphub_calls_total, mcphub_call_duration_seconds).
type CallTotals struct {
	Server string
	// Calls counts requests; Errors those whose outcome was not ok.
	Calls, Errors uint64
	// Seconds is the time the calls took, summed.
	Seconds float64
}

// CallTotals returns the call totals of every upstream that was called,
// sorted by name.
func (h *Hub) CallTotals() []CallTotals {
	by := map[string]*CallTotals{}
	get := func(server string) *CallTotals {
		t := by[server]
		if t == nil {
			t = &CallTotals{Server: server}
			by[server] = t
		}
		return t
	}
	h.metrics.calls.Each(func(values []string, v float64) {
		t := get(values[0])
		t.Calls += uint64(v)
		if values[2] != outcomeOK {
			t.Errors += uint64(v)
		}
	})
	h.metrics.latency.Each(func(values []string, _ uint64, sum float64) {
		get(values[0]).Seconds += sum
	})
	out := make([]CallTotals, 0, len(by))
	for _, t := range by {
		if t.Server != "" || t.Calls > 0 {
			out = append(out, *t)
		}
	}
	slices.SortFunc(out, func(a, b CallTotals) int { return strings.Compare(a.Server, b.Server) })
	return out
}
