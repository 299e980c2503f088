//lint:file-ignore SA1019 the tests exercise sampling and roots, deprecated in 2026-07-28 but part of the protocol versions the hub serves.

package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// scopedSpec is a fixture (over stdio) of the given scope.
func scopedSpec(name string, scope upstream.Scope, args ...string) upstream.Spec {
	s := fixtureSpec(name, args...)
	s.Scope = scope
	return s
}

// sessionEraSpec pins a spec to the session era (2025-11-25): what a test of
// it checks (requests the upstream sends, roots notifications) does not
// exist in the stateless era, where the upstream asks for client input in
// its answer to the call it is for (so it is never ambiguous).
func sessionEraSpec(s upstream.Spec) upstream.Spec {
	s.ProtocolVersion = "2025-11-25"
	return s
}

// waitTools waits until the hub's catalog has the named tool.
func waitTools(t *testing.T, h *Hub, tool string) {
	t.Helper()
	eventually(t, 20*time.Second, "tool "+tool+" in the catalog", func() bool {
		_, ok := h.Catalog().Tool(tool)
		return ok && h.settled()
	})
}

// processGone reports whether no process pid exists any more (killed and
// reaped: a zombie still counts as a process).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// pidsOf returns the pids of the fixtures that logged start to events.
func pidsOf(t *testing.T, events string) []int {
	var pids []int
	for _, e := range eventsOf(readEvents(t, events), "start") {
		pids = append(pids, e.pid)
	}
	return pids
}

// TestSessionScopeSampling: four sessions call test_sampling and
// test_elicitation ten at a time each on a stdio upstream of scope
// session. Every call is answered by its own session (shared, over stdio,
// most were refused as unattributable): 80 correct, none refused, none
// misrouted, and each session answered exactly its own ten elicitations.
func TestSessionScopeSampling(t *testing.T) {
	const sessions, perSession = 4, 10
	spec := scopedSpec("fx", upstream.ScopeSession, "-conformance", "-only", "pid")
	h, srv := startHTTPHub(t, nil, spec)
	waitTools(t, h, "test_sampling")
	var clients []*routeClient
	for i := range sessions {
		clients = append(clients, newConformanceClient(t, srv.URL, i%2 == 1, string(rune('A'+i))))
	}
	var correct, refused, misrouted, other atomic.Int32
	var wg sync.WaitGroup
	for _, rc := range clients {
		for i := range perSession {
			wg.Go(func() {
				got, isErr := rc.call(t, "test_sampling", map[string]any{"prompt": fmt.Sprintf("%s-%d", rc.tag, i)})
				classify(got, isErr, "LLM response: sampled by "+rc.tag, rc.tag, &correct, &refused, &misrouted, &other)
			})
			wg.Go(func() {
				got, isErr := rc.call(t, "test_elicitation", map[string]any{"message": "who are you?"})
				classify(got, isErr, `"username":"by `+rc.tag+`"`, rc.tag, &correct, &refused, &misrouted, &other)
			})
		}
	}
	wg.Wait()
	t.Logf("%d sessions × %d test_sampling and %d test_elicitation calls at once: %d correct, %d refused, %d misrouted, %d other",
		sessions, perSession, perSession, correct.Load(), refused.Load(), misrouted.Load(), other.Load())
	if correct.Load() != 2*sessions*perSession || refused.Load()+misrouted.Load()+other.Load() != 0 {
		t.Errorf("calls: %d correct, %d refused, %d misrouted, %d other; want all %d correct",
			correct.Load(), refused.Load(), misrouted.Load(), other.Load(), 2*sessions*perSession)
	}
	for _, rc := range clients {
		if n := rc.elicits.Load(); n != perSession {
			t.Errorf("session %s answered %d elicitations, want its own %d", rc.tag, n, perSession)
		}
	}
	// One instance per session, each a process of its own.
	u, _ := h.Manager().Get("fx")
	pids := map[string]bool{}
	for _, rc := range clients {
		got, _ := rc.call(t, "pid", nil)
		pids[got] = true
	}
	if n := len(u.Instances()); n != sessions || len(pids) != sessions {
		t.Errorf("%d instances, %d distinct pids; want %d of each", n, len(pids), sessions)
	}
	res, err := h.opList(context.Background())
	if err != nil || !strings.Contains(res.text, "one instance per client session, 4 running") {
		t.Errorf("hub_list_servers: %q, %v", res.text, err)
	}
	if body := metricsBody(t, srv.URL); !strings.Contains(body, `mcphub_upstream_instances{upstream="fx"} 4`) {
		t.Errorf("metrics lack the instance count:\n%s", grepLines(body, "instances"))
	}
}

// newConformanceClient is a route client that answers the elicitations
// of the conformance tools (a username and an email) with its tag.
func newConformanceClient(t *testing.T, url string, sse bool, tag string) *routeClient {
	t.Helper()
	rc := &routeClient{tag: tag}
	rc.cs = sdkSession(t, url, sse, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "sampled by " + tag}}, nil
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rc.elicits.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "by " + tag, "email": tag + "@example.com"}}, nil
		},
	})
	return rc
}

// classify counts one call's outcome: correct (its text has want), refused
// as unattributable, misrouted (another session's tag), or other.
func classify(got string, isErr bool, want, tag string, correct, refused, misrouted, other *atomic.Int32) {
	switch {
	case !isErr && strings.Contains(got, want):
		correct.Add(1)
	case strings.Contains(got, "cannot tell which"):
		refused.Add(1)
	case strings.Contains(got, "by ") && !strings.Contains(got, "by "+tag):
		misrouted.Add(1)
	default:
		other.Add(1)
	}
}

func metricsBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := authClient().Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func grepLines(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// TestSessionScopeState: an upstream that keeps state (a counter) at scope
// session: two sessions count independently (shared, they would see each
// other's increments).
func TestSessionScopeState(t *testing.T) {
	h, srv := startHTTPHub(t, nil, scopedSpec("fx", upstream.ScopeSession, "-only", "counter"))
	waitTools(t, h, "counter")
	a := sdkSession(t, srv.URL, false, nil)
	b := sdkSession(t, srv.URL, true, nil)
	for i := 1; i <= 3; i++ {
		if got := callText(t, a, "counter", nil); got != strconv.Itoa(i) {
			t.Errorf("session A's call %d: counter = %s", i, got)
		}
		if got := callText(t, b, "counter", nil); got != strconv.Itoa(i) {
			t.Errorf("session B's call %d: counter = %s", i, got)
		}
	}
	// The status the hub reports to the store (what mcp-hub status shows)
	// counts the two instances and names the sessions they run for.
	st := h.opts.Store.(testStore).Store
	u, _ := h.Manager().Get("fx")
	want := u.Status().Sessions
	if len(want) != 2 || want[0] == want[1] {
		t.Fatalf("the upstream's status names the sessions %q, want 2 different ones", want)
	}
	eventually(t, 10*time.Second, "the stored status to name the 2 sessions", func() bool {
		stats, err := st.Statuses(context.Background())
		return err == nil && stats["fx"].Instances == 2 && slices.Equal(stats["fx"].Sessions, want)
	})
}

// TestSessionScopeLifecycle: 50 client sessions open and close against a
// session-scoped stdio upstream: each got a process of its own, and once
// they are closed no process is left, and the hub's goroutines and file
// descriptors are back at their baseline. At the cap (16 instances) a 17th
// session gets a tool error at once, and a place freed serves it; closing
// the hub reaps every instance.
func TestSessionScopeLifecycle(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	h, srv := startHTTPHub(t, nil, scopedSpec("fx", upstream.ScopeSession, "-only", "counter", "-events", events))
	waitTools(t, h, "counter")
	u, _ := h.Manager().Get("fx")
	listed := pidsOf(t, events) // the listing instance
	eventually(t, 10*time.Second, "the listing process gone", func() bool { return allGone(listed) })

	idle := func() { http.DefaultTransport.(*http.Transport).CloseIdleConnections() }
	idle()
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)

	const rounds, perRound = 5, 10
	for range rounds {
		var wg sync.WaitGroup
		for range perRound {
			wg.Go(func() {
				cs := sdkSession(t, srv.URL, false, nil)
				if got := callText(t, cs, "counter", nil); got != "1" {
					t.Errorf("a new session's first count: %s, want 1 (an instance of its own)", got)
				}
				cs.Close() // DELETE: the session ends
			})
		}
		wg.Wait()
	}
	pids := pidsOf(t, events)[len(listed):]
	if len(pids) != rounds*perRound {
		t.Errorf("%d instances started, want one per session (%d)", len(pids), rounds*perRound)
	}
	eventually(t, 20*time.Second, "every instance's process killed and reaped", func() bool {
		return allGone(pids) && len(u.Instances()) == 0
	})
	idle()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if runtime.NumGoroutine() <= goroutines+2 && openFDs(t) <= fds {
			break
		}
	}
	g, f := runtime.NumGoroutine(), openFDs(t)
	if g > goroutines+2 || f > fds {
		t.Errorf("after 50 sessions: %d goroutines (baseline %d), %d fds (baseline %d)", g, goroutines, f, fds)
	}
	t.Logf("%d sessions opened and closed: %d instances started, none left; %d goroutines (baseline %d), %d fds (baseline %d)",
		rounds*perRound, len(pids), g, goroutines, f, fds)

	// The cap: 16 instances run; a 17th session is refused at once.
	var held []*mcp.ClientSession
	for range 16 {
		cs := sdkSession(t, srv.URL, false, nil)
		callText(t, cs, "counter", nil)
		held = append(held, cs)
	}
	extra := sdkSession(t, srv.URL, false, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := extra.CallTool(ctx, &mcp.CallToolParams{Name: "counter"})
	if err != nil {
		t.Fatalf("17th session: %v", err)
	}
	if msg := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(msg, "already runs 16 instances, one per client session") {
		t.Errorf("17th session: %q (isError %v), want the cap's tool error", msg, res.IsError)
	}
	held[0].Close()
	eventually(t, 10*time.Second, "the 17th session served once a place is free", func() bool {
		res, err := extra.CallTool(ctx, &mcp.CallToolParams{Name: "counter"})
		return err == nil && !res.IsError
	})

	// Shutdown reaps every instance.
	running := pidsOf(t, events)[len(listed)+len(pids):]
	if len(running) != 17 {
		t.Fatalf("%d instances started for the cap's sessions, want 17", len(running))
	}
	h.Close()
	if alive := slices.DeleteFunc(slices.Clone(running), processGone); len(alive) > 0 {
		t.Errorf("after Close, processes of instances still exist: %v", alive)
	}
}

func allGone(pids []int) bool {
	for _, p := range pids {
		if !processGone(p) {
			return false
		}
	}
	return true
}

// openFDs counts the process's open file descriptors but the store's
// (database/sql keeps a pool of SQLite connections that grows with
// concurrent reads, and keeps it).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); !strings.Contains(l, "hub.db") {
			n++
		}
	}
	return n
}

// TestSessionScopeEnds: a session's instance stops, its process killed and
// reaped, however the session ends: DELETE, stdin EOF (stdio), the idle
// timeout.
func TestSessionScopeEnds(t *testing.T) {
	for _, how := range []string{"delete", "stdin EOF", "idle timeout"} {
		t.Run(how, func(t *testing.T) {
			events := filepath.Join(t.TempDir(), "events")
			hopts := &HTTPOptions{}
			if how == "idle timeout" {
				hopts.SessionIdleTimeout = 300 * time.Millisecond
			}
			h, srv := startHTTPHub(t, hopts, scopedSpec("fx", upstream.ScopeSession, "-only", "counter", "-events", events))
			waitTools(t, h, "counter")
			listed := len(pidsOf(t, events))
			switch how {
			case "stdin EOF":
				c := stdioClient(t, h)
				if o := outcomeOfLine(t, c.call(t, 2, "tools/call", `{"name":"counter"}`)); o.isError || o.text != "1" {
					t.Fatalf("counter over stdio: %+v", o)
				}
				c.w.(*io.PipeWriter).Close() // the client's stdin ends
			default:
				// No standalone stream: a session with one open is never idle.
				tr := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: authClient(), DisableStandaloneSSE: true}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, sessionEra)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				callText(t, cs, "counter", nil)
				if how == "delete" {
					cs.Close()
				}
			}
			pids := pidsOf(t, events)[listed:]
			if len(pids) != 1 {
				t.Fatalf("%d instances started, want 1", len(pids))
			}
			eventually(t, 20*time.Second, "the instance's process killed and reaped", func() bool { return allGone(pids) })
			if u, _ := h.Manager().Get("fx"); len(u.Instances()) != 0 {
				t.Errorf("%d instances left", len(u.Instances()))
			}
		})
	}
}

// TestScopeAuto: an upstream of scope auto is shared until it sends a
// request the hub cannot attribute (refused, as shared); that switch is
// logged once, the calls in flight finish on the shared instance, the
// sessions that started before keep it, and sessions that start afterwards
// get instances of their own, where every request reaches its session.
func TestScopeAuto(t *testing.T) {
	logs := &testbin.Buffer{}
	opts := &Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}
	h, srv := startHTTPHubOpts(t, opts, nil, sessionEraSpec(scopedSpec("fx", upstream.ScopeAuto, "-only", "elicit,sleep_ms,pid")))
	waitTools(t, h, "elicit")
	u, _ := h.Manager().Get("fx")
	a := newRouteClient(t, srv.URL, false, "A")
	b := newRouteClient(t, srv.URL, false, "B")
	shared, _ := a.call(t, "pid", nil)

	unattributable := func(x, y *routeClient) {
		t.Helper()
		done := make(chan string, 1)
		go func() {
			got, _ := x.call(t, "sleep_ms", map[string]any{"ms": 1500})
			done <- got
		}()
		eventually(t, 10*time.Second, x.tag+"'s call in flight", func() bool {
			c := u.Conn()
			return c != nil && len(c.Tags()) == 1
		})
		if got, isErr := y.call(t, "elicit", map[string]any{"message": "whose?"}); !isErr || !strings.Contains(got, "more than one client session is waiting on upstream") ||
			!strings.Contains(got, "the sessions open now keep sharing this one: reconnect the client, or set the server's scope to session") {
			t.Errorf("elicit while two sessions wait on the shared instance: %q (isError %v)", got, isErr)
		}
		if got := <-done; got != "slept 1500 ms" {
			t.Errorf("the call in flight during the switch: %q", got)
		}
	}
	unattributable(a, b)
	const switched = "client sessions that start from now on get an instance of their own"
	if n := strings.Count(logs.String(), switched); n != 1 {
		t.Errorf("the switch is logged %d times, want once:\n%s", n, logs.String())
	}
	if len(u.Instances()) != 0 {
		t.Errorf("%d instances before any new session", len(u.Instances()))
	}

	// Sessions that start now get their own instances.
	c := newRouteClient(t, srv.URL, false, "C")
	d := newRouteClient(t, srv.URL, true, "D")
	var wg sync.WaitGroup
	for _, rc := range []*routeClient{c, d} {
		for range 5 {
			wg.Go(func() {
				if got, isErr := rc.call(t, "elicit", map[string]any{"message": "q"}); isErr || !strings.Contains(got, "answered by "+rc.tag) {
					t.Errorf("%s elicit after the switch: %q (isError %v)", rc.tag, got, isErr)
				}
			})
		}
		wg.Go(func() { rc.call(t, "sleep_ms", map[string]any{"ms": 300}) })
	}
	wg.Wait()
	if c.elicits.Load() != 5 || d.elicits.Load() != 5 {
		t.Errorf("elicitations answered: C %d, D %d; want 5 each", c.elicits.Load(), d.elicits.Load())
	}
	pc, _ := c.call(t, "pid", nil)
	pd, _ := d.call(t, "pid", nil)
	pa, _ := a.call(t, "pid", nil)
	if pc == shared || pd == shared || pc == pd || pa != shared {
		t.Errorf("pids: shared %s, A %s, C %s, D %s; want A on the shared one, C and D on their own", shared, pa, pc, pd)
	}
	// The old sessions still share; another unattributable request is
	// refused as before, and not logged again.
	unattributable(b, a)
	if n := strings.Count(logs.String(), switched); n != 1 {
		t.Errorf("the switch is logged %d times, want once", n)
	}
	res, err := h.opGet(context.Background(), "fx")
	if err != nil {
		t.Fatal(err)
	}
	v := res.data["server"].(serverView)
	if v.Scope != "auto" || !v.PerSession || len(v.Instances) != 2 || !strings.Contains(res.text, "switched to one instance per client session") {
		t.Errorf("hub_get_server: %+v\n%s", v, res.text)
	}
}

// TestSessionScopeRoots: each session's instance gets that session's roots,
// and a session's notifications/roots/list_changed reaches its instance
// alone.
func TestSessionScopeRoots(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	h, srv := startHTTPHub(t, nil, sessionEraSpec(scopedSpec("fx", upstream.ScopeSession, "-only", "roots,pid", "-events", events)))
	waitTools(t, h, "roots")
	clientA := mcp.NewClient(&mcp.Implementation{Name: "a", Version: "1"}, nil)
	clientA.AddRoots(&mcp.Root{URI: "file:///A", Name: "A"})
	csA, err := clientA.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: authClient()}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	defer csA.Close()
	b := newRouteClient(t, srv.URL, false, "B")
	if got := callText(t, csA, "roots", nil); !strings.Contains(got, "file:///A") || strings.Contains(got, "file:///B") {
		t.Errorf("A's roots: %s", got)
	}
	if got, _ := b.call(t, "roots", nil); !strings.Contains(got, "file:///B") || strings.Contains(got, "file:///A") {
		t.Errorf("B's roots: %s", got)
	}
	pidA, _ := strconv.Atoi(callText(t, csA, "pid", nil))
	clientA.AddRoots(&mcp.Root{URI: "file:///A2", Name: "A2"}) // sends notifications/roots/list_changed
	eventually(t, 10*time.Second, "A's instance told its roots changed", func() bool {
		return len(eventsOf(readEvents(t, events), "roots-changed")) > 0
	})
	time.Sleep(200 * time.Millisecond) // a stray notification to B's instance would arrive meanwhile
	for _, e := range eventsOf(readEvents(t, events), "roots-changed") {
		if e.pid != pidA {
			t.Errorf("roots-changed reached process %d, not A's instance (%d)", e.pid, pidA)
		}
	}
	if got := callText(t, csA, "roots", nil); !strings.Contains(got, "file:///A2") {
		t.Errorf("A's roots after the change: %s", got)
	}
}

// TestSessionScopeEager: with start: eager, a session-scoped upstream's
// instance starts when the session is initialized, before its first call;
// without it, on the first call.
func TestSessionScopeEager(t *testing.T) {
	for _, start := range []upstream.StartMode{upstream.StartEager, upstream.StartEagerSessions} {
		t.Run("start="+string(start), func(t *testing.T) {
			spec := scopedSpec("fx", upstream.ScopeSession, "-only", "counter")
			spec.Start = start
			h, srv := startHTTPHub(t, nil, spec)
			waitTools(t, h, "counter")
			u, _ := h.Manager().Get("fx")
			cs := sdkSession(t, srv.URL, false, nil)
			if start == upstream.StartEagerSessions {
				eventually(t, 10*time.Second, "the session's instance started at initialize", func() bool {
					insts := u.Instances()
					return len(insts) == 1 && insts[0].Status().State == upstream.StateConnected
				})
			} else {
				time.Sleep(300 * time.Millisecond) // an eager start would be under way by now
				if n := len(u.Instances()); n != 0 {
					t.Errorf("%d instances before the first call, want none", n)
				}
			}
			if got := callText(t, cs, "counter", nil); got != "1" {
				t.Errorf("counter = %s", got)
			}
			if n := len(u.Instances()); n != 1 {
				t.Errorf("%d instances after the first call, want 1", n)
			}
		})
	}
}
