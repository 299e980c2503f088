package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestHTTPBearerSchemeCase: the Authorization scheme is case-insensitive
// (RFC 9110, 11.1); the token is not.
func TestHTTPBearerSchemeCase(t *testing.T) {
	_, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo"))
	for _, tt := range []struct {
		auth   string
		status int
	}{
		{"Bearer " + testToken, 200},
		{"bearer " + testToken, 200},
		{"BEARER " + testToken, 200},
		{"bEaReR " + testToken, 200},
		{"Bearer  " + testToken, 200},
		{"bearer " + strings.ToUpper(testToken), 401},
		{"Basic " + testToken, 401},
		{"bearer", 401},
		{"bearer ", 401},
		{"bearer" + testToken, 401},
	} {
		resp := raw(t, "POST", srv.URL+"/mcp", initBody, map[string][]string{"Authorization": {tt.auth}})
		if resp.StatusCode != tt.status {
			body, _ := io.ReadAll(resp.Body)
			t.Errorf("Authorization %q: %d %s, want %d", tt.auth, resp.StatusCode, body, tt.status)
		}
	}
}

// initSession opens a streamable HTTP session and returns its id.
func initSession(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	resp := raw(t, "POST", srv.URL+"/mcp", initBody, map[string][]string{"Authorization": auth})
	body, _ := io.ReadAll(resp.Body)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	return sid
}

// pingStatus pings in a session and returns the HTTP status.
func pingStatus(t *testing.T, srv *httptest.Server, sid string) int {
	t.Helper()
	resp := raw(t, "POST", srv.URL+"/mcp", `{"jsonrpc":"2.0","id":"p","method":"ping"}`,
		map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}})
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestHTTPSessionCapEvictsIdle: 64 idle sessions (the default cap) do not
// lock a new client out: the least recently used idle session makes room,
// is logged (by a prefix of its id), and its client gets 404.
func TestHTTPSessionCapEvictsIdle(t *testing.T) {
	logs := &testbin.Buffer{}
	h, srv := startHTTPHubOpts(t, &Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}, &HTTPOptions{},
		fixtureSpec("a", "-only", "echo"))
	const defaultCap = 64
	sids := make([]string, defaultCap)
	for i := range sids {
		sids[i] = initSession(t, srv)
	}
	if code := pingStatus(t, srv, sids[0]); code != 200 { // sids[1] is now the least recently used
		t.Fatalf("ping: %d", code)
	}
	newSid := initSession(t, srv) // the 65th: served
	if n := h.sessionCount(); n != defaultCap {
		t.Errorf("%d sessions, want the cap of %d", n, defaultCap)
	}
	if code := pingStatus(t, srv, sids[1]); code != 404 {
		t.Errorf("the evicted (least recently used) session: %d, want 404", code)
	}
	for _, sid := range []string{sids[0], sids[2], sids[defaultCap-1], newSid} {
		if code := pingStatus(t, srv, sid); code != 200 {
			t.Errorf("session %s…: %d, want 200", sid[:8], code)
		}
	}
	out := logs.String()
	var line string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.Contains(l, "least recently used idle session") {
			line = l
		}
	}
	if !strings.Contains(line, "session="+sids[1][:8]) || strings.Contains(out, sids[1]) {
		t.Errorf("log: want a line naming the evicted session by a prefix of its id (%s…), never the whole id; got %q", sids[1][:8], line)
	}
}

// TestHTTPSessionCapAllBusy: at the cap with every session busy (a request
// in flight, or a GET stream open) a new client gets 503 with Retry-After;
// once one is idle again, it makes room.
func TestHTTPSessionCapAllBusy(t *testing.T) {
	_, srv := startHTTPHub(t, &HTTPOptions{MaxSessions: 2}, fixtureSpec("a", "-only", "sleep_ms"))
	front := srv.Config.Handler.(*httpFront)
	busy := func(sid string) bool {
		hs := front.session(sid)
		if hs == nil {
			return false
		}
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return !hs.idleLocked()
	}
	streaming, calling := initSession(t, srv), initSession(t, srv)

	// A GET stream open on one session...
	sctx, stopStream := context.WithCancel(context.Background())
	defer stopStream()
	req, _ := http.NewRequestWithContext(sctx, "GET", srv.URL+"/mcp", nil)
	req.Header.Set("Authorization", auth[0])
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", streaming)
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	// ... and a request in flight on the other.
	cctx, stopCall := context.WithCancel(context.Background())
	defer stopCall()
	call, _ := http.NewRequestWithContext(cctx, "POST", srv.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sleep_ms","arguments":{"ms":60000}}}`))
	call.Header.Set("Authorization", auth[0])
	call.Header.Set("Content-Type", "application/json")
	call.Header.Set("Accept", "application/json, text/event-stream")
	call.Header.Set("Mcp-Session-Id", calling)
	callDone := make(chan struct{})
	go func() {
		defer close(callDone)
		if resp, err := http.DefaultClient.Do(call); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	eventually(t, 10*time.Second, "both sessions busy", func() bool { return busy(streaming) && busy(calling) })

	resp := raw(t, "POST", srv.URL+"/mcp", initBody, map[string][]string{"Authorization": auth})
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("initialize with every session busy: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if !busy(streaming) || !busy(calling) {
		t.Fatal("a refused client disturbed a busy session")
	}

	// The client of the call goes away: its session is idle, and makes
	// room for the next client; the streaming one is left alone.
	stopCall()
	<-callDone
	eventually(t, 10*time.Second, "the calling session idle", func() bool { return !busy(calling) })
	initSession(t, srv)
	if code := pingStatus(t, srv, calling); code != 404 {
		t.Errorf("the idle session after eviction: %d, want 404", code)
	}
	if code := pingStatus(t, srv, streaming); code != 200 {
		t.Errorf("the streaming session: %d, want 200", code)
	}
}

// apiReq sends one admin API request with the given headers.
func apiReq(t *testing.T, method, url, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestAdminAPICSRF: a web page cannot drive the admin API, with or without
// a token, with or without --http-no-auth: bodies must be JSON (415), a
// foreign Origin or a browser's cross-site mark is refused (403), and
// approval needs the token even in no-auth mode (none configured: refused,
// pointing to mcp-hub approve). Same-origin JSON with the token works.
func TestAdminAPICSRF(t *testing.T) {
	for _, mode := range []struct {
		name   string
		opts   HTTPOptions
		hasTok bool
	}{
		{"token", HTTPOptions{Token: testToken}, true},
		{"no-auth with a token", HTTPOptions{NoAuth: true, Token: testToken}, true},
		{"no-auth without a token", HTTPOptions{NoAuth: true}, false},
	} {
		t.Run(mode.name, func(t *testing.T) {
			opts := mode.opts
			h, srv := startHTTPHub(t, &opts)
			api := srv.URL + "/api/servers"
			own := "http://" + srv.Listener.Addr().String()
			tok := map[string]string{"Authorization": "Bearer " + testToken}
			with := func(extra map[string]string, useTok bool) map[string]string {
				m := map[string]string{}
				if useTok {
					m["Authorization"] = tok["Authorization"]
				}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}
			registered := func(name string) (upstream.Registration, bool) {
				r, err := h.opts.Store.Get(t.Context(), name)
				return r, err == nil
			}
			body := func(name string) string {
				return fmt.Sprintf(`{"name":%q,"command":%q,"args":["-only","echo"]}`, name, fixture)
			}
			for _, useTok := range []bool{false, true} {
				// text/plain: a form or a no-preflight fetch.
				code, out := apiReq(t, "POST", api, body("plain"), with(map[string]string{"Content-Type": "text/plain"}, useTok))
				if code != 415 || !strings.Contains(fmt.Sprint(out["message"]), "application/json") {
					t.Errorf("token=%v: POST text/plain: %d %v, want 415", useTok, code, out)
				}
				if code, out := apiReq(t, "POST", api, body("plain"), with(nil, useTok)); code != 415 {
					t.Errorf("token=%v: POST without a content type: %d %v, want 415", useTok, code, out)
				}
				for _, hdr := range []map[string]string{
					{"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"},
					{"Origin": "http://localhost" + strings.TrimPrefix(own, "http://127.0.0.1"), "Content-Type": "application/json"},
					{"Origin": "http://evil.example", "Content-Type": "application/json"},
					{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
					{"Sec-Fetch-Site": "same-site", "Content-Type": "application/json"},
				} {
					if code, out := apiReq(t, "POST", api, body("foreign"), with(hdr, useTok)); code != 403 {
						t.Errorf("token=%v: POST with %v: %d %v, want 403", useTok, hdr, code, out)
					}
				}
				if _, ok := registered("plain"); ok {
					t.Fatalf("token=%v: a text/plain POST registered a server", useTok)
				}
				if _, ok := registered("foreign"); ok {
					t.Fatalf("token=%v: a cross-origin POST registered a server", useTok)
				}
			}

			// Same-origin JSON registers (pending: nobody approved it).
			sameOrigin := with(map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}, mode.hasTok)
			if code, out := apiReq(t, "POST", api, body("target"), sameOrigin); code != 201 || out["approval"] != "pending" {
				t.Fatalf("same-origin JSON POST: %d %v", code, out)
			}
			approved := func() bool { r, _ := registered("target"); return r.Approved() }
			for _, useTok := range []bool{false, true} {
				for _, hdr := range []map[string]string{
					{"Content-Type": "text/plain"},
					{"Origin": "http://127.0.0.1:1"},
					{"Sec-Fetch-Site": "cross-site"},
				} {
					if code, out := apiReq(t, "POST", api+"/target/approve", "", with(hdr, useTok)); code != 415 && code != 403 {
						t.Errorf("token=%v: approve with %v: %d %v, want 415 or 403", useTok, hdr, code, out)
					}
				}
			}
			if approved() {
				t.Fatal("a cross-origin or text/plain request approved a server")
			}
			switch {
			case !mode.opts.NoAuth:
				if code, _ := apiReq(t, "POST", api+"/target/approve", "", nil); code != 401 {
					t.Errorf("approve without the token: %d, want 401", code)
				}
			case mode.hasTok:
				code, out := apiReq(t, "POST", api+"/target/approve", "", nil)
				if code != 401 || !strings.Contains(fmt.Sprint(out["message"]), "needs the bearer token") {
					t.Errorf("no-auth: approve without the token: %d %v, want 401 saying it needs the token", code, out)
				}
			default:
				code, out := apiReq(t, "POST", api+"/target/approve", "", nil)
				if code != 403 || !strings.Contains(fmt.Sprint(out["message"]), "mcp-hub approve target") {
					t.Errorf("no-auth, no token: approve: %d %v, want 403 pointing to mcp-hub approve", code, out)
				}
				if code, _ := apiReq(t, "POST", api+"/target/approve", "", tok); code != 403 {
					t.Errorf("no-auth, no token: approve with some token: %d, want 403", code)
				}
			}
			if approved() {
				t.Fatal("approved without the token")
			}
			if !mode.hasTok {
				return
			}
			approver := with(map[string]string{"Origin": own, "Authorization": "bearer " + testToken, "Content-Type": "application/json"}, false)
			_, shown := apiReq(t, "GET", api+"/target", "", approver)
			code, out := apiReq(t, "POST", api+"/target/approve", fmt.Sprintf(`{"digest":%q}`, shown["digest"]), approver)
			if code != 200 || !approved() {
				t.Errorf("same-origin approve with the token: %d %v", code, out)
			}
		})
	}
}
