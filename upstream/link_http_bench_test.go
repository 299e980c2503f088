package upstream

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// BenchmarkHTTPCall measures one tools/call through a streamable HTTP link
// to the fixture (a separate process), answering with an SSE stream (as
// servers on the SDKs' defaults do) or with a JSON body. The allocations
// are the hub side's alone: the upstream runs in its own process.
//
//	go test -run '^$' -bench HTTPCall -benchmem ./upstream/
func BenchmarkHTTPCall(b *testing.B) {
	for _, reply := range []string{"sse", "json"} {
		b.Run(reply, func(b *testing.B) {
			args := []string{"-only", "echo"}
			if reply == "json" {
				args = append(args, "-json-response")
			}
			url := startHTTPFixture(b, "http", args...)
			m := NewManager(&Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), InitTimeout: 10 * time.Second})
			defer m.Close()
			u, err := m.Add(Spec{Name: "web", URL: url}, AddOptions{})
			if err != nil {
				b.Fatal(err)
			}
			params := []byte(`{"name":"echo","arguments":{"msg":"hello"}}`)
			ctx := context.Background()
			deadline := time.Now().Add(10 * time.Second)
			for u.Status().State != StateConnected {
				if time.Now().After(deadline) {
					b.Fatalf("not connected: %+v", u.Status())
				}
				time.Sleep(10 * time.Millisecond)
			}
			b.ReportAllocs()
			b.SetParallelism(16) // 32 in flight on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r, err := u.Call(ctx, "tools/call", params)
					if err != nil || r.Error != nil {
						b.Errorf("call: %v %s", err, r.Error)
						return
					}
				}
			})
		})
	}
}
