package oauth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// elsewhere is a listener on another port that must see nothing.
type elsewhere struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.got = append(e.got, r.Method+" "+r.URL.Path+" Authorization="+r.Header.Get("Authorization"))
		e.mu.Unlock()
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// url is the listener's URL by another name of the same host: another
// origin than 127.0.0.1's, as an attacker's would be.
func (e *elsewhere) url(path string) string {
	return strings.Replace(e.srv.URL, "127.0.0.1", "localhost", 1) + path
}

func (e *elsewhere) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

// Issue 26 item 1: an upstream whose token the hub holds redirects the
// hub's requests to another origin: the token goes nowhere but the
// upstream's own origin, and the upstream's state says why it failed. On
// the old code the hub sent "Authorization: Bearer <token>" there.
func TestTokenNeverFollowsARedirect(t *testing.T) {
	other := newElsewhere(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "moved", Version: "1"}, nil)
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	var sawToken atomic.Bool
	var redirecting atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer at-redirect-secret" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		sawToken.Store(true)
		if redirecting.Load() {
			http.Redirect(w, r, other.url("/mcp"), http.StatusTemporaryRedirect)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	redirecting.Store(true)

	st, err := persist.Open(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	spec := upstream.Spec{Name: "web", URL: front.URL + "/mcp"}
	if err := st.SaveToken(t.Context(), upstream.Token{Upstream: "web", Resource: spec.URL, AccessToken: "at-redirect-secret",
		Expiry: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	m := upstream.NewManager(&upstream.Options{Auth: New(Options{Store: st}), InitTimeout: 10 * time.Second,
		Backoff: upstream.Backoff{Initial: 50 * time.Millisecond, Max: 100 * time.Millisecond, MaxAttempts: 2}})
	t.Cleanup(m.Close)
	u, err := m.Add(spec, upstream.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for u.Status().State != upstream.StateFailed && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	status := u.Status()
	if status.State != upstream.StateFailed {
		t.Fatalf("state %s (%s), want failed", status.State, status.LastError)
	}
	if !sawToken.Load() {
		t.Fatal("the upstream never got the token: the test proves nothing")
	}
	if got := other.requests(); len(got) > 0 {
		t.Fatalf("the other origin got %q", got)
	}
	if !strings.Contains(status.LastError, "redirect refused") || !strings.Contains(status.LastError, other.url("/mcp")) ||
		strings.Contains(status.LastError, "at-redirect-secret") {
		t.Errorf("last error %q: want the refused redirect and its Location, no token", status.LastError)
	}
}

// A token endpoint that redirects a refresh to another origin gets no
// refresh token or client secret sent there: the refresh fails.
func TestRefreshNeverFollowsARedirect(t *testing.T) {
	other := newElsewhere(t)
	a := newAuthServer(t)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.url("/token"), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	st, err := persist.Open(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	spec := upstream.Spec{Name: "web", URL: a.srv.URL + "/mcp"}
	if err := st.SaveToken(t.Context(), upstream.Token{Upstream: "web", Resource: spec.URL, AccessToken: "at-old", RefreshToken: "rt-secret",
		TokenURL: front.URL + "/token", ClientID: "cid", ClientSecret: "cs-secret", Expiry: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	c := New(Options{Store: st, HTTPClient: a.srv.Client()}).client(&spec)
	if tok, _ := c.current(t.Context()); tok != nil && tok.oauth.AccessToken != "at-old" {
		t.Errorf("refreshed to %q through a redirect", tok.oauth.AccessToken)
	}
	if got := other.requests(); len(got) > 0 {
		t.Fatalf("the other origin got %q", got)
	}
}
