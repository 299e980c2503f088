package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/internal/wire"
)

var fixture string // path of the fixture MCP server binary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "upstream-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixture, err = testbin.Build(dir, "./testdata/fixture")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// As the hub does: orphans of upstreams are re-parented to this process.
	if err := Supervise(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testLogger sends records to the test log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// fastOptions are manager options with short timeouts for tests.
func fastOptions(t *testing.T) *Options {
	return &Options{
		Logger:        testLogger(t),
		InitTimeout:   10 * time.Second,
		ShutdownGrace: 500 * time.Millisecond,
		Backoff:       Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond, MaxAttempts: 3},
	}
}

func newManager(t *testing.T, opts *Options) *Manager {
	m := NewManager(opts)
	t.Cleanup(m.Close)
	return m
}

// waitState waits until the upstream reaches one of the states.
func waitState(t *testing.T, u *Upstream, d time.Duration, states ...State) Status {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		u.mu.Lock()
		st, ch := u.status, u.changed
		u.mu.Unlock()
		for _, s := range states {
			if st.State == s {
				return st
			}
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("upstream %s: state %s (last error %q), want one of %v", u.Name(), st.State, st.LastError, states)
		}
	}
}

func stdioSpec(name string, args ...string) Spec {
	return Spec{Name: name, Command: fixture, Args: args}
}

func callText(t *testing.T, u *Upstream, tool, args string) string {
	t.Helper()
	r, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"`+tool+`","arguments":`+args+`}`))
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if r.Error != nil {
		t.Fatalf("call %s: error %s", tool, r.Error)
	}
	return string(r.Result)
}

func TestStdioConnectListCall(t *testing.T) {
	m := newManager(t, fastOptions(t))
	u, err := m.Add(stdioSpec("fx", "-only", "echo,add,pid"), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := waitState(t, u, 10*time.Second, StateConnected)
	if st.Tools != 3 || st.PID == 0 || st.ServerName != "fixture" || st.ProtocolVersion != DefaultProtocolVersion {
		t.Errorf("status = %+v, want 3 tools, a pid, server fixture, protocol %s", st, DefaultProtocolVersion)
	}
	got := callText(t, u, "echo", `{"message":"héllo \"x\""}`)
	if !strings.Contains(got, `{\"message\":\"héllo \\\"x\\\"\"}`) {
		t.Errorf("echo result %s does not carry the arguments verbatim", got)
	}
	if got := callText(t, u, "pid", `{}`); !strings.Contains(got, fmt.Sprint(st.PID)) {
		t.Errorf("pid result %s, want pid %d", got, st.PID)
	}
}

func TestHTTPTransports(t *testing.T) {
	for _, tr := range []Transport{TransportHTTP, TransportSSE} {
		t.Run(string(tr), func(t *testing.T) {
			url := startHTTPFixture(t, string(tr), "-only", "echo,add")
			m := newManager(t, fastOptions(t))
			u, err := m.Add(Spec{Name: "web", URL: url, Headers: map[string]string{"X-Test": "1"}}, AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := u.Spec().Transport; got != tr {
				t.Errorf("inferred transport %s, want %s", got, tr)
			}
			st := waitState(t, u, 10*time.Second, StateConnected)
			if st.Tools != 2 {
				t.Errorf("tools = %d, want 2", st.Tools)
			}
			if got := callText(t, u, "add", `{"a":2,"b":3}`); !strings.Contains(got, `"sum":5`) {
				t.Errorf("add result %s, want sum 5", got)
			}
			// Concurrent calls share the connection.
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Go(func() {
					got := callText(t, u, "echo", fmt.Sprintf(`{"message":"m%d"}`, i))
					if !strings.Contains(got, fmt.Sprintf("m%d", i)) {
						t.Errorf("echo %d got %s", i, got)
					}
				})
			}
			wg.Wait()
		})
	}
}

// startHTTPFixture runs the fixture as an HTTP server and returns its
// endpoint URL.
func startHTTPFixture(t testing.TB, transport string, args ...string) string {
	t.Helper()
	return testbin.Listen(t, testWriter{t}, fixture, append([]string{"-transport", transport}, args...)...)
}

func TestStateTransitions(t *testing.T) {
	t.Run("exits at once", func(t *testing.T) {
		m := newManager(t, fastOptions(t))
		u, _ := m.Add(stdioSpec("dies", "-exit-immediately"), AddOptions{})
		st := waitState(t, u, 10*time.Second, StateFailed)
		if !strings.Contains(st.LastError, "exit status 1") {
			t.Errorf("last error %q, want the exit status", st.LastError)
		}
		if !strings.Contains(strings.Join(u.StderrTail(), "\n"), "fatal: fixture told to exit") {
			t.Errorf("stderr tail %q lacks the fixture's message", u.StderrTail())
		}
		// Attempts are bounded: after MaxAttempts it stays FAILED with no retry.
		deadline := time.Now().Add(5 * time.Second)
		for {
			st = u.Status()
			if st.Attempts >= 3 && st.NextRetry.IsZero() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("status %+v: want 3 attempts and no retry scheduled", st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("command not found", func(t *testing.T) {
		m := newManager(t, fastOptions(t))
		u, _ := m.Add(Spec{Name: "nope", Command: "/nonexistent/mcp-server"}, AddOptions{})
		st := waitState(t, u, 10*time.Second, StateFailed)
		if !strings.Contains(st.LastError, "no such file") {
			t.Errorf("last error %q, want no such file", st.LastError)
		}
	})
	t.Run("crash then restart", func(t *testing.T) {
		m := newManager(t, fastOptions(t))
		u, _ := m.Add(stdioSpec("crashy", "-only", "crash,pid"), AddOptions{})
		st := waitState(t, u, 10*time.Second, StateConnected)
		pid1 := st.PID
		_, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"crash","arguments":{}}`))
		if !errors.Is(err, ErrExited) {
			t.Errorf("call crash: err = %v, want ErrExited", err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			st = u.Status()
			if st.State == StateConnected && st.PID != pid1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("status %+v: want a new process after the crash", st)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if testbin.Alive(pid1) {
			t.Errorf("crashed child %d still alive", pid1)
		}
	})
	t.Run("disabled and manual disconnect", func(t *testing.T) {
		m := newManager(t, fastOptions(t))
		u, _ := m.Add(stdioSpec("d", "-only", "echo"), AddOptions{Disabled: true})
		waitState(t, u, time.Second, StateDisabled)
		if _, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"echo"}`)); err == nil {
			t.Error("call on a disabled upstream succeeded")
		}
		if err := m.SetEnabled("d", true); err != nil {
			t.Fatal(err)
		}
		st := waitState(t, u, 10*time.Second, StateConnected)
		if err := m.Disconnect("d"); err != nil {
			t.Fatal(err)
		}
		waitState(t, u, 5*time.Second, StateDisconnected)
		if testbin.Alive(st.PID) {
			t.Errorf("child %d alive after disconnect", st.PID)
		}
		var nr *NotReadyError
		if _, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"echo"}`)); !errors.As(err, &nr) {
			t.Errorf("call after manual disconnect: err = %v, want NotReadyError", err)
		}
		_ = m.Connect("d")
		waitState(t, u, 10*time.Second, StateConnected)
	})
	t.Run("on-demand reconnect after giving up", func(t *testing.T) {
		flag := filepath.Join(t.TempDir(), "fail")
		if err := os.WriteFile(flag, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		m := newManager(t, fastOptions(t))
		u, _ := m.Add(stdioSpec("later", "-fail-if-exists", flag, "-only", "echo"), AddOptions{})
		deadline := time.Now().Add(10 * time.Second)
		for u.Status().Attempts < 3 || !u.Status().NextRetry.IsZero() {
			if time.Now().After(deadline) {
				t.Fatalf("status %+v, want it to give up", u.Status())
			}
			time.Sleep(20 * time.Millisecond)
		}
		os.Remove(flag)
		time.Sleep(onDemandGap)
		// Concurrent callers share the one on-demand attempt.
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() { callText(t, u, "echo", `{}`) })
		}
		wg.Wait()
	})
}

func TestInitializeTimeout(t *testing.T) {
	opts := fastOptions(t)
	opts.InitTimeout = 300 * time.Millisecond
	opts.Backoff.MaxAttempts = 1
	m := newManager(t, opts)
	u, _ := m.Add(stdioSpec("hang", "-hang-initialize"), AddOptions{})
	st := waitState(t, u, 10*time.Second, StateFailed)
	if !strings.Contains(st.LastError, "no answer within 300ms") {
		t.Errorf("last error %q, want the initialize timeout", st.LastError)
	}
}

func TestGrandchildGoneAfterRemove(t *testing.T) {
	dir := t.TempDir()
	gpid := filepath.Join(dir, "grandchild.pid")
	m := newManager(t, fastOptions(t))
	u, _ := m.Add(stdioSpec("tree", "-grandchild", gpid, "-only", "echo"), AddOptions{})
	st := waitState(t, u, 10*time.Second, StateConnected)
	g, err := testbin.ReadPID(gpid, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !testbin.Alive(g) {
		t.Fatalf("grandchild %d not running", g)
	}
	if err := m.Remove("tree"); err != nil {
		t.Fatal(err)
	}
	if alive := testbin.WaitGone(10*time.Second, st.PID, g); len(alive) > 0 {
		t.Errorf("processes %v alive after remove", alive)
	}
}

func TestIgnoresSIGTERM(t *testing.T) {
	opts := fastOptions(t)
	opts.ShutdownGrace = 200 * time.Millisecond
	m := newManager(t, opts)
	u, _ := m.Add(stdioSpec("stubborn", "-ignore-sigterm", "-only", "echo"), AddOptions{})
	st := waitState(t, u, 10*time.Second, StateConnected)
	start := time.Now()
	if err := m.Remove("stubborn"); err != nil {
		t.Fatal(err)
	}
	if alive := testbin.WaitGone(5*time.Second, st.PID); len(alive) > 0 {
		t.Fatalf("child %d survived SIGKILL", st.PID)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("remove took %s", d)
	}
}

func TestListChangedRelists(t *testing.T) {
	m := newManager(t, fastOptions(t))
	u, _ := m.Add(stdioSpec("dyn", "-only", "add_tool,echo"), AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	v := u.Inventory().Version
	callText(t, u, "add_tool", `{"name":"fresh"}`)
	deadline := time.Now().Add(5 * time.Second)
	for {
		inv := u.Inventory()
		if inv.Version > v && len(inv.Tools) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("inventory version %d with %d tools, want a re-list with 3", inv.Version, len(inv.Tools))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPagination(t *testing.T) {
	m := newManager(t, fastOptions(t))
	u, _ := m.Add(stdioSpec("pages", "-only", "echo", "-dummy", "9", "-page-size", "2"), AddOptions{})
	st := waitState(t, u, 10*time.Second, StateConnected)
	if st.Tools != 10 {
		t.Errorf("tools = %d, want 10 over 5 pages", st.Tools)
	}
}

func TestGarbageOnStdout(t *testing.T) {
	m := newManager(t, fastOptions(t))
	u, _ := m.Add(stdioSpec("noisy", "-garbage", "-only", "echo,write_stdout_garbage"), AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	for i := range 5 {
		callText(t, u, "write_stdout_garbage", `{}`)
		if got := callText(t, u, "echo", fmt.Sprintf(`{"n":%d}`, i)); !strings.Contains(got, fmt.Sprintf(`\"n\":%d`, i)) {
			t.Errorf("echo %d = %s", i, got)
		}
	}
	if st := u.Status(); st.State != StateConnected {
		t.Errorf("state %s after garbage, want CONNECTED", st.State)
	}
}

func TestOversizeFailsOnlyThatCall(t *testing.T) {
	opts := fastOptions(t)
	opts.MaxMessageBytes = 1 << 20
	m := newManager(t, opts)
	u, _ := m.Add(stdioSpec("big", "-only", "huge,echo"), AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	_, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"huge","arguments":{"mib":2}}`))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("huge: err = %v, want ErrTooLarge", err)
	}
	callText(t, u, "echo", `{}`)
}

func TestCallTimeoutCancelsUpstream(t *testing.T) {
	opts := fastOptions(t)
	opts.CallTimeout = 200 * time.Millisecond
	m := newManager(t, opts)
	u, _ := m.Add(stdioSpec("slow", "-only", "sleep_ms,echo"), AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	start := time.Now()
	_, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"sleep_ms","arguments":{"ms":10000}}`))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timed out after %s", d)
	}
	callText(t, u, "echo", `{}`)
}

func TestEnvironment(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(secretFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := fastOptions(t)
	opts.Environ = func() []string { return []string{"PATH=" + os.Getenv("PATH"), "HUB_SECRET=s3cret", "LC_ALL=C"} }
	opts.LookupEnv = func(k string) (string, bool) {
		if k == "FROM_HUB" {
			return "via-hub", true
		}
		return "", false
	}
	m := newManager(t, opts)
	u, _ := m.Add(Spec{Name: "env", Command: fixture, Args: []string{"-only", "getenv"}, Env: map[string]string{
		"PLAIN": "p", "REF": "${FROM_HUB}", "FILE": "file:" + secretFile,
	}}, AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	for name, want := range map[string]string{"PLAIN": "p", "REF": "via-hub", "FILE": "from-file", "HUB_SECRET": `\u003cunset\u003e`, "LC_ALL": "C"} {
		if got := callText(t, u, "getenv", `{"name":"`+name+`"}`); !strings.Contains(got, `"text":"`+want+`"`) {
			t.Errorf("getenv %s = %s, want %q", name, got, want)
		}
	}

	missing := newManager(t, fastOptions(t))
	u2, _ := missing.Add(Spec{Name: "missing", Command: fixture, Env: map[string]string{"TOKEN": "${NOT_SET_ANYWHERE}"}}, AddOptions{})
	st := waitState(t, u2, 5*time.Second, StateFailed)
	if !strings.Contains(st.LastError, "NOT_SET_ANYWHERE") {
		t.Errorf("last error %q does not name the variable", st.LastError)
	}
}

func TestRawResultIsByteFaithful(t *testing.T) {
	m := newManager(t, fastOptions(t))
	u, _ := m.Add(stdioSpec("raw", "-only", "raw_result"), AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	payload := `{"content":[{"type":"video","uri":"x","futureField":{"z":1,"a":[true]}}],"zz":"last","isError":false,"_meta":{"io.example/k":"v"}}`
	r, err := u.Call(context.Background(), "tools/call", []byte(`{"name":"raw_result","arguments":{"json":`+string(wire.AppendString(nil, payload))+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Result) != payload {
		t.Errorf("result\n%s\nwant\n%s", r.Result, payload)
	}
}

func TestTryStartSettlesOnce(t *testing.T) {
	opts := fastOptions(t)
	opts.CallTimeout = 300 * time.Millisecond
	m := newManager(t, opts)
	u, _ := m.Add(stdioSpec("fast", "-only", "echo,sleep_ms,crash"), AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)

	type outcome struct {
		r   Reply
		err error
	}
	start := func(tool, args string) (chan outcome, func()) {
		t.Helper()
		ch := make(chan outcome, 2) // room for a (wrong) second settlement
		cancel, ok := u.TryStart("tools/call", []byte(`{"name":"`+tool+`","arguments":`+args+`}`), func(r Reply, err error) {
			ch <- outcome{r, err}
		})
		if !ok {
			t.Fatalf("TryStart %s: fast path refused on a connected upstream", tool)
		}
		return ch, cancel
	}
	once := func(ch chan outcome) outcome {
		t.Helper()
		select {
		case o := <-ch:
			select {
			case o2 := <-ch:
				t.Fatalf("settled twice: %+v then %+v", o, o2)
			case <-time.After(100 * time.Millisecond):
			}
			return o
		case <-time.After(10 * time.Second):
			t.Fatal("never settled")
			return outcome{}
		}
	}

	ch, _ := start("echo", `{"x":1}`)
	if o := once(ch); o.err != nil || !strings.Contains(string(o.r.Result), `\"x\":1`) {
		t.Errorf("reply: %+v", o)
	}
	ch, _ = start("sleep_ms", `{"ms":5000}`)
	if o := once(ch); !errors.Is(o.err, ErrTimeout) {
		t.Errorf("timeout: err = %v, want ErrTimeout", o.err)
	}
	ch, cancel := start("sleep_ms", `{"ms":5000}`)
	cancel()
	cancel() // twice is harmless
	if o := once(ch); !errors.Is(o.err, context.Canceled) {
		t.Errorf("cancel: err = %v, want context.Canceled", o.err)
	}
	ch, _ = start("crash", `{}`)
	if o := once(ch); !errors.Is(o.err, ErrExited) {
		t.Errorf("crash: err = %v, want ErrExited", o.err)
	}
	if n := len(u.inflight); n != 0 {
		t.Errorf("%d in-flight slots still taken", n)
	}
}

// TestIdleTimeout: a stdio upstream unused for its idle timeout is stopped
// (its process gone, its inventory kept) and the next call starts it again;
// a call in flight keeps it up.
func TestIdleTimeout(t *testing.T) {
	m := newManager(t, fastOptions(t))
	spec := stdioSpec("fx", "-only", "pid,sleep_ms")
	spec.IdleTimeout = Duration(300 * time.Millisecond)
	u, _ := m.Add(spec, AddOptions{})
	st := waitState(t, u, 10*time.Second, StateConnected)
	first := st.PID

	// A call longer than the idle timeout keeps it up.
	callText(t, u, "sleep_ms", `{"ms":700}`)
	if now := u.Status(); now.State != StateConnected || now.PID != first {
		t.Fatalf("stopped during a call: %+v", now)
	}

	st = waitState(t, u, 10*time.Second, StateDisconnected)
	if !st.Idle || st.Manual || st.LastError != "" {
		t.Errorf("idle status = %+v, want Idle, not Manual, no error", st)
	}
	if alive := testbin.WaitGone(5*time.Second, first); len(alive) > 0 {
		t.Errorf("the idle upstream's process %v is still alive", alive)
	}
	if inv := u.Inventory(); len(inv.Tools) != 2 {
		t.Errorf("inventory while idle has %d tools, want 2 kept", len(inv.Tools))
	}

	got := callText(t, u, "pid", `{}`)
	st = u.Status()
	if st.State != StateConnected || st.Idle || st.PID == first || !strings.Contains(got, fmt.Sprint(st.PID)) {
		t.Errorf("after a call: status %+v, pid result %s; want a new process serving it", st, got)
	}
}
