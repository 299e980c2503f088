package hub

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// BenchmarkHTTPFrontEcho measures a tools/call through the HTTP front
// (POST /mcp with a session) to a stdio upstream, 16 callers at a time on
// one session. The client is plain net/http; its allocations are counted
// too (about 45 per call).
//
//	go test -run '^$' -bench HTTPFrontEcho -benchmem ./hub/
func BenchmarkHTTPFrontEcho(b *testing.B) {
	for _, version := range benchEras {
		b.Run("upstream="+version, func(b *testing.B) { benchHTTPFrontEcho(b, version) })
	}
}

func benchHTTPFrontEcho(b *testing.B, version string) {
	spec := fixtureSpec("a", "-only", "echo")
	spec.ProtocolVersion = version
	_, srv := startHTTPHubOpts(b, &Options{}, nil, spec)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	var id atomic.Int64
	call := func() {
		resp := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"msg":"hello"}}}`, id.Add(1)+10))
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Contains(body, []byte("hello")) {
			b.Errorf("call: %v %s", err, body)
		}
	}
	for range 50 { // the upstream connects in the background
		call()
	}
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			call()
		}
	})
}
