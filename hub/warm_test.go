package hub

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestWarmStart: a hub that starts with 10 upstreams known from an earlier
// run lists all their tools at once from the capability cache, while every
// upstream (each taking 2 s to start) is still connecting; the tools are
// live once they connect, and a call made meanwhile waits for its upstream.
func TestWarmStart(t *testing.T) {
	const n = 10
	st, err := persist.Open(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	newHub := func() *Hub {
		h, err := New(&Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: testStore{st}, StorePoll: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	config := func(extra ...string) []ConfigServer {
		var cfg []ConfigServer
		for i := range n {
			args := append([]string{"-only", "echo", "-extra", fmt.Sprintf("tool_%02d", i)}, extra...)
			cfg = append(cfg, ConfigServer{Spec: fixtureSpec(fmt.Sprintf("up%02d", i), args...)})
		}
		return cfg
	}

	// The earlier run: upstreams connect and their inventories are stored.
	h1 := newHub()
	if err := h1.Start(t.Context(), config()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "inventories in the store", func() bool {
		inv, err := st.Inventories(t.Context())
		return err == nil && len(inv) == n
	})
	h1.Close()

	// This run: the same upstreams, now slow to start.
	h2 := newHub()
	defer h2.Close()
	start := time.Now()
	if err := h2.Start(t.Context(), config("-slow-start", "2s")); err != nil {
		t.Fatal(err)
	}
	c := stdioClient(t, h2)
	line := c.call(t, 2, "tools/list", `{}`)
	elapsed := time.Since(start)
	connecting := 0
	for _, u := range h2.Manager().List() {
		if u.Status().State != upstream.StateConnected {
			connecting++
		}
	}
	for i := range n {
		if want := fmt.Sprintf(`"name":"tool_%02d"`, i); !strings.Contains(string(line), want) {
			t.Fatalf("the first tools/list lacks cached %s: %.300s", want, line)
		}
	}
	if connecting == 0 {
		t.Fatal("every upstream was already connected: the list did not come from the cache")
	}
	t.Logf("start + first tools/list with %d cached upstreams (%d still connecting): %s", n, connecting, elapsed.Round(time.Millisecond))

	// A call now waits for its upstream to connect.
	line = c.call(t, 3, "tools/call", `{"name":"tool_03","arguments":{"message":"warm"}}`)
	if !strings.Contains(string(line), "warm") || strings.Contains(string(line), `"isError":true`) {
		t.Errorf("call during the warm start: %s", line)
	}
}
