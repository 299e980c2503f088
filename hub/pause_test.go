package hub

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pollClient is a raw session-era client of the hub's streamable HTTP
// endpoint, which sees the events of a call's stream as they come.
type pollClient struct {
	t   *testing.T
	url string
	hdr map[string][]string
}

func newPollClient(t *testing.T, url, version string) *pollClient {
	t.Helper()
	body := strings.Replace(initBody, `"2025-11-25"`, `"`+version+`"`, 1)
	resp := raw(t, "POST", url+"/mcp", body, map[string][]string{"Authorization": auth})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: HTTP %d", resp.StatusCode)
	}
	c := &pollClient{t: t, url: url, hdr: map[string][]string{"Authorization": auth,
		"Mcp-Session-Id": {resp.Header.Get("Mcp-Session-Id")}, "Mcp-Protocol-Version": {version}}}
	raw(t, "POST", url+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, c.hdr)
	return c
}

// do sends one request under ctx and returns its response's events: an
// event stream's as they come, or a JSON answer as the data of one event.
// The body has one reader, do's.
func (c *pollClient) do(ctx context.Context, method, body string, extra ...string) (*http.Response, <-chan sseEv) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, c.url+"/mcp", strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range c.hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v (the hub held the response back)", method, err)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	events := make(chan sseEv, 16)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		go readSSE(bufio.NewReader(resp.Body), events)
		return resp, events
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s: reading the answer: %v", method, err)
	}
	events <- sseEv{data: strings.TrimSpace(string(b))}
	close(events)
	return resp, events
}

// reconnection starts a call of test_reconnection whose upstream asks for
// a retry of retryMs.
func (c *pollClient) reconnection(ctx context.Context, id, retryMs int) (*http.Response, <-chan sseEv) {
	return c.do(ctx, "POST", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_reconnection","arguments":{"retryMs":%d}}}`, id, retryMs))
}

// resume comes back for a stream with GET and Last-Event-ID.
func (c *pollClient) resume(ctx context.Context, lastID string) <-chan sseEv {
	resp, events := c.do(ctx, "GET", "", "Last-Event-ID", lastID, "Accept", "text/event-stream")
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("resume from %s: HTTP %d", lastID, resp.StatusCode)
	}
	return events
}

// pausedStream reads a call's stream the hub closed because its upstream
// paused it: one event that says where the stream is and asks for the
// upstream's retry, then the end. It returns the event's id.
func pausedStream(t *testing.T, resp *http.Response, events <-chan sseEv, retryMs int) string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want the call's event stream", ct)
	}
	ev := next(t, events)
	if ev.id == "" || ev.retry != fmt.Sprint(retryMs) || ev.data != "" {
		t.Fatalf("event %+v, want one with an id, retry %d (the upstream's) and no data", ev, retryMs)
	}
	select {
	case more, ok := <-events:
		if ok {
			t.Fatalf("after the pause the stream goes on with %+v, want its end", more)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream stays open after the pause")
	}
	return ev.id
}

// answerOn reads events until the answer to id, which must be a result.
func answerOn(t *testing.T, events <-chan sseEv, id int) string {
	t.Helper()
	for {
		ev := next(t, events)
		if strings.Contains(ev.data, fmt.Sprintf(`"id":%d`, id)) {
			if !strings.Contains(ev.data, "Reconnection test completed") {
				t.Fatalf("answer %s", ev.data)
			}
			return ev.data
		}
	}
}

// TestUpstreamPauseRelayed: an upstream that closes a call's response
// stream before the answer (SEP-1699 polling, the fixture's
// test_reconnection) and asks for a retry delay has the hub wait that
// delay before it resumes (the client MUST respect retry), unless the
// call's client can be told: a 2025-11-25 streamable HTTP client's stream
// is closed the same way, with the upstream's retry, and the hub resumes
// the upstream's stream when that client comes back. The retries here are
// 30 s and the test gives up long before: the answers come because the
// client's reconnect was relayed. Upstreams that speak the session era
// and both eras (a session-era client's calls go over a session beside
// the stateless connection).
func TestUpstreamPauseRelayed(t *testing.T) {
	for _, eras := range []string{"session", "both"} {
		t.Run(eras, func(t *testing.T) {
			_, srv := startHTTPHub(t, nil, httpFixture(t, "poll", "-era", eras, "-conformance", "-only", "echo"))
			c := newPollClient(t, srv.URL, "2025-11-25")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range 2 { // the second on a warm connection
				id := 7 + i
				resp, events := c.reconnection(ctx, id, 30000)
				lastID := pausedStream(t, resp, events, 30000)
				answerOn(t, c.resume(ctx, lastID), id)
			}
		})
	}
}

// TestUpstreamPauseUnrelayed: whoever is not told of an upstream's pause
// gets the answer after the hub waited the retry the upstream asked for:
// a stdio client, and a 2025-06-18 client (which expects the answer on
// the stream it opened: servers may close it early only from 2025-11-25);
// and a client told of the pause that does not come back finds the
// answer kept for its resume, the hub having resumed the upstream's
// stream itself after the retry. Several sessions on one upstream: one
// client's reconnect resumes its own call's stream alone, not the stdio
// client's call waiting meanwhile.
func TestUpstreamPauseUnrelayed(t *testing.T) {
	h, srv := startHTTPHub(t, nil, httpFixture(t, "poll", "-conformance", "-only", "echo"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const stdioRetry = 2000
	stdio := stdioClient(t, h)
	stdioAnswer := make(chan []byte, 1)
	stdio.mu.Lock()
	stdio.waiting["5"] = stdioAnswer
	stdio.mu.Unlock()
	start := time.Now()
	stdio.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_reconnection","arguments":{"retryMs":%d}}}`, stdioRetry))

	// Meanwhile, on the same upstream: a client told of its call's pause
	// comes back at once.
	c := newPollClient(t, srv.URL, "2025-11-25")
	resp, events := c.reconnection(ctx, 7, 30000)
	answerOn(t, c.resume(ctx, pausedStream(t, resp, events, 30000)), 7)

	select {
	case got := <-stdioAnswer:
		if d := time.Since(start); d < stdioRetry*time.Millisecond {
			t.Errorf("the stdio call was answered after %s: the upstream's retry (%dms) was not waited", d, stdioRetry)
		}
		if !strings.Contains(string(got), "Reconnection test completed") {
			t.Errorf("stdio call: %s", got)
		}
	case <-ctx.Done():
		t.Fatal("no answer to the stdio call")
	}

	// A client told of the pause that does not come back in time.
	resp, events = c.reconnection(ctx, 8, 300)
	lastID := pausedStream(t, resp, events, 300)
	time.Sleep(time.Second)
	answerOn(t, c.resume(ctx, lastID), 8)

	// A 2025-06-18 client gets its answer on the POST it made.
	old := newPollClient(t, srv.URL, "2025-06-18")
	start = time.Now()
	_, events = old.reconnection(ctx, 9, 500)
	answerOn(t, events, 9) // as JSON or on an event stream
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("the 2025-06-18 call was answered after %s: the upstream's retry (500ms) was not waited", d)
	}
}

// TestUpstreamPauseSDKClient: go-sdk's streamable client through the hub
// follows a relayed pause as it follows a server's own: it resumes after
// the retry it was told and gets the answer.
func TestUpstreamPauseSDKClient(t *testing.T) {
	_, srv := startHTTPHub(t, nil, httpFixture(t, "poll", "-era", "both", "-conformance", "-only", "echo"))
	cs := sdkSession(t, srv.URL, false, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_reconnection", Arguments: map[string]any{"retryMs": 200}})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "Reconnection test completed") {
			t.Fatalf("call %d: %+v", i, res.Content)
		}
	}
}
