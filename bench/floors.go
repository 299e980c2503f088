package main

// The floors: the least a process in the middle can do, measured in the
// same run as the hub so that its ratios say what one extra hop costs and
// what the hub adds on top.
//
//   - byte pump (-pump CMD…): copies bytes between its stdio and a child's;
//   - id-rewriting relay (-relay-ids CMD…): the pump plus what any
//     multiplexing proxy must do per message: parse the top-level id,
//     replace it with one of its own, and splice the client's id back into
//     the response;
//   - HTTP relay (-relay-http URL): a reverse proxy in front of a streamable
//     HTTP server, streaming SSE answers as they come;
//   - stdio bridge (-bridge URL): a stdio server that POSTs each message to
//     a streamable HTTP server and writes back what it answers (JSON or the
//     data of SSE events), the least a stdio front on an HTTP upstream does.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// relayIDsMain runs argv as a child and relays newline-delimited JSON-RPC
// between this process's stdio and the child's, rewriting request ids.
func relayIDsMain(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "bench -relay-ids: no command")
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return fail("-relay-ids", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail("-relay-ids", err)
	}
	if err := cmd.Start(); err != nil {
		return fail("-relay-ids", err)
	}
	var mu sync.Mutex
	pending := map[uint64][]byte{}
	var next uint64
	go func() {
		r := framing.NewReader(os.Stdin, 0)
		w := bufio.NewWriterSize(in, 64<<10)
		for {
			line, err := r.Next()
			if err != nil {
				break
			}
			if m, err := wire.Parse(line); err == nil && m.IsRequest() {
				mu.Lock()
				next++
				n := next
				pending[n] = bytes.Clone(m.ID)
				mu.Unlock()
				line = wire.AppendRequest(nil, strconv.AppendUint(nil, n, 10), m.Method, m.Params)
			}
			w.Write(line)
			w.WriteByte('\n')
			w.Flush()
		}
		w.Flush()
		in.Close()
	}()
	r := framing.NewReader(out, 0)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		line, err := r.Next()
		if err != nil {
			break
		}
		if m, err := wire.Parse(line); err == nil && m.IsResponse() {
			if n, err := strconv.ParseUint(string(m.ID), 10, 64); err == nil {
				mu.Lock()
				id, ok := pending[n]
				delete(pending, n)
				mu.Unlock()
				if ok && m.Error != nil {
					line = wire.AppendErrorObject(nil, id, m.Error)
				} else if ok {
					line = wire.AppendResult(nil, id, m.Result)
				}
			}
		}
		w.Write(line)
		w.WriteByte('\n')
		w.Flush()
	}
	w.Flush()
	if err := cmd.Wait(); err != nil {
		return fail("-relay-ids", err)
	}
	return 0
}

// relayHTTPMain serves a minimal reverse proxy to the streamable HTTP
// endpoint target on a loopback port and prints "LISTENING <its endpoint>":
// each request is read, sent on, and its answer streamed back as it
// arrives (SSE events are flushed one by one). No parsing, no rewriting.
func relayHTTPMain(target string) int {
	u, err := url.Parse(target)
	if err != nil {
		return fail("-relay-http", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	client := &http.Client{Transport: tr}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail("-relay-http", err)
	}
	fmt.Printf("LISTENING http://%s%s\n", ln.Addr(), u.Path)
	return fail("-relay-http", http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, v := range r.Header {
			if k != "Connection" && k != "Content-Length" {
				out.Header[k] = v
			}
		}
		resp, err := client.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			if k != "Connection" && k != "Content-Length" && k != "Transfer-Encoding" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		flusher, _ := w.(http.Flusher)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				if flusher != nil {
					flusher.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	})))
}

// bridgeMain serves MCP over stdio by POSTing every message to the
// streamable HTTP endpoint target: requests concurrently, notifications and
// responses in order; what comes back (a JSON body, or the data of each
// SSE event) is written to stdout.
func bridgeMain(target string) int {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	b := &bridge{url: target, client: &http.Client{Transport: tr}, out: bufio.NewWriterSize(os.Stdout, 64<<10)}
	r := framing.NewReader(os.Stdin, 0)
	var wg sync.WaitGroup
	for {
		line, err := r.Next()
		if err != nil {
			break
		}
		m, err := wire.Parse(line)
		if err != nil {
			continue
		}
		if m.IsRequest() && m.Method != "initialize" {
			wg.Go(func() { b.post(line, false) })
			continue
		}
		b.post(line, m.Method == "initialize") // in order; initialize sets the session
	}
	wg.Wait()
	return 0
}

type bridge struct {
	url    string
	client *http.Client

	mu      sync.Mutex // guards out, sid, version
	out     *bufio.Writer
	sid     string
	version string
}

func (b *bridge) write(msg []byte) {
	b.mu.Lock()
	b.out.Write(msg)
	b.out.WriteByte('\n')
	b.out.Flush()
	b.mu.Unlock()
}

func (b *bridge) post(msg []byte, initialize bool) {
	req, err := http.NewRequest(http.MethodPost, b.url, bytes.NewReader(msg))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench -bridge:", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	b.mu.Lock()
	if b.sid != "" {
		req.Header.Set("Mcp-Session-Id", b.sid)
		req.Header.Set("Mcp-Protocol-Version", b.version)
	}
	b.mu.Unlock()
	resp, err := b.client.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench -bridge:", err)
		return
	}
	defer resp.Body.Close()
	if initialize {
		b.mu.Lock()
		b.sid = resp.Header.Get("Mcp-Session-Id")
		b.mu.Unlock()
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		if len(bytes.TrimSpace(body)) > 0 {
			b.deliver(body, initialize)
		}
		return
	}
	var data []byte
	r := framing.NewLineReader(resp.Body, 0)
	for {
		line, err := r.Next()
		if err != nil {
			return
		}
		switch {
		case len(line) == 0 && len(data) > 0:
			b.deliver(data, initialize)
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		}
	}
}

func (b *bridge) deliver(msg []byte, initialize bool) {
	if initialize {
		if m, err := wire.Parse(msg); err == nil && m.Result != nil {
			if v, err := wire.Get(m.Result, "protocolVersion"); err == nil && v != nil {
				if s, err := wire.String(v); err == nil {
					b.mu.Lock()
					b.version = s
					b.mu.Unlock()
				}
			}
		}
	}
	b.write(msg)
}

func fail(mode string, err error) int {
	fmt.Fprintf(os.Stderr, "bench %s: %v\n", mode, err)
	return 1
}
