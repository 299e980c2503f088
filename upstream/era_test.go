package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEraNegotiated: the hub speaks the newest era an upstream speaks:
// 2026-07-28 with one that answers server/discover with it (on HTTP only
// when asked with the MCP-Protocol-Version header), the session era with
// one that does not, whatever its transport.
func TestEraNegotiated(t *testing.T) {
	for _, tt := range []struct {
		name      string
		spec      func(t *testing.T) Spec
		stateless bool
	}{
		{"http, both eras", func(t *testing.T) Spec {
			return Spec{Name: "u", URL: startHTTPFixture(t, "http", "-era", "both", "-only", "echo")}
		}, true},
		{"http, stateless only", func(t *testing.T) Spec {
			return Spec{Name: "u", URL: startHTTPFixture(t, "http", "-era", "stateless", "-only", "echo")}
		}, true},
		{"http, sessions only", func(t *testing.T) Spec {
			return Spec{Name: "u", URL: startHTTPFixture(t, "http", "-only", "echo")}
		}, false},
		{"legacy sse", func(t *testing.T) Spec {
			return Spec{Name: "u", URL: startHTTPFixture(t, "sse", "-only", "echo")}
		}, false},
		{"stdio", func(t *testing.T) Spec { return Spec{Name: "u", Command: fixture, Args: []string{"-only", "echo"}} }, true},
		{"stdio pinned", func(t *testing.T) Spec {
			return Spec{Name: "u", Command: fixture, Args: []string{"-only", "echo"}, ProtocolVersion: "2025-11-25"}
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, fastOptions(t))
			u, err := m.Add(tt.spec(t), AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			waitState(t, u, 10*time.Second, StateConnected)
			c := u.Conn()
			if c.Stateless() != tt.stateless {
				t.Errorf("negotiated %s, want stateless %v", c.ProtocolVersion(), tt.stateless)
			}
			if got := callText(t, u, "echo", `{"message":"m"}`); !strings.Contains(got, `message`) {
				t.Errorf("echo = %s", got)
			}
		})
	}
}

// TestResumedStreamDeliversReply: an upstream that closes a call's response
// stream (SEP-1699 polling: the fixture's test_reconnection closes it at
// once with a retry of 500ms and answers 100ms later) is resumed with GET
// and Last-Event-ID after the retry delay, and the answer that comes on the
// resumed stream reaches the call; the link stops reading that stream
// there (a server may keep it open), so nothing lingers.
func TestResumedStreamDeliversReply(t *testing.T) {
	url := startHTTPFixture(t, "http", "-conformance", "-only", "echo")
	m := newManager(t, fastOptions(t))
	u, err := m.Add(Spec{Name: "poll", URL: url}, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, u, 10*time.Second, StateConnected)
	if u.Conn().Stateless() {
		t.Fatal("the session era is what resumes streams")
	}
	before := runtime.NumGoroutine()
	for i := range 3 {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		r, err := u.Call(ctx, "tools/call", []byte(`{"name":"test_reconnection","arguments":{}}`))
		cancel()
		if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "Reconnection test completed") {
			t.Fatalf("call %d: %s %s %v", i, r.Result, r.Error, err)
		}
		if d := time.Since(start); d < 450*time.Millisecond {
			t.Errorf("call %d answered after %s: the retry delay (500ms) was not respected", i, d)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Errorf("goroutines %d → %d after 3 resumed calls: resumed streams linger", before, after)
	}
}

// lenientServer is a 2026-07-28-only server that breaks the revision's
// rule: its tool asks the client with a sampling request on the call's
// response stream, and takes the answer from a POST of its own (checking
// the version header first, as a 2026-07-28 server checks every POST).
func lenientServer(t *testing.T) (url string, answerHeader <-chan string) {
	answers := make(chan []byte, 1)
	headers := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || json.Unmarshal(body, &m) != nil {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		v := r.Header.Get("Mcp-Protocol-Version")
		if v != "2026-07-28" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}}`))
			return
		}
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
		}
		switch m.Method {
		case "server/discover":
			reply(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete","ttlMs":0,"cacheScope":"private"}`)
		case "tools/list":
			reply(`{"tools":[{"name":"ask","inputSchema":{"type":"object"}}],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`)
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":9}}`+"\n\n")
			w.(http.Flusher).Flush()
			select {
			case a := <-answers:
				_, _ = io.WriteString(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":`+strconv.Quote("answered "+string(a))+`}],"resultType":"complete"}}`+"\n\n")
			case <-r.Context().Done():
			}
		case "":
			headers <- v
			answers <- m.Result
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, headers
}

// TestStatelessServerAsksAnyway: a 2026-07-28 server that sends a request
// of its own on a call's response stream (which the revision forbids) is
// still served: the request reaches the client side, and the answer goes
// back as a 2026-07-28 POST, which such a server can take.
func TestStatelessServerAsksAnyway(t *testing.T) {
	url, header := lenientServer(t)
	ev := &askEvents{}
	opts := fastOptions(t)
	opts.Events = ev
	m := newManager(t, opts)
	u, err := m.Add(Spec{Name: "lenient", URL: url}, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, u, 10*time.Second, StateConnected)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := u.Call(ctx, "tools/call", []byte(`{"name":"ask","arguments":{}}`))
	if err != nil || !strings.Contains(string(r.Result), "forty-two") {
		t.Fatalf("call = %s %s %v, want the answer the server got back", r.Result, r.Error, err)
	}
	if v := <-header; v != "2026-07-28" {
		t.Errorf("the answer was posted with MCP-Protocol-Version %q", v)
	}
}

// TestRefusedDiscoverIsNotAnEra: an upstream that refuses server/discover
// for want of authorization (401, 403) has not said it speaks only the
// session era: the attempt fails with the refusal, and the hub sends no
// initialize (which go-sdk falls back to on any failure of discover: a
// stateless-only server refuses it for its missing MCP-Protocol-Version
// header, hiding the reason, and an OAuth upstream would be authorized a
// second time; oauth's TestLoginNegotiatesTheEraAfterAuthorizing has a
// discover whose authorization failed).
func TestRefusedDiscoverIsNotAnEra(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var mu sync.Mutex
			var methods []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var msg struct {
					Method string `json:"method"`
				}
				_ = json.NewDecoder(r.Body).Decode(&msg)
				mu.Lock()
				methods = append(methods, msg.Method)
				mu.Unlock()
				http.Error(w, `{"error":"no entry"}`, status)
			}))
			t.Cleanup(srv.Close)
			opts := fastOptions(t)
			opts.Backoff.MaxAttempts = 1
			m := newManager(t, opts)
			u, err := m.Add(Spec{Name: "u", URL: srv.URL + "/mcp"}, AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := waitState(t, u, 10*time.Second, StateFailed)
			want := fmt.Sprintf("server/discover refused: HTTP %d %s", status, http.StatusText(status))
			if !strings.Contains(st.LastError, want) || !strings.Contains(st.LastError, "no entry") {
				t.Errorf("last error %q, want %q and the server's answer", st.LastError, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if slices.Contains(methods, "initialize") || !slices.Contains(methods, "server/discover") {
				t.Errorf("the upstream got %q, want server/discover and no initialize", methods)
			}
		})
	}
}
