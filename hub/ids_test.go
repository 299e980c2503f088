package hub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// A rawPeer is a JSON-RPC client of one hub session that sees the bytes: it
// sends lines as written and returns what the hub wrote, unparsed.
type rawPeer interface {
	// send sends one message. It may block until the hub answers it (a
	// streamable HTTP POST), so send from a goroutine what must overlap.
	send(t *testing.T, line string)
	// next returns the next response (notifications and requests are
	// skipped).
	next(t *testing.T) []byte
}

// peerClient bounds every HTTP request of a raw peer, so that a hub that
// never answers fails a test instead of hanging it.
var peerClient = &http.Client{Timeout: 20 * time.Second}

// lineQueue collects the messages a hub sends a peer.
type lineQueue chan []byte

func (q lineQueue) next(t *testing.T) []byte {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case line := <-q:
			if m, err := wire.Parse(line); err == nil && m.IsResponse() {
				return line
			}
		case <-deadline:
			t.Fatal("no response from the hub within 20 s")
			return nil
		}
	}
}

// stdioPeer is a session of h over an in-process stdio pipe.
type stdioPeer struct {
	lineQueue
	w io.Writer
}

func newStdioPeer(t *testing.T, h *Hub) rawPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = h.ServeStdio(ctx, inR, outW)
	}()
	p := &stdioPeer{lineQueue: make(lineQueue, 256), w: inW}
	go func() {
		r := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			p.lineQueue <- bytes.TrimSuffix(line, []byte("\n"))
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-served
		outW.Close()
	})
	return p
}

func (p *stdioPeer) send(t *testing.T, line string) {
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		t.Errorf("write: %v", err)
	}
}

// sseEvents calls fn with the type and data of each event of an event
// stream until it ends.
func sseEvents(r io.Reader, fn func(event, data string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	event, data := "message", ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != "" {
				fn(event, data)
			}
			event, data = "message", ""
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// streamablePeer is a session over streamable HTTP: each message is a POST,
// its answer the POST's response (JSON or an event stream).
type streamablePeer struct {
	lineQueue
	url string
	sid string // set by the first POST (initialize)
}

func newStreamablePeer(t *testing.T, url string) rawPeer {
	return &streamablePeer{lineQueue: make(lineQueue, 256), url: url + "/mcp"}
}

func (p *streamablePeer) send(t *testing.T, line string) {
	req, err := http.NewRequest("POST", p.url, strings.NewReader(line))
	if err != nil {
		t.Errorf("POST: %v", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if p.sid != "" {
		req.Header.Set("Mcp-Session-Id", p.sid)
	}
	resp, err := peerClient.Do(req)
	if err != nil {
		t.Errorf("POST: %v", err)
		return
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && p.sid == "" {
		p.sid = sid
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sseEvents(resp.Body, func(_, data string) { p.lineQueue <- []byte(data) })
		return
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusAccepted {
		return // a notification
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST %s: %d %s", line, resp.StatusCode, body)
		return
	}
	p.lineQueue <- body
}

// ssePeer is a session over the legacy HTTP+SSE transport.
type ssePeer struct {
	lineQueue
	endpoint string
}

func newSSEPeer(t *testing.T, url string) rawPeer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", url+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	p := &ssePeer{lineQueue: make(lineQueue, 256)}
	endpoint := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		sseEvents(resp.Body, func(event, data string) {
			if event == "endpoint" {
				endpoint <- data
				return
			}
			p.lineQueue <- []byte(data)
		})
	}()
	select {
	case e := <-endpoint:
		p.endpoint = url + e
	case <-time.After(10 * time.Second):
		t.Fatal("no endpoint event on /sse")
	}
	return p
}

func (p *ssePeer) send(t *testing.T, line string) {
	req, err := http.NewRequest("POST", p.endpoint, strings.NewReader(line))
	if err != nil {
		t.Errorf("POST: %v", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := peerClient.Do(req)
	if err != nil {
		t.Errorf("POST: %v", err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("POST %s: %d %s", line, resp.StatusCode, body)
	}
}

// idTransports are the ways a client reaches a hub.
var idTransports = []struct {
	name string
	peer func(t *testing.T, h *Hub, url string) rawPeer
}{
	{"stdio", func(t *testing.T, h *Hub, _ string) rawPeer { return newStdioPeer(t, h) }},
	{"streamable HTTP", func(t *testing.T, _ *Hub, url string) rawPeer { return newStreamablePeer(t, url) }},
	{"legacy SSE", func(t *testing.T, _ *Hub, url string) rawPeer { return newSSEPeer(t, url) }},
}

const initParams = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`

func request(id, method, params string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
}

// rpcCall sends a request and returns its response, parsed; the response
// must carry exactly the id bytes of the request.
func rpcCall(t *testing.T, p rawPeer, id, method, params string) wire.Message {
	t.Helper()
	p.send(t, request(id, method, params))
	line := p.next(t)
	m, err := wire.Parse(line)
	if err != nil {
		t.Fatalf("%s: response %s: %v", method, line, err)
	}
	if !bytes.Equal(m.ID, []byte(id)) {
		t.Fatalf("%s with id %s: answered with id %s: %.300s", method, id, m.ID, line)
	}
	return m
}

// errorCode returns the code of an error response, or 0 and a failure.
func errorCode(t *testing.T, m wire.Message) int64 {
	t.Helper()
	var e struct {
		Code    int64
		Message string
	}
	if m.Error == nil || json.Unmarshal(m.Error, &e) != nil {
		t.Fatalf("want an error response, got result %.300s", m.Result)
	}
	return e.Code
}

// initialize starts the session with a request of id 0.
func initialize(t *testing.T, p rawPeer) {
	t.Helper()
	if m := rpcCall(t, p, "0", "initialize", initParams); m.Error != nil {
		t.Fatalf("initialize: %s", m.Error)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestIDsByteForByte: every answer carries the id exactly as the client
// wrote it (numbers go-sdk would truncate or overflow, escapes it would
// normalize), on the forwarded path (tools/call of an upstream tool), on the
// hub's own raw path (hub_search_tools) and on everything go-sdk answers
// (initialize, ping, logging/setLevel, hub_list_servers), over stdio,
// streamable HTTP and legacy SSE.
func TestIDsByteForByte(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("fx", "-only", "echo"))
	ids := []string{
		`4.5`, `1e2`, `-0`, `9223372036854775808`, `-9223372036854775809`, `1.0`, `0.1e-3`,
		`"x"`, `""`, `"\u0078"`, `"caf\u00e9 \"q\""`, `"` + strings.Repeat("long-id-", 512) + `"`,
	}
	calls := []struct{ method, params, want string }{
		{"ping", `{}`, `{}`},
		{"tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, `hi`},
		{"tools/call", `{"name":"hub_list_servers","arguments":{}}`, `fx`},
		{"tools/call", `{"name":"hub_search_tools","arguments":{"query":"echo"}}`, `echo`},
		{"logging/setLevel", `{"level":"error"}`, `{}`},
		{"tools/list", `{}`, `"echo"`},
	}
	for _, tr := range idTransports {
		t.Run(tr.name, func(t *testing.T) {
			for _, id := range ids {
				p := tr.peer(t, h, srv.URL)
				if m := rpcCall(t, p, id, "initialize", initParams); m.Error != nil {
					t.Fatalf("initialize with id %.40s: %s", id, m.Error)
				}
				p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				for _, c := range calls {
					m := rpcCall(t, p, id, c.method, c.params)
					if m.Error != nil || !strings.Contains(string(m.Result), c.want) {
						t.Errorf("%s %s with id %.40s: error %s result %.200s", c.method, c.params, id, m.Error, m.Result)
					}
				}
			}
			t.Logf("%d ids × initialize and %d requests each, answered under the id bytes as written (%s, and a 4 KiB string)",
				len(ids), len(calls), strings.Join(ids[:len(ids)-1], " "))
		})
	}
}

// TestNullIDRefused: a request with id null gets -32600 under id null, on
// every path, and the session goes on serving.
func TestNullIDRefused(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("fx", "-only", "echo"))
	for _, tr := range idTransports {
		t.Run(tr.name, func(t *testing.T) {
			p := tr.peer(t, h, srv.URL)
			initialize(t, p)
			for _, c := range []struct{ method, params string }{
				{"ping", `{}`},
				{"tools/call", `{"name":"echo","arguments":{"text":"hi"}}`},
				{"tools/call", `{"name":"hub_list_servers","arguments":{}}`},
				{"tools/list", `{}`},
				{"initialize", initParams},
			} {
				if code := errorCode(t, rpcCall(t, p, "null", c.method, c.params)); code != -32600 {
					t.Errorf("%s with id null: code %d, want -32600", c.method, code)
				}
			}
			if m := rpcCall(t, p, "7", "tools/call", `{"name":"echo","arguments":{"text":"still here"}}`); !strings.Contains(string(m.Result), "still here") {
				t.Errorf("after the refusals: %s %s", m.Result, m.Error)
			}
		})
	}
}

// TestDuplicateInFlightID: a request reusing the id of a request still in
// flight is refused with -32600 under that id, and the first request still
// gets its own answer: a forwarded tools/call and a ping (which go-sdk
// answers), and two tools/calls.
func TestDuplicateInFlightID(t *testing.T) {
	slow := `{"name":"sleep_ms","arguments":{"ms":3000}}`
	for _, tr := range idTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel() // each transport its own hub: the cases sleep
			h, srv := startHTTPHub(t, nil, fixtureSpec("fx", "-only", "echo,sleep_ms"))
			for _, second := range []struct{ method, params string }{
				{"ping", `{}`},
				{"tools/call", `{"name":"echo","arguments":{"text":"second"}}`},
				{"tools/call", `{"name":"hub_list_servers","arguments":{}}`},
			} {
				p := tr.peer(t, h, srv.URL)
				initialize(t, p)
				before := inflightIDs(h)
				go p.send(t, request("200", "tools/call", slow))
				// Wait until the hub has the call in flight (a streamable
				// POST does not return before its answer).
				eventually(t, 10*time.Second, "the slow call in flight", func() bool { return inflightIDs(h) > before })
				p.send(t, request("200", second.method, second.params))
				first := p.next(t)
				m, err := wire.Parse(first)
				if err != nil || string(m.ID) != "200" {
					t.Fatalf("%s: first answer %s: %v", second.method, first, err)
				}
				if code := errorCode(t, m); code != -32600 {
					t.Errorf("the duplicate %s %s: code %d, want -32600: %s", second.method, second.params, code, first)
				}
				last := p.next(t)
				m, err = wire.Parse(last)
				if err != nil || string(m.ID) != "200" || m.Error != nil || !strings.Contains(string(m.Result), "slept 3000 ms") {
					t.Fatalf("%s: the slow call's answer: %s (%v)", second.method, last, err)
				}
				// The id is free again.
				if m := rpcCall(t, p, "200", "ping", `{}`); m.Error != nil {
					t.Errorf("ping 200 after the call: %s", m.Error)
				}
			}
		})
	}
}

// inflightIDs counts the client requests in flight on every session of h.
func inflightIDs(h *Hub) int {
	h.mu.Lock()
	sessions := make([]*session, 0, len(h.sessions))
	for s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	n := 0
	for _, s := range sessions {
		s.mu.Lock()
		n += len(s.inflight)
		s.mu.Unlock()
	}
	return n
}

// TestLifecycleErrorCodes: requests before initialize and a second
// initialize get -32600 (not go-sdk's code 0); ping works before
// initialize; an initialize that failed may be sent again.
func TestLifecycleErrorCodes(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("fx", "-only", "echo"))
	early := []struct{ method, params string }{
		{"tools/list", `{}`},
		{"tools/call", `{"name":"echo","arguments":{"text":"hi"}}`},
		{"tools/call", `{"name":"hub_list_servers","arguments":{}}`},
		{"logging/setLevel", `{"level":"error"}`},
		{"resources/list", `{}`},
		{"prompts/list", `{}`},
	}
	for _, tr := range idTransports {
		t.Run(tr.name, func(t *testing.T) {
			p := tr.peer(t, h, srv.URL)
			if tr.name != "streamable HTTP" { // there a session begins with initialize
				for _, c := range early {
					if code := errorCode(t, rpcCall(t, p, "1", c.method, c.params)); code != -32600 {
						t.Errorf("%s before initialize: code %d, want -32600", c.method, code)
					}
				}
				if m := rpcCall(t, p, "2", "ping", `{}`); m.Error != nil {
					t.Errorf("ping before initialize: %s", m.Error)
				}
				// An initialize go-sdk refuses (no params) may be sent again.
				p.send(t, `{"jsonrpc":"2.0","id":3,"method":"initialize"}`)
				m, err := wire.Parse(p.next(t))
				if err != nil || string(m.ID) != "3" {
					t.Fatalf("initialize without params: %v %s", err, m.ID)
				}
				if code := errorCode(t, m); code == 0 {
					t.Errorf("initialize without params: code 0: %s", m.Error)
				}
			}
			initialize(t, p)
			if code := errorCode(t, rpcCall(t, p, "4", "initialize", initParams)); code != -32600 {
				t.Errorf("second initialize: code %d, want -32600", code)
			}
			if m := rpcCall(t, p, "5", "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`); m.Error != nil {
				t.Errorf("tools/call after initialize: %s", m.Error)
			}
		})
	}
}

// TestIDKey: ids that are the same JSON value share a key; others do not.
func TestIDKey(t *testing.T) {
	same := [][]string{
		{`1`, `1.0`, `1e0`, `10e-1`, ` 1`},
		{`0`, `-0`, `0.0`, `-0.0`},
		{`"a"`, `"\u0061"`},
		{`"é"`, `"\u00e9"`, `"\u00E9"`},
		{`9223372036854775808`},
	}
	seen := map[string]string{}
	for _, group := range same {
		key := canonicalID([]byte(group[0]))
		for _, id := range group[1:] {
			if k := canonicalID([]byte(id)); k != key {
				t.Errorf("%s and %s: keys %q and %q", group[0], id, key, k)
			}
		}
		if other, dup := seen[key]; dup {
			t.Errorf("%s and %s share key %q", group[0], other, key)
		}
		seen[key] = group[0]
	}
	for _, pair := range [][2]string{{`1`, `"1"`}, {`4.5`, `4`}, {`9223372036854775808`, `-9223372036854775808`}, {`""`, `0`}} {
		if canonicalID([]byte(pair[0])) == canonicalID([]byte(pair[1])) {
			t.Errorf("%s and %s share a key", pair[0], pair[1])
		}
	}
	num, str := []byte(`12345`), []byte(`"req-17"`)
	if n := testing.AllocsPerRun(100, func() { _, _ = idKey(num), idKey(str) }); n != 0 {
		t.Errorf("idKey of plain ids allocates %v times", n)
	}
}

// waitRequest returns the next request with the given method the hub sends
// the peer (other messages are dropped).
func (q lineQueue) waitRequest(t *testing.T, method string) wire.Message {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case line := <-q:
			if m, err := wire.Parse(line); err == nil && m.IsRequest() && m.Method == method {
				return m
			}
		case <-deadline:
			t.Fatalf("no %s request from the hub within 20 s", method)
		}
	}
}

// TestCancelReachesTheRightRequest: go-sdk knows the requests it handles by
// ids of the hub's own, so a client's notifications/cancelled reaches the
// request it names and no other: cancelling id 4 leaves request 4.5 alone
// (go-sdk would read both as 4), and cancelling "x-2" cancels "x-2".
func TestCancelReachesTheRightRequest(t *testing.T) {
	h, _ := startHTTPHub(t, nil)
	p := newStdioPeer(t, h).(*stdioPeer)
	if m := rpcCall(t, p, "0", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`); m.Error != nil {
		t.Fatal(m.Error)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	add := func(name string) string {
		return `{"name":"hub_add_server","arguments":{"name":"` + name + `","command":` + strconvQuote(fixture) + `,"args":["-only","echo"]}}`
	}

	p.send(t, request("4.5", "tools/call", add("four")))
	ask := p.waitRequest(t, "elicitation/create")
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"no such request"}}`)
	p.send(t, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":{"action":"accept","content":{}}}`)
	line := p.next(t)
	if m, err := wire.Parse(line); err != nil || string(m.ID) != "4.5" || !strings.Contains(string(m.Result), `"approval":"approved"`) {
		t.Fatalf("hub_add_server 4.5 after a cancel of 4: %.400s", line)
	}

	p.send(t, request(`"x-2"`, "tools/call", add("two")))
	p.waitRequest(t, "elicitation/create")
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x-2"}}`)
	line = p.next(t)
	// Cancelled while asking: not approved (the registration is left
	// pending, or not stored at all).
	if m, err := wire.Parse(line); err != nil || string(m.ID) != `"x-2"` || strings.Contains(string(m.Result), `"approval":"approved"`) {
		t.Fatalf("hub_add_server \"x-2\" cancelled while asking: %.400s", line)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
