package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

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
		page := make(chan string, 1)
		a.SetInteract(func(ctx context.Context, name string, owner any, authURL string) error {
			go func() { // the browser, sent back by the authorization server
				resp, err := http.Get(c.redirect + "?code=c0de&state=st4te")
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
		res, err := c.fetch(t.Context(), &auth.AuthorizationArgs{URL: "http://127.0.0.1:1/authorize"})
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
	forged := make(chan []string, 1)
	a.SetInteract(func(ctx context.Context, name string, owner any, authURL string) error {
		go func() {
			var got []string
			for _, q := range []string{"code=evil&state=guess", "code=evil", "error=access_denied&state=guess"} {
				resp, err := http.Get(c.redirect + "?" + q)
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
			if resp, err := http.Get(c.redirect + "?code=real&state=st4te-real"); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}, nil)
	res, err := c.fetch(t.Context(), &auth.AuthorizationArgs{URL: "http://127.0.0.1:1/authorize?client_id=x&state=st4te-real"})
	if err != nil || res.Code != "real" || res.State != "st4te-real" {
		t.Fatalf("fetch = %+v, %v; want the real redirect's code", res, err)
	}
	for _, page := range <-forged {
		if !strings.HasPrefix(page, "400 ") || strings.Contains(page, "logged in.") || !strings.Contains(page, "goes on") {
			t.Errorf("a forged callback got %q, want 400 saying the login goes on", page)
		}
	}
}
