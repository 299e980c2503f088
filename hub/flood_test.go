package hub

// Chaos and fault tests (issue 5; security plan §7) through the hub, as in
// chaos_test.go: an upstream that floods the hub.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingHandler counts log records whose message contains a string.
type countingHandler struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (c *countingHandler) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	c.counts[r.Message]++
	c.mu.Unlock()
	return nil
}

func (c *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return c }

func (c *countingHandler) WithGroup(string) slog.Handler { return c }

func (c *countingHandler) count(msg string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[msg]
}

func heapBytes() int64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestD16Flood: an upstream floods stdout with 100,000 notifications (log
// messages, progress for guessed hub tokens, resource updates nobody
// subscribed to) and stderr with 100,000 lines. The hub stays responsive,
// its memory bounded, its log rate-limited, and no session gets a message
// it did not ask for: a session that asked for progress on its own call
// gets that call's progress only.
func TestD16Flood(t *testing.T) {
	logs := &countingHandler{counts: map[string]int{}}
	h, a := startHub(t, &Options{Logger: slog.New(logs)},
		fixtureSpec("flooder", "-only", "flood,echo"), fixtureSpec("calm", "-only", "echo,progress"))
	b := stdioClient(t, h)
	for _, name := range []string{"flooder", "calm"} {
		waitStatus(t, upstreamOf(t, h, name), 10*time.Second, "connected", connected)
	}
	drain := func(c *pipeClient) []string {
		var out []string
		for {
			select {
			case n := <-c.notes:
				out = append(out, string(n))
			default:
				return out
			}
		}
	}
	// The catalog with both upstreams is served (its list_changed sent)
	// before the flood starts.
	eventually(t, 10*time.Second, "the catalog of both upstreams", func() bool {
		_, flood := h.Catalog().Tool("flood")
		_, progress := h.Catalog().Tool("progress")
		return flood && progress && h.catalogCurrent()
	})
	time.Sleep(100 * time.Millisecond)
	drain(a)
	drain(b)

	// a asks for progress on a call of its own, on the calm upstream.
	progressCall := a.start(2, "tools/call", `{"name":"progress","arguments":{"steps":40,"delay_ms":50},"_meta":{"progressToken":"mine"}}`)
	var tokens []string
	for i := 1; i <= 20; i++ {
		tokens = append(tokens, fmt.Sprintf(`"p%d"`, i))
	}
	runtime.GC()
	heap0 := heapBytes()
	var peak atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), heapBytes()-heap0))
			select {
			case <-stopSampling:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	began := time.Now()
	flood := a.start(3, "tools/call", `{"name":"flood","arguments":{"notifications":100000,"stderr_lines":100000,"tokens":[`+strings.Join(tokens, ",")+`]}}`)

	// b keeps calling both upstreams while the flood runs: echo goes to
	// calm (it shadows the flooder's), a flood of nothing to the flooder,
	// answered after what the flood queued on its stdout.
	var latencies []time.Duration
	done := false
	for id := 100; !done; id += 2 {
		start := time.Now()
		o := outcomeOfLine(t, b.call(t, id, "tools/call", `{"name":"echo","arguments":{"i":`+fmt.Sprint(id)+`}}`))
		latencies = append(latencies, time.Since(start))
		if o.isError || !strings.Contains(o.text, fmt.Sprint(id)) {
			t.Fatalf("echo %d during the flood: %+v", id, o)
		}
		if id%20 == 0 {
			if o := outcomeOfLine(t, b.call(t, id+1, "tools/call", `{"name":"flood","arguments":{}}`)); o.isError || !strings.Contains(o.text, "flooded 0") {
				t.Fatalf("the flooder during its flood: %+v", o)
			}
		}
		select {
		case line := <-flood:
			if o := outcomeOfLine(t, line); o.isError || !strings.Contains(o.text, "flooded 100000 notifications") {
				t.Fatalf("flood = %+v", o)
			}
			done = true
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(began) > 60*time.Second {
			t.Fatal("the flood did not end within 60s")
		}
	}
	floodTook := time.Since(began)
	select {
	case line := <-progressCall:
		if o := outcomeOfLine(t, line); o.isError {
			t.Errorf("progress call = %+v", o)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the progress call was not answered")
	}
	close(stopSampling)
	<-sampled
	time.Sleep(200 * time.Millisecond) // anything still on its way

	slices.Sort(latencies)
	t.Logf("flood of 100k notifications and 100k stderr lines took %s; %d echo calls from the other session meanwhile, median %s, max %s; heap +%d MiB",
		floodTook.Round(time.Millisecond), len(latencies), latencies[len(latencies)/2].Round(time.Microsecond),
		latencies[len(latencies)-1].Round(time.Millisecond), peak.Load()>>20)
	if peak.Load() > 100<<20 {
		t.Errorf("heap grew by %d MiB during the flood", peak.Load()>>20)
	}
	if got := drain(b); len(got) > 0 {
		t.Errorf("session b asked for nothing and got %d messages, first %s", len(got), got[0])
	}
	var mine []float64
	for _, n := range drain(a) {
		var m struct {
			Method string
			Params struct {
				ProgressToken json.RawMessage
				Progress      float64
			}
		}
		if err := json.Unmarshal([]byte(n), &m); err != nil || m.Method != "notifications/progress" || string(m.Params.ProgressToken) != `"mine"` {
			t.Errorf("session a got %s; it asked for its own call's progress only", n)
			continue
		}
		mine = append(mine, m.Params.Progress)
	}
	if len(mine) == 0 || len(mine) > 40 || slices.Max(mine) > 40 {
		t.Errorf("session a got %d progress notifications (max progress %v), want its call's at most 40 steps", len(mine), mine)
	}
	logged, reported := logs.count("upstream stderr"), logs.count("upstream stderr rate-limited")
	t.Logf("a got %d progress notifications of its own; %d stderr lines logged, %d rate-limit reports", len(mine), logged, reported)
	// The stderr rate limit: a burst of 200 lines, then 20 a second.
	if limit := 200 + int(40*floodTook.Seconds()) + 50; logged > limit || reported == 0 {
		t.Errorf("%d of 100000 stderr lines logged with %d rate-limit reports; want the rate limit to hold", logged, reported)
	}
}
