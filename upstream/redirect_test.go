package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sink404 is a listener that must see nothing: it records every request.
type sink404 struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string // method, path and every header value of each request
}

func newSink404(t *testing.T) *sink404 {
	r := &sink404{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		line := req.Method + " " + req.URL.String()
		for k, vs := range req.Header {
			line += " " + k + "=" + strings.Join(vs, ",")
		}
		r.got = append(r.got, line)
		r.mu.Unlock()
		http.Error(w, "nothing here", http.StatusTeapot)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *sink404) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// redirector stands in front of an upstream: it passes requests through
// to it until told to redirect them, and remembers the headers it saw.
type redirector struct {
	srv      *httptest.Server
	to       atomic.Pointer[string] // where to redirect; nil: pass through
	sawToken atomic.Bool            // a request carried the configured credentials
}

func newRedirector(t *testing.T, upstreamURL string) *redirector {
	target, err := url.Parse(upstreamURL)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(target)
	rd := &redirector{}
	rd.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer env-secret-1" && r.Header.Get("X-Api-Key") == "literal-secret-2" &&
			r.Header.Get("X-From-File") == "file-secret-3" {
			rd.sawToken.Store(true)
		}
		if to := rd.to.Load(); to != nil {
			http.Redirect(w, r, *to, http.StatusTemporaryRedirect)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rd.srv.Close)
	return rd
}

func (rd *redirector) redirectTo(u string) { rd.to.Store(&u) }

// redirectSpec is an upstream behind rd whose headers are credentials of
// every kind: a ${VAR}, a literal and a file: value.
func redirectSpec(t *testing.T, rd *redirector, path string, tr Transport) Spec {
	secretFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(secretFile, []byte("file-secret-3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return Spec{Name: "moved", URL: rd.srv.URL + path, Transport: tr, Headers: map[string]string{
		"Authorization": "Bearer ${REDIRECT_TEST_TOKEN}",
		"X-Api-Key":     "literal-secret-2",
		"X-From-File":   "file:" + secretFile,
	}}
}

func redirectOptions(t *testing.T) *Options {
	opts := fastOptions(t)
	opts.LookupEnv = func(k string) (string, bool) {
		if k == "REDIRECT_TEST_TOKEN" {
			return "env-secret-1", true
		}
		return "", false
	}
	return opts
}

// Issue 26 item 1: an upstream that redirects to another origin (here the
// same host on another port) gets nothing sent there: not its headers,
// not its messages, no request at all. The attempt fails, and the
// upstream's last error names the refused Location and how to approve it.
// On the old code the hub followed the 307 and sent every header there.
func TestRedirectToAnotherOriginSendsNothing(t *testing.T) {
	for _, tr := range []Transport{TransportHTTP, TransportSSE} {
		t.Run(string(tr), func(t *testing.T) {
			fx := startHTTPFixture(t, string(tr), "-only", "echo")
			fxURL, _ := url.Parse(fx)
			other := newSink404(t)
			rd := newRedirector(t, fx)
			elsewhere := strings.Replace(other.srv.URL, "127.0.0.1", "localhost", 1) + fxURL.Path
			rd.redirectTo(elsewhere)
			m := newManager(t, redirectOptions(t))
			u, err := m.Add(redirectSpec(t, rd, fxURL.Path, tr), AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := waitState(t, u, 15*time.Second, StateFailed)
			if got := other.requests(); len(got) > 0 {
				t.Fatalf("the other origin got %d requests: %q", len(got), got)
			}
			if !rd.sawToken.Load() {
				t.Error("the upstream itself never saw the configured headers: the test proves nothing")
			}
			for _, want := range []string{"redirect refused", "Location " + elsewhere, "another origin", "new approval"} {
				if !strings.Contains(st.LastError, want) {
					t.Errorf("last error %q does not say %q", st.LastError, want)
				}
			}
			for _, secret := range []string{"env-secret-1", "literal-secret-2", "file-secret-3"} {
				if strings.Contains(st.LastError, secret) {
					t.Errorf("last error %q shows a secret", st.LastError)
				}
			}
		})
	}
}

// A redirect that comes once the upstream is connected (the server moved
// while the hub was using it) fails that request and ends the connection,
// again without a request to the other origin.
func TestRedirectAfterConnectSendsNothing(t *testing.T) {
	for _, tr := range []Transport{TransportHTTP, TransportSSE} {
		t.Run(string(tr), func(t *testing.T) {
			fx := startHTTPFixture(t, string(tr), "-only", "echo")
			fxURL, _ := url.Parse(fx)
			other := newSink404(t)
			rd := newRedirector(t, fx)
			m := newManager(t, redirectOptions(t))
			u, err := m.Add(redirectSpec(t, rd, fxURL.Path, tr), AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			waitState(t, u, 15*time.Second, StateConnected)
			if got := callText(t, u, "echo", `{"message":"before"}`); !strings.Contains(got, "before") {
				t.Fatalf("echo through the proxy: %s", got)
			}
			rd.redirectTo(strings.Replace(other.srv.URL, "127.0.0.1", "localhost", 1) + "/mcp")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := u.Call(ctx, "tools/call", []byte(`{"name":"echo","arguments":{"message":"after"}}`))
			if err == nil && r.Error == nil {
				t.Fatalf("the call after the redirect succeeded: %s", r.Result)
			}
			st := waitState(t, u, 15*time.Second, StateFailed, StateConnecting)
			if got := other.requests(); len(got) > 0 {
				t.Fatalf("the other origin got %d requests: %q", len(got), got)
			}
			if !strings.Contains(st.LastError, "redirect refused") {
				t.Errorf("last error %q does not say the redirect was refused", st.LastError)
			}
		})
	}
}

// A redirect to the cloud metadata address is refused, and says what that
// address is.
func TestRedirectToLinkLocalRefused(t *testing.T) {
	fx := startHTTPFixture(t, "http", "-only", "echo")
	fxURL, _ := url.Parse(fx)
	rd := newRedirector(t, fx)
	rd.redirectTo("http://169.254.169.254/latest/meta-data/")
	m := newManager(t, redirectOptions(t))
	u, err := m.Add(redirectSpec(t, rd, fxURL.Path, TransportHTTP), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := waitState(t, u, 15*time.Second, StateFailed)
	for _, want := range []string{"redirect refused", "169.254.169.254/latest/meta-data/", "link-local"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("last error %q does not say %q", st.LastError, want)
		}
	}
}

// A redirect within the origin (a moved path) is still followed, with the
// headers: the approval covers that origin.
func TestRedirectWithinOriginFollowed(t *testing.T) {
	fx := startHTTPFixture(t, "http", "-only", "echo")
	fxURL, _ := url.Parse(fx)
	rd := newRedirector(t, fx)
	moved := rd.srv.Config.Handler
	rd.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, fxURL.Path, http.StatusPermanentRedirect)
			return
		}
		moved.ServeHTTP(w, r)
	})
	m := newManager(t, redirectOptions(t))
	u, err := m.Add(redirectSpec(t, rd, "/old", TransportHTTP), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, u, 15*time.Second, StateConnected)
	if got := callText(t, u, "echo", `{"message":"here"}`); !strings.Contains(got, "here") {
		t.Errorf("echo: %s", got)
	}
	if !rd.sawToken.Load() {
		t.Error("the redirected requests lost the configured headers")
	}
}

// A redirect that answers a retry (the first attempt got 503) is refused
// too: the retries' own client follows no redirect itself. On the old
// code it followed it, with the headers.
func TestRedirectOnARetrySendsNothing(t *testing.T) {
	fx := startHTTPFixture(t, "http", "-only", "echo")
	fxURL, _ := url.Parse(fx)
	other := newSink404(t)
	rd := newRedirector(t, fx)
	var n atomic.Int32
	inner := rd.srv.Config.Handler
	rd.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	})
	rd.redirectTo(strings.Replace(other.srv.URL, "127.0.0.1", "localhost", 1) + "/mcp")
	m := newManager(t, redirectOptions(t))
	u, err := m.Add(redirectSpec(t, rd, fxURL.Path, TransportHTTP), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := waitState(t, u, 15*time.Second, StateFailed)
	if got := other.requests(); len(got) > 0 {
		t.Fatalf("the other origin got %d requests: %q", len(got), got)
	}
	if !strings.Contains(st.LastError, "redirect refused") {
		t.Errorf("last error %q does not say the redirect was refused", st.LastError)
	}
}
