package upstream

// Chaos and fault tests (issue 5; security plan §7, D- and E-series) at the
// level of the upstream manager, against real fixture processes.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// rss returns the resident set size of this process in bytes.
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// heapBytes returns the bytes of heap objects, live or not yet swept.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// memPeak samples this process's heap and RSS until the returned stop is
// called, which returns the growth of each over the value at the start
// (the race detector's shadow memory inflates RSS; the heap is what the
// code under test holds).
func memPeak(t *testing.T) (stop func() (heap, rssGrowth int64)) {
	t.Helper()
	runtime.GC()
	heap0, rss0 := heapBytes(), rss(t)
	done := make(chan struct{})
	result := make(chan [2]int64, 1)
	go func() {
		var peak [2]int64
		sample := func() {
			peak[0] = max(peak[0], heapBytes()-heap0)
			peak[1] = max(peak[1], rss(t)-rss0)
		}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				sample()
				result <- peak
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return func() (int64, int64) {
		close(done)
		p := <-result
		return p[0], p[1]
	}
}

// fixtureEvent is one line of a fixture's -events file.
type fixtureEvent struct {
	kind string
	pid  int
	at   time.Time
}

// readEvents parses a fixture -events file (missing: none).
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

func countEvents(events []fixtureEvent, kind string) int {
	n := 0
	for _, e := range events {
		if e.kind == kind {
			n++
		}
	}
	return n
}

// TestD5HugeAndEndlessLines: a 200 MB single-line result fails that call
// with "too large" while the hub's memory stays bounded (the line is
// drained, never buffered) and other calls keep working; an endless line
// without a newline fails its call at once, and the upstream is restarted
// once the line has run past the drain limit.
func TestD5HugeAndEndlessLines(t *testing.T) {
	opts := fastOptions(t)
	opts.Logger = nil // one record per oversize line; keep the test log short
	m := newManager(t, opts)
	u, _ := m.Add(stdioSpec("big", "-only", "long_line,echo"), AddOptions{})
	other, _ := m.Add(stdioSpec("other", "-only", "echo"), AddOptions{})
	// A second manager with a 1 MiB cap, so an endless line reaches the
	// drain limit (64 × the cap) in 64 MiB rather than 1 GiB.
	small := *fastOptions(t)
	small.Logger = nil
	small.MaxMessageBytes = 1 << 20
	endless, _ := newManager(t, &small).Add(stdioSpec("endless", "-only", "long_line,pid"), AddOptions{})
	for _, x := range []*Upstream{u, other, endless} {
		waitState(t, x, 10*time.Second, StateConnected)
	}

	// Calls to another upstream keep being answered while lines drain.
	stopOthers := make(chan struct{})
	othersDone := make(chan int)
	go func() {
		n := 0
		defer func() { othersDone <- n }()
		for {
			select {
			case <-stopOthers:
				return
			case <-time.After(2 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r, err := other.Call(ctx, "tools/call", []byte(`{"name":"echo","arguments":{"n":1}}`))
			cancel()
			if err != nil || r.Error != nil {
				t.Errorf("echo on another upstream during the drain: %v %s", err, r.Error)
				return
			}
			n++
		}
	}()
	defer func() {
		close(stopOthers)
		n := <-othersDone
		t.Logf("%d calls to another upstream answered meanwhile", n)
		if n == 0 {
			t.Error("no call to another upstream was answered during the drains")
		}
	}()

	t.Run("200 MB line", func(t *testing.T) {
		stop := memPeak(t)
		start := time.Now()
		_, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"long_line","arguments":{"mib":200}}`))
		failed := time.Since(start)
		// The next call's answer comes after the rest of the line.
		got := callText(t, u, "echo", `{"after":1}`)
		drained := time.Since(start)
		heap, rssUp := stop()
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "exceeds the message size limit") {
			t.Fatalf("200 MB line: err = %v, want ErrTooLarge", err)
		}
		if !strings.Contains(got, `\"after\":1`) {
			t.Errorf("echo after the 200 MB line = %s", got)
		}
		t.Logf("200 MB line: call failed after %s (%v), line drained after %s; heap +%d MiB, RSS +%d MiB",
			failed.Round(time.Millisecond), err, drained.Round(time.Millisecond), heap>>20, rssUp>>20)
		// The cap is 16 MiB; a buffered line would add 200 MB and more.
		if heap > 100<<20 {
			t.Errorf("heap grew by %d MiB while a 200 MB line was drained", heap>>20)
		}
		if st := u.Status(); st.State != StateConnected {
			t.Errorf("state %s after the oversize line, want CONNECTED", st.State)
		}
	})

	t.Run("endless line", func(t *testing.T) {
		pid := endless.Status().PID
		stop := memPeak(t)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := endless.Call(ctx, "tools/call", []byte(`{"name":"long_line","arguments":{"endless":true}}`))
		failed := time.Since(start)
		if !errors.Is(err, ErrTooLarge) {
			stop()
			t.Fatalf("endless line: err = %v after %s, want ErrTooLarge", err, failed)
		}
		// Nothing can ever be read after that line: once it passes the
		// drain limit the upstream is restarted.
		deadline := time.Now().Add(30 * time.Second)
		for {
			st := endless.Status()
			if st.State == StateConnected && st.PID != pid {
				break
			}
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("status %+v: want a new process after the endless line", st)
			}
			time.Sleep(10 * time.Millisecond)
		}
		heap, rssUp := stop()
		st := endless.Status()
		t.Logf("endless line: call failed after %s (%v); new process after %s; heap +%d MiB, RSS +%d MiB",
			failed.Round(time.Millisecond), err, time.Since(start).Round(time.Millisecond), heap>>20, rssUp>>20)
		if heap > 100<<20 {
			t.Errorf("heap grew by %d MiB while an endless line was drained", heap>>20)
		}
		if testbin.Alive(pid) {
			t.Errorf("the process that wrote the endless line (%d) is still alive", pid)
		}
		if got := callText(t, endless, "pid", `{}`); !strings.Contains(got, fmt.Sprint(st.PID)) {
			t.Errorf("pid after restart = %s, want %d", got, st.PID)
		}
	})
}

// TestCrashLoopBackoff: an upstream that exits at once is retried with
// growing delays, MaxAttempts times in all, then stays FAILED; callers
// hammering it meanwhile cannot turn it into a spawn storm (on-demand
// attempts come at most once per onDemandGap).
func TestCrashLoopBackoff(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	opts := fastOptions(t)
	opts.Backoff = Backoff{Initial: 100 * time.Millisecond, Multiplier: 2, Max: 5 * time.Second, Jitter: 0.25, MaxAttempts: 5}
	var (
		mu     sync.Mutex
		delays = map[int]time.Duration{} // by attempt: the delay the supervisor chose
	)
	var m *Manager
	opts.OnChange = func(name string) {
		u, ok := m.Get(name)
		if !ok {
			return
		}
		if st := u.Status(); st.State == StateFailed && !st.NextRetry.IsZero() {
			mu.Lock()
			if _, seen := delays[st.Attempts]; !seen {
				delays[st.Attempts] = st.NextRetry.Sub(st.Since)
			}
			mu.Unlock()
		}
	}
	m = newManager(t, opts)
	start := time.Now()
	u, _ := m.Add(stdioSpec("loop", "-events", events, "-exit-immediately"), AddOptions{})
	eventually(t, 20*time.Second, "the upstream to give up", func() bool {
		st := u.Status()
		return st.State == StateFailed && st.Attempts == 5 && st.NextRetry.IsZero()
	})
	gaveUp := time.Since(start)
	// No retry after giving up.
	time.Sleep(500 * time.Millisecond)
	ev := readEvents(t, events)
	if n := countEvents(ev, "start"); n != 5 {
		t.Fatalf("%d spawns, want exactly MaxAttempts = 5", n)
	}
	mu.Lock()
	var gaps []string
	for i := 1; i < 5; i++ {
		d := delays[i]
		if i > 1 && d <= delays[i-1] {
			t.Errorf("delay before attempt %d is %s, not longer than the previous %s", i+1, d, delays[i-1])
		}
		// The next spawn comes no sooner than the chosen delay.
		if gap := ev[i].at.Sub(ev[i-1].at); gap < d-10*time.Millisecond {
			t.Errorf("spawn %d came %s after spawn %d; the backoff delay was %s", i+1, gap, i, d)
		} else {
			gaps = append(gaps, fmt.Sprintf("%s (delay %s)", gap.Round(time.Millisecond), d.Round(time.Millisecond)))
		}
	}
	mu.Unlock()
	t.Logf("gave up after %s and 5 spawns; gaps between spawns: %s", gaveUp.Round(time.Millisecond), strings.Join(gaps, ", "))

	// Eight callers hammer the dead upstream.
	stop := make(chan struct{})
	var calls sync.WaitGroup
	var nCalls, nOK int64
	var cmu sync.Mutex
	hammerStart := time.Now()
	for range 8 {
		calls.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				began := time.Now()
				_, err := u.Call(ctx, "tools/call", []byte(`{"name":"echo","arguments":{}}`))
				cancel()
				var nr *NotReadyError
				cmu.Lock()
				nCalls++
				if err == nil {
					nOK++
				}
				cmu.Unlock()
				if err != nil && !errors.As(err, &nr) {
					t.Errorf("call to a crash-looping upstream: %v, want a NotReadyError", err)
					return
				}
				if d := time.Since(began); d > 4*time.Second {
					t.Errorf("call took %s", d)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(2 * time.Second)
	close(stop)
	calls.Wait()
	hammered := time.Since(hammerStart)
	spawns := countEvents(readEvents(t, events), "start") - 5
	t.Logf("%d calls in %s while FAILED caused %d on-demand spawns", nCalls, hammered.Round(time.Millisecond), spawns)
	if nOK > 0 {
		t.Errorf("%d calls to an upstream that cannot start succeeded", nOK)
	}
	if limit := int(hammered/onDemandGap) + 1; spawns > limit {
		t.Errorf("%d spawns in %s of hammering, want at most %d (one per %s)", spawns, hammered, limit, onDemandGap)
	}
	if spawns == 0 {
		t.Error("no on-demand attempt at all: a call to a FAILED upstream should try once")
	}
}

// countFDs returns the number of open file descriptors of this process.
func countFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// resources is what a leak would grow.
type resources struct {
	goroutines, fds int
	children        []int
}

func (r resources) String() string {
	return fmt.Sprintf("%d goroutines, %d fds, children %v", r.goroutines, r.fds, r.children)
}

func measure(t *testing.T) resources {
	return resources{runtime.NumGoroutine(), countFDs(t), testbin.Children(os.Getpid())}
}

// settleTo waits until goroutines and fds are back to at most base and the
// child processes are exactly want; it fails the test with the last
// measurement otherwise.
func settleTo(t *testing.T, what string, base resources, want []int) resources {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		now := measure(t)
		if now.goroutines <= base.goroutines && now.fds <= base.fds && slices.Equal(slices.Sorted(slices.Values(now.children)), slices.Sorted(slices.Values(want))) {
			return now
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: %s, want at most %d goroutines, %d fds and children %v\n%s",
				what, now, base.goroutines, base.fds, want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestE6RestartCycles: 50 restart cycles (admin restarts and crashes, one
// after the other) leave goroutines, open fds and child processes where
// they were; removing the upstream brings them back to before it was added.
func TestE6RestartCycles(t *testing.T) {
	opts := fastOptions(t)
	opts.Logger = nil
	opts.Backoff = Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond, MaxAttempts: -1}
	m := newManager(t, opts)
	runtime.GC()
	empty := settleTo(t, "before the upstream", measure(t), nil)

	u, _ := m.Add(stdioSpec("cycle", "-only", "crash,echo"), AddOptions{})
	st := waitState(t, u, 10*time.Second, StateConnected)
	callText(t, u, "echo", `{}`)
	time.Sleep(200 * time.Millisecond) // let the first connection's start-up goroutines finish
	base := measure(t)
	if !slices.Equal(base.children, []int{st.PID}) {
		t.Fatalf("children %v, want just the upstream %d", base.children, st.PID)
	}
	t.Logf("baseline: before the upstream %s; connected %s", empty, base)

	start := time.Now()
	var pids []int
	for i := range 50 {
		pid := u.Status().PID
		pids = append(pids, pid)
		if i%2 == 0 {
			if err := m.Restart("cycle"); err != nil {
				t.Fatal(err)
			}
		} else {
			_, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"crash","arguments":{}}`))
			if !errors.Is(err, ErrExited) {
				t.Fatalf("cycle %d: crash: err = %v, want ErrExited", i, err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for st = u.Status(); st.State != StateConnected || st.PID == pid; st = u.Status() {
			if time.Now().After(deadline) {
				t.Fatalf("cycle %d: status %+v, want connected to a new process", i, st)
			}
			time.Sleep(2 * time.Millisecond)
		}
		callText(t, u, "echo", `{}`)
	}
	t.Logf("50 cycles in %s", time.Since(start).Round(time.Millisecond))

	after := settleTo(t, "after 50 cycles", base, []int{u.Status().PID})
	if alive := testbin.WaitGone(5*time.Second, pids...); len(alive) > 0 {
		t.Errorf("old upstream processes %v still alive", alive)
	}
	if z := testbin.Zombies(os.Getpid()); len(z) > 0 {
		t.Errorf("zombies %v", z)
	}
	if err := m.Remove("cycle"); err != nil {
		t.Fatal(err)
	}
	gone := settleTo(t, "after removing the upstream", empty, nil)
	t.Logf("after 50 cycles: %s; after remove: %s", after, gone)
}
