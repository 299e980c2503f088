package hub

// Admin calls never wait on a slow upstream, and stopping one upstream never
// holds up another (issue 12, items 3 and 8).

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// apiResult is the outcome of one REST call.
type apiResult struct {
	code int
	out  map[string]any
	took time.Duration
}

// apiAsync makes a REST call in the background.
func apiAsync(t *testing.T, method, url, body string) <-chan apiResult {
	ch := make(chan apiResult, 1)
	start := time.Now()
	go func() {
		code, out := apiDo(t, method, url, body, testToken)
		ch <- apiResult{code, out, time.Since(start)}
	}()
	return ch
}

// apiWithin makes a REST call and fails the test when it has not answered
// within d.
func apiWithin(t *testing.T, d time.Duration, method, url, body string) apiResult {
	t.Helper()
	select {
	case r := <-apiAsync(t, method, url, body):
		return r
	case <-time.After(d):
		t.Fatalf("%s %s did not answer within %s", method, url, d)
		return apiResult{}
	}
}

// storeApproved registers specs in the hub's store, approved, and starts
// them.
func storeApproved(t *testing.T, h *Hub, specs ...upstream.Spec) {
	t.Helper()
	for _, spec := range specs {
		if _, err := h.opts.Store.Create(t.Context(), upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true,
			Source: upstream.SourceAdmin, Approval: upstream.ApprovalApproved, ApprovedHash: spec.Fingerprint()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// silentListener accepts TCP connections and never answers on them: an
// HTTP upstream stuck before initialize.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return fmt.Sprintf("http://%s/mcp", ln.Addr())
}

// TestAdminOnConnectingUpstream: update, restart and remove of an upstream
// stuck CONNECTING (a stdio child that never answers initialize and
// ignores stdin EOF and SIGTERM; an HTTP server that accepts connections
// and never answers) answer within a second or so, not after the init
// timeout (30 s): the attempt is abandoned and the answer says the
// upstream is still starting.
func TestAdminOnConnectingUpstream(t *testing.T) {
	h, srv := startHTTPHubOpts(t, &Options{Upstream: upstream.Options{ShutdownGrace: 2 * time.Second}}, nil)
	api := srv.URL + "/api/servers"
	dir := t.TempDir()
	pidFile := func(name string) string { return filepath.Join(dir, name+".pid") }
	stuck := func(name string) upstream.Spec {
		return fixtureSpec(name, "-hang-initialize", "-ignore-sigterm", "-pid-file", pidFile(name))
	}
	url := silentListener(t)
	storeApproved(t, h, stuck("stdio"), stuck("relaunch"), upstream.Spec{Name: "http", URL: url})
	// Generous next to the target (1 s), far below the init timeout.
	const bound = 3 * time.Second
	connecting := func(name string) {
		t.Helper()
		waitStatus(t, upstreamOf(t, h, name), 10*time.Second, "connecting", func(s upstream.Status) bool {
			return s.State == upstream.StateConnecting
		})
	}
	for _, name := range []string{"stdio", "http"} {
		connecting(name)
		r := apiWithin(t, bound, "PUT", api+"/"+name, `{"description":"changed while connecting"}`)
		if r.code != 200 || r.out["state"] != string(upstream.StateConnecting) {
			t.Errorf("%s: update: %d %v", name, r.code, r.out)
		}
		t.Logf("%s: update of a connecting upstream answered in %s", name, r.took.Round(time.Millisecond))
		r = apiWithin(t, bound, "POST", api+"/"+name+"/restart", "")
		if r.code != 200 || r.out["state"] != string(upstream.StateConnecting) {
			t.Errorf("%s: restart: %d %v", name, r.code, r.out)
		}
		t.Logf("%s: restart of a connecting upstream answered in %s", name, r.took.Round(time.Millisecond))
		connecting(name)
		r = apiWithin(t, bound, "DELETE", api+"/"+name, "")
		if r.code != 200 {
			t.Errorf("%s: remove: %d %v", name, r.code, r.out)
		}
		t.Logf("%s: remove of a connecting upstream answered in %s", name, r.took.Round(time.Millisecond))
		if _, ok := h.Manager().Get(name); ok {
			t.Errorf("%s still registered after remove", name)
		}
	}
	// A change to what runs: it goes back to pending (REST has no one to
	// approve it), and the hanging attempt is stopped.
	connecting("relaunch")
	pid, err := testbin.ReadPID(pidFile("relaunch"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := apiWithin(t, bound, "PUT", api+"/relaunch", `{"args":["-hang-initialize","-ignore-sigterm","-name","other"]}`)
	if r.code != 200 || r.out["approval"] != "pending" {
		t.Errorf("relaunching update: %d %v", r.code, r.out)
	}
	t.Logf("relaunching update of a connecting upstream answered in %s", r.took.Round(time.Millisecond))
	if alive := testbin.WaitGone(5*time.Second, pid); len(alive) > 0 {
		t.Errorf("the abandoned attempt's process %d still runs", pid)
	}
}

// TestRemoveDoesNotHoldUpOthers: while an upstream that ignores stdin EOF
// and SIGTERM (and left a daemon) is being removed — which takes the whole
// grace sequence — a restart of another upstream answers.
func TestRemoveDoesNotHoldUpOthers(t *testing.T) {
	h, srv := startHTTPHubOpts(t, &Options{Upstream: upstream.Options{ShutdownGrace: time.Second}}, nil)
	api := srv.URL + "/api/servers"
	dir := t.TempDir()
	daemonPID := filepath.Join(dir, "daemon.pid")
	storeApproved(t, h,
		fixtureSpec("slow", "-only", "echo", "-ignore-sigterm", "-daemon", daemonPID),
		fixtureSpec("other", "-only", "pid"))
	for _, name := range []string{"slow", "other"} {
		waitStatus(t, upstreamOf(t, h, name), 10*time.Second, "connected", connected)
	}
	slow := upstreamOf(t, h, "slow").Status().PID
	daemon, err := testbin.ReadPID(daemonPID, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range []int{slow, daemon} {
			if p, err := os.FindProcess(p); err == nil && testbin.Alive(p.Pid) {
				_ = p.Kill()
			}
		}
	})
	removed := apiAsync(t, "DELETE", api+"/slow", "")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ok := h.Manager().Get("slow"); !ok {
			break // the remove is under way
		}
		if time.Now().After(deadline) {
			t.Fatal("the remove did not start")
		}
	}
	restart := apiWithin(t, 10*time.Second, "POST", api+"/other/restart", "")
	if restart.code != 200 || restart.out["state"] == nil {
		t.Errorf("restart of another upstream: %d %v", restart.code, restart.out)
	}
	select {
	case r := <-removed:
		t.Errorf("the remove (%d, %s) answered before the restart of another upstream did: it blocked the restart", r.code, r.took)
	default:
		t.Logf("restart of another upstream answered in %s while the remove ran", restart.took.Round(time.Millisecond))
	}
	select {
	case r := <-removed:
		if r.code != 200 {
			t.Errorf("remove: %d %v", r.code, r.out)
		}
		t.Logf("remove of an upstream that ignores SIGTERM, with a daemon: %s", r.took.Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("remove did not answer")
	}
	if alive := testbin.WaitGone(5*time.Second, slow, daemon); len(alive) > 0 {
		t.Errorf("processes %v of the removed upstream still run", alive)
	}
}
