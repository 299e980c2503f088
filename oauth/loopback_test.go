package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestLoopbackPageReachesTheBrowser: the browser that brings the redirect
// to the loopback listener gets the whole "logged in" page, although the
// login goes on (and the listener stops) as soon as the redirect's code
// arrives. Closing the listener at once cut the page off now and then, and
// a person saw a failed page for a login that had worked.
func TestLoopbackPageReachesTheBrowser(t *testing.T) {
	for i := range 40 {
		a := New(Options{AuthTimeout: 10 * time.Second})
		c := newClient(a, &upstream.Spec{Name: "x", URL: "http://127.0.0.1:1/mcp"})
		ln, redirect := listenRedirect(t, c)
		page := make(chan string, 1)
		a.SetInteract(func(ctx context.Context, name string, owner any, authURL string) error {
			go func() { // the browser, sent back by the authorization server
				resp, err := http.Get(redirect + "?code=c0de&state=st4te")
				if err != nil {
					page <- "error: " + err.Error()
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					page <- "error: " + err.Error()
					return
				}
				page <- string(b)
			}()
			return nil
		}, nil)
		res, err := c.fetch(t.Context(), ln, redirect, &auth.AuthorizationArgs{URL: "http://127.0.0.1:1/authorize"})
		if err != nil || res.Code != "c0de" || res.State != "st4te" {
			t.Fatalf("round %d: fetch = %+v, %v", i, res, err)
		}
		if got := <-page; !strings.Contains(got, "logged in") {
			t.Fatalf("round %d: the browser got %q, want the logged-in page", i, got)
		}
	}
}

// Issue 26: a forged request to the loopback callback (another process, a
// page: anything without the login's state) is refused, shows no "logged
// in", and the login keeps waiting for the real redirect, whose code it
// then takes. On the old code the first forged request ended the login.
func TestLoopbackRefusesForgedCallback(t *testing.T) {
	a := New(Options{AuthTimeout: 10 * time.Second})
	c := newClient(a, &upstream.Spec{Name: "x", URL: "http://127.0.0.1:1/mcp"})
	ln, redirect := listenRedirect(t, c)
	forged := make(chan []string, 1)
	a.SetInteract(func(ctx context.Context, name string, owner any, authURL string) error {
		go func() {
			var got []string
			for _, q := range []string{"code=evil&state=guess", "code=evil", "error=access_denied&state=guess"} {
				resp, err := http.Get(redirect + "?" + q)
				if err != nil {
					got = append(got, err.Error())
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got = append(got, fmt.Sprintf("%d %s", resp.StatusCode, b))
			}
			forged <- got
			// The real redirect, from the authorization server.
			if resp, err := http.Get(redirect + "?code=real&state=st4te-real"); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}, nil)
	res, err := c.fetch(t.Context(), ln, redirect, &auth.AuthorizationArgs{URL: "http://127.0.0.1:1/authorize?client_id=x&state=st4te-real"})
	if err != nil || res.Code != "real" || res.State != "st4te-real" {
		t.Fatalf("fetch = %+v, %v; want the real redirect's code", res, err)
	}
	for _, page := range <-forged {
		if !strings.HasPrefix(page, "400 ") || strings.Contains(page, "logged in.") || !strings.Contains(page, "goes on") {
			t.Errorf("a forged callback got %q, want 400 saying the login goes on", page)
		}
	}
}

// listenRedirect opens c's redirect listener for an authorization, closed
// when the test ends.
func listenRedirect(t *testing.T, c *Client) (net.Listener, string) {
	t.Helper()
	ln, redirect, err := c.listenRedirect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, redirect
}

// occupy takes redirect's port the way an outgoing connection of the hub
// would (as its source port, with a connection to target) and keeps it
// until the test ends. It returns "held" when the port was taken already
// (by the authorization's listener), "taken" when occupy took it.
func occupy(t *testing.T, redirect string, target net.Addr) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return err.Error()
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return "no port in " + redirect
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}}
	conn, err := d.Dial("tcp", target.String())
	switch {
	case err == nil:
		t.Cleanup(func() { conn.Close() })
		return "taken"
	case errors.Is(err, syscall.EADDRINUSE):
		return "held"
	}
	return err.Error()
}

// The lead, running the conformance suite's client leg: "listen for the
// authorization redirect (http://127.0.0.1:43293/callback): bind: address
// already in use". The redirect port was picked (bind to 0, close) when
// the upstream's client was made and listened on when an authorization
// started; in between the system handed it out again, here as the source
// port of an outgoing connection. Now each authorization listens first and
// holds the port until its redirect came: the first login (401), a step-up
// (403 insufficient_scope) on the same client, whether the client registers
// (Dynamic Client Registration registers the held port's URI), names a
// Client ID Metadata Document or was registered beforehand. On the old
// code the Dynamic Client Registration case failed: the port was free when
// registered, taken, and the listener could not bind it.
func TestRedirectPortHeldUntilTheRedirect(t *testing.T) {
	for _, tc := range []struct {
		name string
		conf *upstream.OAuth
		cimd bool
	}{
		{name: "dynamic registration"},
		{name: "client id metadata document", conf: &upstream.OAuth{ClientMetadataURL: "https://example.com/mcp-hub.json"}, cimd: true},
		{name: "pre-registered", conf: &upstream.OAuth{ClientID: "pre-registered"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var tries []string
			f := newFlowServer(t, func(f *flowServer) {
				f.scopes["/mcp/write"] = "write"
				f.cimd = tc.cimd
				f.onRedirect = func(step, redirect string) {
					got := occupy(t, redirect, f.srv.Listener.Addr())
					mu.Lock()
					tries = append(tries, step+": "+got)
					mu.Unlock()
				}
			})
			st, err := persist.Open(t.Context(), t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			a := New(Options{Store: st, Interact: browse, AuthTimeout: 20 * time.Second})
			c := a.client(&upstream.Spec{Name: "web", URL: f.srv.URL + "/mcp", OAuth: tc.conf})
			rt := c.Transport(http.DefaultTransport, nil, redact.NewScrubber())
			for _, path := range []string{"/mcp", "/mcp/write"} { // a login, then a step-up
				if code, err := get(t, rt, f.srv.URL+path, ""); err != nil || code != http.StatusOK {
					t.Fatalf("GET %s = %d, %v (tries to take the redirect port: %q)", path, code, err, tries)
				}
			}
			if got := f.authorizations(); len(got) != 2 {
				t.Fatalf("authorizations %q, want a login and a step-up", got)
			}
			if regs := f.registrations(); (tc.conf == nil && !slices.Equal(regs, f.authorizations())) || (tc.conf != nil && len(regs) > 0) {
				t.Errorf("registered %q for the authorizations %q", regs, f.authorizations())
			}
			mu.Lock()
			defer mu.Unlock()
			for _, try := range tries {
				if !strings.HasSuffix(try, ": held") {
					t.Errorf("redirect port not held: %s", try)
				}
			}
			if len(tries) == 0 {
				t.Error("nothing tried to take the redirect port: the test proves nothing")
			}
		})
	}
}

// Logins at the same time (mcp-hub login beside a hub that re-authorizes,
// two clients' URL elicitations) each listen on a port of their own, held
// until their redirect.
func TestConcurrentAuthorizationsHoldTheirOwnPorts(t *testing.T) {
	var mu sync.Mutex
	var tries []string
	f := newFlowServer(t, func(f *flowServer) {
		f.onRedirect = func(step, redirect string) {
			got := occupy(t, redirect, f.srv.Listener.Addr())
			mu.Lock()
			tries = append(tries, step+": "+got)
			mu.Unlock()
		}
	})
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		st, err := persist.Open(t.Context(), t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		c := New(Options{Store: st, Interact: browse, AuthTimeout: 20 * time.Second}).client(&upstream.Spec{Name: "web", URL: f.srv.URL + "/mcp"})
		rt := c.Transport(http.DefaultTransport, nil, redact.NewScrubber())
		wg.Go(func() {
			code, err := get(t, rt, f.srv.URL+"/mcp", "")
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("HTTP %d", code)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("login %d: %v", i, err)
		}
	}
	got := f.authorizations()
	if len(got) != n || len(slices.Compact(slices.Sorted(slices.Values(got)))) != n {
		t.Errorf("redirect URIs %q, want %d different ones", got, n)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, try := range tries {
		if !strings.HasSuffix(try, ": held") {
			t.Errorf("redirect port not held: %s", try)
		}
	}
}

// A configured redirectPort (for an authorization server that accepts only
// the registered redirect URI) is the one listened on; when something else
// has it, the login says so.
func TestConfiguredRedirectPort(t *testing.T) {
	f := newFlowServer(t, nil)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	login := func() error {
		st, err := persist.Open(t.Context(), t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		c := New(Options{Store: st, Interact: browse, AuthTimeout: 20 * time.Second}).
			client(&upstream.Spec{Name: "web", URL: f.srv.URL + "/mcp", OAuth: &upstream.OAuth{RedirectPort: port}})
		code, err := get(t, c.Transport(http.DefaultTransport, nil, redact.NewScrubber()), f.srv.URL+"/mcp", "")
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("HTTP %d", code)
		}
		return err
	}
	if err := login(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	if got := f.authorizations(); len(got) != 1 || got[0] != want {
		t.Errorf("authorizations %q, want one redirected to %s", got, want)
	}
	other, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Skipf("the port went elsewhere meanwhile: %v", err)
	}
	defer other.Close()
	if err := login(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("oauth.redirectPort %d", port)) {
		t.Errorf("login with the port taken: %v, want an error naming oauth.redirectPort", err)
	}
}
