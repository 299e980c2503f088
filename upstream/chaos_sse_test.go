package upstream

// Chaos and fault tests (issue 5; security plan §7, D-series) of the
// upstream manager, as in chaos_test.go: a legacy SSE upstream whose
// connection goes silent or is cut.

import (
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proxy is a TCP proxy in front of an upstream that can go silent (stop
// forwarding on its open connections while keeping them open, as an idle
// proxy that dropped them does) or cut its connections. New connections
// are always forwarded.
type proxy struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns map[*proxyConn]bool
	wg    sync.WaitGroup
}

type proxyConn struct {
	client, server net.Conn
	silent         atomic.Bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target, conns: map[*proxyConn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pc := &proxyConn{client: c, server: s}
		p.mu.Lock()
		p.conns[pc] = true
		p.mu.Unlock()
		var both sync.WaitGroup
		pipe := func(dst, src net.Conn) {
			buf := make([]byte, 32<<10)
			for {
				n, err := src.Read(buf)
				if n > 0 && !pc.silent.Load() {
					if _, werr := dst.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			// Either side gone: close both, so the other copy ends too.
			c.Close()
			s.Close()
		}
		both.Add(2)
		p.wg.Go(func() { defer both.Done(); pipe(s, c) })
		p.wg.Go(func() { defer both.Done(); pipe(c, s) })
		p.wg.Go(func() {
			both.Wait()
			p.mu.Lock()
			delete(p.conns, pc)
			p.mu.Unlock()
		})
	}
}

// silence stops forwarding on every open connection.
func (p *proxy) silence() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pc := range p.conns {
		pc.silent.Store(true)
	}
	return len(p.conns)
}

// cut closes every open connection.
func (p *proxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pc := range p.conns {
		pc.client.Close()
		pc.server.Close()
	}
	return len(p.conns)
}

// TestD15SSEUpstreamSilentOrCut: a legacy SSE upstream behind a proxy that
// goes silent is found unhealthy by its keep-alive pings and reconnected;
// one whose connections are cut is noticed at once and reconnected.
func TestD15SSEUpstreamSilentOrCut(t *testing.T) {
	url := startHTTPFixture(t, "sse", "-only", "echo")
	target := strings.TrimPrefix(strings.TrimSuffix(url, "/sse"), "http://")
	p := startProxy(t, target)
	opts := fastOptions(t)
	opts.KeepAlive = 200 * time.Millisecond
	opts.HealthFailures = 1
	opts.Backoff = Backoff{Initial: 100 * time.Millisecond, Max: 500 * time.Millisecond, MaxAttempts: 5}
	var (
		mu      sync.Mutex
		states  []State
		lastErr string
	)
	var m *Manager
	opts.OnChange = func(name string) {
		if u, ok := m.Get(name); ok {
			st := u.Status()
			mu.Lock()
			if len(states) == 0 || states[len(states)-1] != st.State {
				states = append(states, st.State)
			}
			if st.LastError != "" {
				lastErr = st.LastError
			}
			mu.Unlock()
		}
	}
	m = newManager(t, opts)
	u, _ := m.Add(Spec{Name: "sse", URL: "http://" + p.ln.Addr().String() + "/sse"}, AddOptions{})
	if u.Spec().Transport != TransportSSE {
		t.Fatalf("transport %s, want sse", u.Spec().Transport)
	}
	waitState(t, u, 10*time.Second, StateConnected)
	callText(t, u, "echo", `{"n":0}`)
	sinceState := func() []State {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(states)
		states = states[:0]
		return out
	}

	for _, tc := range []struct {
		name string
		do   func() int
		want State // the state that shows the upstream was found dead
	}{
		{"silent", p.silence, StateUnhealthy},
		{"cut", p.cut, StateFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := u.Status().Since
			sinceState()
			n := tc.do()
			start := time.Now()
			eventually(t, 20*time.Second, "a new connection", func() bool {
				st := u.Status()
				return st.State == StateConnected && st.Since.After(before)
			})
			seen := sinceState()
			mu.Lock()
			why := lastErr
			mu.Unlock()
			t.Logf("%s (%d connections): reconnected after %s; states %v; error %q",
				tc.name, n, time.Since(start).Round(time.Millisecond), seen, why)
			if n == 0 {
				t.Fatal("the proxy had no open connection to act on")
			}
			if !slices.Contains(seen, tc.want) {
				t.Errorf("states %v, want %s on the way", seen, tc.want)
			}
			if got := callText(t, u, "echo", `{"n":1}`); !strings.Contains(got, `\"n\":1`) {
				t.Errorf("echo after reconnecting = %s", got)
			}
		})
	}
}
