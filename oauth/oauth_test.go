package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// authServer is a token endpoint and a resource on 127.0.0.1: the resource
// accepts only the access token the endpoint issued last.
type authServer struct {
	srv       *httptest.Server
	refreshes atomic.Int32
	refuse    atomic.Bool // answer refresh grants with invalid_grant

	mu     sync.Mutex
	valid  string   // the one access token the resource accepts
	seen   []string // Authorization headers the resource got
	issued int
}

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{valid: "at-0"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("grant_type") != "refresh_token" {
			http.Error(w, "only refresh here", http.StatusBadRequest)
			return
		}
		a.refreshes.Add(1)
		time.Sleep(50 * time.Millisecond) // concurrent requests pile up meanwhile
		w.Header().Set("Content-Type", "application/json")
		if a.refuse.Load() {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"revoked"}`)
			return
		}
		a.mu.Lock()
		a.issued++
		a.valid = fmt.Sprintf("at-%d", a.issued)
		tok := a.valid
		a.mu.Unlock()
		fmt.Fprintf(w, `{"access_token":%q,"refresh_token":"rt-%d","token_type":"Bearer","expires_in":3600}`, tok, a.issued)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.seen = append(a.seen, r.Header.Get("Authorization"))
		ok := r.Header.Get("Authorization") == "Bearer "+a.valid
		a.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "ok")
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *authServer) headers() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// setup stores tok for upstream "web" at the server's /mcp and returns the
// upstream's client transport.
func setup(t *testing.T, a *authServer, tok upstream.Token) (*Client, http.RoundTripper, *persist.Store) {
	t.Helper()
	st, err := persist.Open(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	spec := upstream.Spec{Name: "web", URL: a.srv.URL + "/mcp"}
	if tok.AccessToken != "" {
		if tok.Resource == "" {
			tok.Resource = spec.URL
		}
		tok.Upstream, tok.TokenURL, tok.ClientID = "web", a.srv.URL+"/token", "cid"
		if err := st.SaveToken(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
	}
	auth := New(Options{Store: st, HTTPClient: a.srv.Client()})
	c := auth.client(&spec)
	return c, c.Transport(http.DefaultTransport, nil, redact.NewScrubber()), st
}

func get(t *testing.T, rt http.RoundTripper, url, authz string) (int, error) {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Issue 13 item 4: an expired token is refreshed before it is sent,
// once for every request waiting on it (single-flight), and the new token
// is stored.
func TestRefreshBeforeExpiryOnce(t *testing.T) {
	a := newAuthServer(t)
	_, rt, st := setup(t, a, upstream.Token{AccessToken: "at-old", RefreshToken: "rt-0", Expiry: time.Now().Add(-time.Second)})
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() {
			code, err := get(t, rt, a.srv.URL+"/mcp", "")
			if err != nil {
				t.Error(err)
			}
			codes[i] = code
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("request %d: %d", i, c)
		}
	}
	if n := a.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes for 8 concurrent requests, want 1", n)
	}
	for _, h := range a.headers() {
		if h != "Bearer at-1" {
			t.Errorf("the resource saw %q, want only the refreshed token", h)
		}
	}
	stored, err := st.Token(t.Context(), "web")
	if err != nil || stored.AccessToken != "at-1" || stored.RefreshToken != "rt-1" {
		t.Errorf("stored after refresh: %+v %v", stored.Status(), err)
	}
}

// A token the server refuses (401) before it expires is refreshed and the
// request sent again; the client's own Authorization never goes upstream.
func TestRefreshOn401(t *testing.T) {
	a := newAuthServer(t)
	_, rt, _ := setup(t, a, upstream.Token{AccessToken: "at-revoked-early", RefreshToken: "rt-0", Expiry: time.Now().Add(time.Hour)})
	code, err := get(t, rt, a.srv.URL+"/mcp", "Bearer the-hubs-own-client-token")
	if err != nil || code != 200 {
		t.Fatalf("got %d %v, want 200 after a refresh", code, err)
	}
	if n := a.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	want := []string{"Bearer at-revoked-early", "Bearer at-1"}
	if got := a.headers(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the resource saw %q, want %q", got, want)
	}
}

// A token issued for another URL (its audience) is never sent.
func TestTokenOnlyForItsResource(t *testing.T) {
	a := newAuthServer(t)
	_, rt, _ := setup(t, a, upstream.Token{AccessToken: "at-0", Resource: "https://elsewhere.example/mcp", Expiry: time.Now().Add(time.Hour)})
	_, err := get(t, rt, a.srv.URL+"/mcp", "")
	if !errors.Is(err, upstream.ErrNeedsLogin) {
		t.Errorf("err = %v, want one wrapping ErrNeedsLogin", err)
	}
	if got := a.headers(); len(got) != 1 || got[0] != "" {
		t.Errorf("the resource saw %q, want one request without Authorization", got)
	}
}

// A refresh the server refuses drops the token (from the store too) and
// the upstream needs a login; nobody is asked without Interact.
func TestRefusedRefreshNeedsLogin(t *testing.T) {
	a := newAuthServer(t)
	a.refuse.Store(true)
	c, rt, st := setup(t, a, upstream.Token{AccessToken: "at-old", RefreshToken: "rt-0", Expiry: time.Now().Add(-time.Minute)})
	_, err := get(t, rt, a.srv.URL+"/mcp", "")
	if !errors.Is(err, upstream.ErrNeedsLogin) || !strings.Contains(err.Error(), "mcp-hub login web") {
		t.Errorf("err = %v, want ErrNeedsLogin naming the command", err)
	}
	if _, ok := c.NeedsLogin(); !ok {
		t.Error("NeedsLogin = false")
	}
	if _, err := st.Token(t.Context(), "web"); !errors.Is(err, upstream.ErrNoToken) {
		t.Errorf("the refused token is still stored: %v", err)
	}
	if st := c.Status(); !strings.Contains(st.LastError, "invalid_grant") || strings.Contains(st.String(), "rt-0") {
		t.Errorf("status = %q", st)
	}

	// A login elsewhere stores a token: WaitLogin sees it.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.WaitLogin(ctx) }()
	if err := st.SaveToken(ctx, upstream.Token{Upstream: "web", Resource: a.srv.URL + "/mcp", AccessToken: "at-0", Pasted: true}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("WaitLogin: %v", err)
	}
	if code, err := get(t, rt, a.srv.URL+"/mcp", ""); err != nil || code != 200 {
		t.Errorf("after the login: %d %v", code, err)
	}
}
