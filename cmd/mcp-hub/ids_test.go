package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// TestStdioIDs drives the real mcp-hub process over its stdin and stdout
// with hand-written ids: every answer carries the id bytes of its request
// (initialize, ping and hub_list_servers, which go-sdk answers, and a
// forwarded tools/call); id null, a request before initialize, a second
// initialize and a duplicate of an id in flight get -32600, and the request
// in flight still gets its answer.
func TestStdioIDs(t *testing.T) {
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf(`
mcpServers:
  fx:
    command: %s
    args: ["-only", "echo,sleep_ms"]
`, fixtureBin))
	c := startRaw(t, nil, hubBin, "--config", cfg, "--data-dir", t.TempDir())
	// call sends a request with a raw id and returns its answer, whose id
	// must be exactly those bytes.
	call := func(id, method, params string) wire.Message {
		t.Helper()
		c.mu.Lock()
		delete(c.resp, id) // ids repeat: wait for this request's answer
		c.mu.Unlock()
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
		m := c.wait(id, 20*time.Second)
		if !bytes.Equal(m.ID, []byte(id)) {
			t.Fatalf("%s %s: answered with id %s", method, id, m.ID)
		}
		return m
	}
	code := func(m wire.Message) int64 {
		t.Helper()
		var e struct{ Code int64 }
		if m.Error == nil || json.Unmarshal(m.Error, &e) != nil {
			t.Fatalf("want an error, got %s", m.Result)
		}
		return e.Code
	}

	if got := code(call(`"early"`, "tools/list", `{}`)); got != -32600 {
		t.Errorf("tools/list before initialize: code %d, want -32600", got)
	}
	if m := call(`4.5`, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`); m.Error != nil {
		t.Fatalf("initialize: %s", m.Error)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := code(call(`4.50`, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)); got != -32600 {
		t.Errorf("second initialize: code %d, want -32600", got)
	}
	for _, id := range []string{`1e2`, `-0`, `9223372036854775808`, `"x"`, `""`, `"\u0078"`} {
		if m := call(id, "ping", `{}`); m.Error != nil {
			t.Errorf("ping %s: %s", id, m.Error)
		}
		if m := call(id, "tools/call", `{"name":"hub_list_servers","arguments":{}}`); m.Error != nil || !strings.Contains(string(m.Result), "fx") {
			t.Errorf("hub_list_servers %s: %s %s", id, m.Error, m.Result)
		}
		if m := call(id, "tools/call", `{"name":"echo","arguments":{"id":`+id+`}}`); m.Error != nil || !strings.Contains(string(m.Result), "id") {
			t.Errorf("echo %s: %s %s", id, m.Error, m.Result)
		}
	}
	if got := code(call(`null`, "ping", `{}`)); got != -32600 {
		t.Errorf("ping with id null: code %d, want -32600", got)
	}

	// A duplicate of an id in flight: stdio is read in order, so the
	// call is in flight when the ping comes.
	c.send(`{"jsonrpc":"2.0","id":200,"method":"tools/call","params":{"name":"sleep_ms","arguments":{"ms":2000}}}`)
	c.send(`{"jsonrpc":"2.0","id":200,"method":"ping","params":{}}`)
	if got := code(c.wait("200", 20*time.Second)); got != -32600 {
		t.Errorf("ping reusing id 200: code %d, want -32600", got)
	}
	// The call's answer is the next line with id 200.
	waitFor(t, 20*time.Second, "the call's own answer", func() bool {
		n := 0
		for _, line := range c.allLines() {
			if m, err := wire.Parse(line); err == nil && m.IsResponse() && string(m.ID) == "200" {
				n++
				if n == 2 && m.Error == nil && strings.Contains(string(m.Result), "slept 2000 ms") {
					return true
				}
			}
		}
		return false
	})
}
