package hub

// Chaos and fault tests (issue 5; security plan §7) through the hub: real
// fixture upstreams, in-process stdio sessions, the race detector.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// start sends request id and returns a channel for its response line.
func (c *pipeClient) start(id int, method, params string) <-chan []byte {
	ch := make(chan []byte, 1)
	key := fmt.Sprint(id)
	c.mu.Lock()
	c.waiting[key] = ch
	c.mu.Unlock()
	c.send(`{"jsonrpc":"2.0","id":` + key + `,"method":"` + method + `","params":` + params + `}`)
	return ch
}

// toolOutcome is what a tools/call response says.
type toolOutcome struct {
	isError bool   // an isError result or a JSON-RPC error
	text    string // the result's text, or the error's message
}

func outcomeOfLine(t *testing.T, line []byte) toolOutcome {
	t.Helper()
	m, err := wire.Parse(line)
	if err != nil {
		t.Fatalf("response %s: %v", line, err)
	}
	if m.Error != nil {
		var e struct{ Message string }
		_ = json.Unmarshal(m.Error, &e)
		return toolOutcome{true, e.Message}
	}
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("result %s: %v", m.Result, err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return toolOutcome{r.IsError, b.String()}
}

// upstreamOf returns the hub's upstream of that name.
func upstreamOf(t *testing.T, h *Hub, name string) *upstream.Upstream {
	t.Helper()
	u, ok := h.Manager().Get(name)
	if !ok {
		t.Fatalf("no upstream %q", name)
	}
	return u
}

// waitStatus polls an upstream's status until cond holds.
func waitStatus(t *testing.T, u *upstream.Upstream, d time.Duration, what string, cond func(upstream.Status) bool) upstream.Status {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		st := u.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstream %s: waited %s for %s; status %+v", u.Name(), d, what, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func connected(st upstream.Status) bool { return st.State == upstream.StateConnected }

// inflightCalls returns the number of forwarded requests the hub's
// sessions track, and how many of them are under way (sent upstream, or
// waiting on the slow path).
func (h *Hub) inflightCalls() (tracked, started int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.sessions {
		s.mu.Lock()
		tracked += len(s.inflight)
		for _, c := range s.inflight {
			if c.cancel != nil {
				started++
			}
		}
		s.mu.Unlock()
	}
	return tracked, started
}

// fixtureEvent is one line of a fixture's -events file.
type fixtureEvent struct {
	kind string
	pid  int
	at   time.Time
}

func readEvents(t *testing.T, path string) []fixtureEvent {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixtureEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e fixtureEvent
		var ns int64
		if _, err := fmt.Sscan(sc.Text(), &e.kind, &e.pid, &ns); err != nil {
			t.Fatalf("events line %q: %v", sc.Text(), err)
		}
		e.at = time.Unix(0, ns)
		out = append(out, e)
	}
	return out
}

func eventsOf(events []fixtureEvent, kind string) []fixtureEvent {
	var out []fixtureEvent
	for _, e := range events {
		if e.kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestKill9UnderLoad: a stdio upstream is killed with SIGKILL while 1,000
// calls from 8 sessions are in flight on it. Every call is answered (a
// clear error naming the upstream), the upstream is back within its
// backoff, and calls after that succeed.
func TestKill9UnderLoad(t *testing.T) {
	const sessions, perSession = 8, 125
	opts := &Options{Upstream: upstream.Options{
		MaxInFlight:   sessions * perSession, // all of them really in flight upstream
		CallTimeout:   60 * time.Second,
		ShutdownGrace: 500 * time.Millisecond,
		Backoff:       upstream.Backoff{Initial: 200 * time.Millisecond, Max: time.Second, MaxAttempts: 5},
	}}
	h, first := startHub(t, opts, fixtureSpec("a", "-only", "sleep_ms,pid,echo"))
	clients := []*pipeClient{first}
	for len(clients) < sessions {
		clients = append(clients, stdioClient(t, h))
	}
	u := upstreamOf(t, h, "a")
	st := waitStatus(t, u, 10*time.Second, "connected", connected)
	if got := outcomeOfLine(t, first.call(t, 2, "tools/call", `{"name":"pid","arguments":{}}`)); got.text != fmt.Sprint(st.PID) {
		t.Fatalf("pid tool = %q, status pid %d", got.text, st.PID)
	}

	var chans []<-chan []byte
	for i, c := range clients {
		for j := range perSession {
			chans = append(chans, c.start(1000+j, "tools/call", fmt.Sprintf(`{"name":"sleep_ms","arguments":{"ms":60000,"n":"%d/%d"}}`, i, j)))
		}
	}
	eventually(t, 20*time.Second, "1,000 calls in flight", func() bool {
		_, started := h.inflightCalls()
		return started == len(chans)
	})

	killed := time.Now()
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	answered, clear := 0, 0
	var slowest time.Duration
	timeout := time.After(20 * time.Second) // well within the calls' timeout
	for i, ch := range chans {
		select {
		case line := <-ch:
			answered++
			slowest = max(slowest, time.Since(killed))
			o := outcomeOfLine(t, line)
			// The exit status, or (should the reaping lag) the end of stdout.
			if o.isError && strings.Contains(o.text, `upstream "a"`) &&
				(strings.Contains(o.text, "signal: killed") || strings.Contains(o.text, "closed its stdout")) {
				clear++
			} else if clear == answered-1 {
				t.Errorf("call %d: outcome %+v, want an error naming the upstream and its death", i, o)
			}
		case <-timeout:
			t.Fatalf("%d of %d calls answered within 20s of the kill", answered, len(chans))
		}
	}
	t.Logf("%d of %d calls answered, %d with a clear error, the last %s after the kill", answered, len(chans), clear, slowest.Round(time.Millisecond))
	if clear != len(chans) {
		t.Errorf("%d of %d answers are clear errors", clear, len(chans))
	}
	if n, _ := h.inflightCalls(); n != 0 {
		t.Errorf("%d calls still tracked", n)
	}

	back := waitStatus(t, u, 15*time.Second, "a new process", func(s upstream.Status) bool { return connected(s) && s.PID != st.PID })
	t.Logf("upstream back after %s (backoff initial 200ms, max 1s)", time.Since(killed).Round(time.Millisecond))
	if testbin.Alive(st.PID) || slices.Contains(testbin.Zombies(os.Getpid()), st.PID) {
		t.Errorf("killed upstream %d not reaped", st.PID)
	}

	// Calls after that succeed, from every session.
	var after []<-chan []byte
	for _, c := range clients {
		for j := range 10 {
			after = append(after, c.start(5000+j, "tools/call", `{"name":"pid","arguments":{}}`))
		}
	}
	for _, ch := range after {
		select {
		case line := <-ch:
			if o := outcomeOfLine(t, line); o.isError || o.text != fmt.Sprint(back.PID) {
				t.Errorf("call after the restart: %+v, want the new pid %d", o, back.PID)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a call after the restart was not answered")
		}
	}
}

// TestD8NeverAnswersInitialize: an upstream that never answers initialize
// does not hold up the hub's own initialize; its attempts time out and are
// retried with backoff, MaxAttempts times, then it stays FAILED while the
// other upstream serves.
func TestD8NeverAnswersInitialize(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	opts := &Options{Upstream: upstream.Options{
		InitTimeout:   time.Second,
		ShutdownGrace: 200 * time.Millisecond,
		Backoff:       upstream.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, MaxAttempts: 3},
	}}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	for _, s := range []upstream.Spec{fixtureSpec("hang", "-hang-initialize", "-events", events), fixtureSpec("ok", "-only", "echo")} {
		if err := h.AddUpstream(s, upstream.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hang := upstreamOf(t, h, "hang")
	began := time.Now()
	c := stdioClient(t, h) // initializes
	initTook := time.Since(began)
	st := hang.Status()
	t.Logf("hub initialize answered after %s; the hanging upstream then: %s, %d failed attempts", initTook.Round(time.Millisecond), st.State, st.Attempts)
	if st.Attempts != 0 || (st.State != upstream.StateConnecting && st.State != upstream.StatePending) {
		t.Errorf("the hub's initialize waited for the hanging upstream: its status then was %+v", st)
	}

	if got := string(c.call(t, 2, "tools/list", `{}`)); !strings.Contains(got, `"name":"echo"`) {
		t.Errorf("tools/list = %s, want the other upstream's echo", got)
	}
	st = waitStatus(t, hang, 20*time.Second, "giving up", func(s upstream.Status) bool {
		return s.State == upstream.StateFailed && s.Attempts == 3 && s.NextRetry.IsZero()
	})
	if !strings.Contains(st.LastError, "no answer within 1s") {
		t.Errorf("last error %q, want the initialize timeout", st.LastError)
	}
	time.Sleep(300 * time.Millisecond)
	starts := eventsOf(readEvents(t, events), "start")
	if len(starts) != 3 {
		t.Fatalf("%d spawns, want 3 (MaxAttempts)", len(starts))
	}
	var gaps []string
	for i := 1; i < len(starts); i++ {
		gap := starts[i].at.Sub(starts[i-1].at)
		// Each retry waits for the init timeout (1s), then the backoff
		// delay; the events' timestamps lag the spawns by the fixtures'
		// start-up times, hence the margin.
		if gap < 500*time.Millisecond {
			t.Errorf("spawn %d came %s after the previous; the init timeout is 1s", i+1, gap)
		}
		gaps = append(gaps, gap.Round(time.Millisecond).String())
		if testbin.Alive(starts[i-1].pid) {
			t.Errorf("timed-out upstream %d still alive", starts[i-1].pid)
		}
	}
	t.Logf("3 attempts, spawns %s apart; last error %q", strings.Join(gaps, ", "), st.LastError)
	// The hub still serves.
	if o := outcomeOfLine(t, c.call(t, 3, "tools/call", `{"name":"echo","arguments":{"x":1}}`)); o.isError {
		t.Errorf("echo = %+v", o)
	}
}

// TestD9NeverAnswersACall: a call the upstream never answers ends at the
// call timeout with a clear error, the upstream is told with
// notifications/cancelled (the fixture's sleep_ms sees its context
// cancelled while the process and session live on), and progress does not
// extend the timeout.
func TestD9NeverAnswersACall(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	opts := &Options{Upstream: upstream.Options{CallTimeout: 800 * time.Millisecond}}
	h, c := startHub(t, opts, fixtureSpec("slow", "-only", "sleep_ms,progress,echo", "-events", events))
	u := upstreamOf(t, h, "slow")
	st := waitStatus(t, u, 10*time.Second, "connected", connected)

	began := time.Now()
	o := outcomeOfLine(t, c.call(t, 2, "tools/call", `{"name":"sleep_ms","arguments":{"ms":600000}}`))
	took := time.Since(began)
	t.Logf("never-answered call: %q after %s", o.text, took.Round(time.Millisecond))
	if !o.isError || !strings.Contains(o.text, `upstream "slow" did not answer`) || !strings.Contains(o.text, "timed out after 800ms") {
		t.Errorf("outcome %+v, want a timeout error naming the upstream", o)
	}
	if took < 800*time.Millisecond {
		t.Errorf("answered after %s, before the call timeout", took)
	}
	eventually(t, 10*time.Second, "the upstream to see the cancellation", func() bool {
		return len(eventsOf(readEvents(t, events), "cancelled")) == 1
	})
	if ev := eventsOf(readEvents(t, events), "cancelled"); ev[0].pid != st.PID {
		t.Errorf("cancelled in process %d, want the upstream %d", ev[0].pid, st.PID)
	}
	if now := u.Status(); !connected(now) || now.PID != st.PID {
		t.Errorf("status after the timeout %+v: want the same process, connected", now)
	}

	// Progress every 5ms does not reset the timeout.
	began = time.Now()
	o = outcomeOfLine(t, c.call(t, 3, "tools/call", `{"name":"progress","arguments":{"steps":1000000,"delay_ms":5},"_meta":{"progressToken":"tok"}}`))
	took = time.Since(began)
	progress := 0
	for len(c.notes) > 0 {
		if strings.Contains(string(<-c.notes), `"progressToken":"tok"`) {
			progress++
		}
	}
	t.Logf("endless progress: %q after %s and %d progress notifications", o.text, took.Round(time.Millisecond), progress)
	if !o.isError || !strings.Contains(o.text, "timed out") {
		t.Errorf("outcome %+v, want a timeout", o)
	}
	if progress == 0 {
		t.Error("no progress reached the client before the timeout")
	}
	if o := outcomeOfLine(t, c.call(t, 4, "tools/call", `{"name":"echo","arguments":{}}`)); o.isError {
		t.Errorf("echo after the timeouts = %+v", o)
	}
}

// TestD10CrashMidCall: the upstream exits (code 3) while calls are in
// flight: every caller gets an error, the process is reaped (no zombie),
// the upstream is CRASHED with its exit status and comes back after the
// backoff.
func TestD10CrashMidCall(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	opts := &Options{Upstream: upstream.Options{
		Backoff: upstream.Backoff{Initial: 300 * time.Millisecond, Max: time.Second, MaxAttempts: 5},
	}}
	h, c := startHub(t, opts, fixtureSpec("c", "-only", "crash,sleep_ms,pid", "-events", events))
	u := upstreamOf(t, h, "c")
	st := waitStatus(t, u, 10*time.Second, "connected", connected)

	var chans []<-chan []byte
	for i := range 5 {
		chans = append(chans, c.start(10+i, "tools/call", `{"name":"sleep_ms","arguments":{"ms":60000}}`))
	}
	eventually(t, 10*time.Second, "5 calls in flight", func() bool {
		_, started := h.inflightCalls()
		return started == 5
	})
	chans = append(chans, c.start(20, "tools/call", `{"name":"crash","arguments":{}}`))
	crashed := time.Now()
	for i, ch := range chans {
		select {
		case line := <-ch:
			if o := outcomeOfLine(t, line); !o.isError || !strings.Contains(o.text, "exit status 3") {
				t.Errorf("call %d: %+v, want an error with the exit status", i, o)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("call %d not answered", i)
		}
	}
	cr := waitStatus(t, u, 10*time.Second, "CRASHED", func(s upstream.Status) bool {
		return s.State == upstream.StateCrashed || s.PID != st.PID && connected(s)
	})
	if cr.State == upstream.StateCrashed {
		if !strings.Contains(cr.LastError, "exit status 3") || cr.NextRetry.IsZero() {
			t.Errorf("crashed status %+v: want the exit status and a retry scheduled", cr)
		}
	} else {
		t.Logf("the CRASHED state was too short to observe")
	}
	back := waitStatus(t, u, 15*time.Second, "a new process", func(s upstream.Status) bool { return connected(s) && s.PID != st.PID })
	t.Logf("restarted after %s: %s", time.Since(crashed).Round(time.Millisecond), cr.LastError)
	if testbin.Alive(st.PID) {
		t.Errorf("crashed process %d alive", st.PID)
	}
	if z := testbin.Zombies(os.Getpid()); len(z) > 0 {
		t.Errorf("zombie children %v", z)
	}
	// The restart waited for the backoff (300ms ±25%).
	starts := eventsOf(readEvents(t, events), "start")
	if len(starts) != 2 {
		t.Fatalf("%d spawns, want 2", len(starts))
	}
	if gap := starts[1].at.Sub(crashed); gap < 200*time.Millisecond {
		t.Errorf("restarted %s after the crash, sooner than the backoff", gap)
	}
	if o := outcomeOfLine(t, c.call(t, 30, "tools/call", `{"name":"pid","arguments":{}}`)); o.text != fmt.Sprint(back.PID) {
		t.Errorf("pid after the restart = %+v, want %d", o, back.PID)
	}
}

// TestE7ColdStart: 20 upstreams that each take a second to start: the hub
// answers initialize before any of them is up, at most 4 spawn at once
// (the default cap), and all are connected after about 5 rounds.
func TestE7ColdStart(t *testing.T) {
	const n, slow = 20, time.Second
	events := filepath.Join(t.TempDir(), "events")
	h, err := New(&Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	began := time.Now()
	for i := range n {
		spec := fixtureSpec(fmt.Sprintf("u%02d", i), "-only", "pid", "-extra", fmt.Sprintf("t%02d", i), "-slow-start", slow.String(), "-events", events)
		if err := h.AddUpstream(spec, upstream.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := stdioClient(t, h)
	initTook := time.Since(began)
	up := 0
	for _, u := range h.Manager().List() {
		if connected(u.Status()) {
			up++
		}
	}
	t.Logf("initialize answered %s after the upstreams were added, with %d of %d connected", initTook.Round(time.Millisecond), up, n)
	if up > 0 {
		t.Errorf("initialize waited for %d upstreams", up)
	}
	eventually(t, 60*time.Second, "all upstreams connected", func() bool {
		for _, u := range h.Manager().List() {
			if !connected(u.Status()) {
				return false
			}
		}
		return true
	})
	all := time.Since(began)

	// Overlap of the start-up phases [start, ready], each inside the
	// spawn slot its process was started in.
	ev := readEvents(t, events)
	type span struct{ from, to time.Time }
	spans := map[int]*span{}
	for _, e := range ev {
		if spans[e.pid] == nil {
			spans[e.pid] = &span{}
		}
		switch e.kind {
		case "start":
			spans[e.pid].from = e.at
		case "ready":
			spans[e.pid].to = e.at
		}
	}
	if len(spans) != n {
		t.Fatalf("%d processes started, want %d", len(spans), n)
	}
	peak := 0
	for _, s := range spans {
		at := 0
		for _, o := range spans {
			if !o.from.After(s.from) && o.to.After(s.from) {
				at++
			}
		}
		peak = max(peak, at)
	}
	t.Logf("all %d connected after %s (one start takes %s); at most %d starting at once", n, all.Round(time.Millisecond), slow, peak)
	if peak > 4 {
		t.Errorf("%d upstreams started at once, want at most 4", peak)
	}
	if peak < 2 {
		t.Errorf("at most %d upstream started at a time: the starts did not overlap", peak)
	}
	if all < 5*slow {
		t.Errorf("all connected after %s, sooner than 5 rounds of 4", all)
	}
	list := string(c.call(t, 2, "tools/list", `{}`))
	for i := range n {
		if !strings.Contains(list, fmt.Sprintf(`"name":"t%02d"`, i)) {
			t.Errorf("tools/list lacks t%02d", i)
		}
	}
}
