package hub

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRecentCalls: the calls the hub forwards are kept, the latest first,
// with their upstream, tool, outcome and duration and nothing of their
// arguments or results; the ring keeps the last 200; CallTotals are the
// metrics' per-upstream figures.
func TestRecentCalls(t *testing.T) {
	h, c := startHub(t, nil, fixtureSpec("a", "-only", "echo,fail"), fixtureSpec("b", "-only", "add"))
	const secret = "argument-value-never-kept-42"
	c.call(t, 2, "tools/call", `{"name":"echo","arguments":{"message":"`+secret+`"}}`)
	c.call(t, 3, "tools/call", `{"name":"add","arguments":{"a":1,"b":2}}`)
	c.call(t, 4, "tools/call", `{"name":"fail","arguments":{}}`)
	calls, seen := h.RecentCalls()
	if seen != 3 || len(calls) != 3 {
		t.Fatalf("RecentCalls = %d calls, %d seen; want 3, 3", len(calls), seen)
	}
	want := []struct{ server, tool, outcome string }{{"a", "fail", "tool_error"}, {"b", "add", "ok"}, {"a", "echo", "ok"}}
	for i, w := range want {
		got := calls[i]
		if got.Server != w.server || got.Tool != w.tool || got.Outcome != w.outcome || got.Duration <= 0 || time.Since(got.End) > time.Minute {
			t.Errorf("call %d = %+v, want %s/%s %s", i, got, w.server, w.tool, w.outcome)
		}
	}
	if s := fmt.Sprintf("%+v", calls); strings.Contains(s, secret) {
		t.Errorf("a call keeps its arguments: %s", s)
	}
	totals := h.CallTotals()
	if len(totals) != 2 || totals[0].Server != "a" || totals[0].Calls != 2 || totals[0].Errors != 1 || totals[0].Seconds <= 0 ||
		totals[1].Server != "b" || totals[1].Calls != 1 || totals[1].Errors != 0 {
		t.Errorf("CallTotals = %+v", totals)
	}

	for i := range 250 {
		h.metrics.call("b", fmt.Sprint("t", i), outcomeOK, time.Millisecond)
	}
	calls, seen = h.RecentCalls()
	if seen != 253 || len(calls) != recentCap || calls[0].Tool != "t249" || calls[recentCap-1].Tool != "t50" {
		t.Errorf("after 250 more: %d calls, %d seen, first %q, last %q", len(calls), seen, calls[0].Tool, calls[len(calls)-1].Tool)
	}
}
