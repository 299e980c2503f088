package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// switchTransport sends a client's requests to one hub process until told
// to send them to another: a load balancer without affinity, as a stateless
// client may meet.
type switchTransport struct {
	tok    string
	target atomic.Pointer[url.URL]
	sids   atomic.Int32 // exchanges that carried an Mcp-Session-Id
}

func (s *switchTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	u := s.target.Load()
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
	r.Header.Set("Authorization", "Bearer "+s.tok)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if r.Header.Get("Mcp-Session-Id") != "" || (resp != nil && resp.Header.Get("Mcp-Session-Id") != "") {
		s.sids.Add(1)
	}
	return resp, err
}

// TestStatelessAnyReplica: a go-sdk client speaking 2026-07-28 discovers
// and calls on one hub process, then its requests go to a second hub
// process started afterwards on the same data dir, which serves them
// without any handshake of that client.
func TestStatelessAnyReplica(t *testing.T) {
	data := t.TempDir()
	tok := strings.Repeat("s", 32)
	cfg := fmt.Sprintf("http:\n  token: %s\nservers:\n  fx:\n    command: %s\n    args: [-only, \"echo,progress\"]\n", tok, fixtureBin)
	_, baseA := startHTTPProc(t, data, cfg)
	st := &switchTransport{tok: tok}
	a, _ := url.Parse(baseA)
	st.target.Store(a)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var progress atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://replica/mcp", HTTPClient: &http.Client{Transport: st}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	echo := func(text string) {
		t.Helper()
		var res *mcp.CallToolResult
		waitFor(t, 20*time.Second, "echo "+text, func() bool {
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
			return err == nil && !res.IsError
		})
		if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, text) {
			t.Fatalf("echo %q = %q", text, got)
		}
	}
	echo("on A")

	_, baseB := startHTTPProc(t, data, cfg)
	b, _ := url.Parse(baseB)
	st.target.Store(b)
	echo("on B")
	p := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 2, "delay_ms": 1}}
	p.SetProgressToken("b")
	if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
		t.Fatalf("progress on B: %v %v", res, err)
	}
	waitFor(t, 10*time.Second, "progress from B", func() bool { return progress.Load() == 2 })
	res, err := cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list on B: %v %v", res, err)
	}
	if n := st.sids.Load(); n != 0 {
		t.Errorf("%d exchanges carried an Mcp-Session-Id", n)
	}
}
