package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/pgtest"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Issue 18: replicas of the hub share one registry in PostgreSQL. Each has
// its own store connection (as separate processes do) and its own upstream
// connections.

// startReplica starts a hub on the PostgreSQL store dsn, served over
// httptest.
func startReplica(t *testing.T, dsn string, opts *Options, config ...ConfigServer) (*Hub, *httptest.Server) {
	t.Helper()
	st, err := persist.OpenPostgres(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := *opts
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o.Store = testStore{st}
	h, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background(), config); err != nil {
		t.Fatal(err)
	}
	handler, err := h.HTTPHandler(&HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		st.Close()
	})
	return h, srv
}

// A registration, its approval, a pin approval and a removal made on one
// replica apply on the other within a second, by notification (the
// replicas poll the store only once a minute here), and its clients hear
// list_changed. Each replica runs the upstream itself.
func TestReplicasShareRegistry(t *testing.T) {
	_, dsn := pgtest.Schema(t)
	a, srvA := startReplica(t, dsn, &Options{StorePoll: time.Minute})
	b, srvB := startReplica(t, dsn, &Options{StorePoll: time.Minute})
	apiA := srvA.URL + "/api/servers"
	opts, changed := listChanges()
	csB := sdkSession(t, srvB.URL, false, opts)

	defs := filepath.Join(t.TempDir(), "defs.json")
	body := map[string]any{"name": "team", "command": fixture, "args": []string{"-only", "echo,pid", "-defs", defs}, "trust": "pin"}
	if code, out := apiJSON(t, "POST", apiA, body); code != 201 || out["approval"] != "pending" {
		t.Fatalf("add on A: %d %v", code, out)
	}
	// Pending: B knows it but runs nothing.
	time.Sleep(200 * time.Millisecond)
	if _, ok := b.mgr.Get("team"); ok {
		t.Fatal("B runs an upstream nobody approved")
	}

	start := time.Now()
	approved := make(chan struct{})
	go func() {
		defer close(approved)
		// Reviewed on B, approved on A (a load balancer may do that):
		// the replicas share the key of the digest.
		apiJSON(t, "POST", apiA+"/team/approve", reviewed(t, srvB.URL+"/api/servers", "team"))
	}()
	var applied time.Duration
	eventually(t, 10*time.Second, "B applying the approval made on A", func() bool {
		_, ok := b.mgr.Get("team")
		applied = time.Since(start)
		return ok
	})
	eventually(t, 20*time.Second, "echo listed by B", func() bool { return slices.Contains(sdkTools(t, csB), "echo") })
	callable := time.Since(start)
	<-approved
	t.Logf("approval on A: applied on B after %v, callable through B after %v", applied.Round(time.Millisecond), callable.Round(time.Millisecond))
	// The poll runs once a minute here: only the notification can apply it
	// this soon. The 1 s is a measurement (logged above), not an
	// assertion: wall-clock bounds flake on a loaded machine.
	if applied > notifyBound {
		t.Errorf("B applied the approval after %v, want well under the poll interval (by notification)", applied)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("B's client heard no tools/list_changed")
	}
	if text, isErr := toolCall(t, csB, "echo", map[string]any{"message": "via B"}); isErr || !strings.Contains(text, "via B") {
		t.Errorf("echo through B: %v %q", isErr, text)
	}
	// B's upstream is B's own process.
	pidA, pidB := statusOf(t, a, "team").PID, statusOf(t, b, "team").PID
	if pidA == 0 || pidB == 0 || pidA == pidB {
		t.Errorf("upstream processes: A %d, B %d; want one each", pidA, pidB)
	}

	// Both pinned the first listing (one baseline in the store). The tool
	// changes: both quarantine it; approving on A releases it on B.
	eventually(t, 10*time.Second, "the baseline pins", func() bool {
		pins, _ := a.opts.Store.Pins(context.Background())
		return len(pins["team"]) > 0
	})
	writeDefs(t, defs, poisonedEcho)
	for _, srv := range []*httptest.Server{srvA, srvB} {
		if code, out := apiJSON(t, "POST", srv.URL+"/api/servers/team/restart", nil); code != 200 {
			t.Fatalf("restart: %d %v", code, out)
		}
	}
	eventually(t, 20*time.Second, "echo quarantined on B", func() bool { return !slices.Contains(sdkTools(t, csB), "echo") })
	for len(changed) > 0 {
		<-changed
	}
	start = time.Now()
	if code, out := apiJSON(t, "POST", apiA+"/team/approve", reviewed(t, apiA, "team")); code != 200 {
		t.Fatalf("approve the tool change on A: %d %v", code, out)
	}
	eventually(t, 10*time.Second, "echo released on B", func() bool {
		d, ok := toolDesc(t, csB, "echo")
		return ok && strings.HasPrefix(d, "Echoes. Before answering")
	})
	t.Logf("pin approval on A: served by B after %v", time.Since(start).Round(time.Millisecond))

	// Removal.
	start = time.Now()
	if code, out := apiJSON(t, "DELETE", apiA+"/team", nil); code != 200 {
		t.Fatalf("remove on A: %d %v", code, out)
	}
	eventually(t, 10*time.Second, "B stopping the removed upstream", func() bool {
		_, ok := b.mgr.Get("team")
		return !ok
	})
	removed := time.Since(start)
	t.Logf("removal on A: applied on B after %v", removed.Round(time.Millisecond))
	if removed > notifyBound { // includes stopping the process
		t.Errorf("B applied the removal after %v, want well under the poll interval (by notification)", removed)
	}
	eventually(t, 10*time.Second, "echo gone from B's list", func() bool { return !slices.Contains(sdkTools(t, csB), "echo") })
}

// notifyBound is how soon a change made on one replica must apply on the
// other in these tests, whose poll runs once a minute: far above the
// measured delay (tens to hundreds of milliseconds), far below the poll.
const notifyBound = 10 * time.Second

// statusOf returns the named upstream's status on h.
func statusOf(t *testing.T, h *Hub, name string) upstream.Status {
	t.Helper()
	u, ok := h.mgr.Get(name)
	if !ok {
		t.Fatalf("%s does not run", name)
	}
	return u.Status()
}

// Replicas that start together with the same config file, on an empty
// store, all start (no leader), and the file's servers are stored once.
func TestReplicasSeedConfigTogether(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func() *persist.Store) {
		for round := range 5 {
			config := []ConfigServer{
				{Spec: fixtureSpec(fmt.Sprintf("cfg%d_a", round), "-only", "echo")},
				{Spec: fixtureSpec(fmt.Sprintf("cfg%d_b", round), "-only", "echo")},
				{Spec: fixtureSpec(fmt.Sprintf("cfg%d_c", round), "-only", "echo"), Disabled: true},
			}
			var hubs []*Hub
			for range 3 {
				st := open()
				h, err := New(&Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: testStore{st}, StorePoll: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { h.Close() })
				hubs = append(hubs, h)
			}
			var wg sync.WaitGroup
			errs := make([]error, len(hubs))
			gate := make(chan struct{})
			for i, h := range hubs {
				wg.Go(func() {
					<-gate
					errs[i] = h.Start(context.Background(), config)
				})
			}
			close(gate)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			regs, err := hubs[0].opts.Store.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range regs {
				if strings.HasPrefix(r.Spec.Name, fmt.Sprintf("cfg%d_", round)) {
					names = append(names, r.Spec.Name)
					if r.Source != upstream.SourceConfig || !r.Approved() || r.Enabled == (r.Spec.Name == fmt.Sprintf("cfg%d_c", round)) {
						t.Errorf("round %d: %s stored as %+v", round, r.Spec.Name, r)
					}
				}
			}
			if len(names) != 3 {
				t.Errorf("round %d: stored %v, want the file's 3 servers once", round, names)
			}
			for _, h := range hubs {
				h.Close()
			}
		}
	})
}

// forEachStore runs f on SQLite (hubs sharing a data directory) and on
// PostgreSQL (hubs sharing a schema); open opens another Store on the
// test's database.
func forEachStore(t *testing.T, f func(t *testing.T, open func() *persist.Store)) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			var open func(context.Context) (*persist.Store, error)
			if dialect == "sqlite" {
				dir := t.TempDir()
				open = func(ctx context.Context) (*persist.Store, error) { return persist.Open(ctx, dir, nil) }
			} else {
				_, dsn := pgtest.Schema(t)
				open = func(ctx context.Context) (*persist.Store, error) { return persist.OpenPostgres(ctx, dsn, nil) }
			}
			f(t, func() *persist.Store {
				st, err := open(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			})
		})
	}
}

// With its PostgreSQL server unreachable a hub keeps serving its upstreams
// and catalog (an upstream that restarts meanwhile runs under the approval
// read before), refuses admin changes with a clear error and 503, and says
// not ready; once the server is back it is ready, applies what other hubs
// changed meanwhile and takes changes again.
func TestStoreOutage(t *testing.T) {
	_, dsn := pgtest.Schema(t)
	px := pgtest.NewProxy(t, pgtest.Host(t, dsn))
	config := ConfigServer{Spec: fixtureSpec("kept", "-only", "echo,pid")}
	h, srv := startReplica(t, px.Through(dsn), &Options{StorePoll: 100 * time.Millisecond}, config)
	_, other := startReplica(t, dsn, &Options{StorePoll: time.Minute}, config) // reaches the server directly
	api := srv.URL + "/api/servers"
	cs := sdkSession(t, srv.URL, false, nil)
	eventually(t, 20*time.Second, "kept connected", func() bool { return statusOf(t, h, "kept").State == upstream.StateConnected })
	ready := func(tok string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/readyz", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := ready(""); code != 200 || strings.TrimSpace(body) != `{"ready":true}` {
		t.Fatalf("readyz before: %d %s", code, body)
	}

	px.Cut()
	if code, body := ready(""); code != 503 || strings.TrimSpace(body) != `{"ready":false}` {
		t.Errorf("readyz without a token while the store is down: %d %s; want 503 and the verdict only", code, body)
	}
	if code, body := ready(testToken); code != 503 || !strings.Contains(body, "cannot be reached") {
		t.Errorf("readyz with the token while the store is down: %d %s", code, body)
	}
	if text, isErr := toolCall(t, cs, "echo", map[string]any{"message": "still"}); isErr || !strings.Contains(text, "still") {
		t.Errorf("call while the store is down: %v %q", isErr, text)
	}
	if names := sdkTools(t, cs); !slices.Contains(names, "echo") {
		t.Errorf("tools while the store is down: %v", names)
	}
	code, out := apiJSON(t, "POST", api, map[string]any{"name": "during", "command": fixture})
	if msg, _ := out["message"].(string); code != 503 || out["error"] != "STORE_UNAVAILABLE" || !strings.Contains(msg, "cannot be reached") || !strings.Contains(msg, "try again") {
		t.Errorf("add while the store is down: %d %v", code, out)
	}
	code, out = apiJSON(t, "PUT", api+"/kept", map[string]any{"description": "x"})
	if code != 503 || out["error"] != "STORE_UNAVAILABLE" {
		t.Errorf("update while the store is down: %d %v", code, out)
	}
	// The upstream's process dies: it comes back under the approval the
	// hub read before the outage.
	pid := statusOf(t, h, "kept").PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "kept restarted while the store is down", func() bool {
		st := statusOf(t, h, "kept")
		return st.State == upstream.StateConnected && st.PID != pid
	})
	if text, isErr := toolCall(t, cs, "echo", map[string]any{"message": "again"}); isErr || !strings.Contains(text, "again") {
		t.Errorf("call after the restart while the store is down: %v %q", isErr, text)
	}
	// Another hub registers meanwhile.
	if code, out := apiJSON(t, "POST", other.URL+"/api/servers", map[string]any{"name": "meanwhile", "command": fixture, "args": []string{"-only", "pid"}}); code != 201 {
		t.Fatalf("add on the other hub: %d %v", code, out)
	}
	if code, out := apiJSON(t, "POST", other.URL+"/api/servers/meanwhile/approve", reviewed(t, other.URL+"/api/servers", "meanwhile")); code != 200 {
		t.Fatalf("approve on the other hub: %d %v", code, out)
	}

	px.Restore()
	eventually(t, 10*time.Second, "ready again", func() bool { code, _ := ready(""); return code == 200 })
	eventually(t, 10*time.Second, "what the other hub registered meanwhile", func() bool {
		_, ok := h.mgr.Get("meanwhile")
		return ok
	})
	if code, out := apiJSON(t, "POST", api, map[string]any{"name": "after", "command": fixture}); code != 201 {
		t.Errorf("add once the store is back: %d %v", code, out)
	}
	regs, err := h.opts.Store.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range regs {
		names = append(names, r.Spec.Name)
	}
	if strings.Join(names, ",") != "after,kept,meanwhile" {
		t.Errorf("registrations = %v: nothing of the refused writes may be stored", names)
	}
}
