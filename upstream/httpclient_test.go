package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheckRetry(t *testing.T) {
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	readErr := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		status int
		err    error
		want   bool
	}{
		{"dial error: never sent", context.Background(), 0, dialErr, true},
		{"dns error: never sent", context.Background(), 0, &net.DNSError{Err: "no such host"}, true},
		{"reset after sending: may have run", context.Background(), 0, readErr, false},
		{"429", context.Background(), 429, nil, true},
		{"503", context.Background(), 503, nil, true},
		{"500: may have run", context.Background(), 500, nil, false},
		{"502: may have run", context.Background(), 502, nil, false},
		{"504: may have run", context.Background(), 504, nil, false},
		{"200", context.Background(), 200, nil, false},
		{"404", context.Background(), 404, nil, false},
		{"cancelled", cancelled, 503, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp *http.Response
			if tt.err == nil {
				resp = &http.Response{StatusCode: tt.status, Header: http.Header{}}
			}
			got, _ := checkRetry(tt.ctx, resp, tt.err)
			if got != tt.want {
				t.Errorf("checkRetry = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{"600", maxRetryAfter, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), maxRetryAfter, true},
	} {
		got, ok := parseRetryAfter(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRetryAgainstServer counts the requests a real server sees.
func TestRetryAgainstServer(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int // answered in turn; the last repeats
		want     int   // requests the server sees
		status   int   // what the caller finally gets
	}{
		{"503 then ok", []int{503, 503, 200}, 3, 200},
		{"429 then ok", []int{429, 200}, 2, 200},
		{"500 is never resent", []int{500, 200}, 1, 500},
		{"502 is never resent", []int{502, 200}, 1, 502},
		{"503 forever gives up", []int{503}, 4, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if r.Header.Get("X-Token") != "t0k" {
					t.Errorf("attempt %d lacks the configured header", i+1)
				}
				st := tt.statuses[min(i, len(tt.statuses)-1)]
				if st != 200 {
					w.Header().Set("Retry-After", "0")
				}
				w.WriteHeader(st)
			}))
			defer srv.Close()
			c := newHTTPClient(map[string]string{"X-Token": "t0k"}, testLogger(t))
			resp, err := c.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status || int(n.Load()) != tt.want {
				t.Errorf("status %d after %d requests; want %d after %d", resp.StatusCode, n.Load(), tt.status, tt.want)
			}
		})
	}
	t.Run("dial failure is retried", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens: every dial is refused
		c := newHTTPClient(nil, testLogger(t))
		start := time.Now()
		_, err = c.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{}`))
		if err == nil || !isDialError(err) {
			t.Fatalf("err = %v, want a dial error", err)
		}
		// Three retries with backoff from 200ms: at least 200+400+800ms.
		if d := time.Since(start); d < time.Second {
			t.Errorf("gave up after %s: the dial was not retried", d)
		}
	})
}
