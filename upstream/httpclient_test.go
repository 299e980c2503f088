package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCheckRetry(t *testing.T) {
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	readErr := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		status int
		err    error
		want   bool
	}{
		{"dial error: never sent", context.Background(), 0, dialErr, true},
		{"dns error: never sent", context.Background(), 0, &net.DNSError{Err: "no such host"}, true},
		{"reset after sending: may have run", context.Background(), 0, readErr, false},
		{"429", context.Background(), 429, nil, true},
		{"503", context.Background(), 503, nil, true},
		{"500: may have run", context.Background(), 500, nil, false},
		{"502: may have run", context.Background(), 502, nil, false},
		{"504: may have run", context.Background(), 504, nil, false},
		{"200", context.Background(), 200, nil, false},
		{"404", context.Background(), 404, nil, false},
		{"cancelled", cancelled, 503, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp *http.Response
			if tt.err == nil {
				resp = &http.Response{StatusCode: tt.status, Header: http.Header{}}
			}
			got, _ := checkRetry(tt.ctx, resp, tt.err)
			if got != tt.want {
				t.Errorf("checkRetry = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{"600", maxRetryAfter, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), maxRetryAfter, true},
	} {
		got, ok := parseRetryAfter(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRetryAgainstServer counts the requests a real server sees.
func TestRetryAgainstServer(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int // answered in turn; the last repeats
		want     int   // requests the server sees
		status   int   // what the caller finally gets
	}{
		{"503 then ok", []int{503, 503, 200}, 3, 200},
		{"429 then ok", []int{429, 200}, 2, 200},
		{"500 is never resent", []int{500, 200}, 1, 500},
		{"502 is never resent", []int{502, 200}, 1, 502},
		{"503 forever gives up", []int{503}, 4, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if r.Header.Get("X-Token") != "t0k" {
					t.Errorf("attempt %d lacks the configured header", i+1)
				}
				st := tt.statuses[min(i, len(tt.statuses)-1)]
				if st != 200 {
					w.Header().Set("Retry-After", "0")
				}
				w.WriteHeader(st)
			}))
			defer srv.Close()
			c := newHTTPClient(map[string]string{"X-Token": "t0k"}, testLogger(t))
			resp, err := c.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status || int(n.Load()) != tt.want {
				t.Errorf("status %d after %d requests; want %d after %d", resp.StatusCode, n.Load(), tt.status, tt.want)
			}
		})
	}
	t.Run("dial failure is retried", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens: every dial is refused
		c := newHTTPClient(nil, testLogger(t))
		start := time.Now()
		_, err = c.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{}`))
		if err == nil || !isDialError(err) {
			t.Fatalf("err = %v, want a dial error", err)
		}
		// Three retries with backoff from 100ms: at least 100+200+400ms.
		if d := time.Since(start); d < 700*time.Millisecond {
			t.Errorf("gave up after %s: the dial was not retried", d)
		}
	})
}

// restartableServer is an in-process go-sdk MCP server behind a listener
// address that survives restarts (a new server forgets every session).
type restartableServer struct {
	t       *testing.T
	addr    string
	srv     *http.Server
	noGET   int // answer GET with this status: no standalone event stream (0: serve it)
	started atomic.Int32

	mu      sync.Mutex
	seen    map[string]bool // session ids handed out
	expired map[string]bool // session ids the server "forgot"
}

// expire makes the server forget every session so far (404 on use), on the
// same, live connections: what an upstream with a session timeout does.
func (rs *restartableServer) expire() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for id := range rs.seen {
		rs.expired[id] = true
	}
}

func (rs *restartableServer) start() {
	rs.t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "restartable", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "gen", Description: "the server generation", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(rs.started.Load())}}}, nil
		})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	rs.mu.Lock()
	if rs.seen == nil {
		rs.seen, rs.expired = map[string]bool{}, map[string]bool{}
	}
	rs.mu.Unlock()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rs.noGET != 0 && r.Method == http.MethodGet {
			w.WriteHeader(rs.noGET)
			return
		}
		sid := r.Header.Get("Mcp-Session-Id")
		rs.mu.Lock()
		gone := rs.expired[sid]
		rs.mu.Unlock()
		if gone {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		inner.ServeHTTP(w, r)
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			rs.mu.Lock()
			rs.seen[id] = true
			rs.mu.Unlock()
		}
	})
	addr := rs.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the old socket may linger briefly
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		rs.t.Fatal(err)
	}
	rs.addr = ln.Addr().String()
	rs.started.Add(1)
	rs.srv = &http.Server{Handler: handler}
	go rs.srv.Serve(ln)
}

func (rs *restartableServer) stop() {
	rs.srv.Close()
}

// TestSessionExpiryReinitializes: an upstream that restarts forgets the
// session and answers 404; the hub initializes again and retries the call.
func TestSessionExpiryReinitializes(t *testing.T) {
	rs := &restartableServer{t: t}
	rs.start()
	defer func() { rs.stop() }()
	opts := fastOptions(t)
	opts.KeepAlive = -1 // only the call notices the restart
	opts.HealthInterval = -1
	m := newManager(t, opts)
	u, _ := m.Add(Spec{Name: "web", URL: "http://" + rs.addr + "/mcp"}, AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	if got := callText(t, u, "gen", `{}`); !strings.Contains(got, `"text":"1"`) {
		t.Fatalf("gen = %s", got)
	}
	before := u.Status().Since
	rs.stop()
	rs.start()
	// The standalone event stream breaks with the old server; resuming it on
	// the new one gets 404, and the hub initializes a new session at once.
	eventually(t, 10*time.Second, "a new session", func() bool {
		st := u.Status()
		return st.State == StateConnected && st.Since.After(before)
	})
	got := callText(t, u, "gen", `{}`)
	if !strings.Contains(got, `"text":"2"`) {
		t.Fatalf("after the restart gen = %s, want generation 2", got)
	}
	if st := u.Status(); st.State != StateConnected || st.Attempts != 0 {
		t.Errorf("status after re-initialize = %+v", st)
	}
}

// TestSessionExpiryOnLiveConnection exercises the 404 path itself: the
// upstream forgets the session but keeps its connections; each call (slow
// and fast path) meets the 404, the hub initializes again and retries.
func TestSessionExpiryOnLiveConnection(t *testing.T) {
	rs := &restartableServer{t: t, noGET: http.StatusMethodNotAllowed}
	rs.start()
	defer func() { rs.stop() }()
	opts := fastOptions(t)
	opts.KeepAlive = -1
	opts.HealthInterval = -1
	m := newManager(t, opts)
	u, _ := m.Add(Spec{Name: "web", URL: "http://" + rs.addr + "/mcp"}, AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	callText(t, u, "gen", `{}`)
	for _, fast := range []bool{false, true} {
		rs.expire()
		var got string
		if fast {
			ch := make(chan string, 1)
			if _, ok := u.TryStart("tools/call", []byte(`{"name":"gen","arguments":{}}`), func(r Reply, err error) {
				ch <- fmt.Sprintf("%s %v", r.Result, err)
			}); !ok {
				t.Fatal("TryStart refused")
			}
			got = <-ch
		} else {
			got = callText(t, u, "gen", `{}`)
		}
		if !strings.Contains(got, `"text":"1"`) || strings.Contains(got, "error") {
			t.Errorf("fast=%v: after the session expired gen = %s", fast, got)
		}
	}
}

// TestStandaloneStreamRefused: servers without a standalone event stream
// answer its GET with 405, or with 404 or 400; none of them is a lost
// session, and the upstream stays connected on the first session.
func TestStandaloneStreamRefused(t *testing.T) {
	for _, status := range []int{http.StatusMethodNotAllowed, http.StatusNotFound, http.StatusBadRequest} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			rs := &restartableServer{t: t, noGET: status}
			rs.start()
			defer rs.stop()
			opts := fastOptions(t)
			opts.KeepAlive = -1
			opts.HealthInterval = -1
			m := newManager(t, opts)
			u, _ := m.Add(Spec{Name: "web", URL: "http://" + rs.addr + "/mcp"}, AddOptions{})
			st := waitState(t, u, 10*time.Second, StateConnected)
			if got := callText(t, u, "gen", `{}`); !strings.Contains(got, `"text":"1"`) {
				t.Fatalf("gen = %s", got)
			}
			time.Sleep(300 * time.Millisecond) // room for a wrong reconnect
			if now := u.Status(); now.State != StateConnected || !now.Since.Equal(st.Since) || now.LastError != "" {
				t.Fatalf("GET refused with %d: status became %+v", status, now)
			}
			rs.mu.Lock()
			sessions := len(rs.seen)
			rs.mu.Unlock()
			if sessions != 1 {
				t.Errorf("%d sessions initialized, want 1", sessions)
			}
		})
	}
}

// TestKeepAliveDetectsDeath: an HTTP upstream without an event stream that
// dies is noticed by keep-alive pings within a few seconds.
func TestKeepAliveDetectsDeath(t *testing.T) {
	rs := &restartableServer{t: t, noGET: http.StatusMethodNotAllowed}
	rs.start()
	opts := fastOptions(t)
	opts.KeepAlive = 500 * time.Millisecond
	opts.Backoff = Backoff{Initial: time.Hour, MaxAttempts: 1}
	m := newManager(t, opts)
	u, _ := m.Add(Spec{Name: "web", URL: "http://" + rs.addr + "/mcp"}, AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	rs.stop()
	start := time.Now()
	st := waitState(t, u, 10*time.Second, StateFailed)
	t.Logf("dead upstream noticed after %s: %s", time.Since(start).Round(time.Millisecond), st.LastError)
	if !strings.Contains(st.LastError, "unreachable") {
		t.Errorf("last error %q, want unreachable", st.LastError)
	}
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
