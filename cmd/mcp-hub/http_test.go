package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var streamableRE = regexp.MustCompile(`streamable=(http://[^ ]+)/mcp`)

// startHTTPProc starts the hub binary serving HTTP on a free loopback port
// and returns its stdio client (for stderr and, with --stdio, stdio) and its
// base URL.
func startHTTPProc(t *testing.T, dataDir, cfg string, args ...string) (*rawClient, string) {
	t.Helper()
	full := append([]string{"--data-dir", dataDir, "--config", writeFile(t, "hub.yaml", cfg), "--http", "127.0.0.1:0"}, args...)
	c := startRaw(t, []string{"MCP_HUB_CONFIG="}, hubBin, full...)
	var base string
	waitFor(t, 20*time.Second, "the HTTP address in the log", func() bool {
		if m := streamableRE.FindStringSubmatch(c.stderr.String()); m != nil {
			base = m[1]
			return true
		}
		select {
		case <-c.exited:
			t.Fatalf("hub exited: %s", c.stderr.String())
		default:
		}
		return false
	})
	return c, base
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ tok string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects a go-sdk client to the hub's streamable endpoint.
func connectHTTP(t *testing.T, base, tok string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{tok}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-e2e", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestHTTPRemoteRefused is B4 of the security plan: a non-loopback address
// needs an explicit opt-in, and never goes without a token.
func TestHTTPRemoteRefused(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--http", "[::]:0"}, "not a loopback address"},
		{[]string{"--http", "0.0.0.0:0", "--http-allow-remote", "--http-no-auth"}, "only allowed on a loopback address"},
		{[]string{"--http", "7411"}, "want host:port"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, code := cli(t, t.TempDir(), append([]string{"serve"}, tt.args...)...)
			if code != exitConfig || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, output:\n%s\nwant exit %d mentioning %q", code, out, exitConfig, tt.want)
			}
		})
	}
}

// TestHTTPServe runs the binary with HTTP and stdio together: the token is
// generated once (0600) and reused, requests without it are refused, and
// stdout stays pure JSON-RPC while HTTP clients work.
func TestHTTPServe(t *testing.T) {
	data := t.TempDir()
	cfg := fmt.Sprintf("servers:\n  fx:\n    command: %s\n    args: [-only, echo]\n", fixtureBin)
	c, base := startHTTPProc(t, data, cfg, "--stdio")

	tokPath := filepath.Join(data, "http-token")
	fi, err := os.Stat(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(tokPath)
	tok := strings.TrimSpace(string(b))
	if len(tok) != 64 || !strings.Contains(c.stderr.String(), tok) {
		t.Fatalf("token %q not generated or not printed once on stderr", tok)
	}

	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", resp.StatusCode)
	}

	cs := connectHTTP(t, base, tok)
	waitFor(t, 20*time.Second, "fixture tools over HTTP", func() bool {
		res, err := cs.ListTools(context.Background(), nil)
		return err == nil && slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "echo" })
	})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %v", res, err)
	}

	// The stdio session works alongside.
	c.initialize()
	if m := c.call("tools/call", `{"name":"echo","arguments":{"text":"over stdio"}}`); m.Error != nil || !strings.Contains(string(m.Result), "over stdio") {
		t.Fatalf("stdio echo: %s %s", m.Result, m.Error)
	}
	c.mu.Lock()
	for _, l := range c.lines {
		if !strings.HasPrefix(string(l), `{"jsonrpc":"2.0"`) {
			t.Errorf("stdout line is not JSON-RPC: %q", l)
		}
	}
	c.mu.Unlock()

	// A second hub on the same data dir reuses the token without printing it.
	c2, _ := startHTTPProc(t, data, cfg)
	if strings.Contains(c2.stderr.String(), tok) {
		t.Error("the token was printed again on a later start")
	}
	if b2, _ := os.ReadFile(tokPath); string(b2) != string(b) {
		t.Error("the token changed on a later start")
	}
}

// TestHTTPSlowClients is B6: a client that trickles its headers or its body
// is cut off, and other clients are served meanwhile.
func TestHTTPSlowClients(t *testing.T) {
	data := t.TempDir()
	cfg := fmt.Sprintf("http:\n  token: %s\n  readHeaderTimeout: 300ms\n  bodyTimeout: 300ms\nservers:\n  fx:\n    command: %s\n    args: [-only, echo]\n",
		strings.Repeat("t", 32), fixtureBin)
	c, base := startHTTPProc(t, data, cfg)
	addr := strings.TrimPrefix(base, "http://")

	tests := []struct {
		name string
		send string // then nothing more
	}{
		{"headers", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n"},
		{"body", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + strings.Repeat("t", 32) +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":"},
	}
	// B6: many connections trickle a header; all are cut at the header
	// timeout, another client is served meanwhile, and the hub's open
	// files come back to where they were.
	fds := func() int {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", c.cmd.Process.Pid))
		return len(ents)
	}
	before := fds()
	const slow = 100
	cut := make(chan error, slow)
	for range slow {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHo"); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		go func() {
			_, err := io.Copy(io.Discard, conn)
			cut <- err
		}()
	}
	cs := connectHTTP(t, base, strings.Repeat("t", 32))
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("a client was not served among slow connections: %v", err)
	}
	for range slow {
		if err := <-cut; err != nil {
			t.Fatalf("a slow connection was not closed by the hub: %v", err)
		}
	}
	waitFor(t, 10*time.Second, "the hub's open files back to their baseline", func() bool { return fds() <= before+2 })

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tt.send); err != nil {
				t.Fatal(err)
			}
			// The hub must end this exchange on its own; the deadline only
			// keeps a broken hub from hanging the test.
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			cut := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, bufio.NewReader(conn))
				cut <- err
			}()
			cs := connectHTTP(t, base, strings.Repeat("t", 32))
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatalf("another client was not served: %v", err)
			}
			if err := <-cut; err != nil {
				t.Fatalf("the hub did not close the slow connection: %v", err)
			}
		})
	}
}
