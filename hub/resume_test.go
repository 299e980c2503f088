package hub

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvent is one event read off a stream by readSSE.
type sseEv struct{ id, retry, data string }

// readSSE reads events from a stream until n with data arrived (or the
// stream ends), sending each on the channel.
func readSSE(r *bufio.Reader, events chan<- sseEv) {
	defer close(events)
	var ev sseEv
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev != (sseEv{}) {
				events <- ev
			}
			ev = sseEv{}
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "retry: "):
			ev.retry = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		}
	}
}

func next(t *testing.T, events <-chan sseEv) sseEv {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10s")
	}
	return sseEv{}
}

// TestStreamResumption: the hub's own event streams can be resumed
// (SEP-1699): a POST whose answer is an event stream opens with a priming
// event (an id, the retry delay, no data) and numbers its events; a client
// whose connection broke comes back with GET and Last-Event-ID and gets
// what it missed and the rest of the request's stream, its answer last,
// each event once. The standalone stream is numbered and primed too.
func TestStreamResumption(t *testing.T) {
	_, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "progress"))
	resp := raw(t, "POST", srv.URL+"/mcp", initBody, map[string][]string{"Authorization": auth})
	sid := resp.Header.Get("Mcp-Session-Id")
	hdr := map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-11-25"}}
	raw(t, "POST", srv.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)

	// A call that reports progress 6 times, 150ms apart: its answer is an
	// event stream.
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"progress","arguments":{"steps":6,"delay_ms":150},"_meta":{"progressToken":"tok"}}}`
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", strings.NewReader(body))
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	post, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan sseEv, 16)
	go readSSE(bufio.NewReader(post.Body), events)
	prime := next(t, events)
	if prime.id == "" || prime.retry != "1000" || prime.data != "" {
		t.Fatalf("first event = %+v, want a priming event (an id, retry, no data)", prime)
	}
	first := next(t, events)
	if first.id == "" || !strings.Contains(first.data, `"progress":1`) {
		t.Fatalf("second event = %+v, want progress 1 with an id", first)
	}
	cancel() // the connection breaks
	post.Body.Close()

	time.Sleep(400 * time.Millisecond) // progress goes on meanwhile
	get := raw(t, "GET", srv.URL+"/mcp", "", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid},
		"Mcp-Protocol-Version": {"2025-11-25"}, "Last-Event-ID": {first.id}, "Accept": {"text/event-stream"}})
	if get.StatusCode != http.StatusOK {
		t.Fatalf("resume: HTTP %d", get.StatusCode)
	}
	resumed := make(chan sseEv, 16)
	go readSSE(bufio.NewReader(get.Body), resumed)
	var progress []string
	for {
		ev := next(t, resumed)
		if strings.Contains(ev.data, `"id":7`) {
			if !strings.Contains(ev.data, `"result"`) {
				t.Errorf("answer = %s", ev.data)
			}
			break
		}
		progress = append(progress, ev.data)
	}
	if len(progress) != 5 || !strings.Contains(progress[0], `"progress":2`) || !strings.Contains(progress[4], `"progress":6`) {
		t.Errorf("after the resume: %d progress events %v, want 2 to 6, each once", len(progress), progress)
	}
	if _, ok := <-resumed; ok {
		t.Error("the resumed stream goes on after the answer")
	}
	// The stream is done: resuming it again finds nothing.
	again := raw(t, "GET", srv.URL+"/mcp", "", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid},
		"Mcp-Protocol-Version": {"2025-11-25"}, "Last-Event-ID": {first.id}, "Accept": {"text/event-stream"}})
	if again.StatusCode != http.StatusNotFound {
		t.Errorf("resuming a finished stream: HTTP %d, want 404", again.StatusCode)
	}

	// The standalone stream starts with a priming event too.
	g := raw(t, "GET", srv.URL+"/mcp", "", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid},
		"Mcp-Protocol-Version": {"2025-11-25"}, "Accept": {"text/event-stream"}})
	standalone := make(chan sseEv, 4)
	go readSSE(bufio.NewReader(g.Body), standalone)
	if ev := next(t, standalone); !strings.HasPrefix(ev.id, "g:") || ev.retry != "1000" || ev.data != "" {
		t.Errorf("standalone stream's first event = %+v, want a priming event", ev)
	}
}
