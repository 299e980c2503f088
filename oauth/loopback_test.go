package oauth

import (
	"context"
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
