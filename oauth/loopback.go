package oauth

import (
	"context"
	"crypto/subtle"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// callback is what the authorization server's redirect brought.
type callback struct {
	code, state, iss string
	err              string // error (and error_description) when it refused
}

// listenRedirect opens the loopback listener of one authorization, on the
// configured redirectPort or on a port the system picks, and returns it
// with its redirect URI. The caller holds it from here until the
// authorization ended (fetch serves it and shuts it down; the caller closes
// it in case fetch never ran): the URI registered with the authorization
// server and sent in the authorization request names a port nothing else
// can take in between. A port picked and released earlier (bind to 0, then
// close) is soon handed out again on Linux — to another listener, or as
// the source port of an outgoing connection, of which a hub serving for
// hours makes many — and the login then failed with "address already in
// use". A listener per authorization also serves concurrent logins and a
// step-up while the hub serves, each on a port of its own.
func (c *Client) listenRedirect() (net.Listener, string, error) {
	port := 0
	if c.conf != nil {
		port = c.conf.RedirectPort
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		if port != 0 {
			return nil, "", fmt.Errorf("listen for the authorization redirect on the configured oauth.redirectPort %d: %w", port, err)
		}
		return nil, "", fmt.Errorf("listen for the authorization redirect: %w", err)
	}
	return ln, fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port), nil
}

// fetch is the AuthorizationCodeFetcher of the go-sdk handler of an
// authorization whose redirect comes to ln (redirect is its URI): it gets
// a person to the authorization URL (Options.Interact), serves ln and waits
// for the redirect, then shuts ln down. go-sdk checks state and iss and
// exchanges the code.
func (c *Client) fetch(ctx context.Context, ln net.Listener, redirect string, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	if u, err := url.Parse(args.URL); err == nil && u.Host != "" {
		c.setServer(u.Scheme + "://" + u.Host)
	}
	interact, can := c.a.interaction()
	owner := ownerFrom(ctx)
	if interact == nil || (can != nil && !can(owner)) {
		return nil, errNobody
	}
	// The state go-sdk put into the authorization URL: only a redirect that
	// brings it back ends the wait (go-sdk checks it again).
	var state string
	if u, err := url.Parse(args.URL); err == nil {
		state = u.Query().Get("state")
	}
	results := make(chan callback, 1)
	srv := &http.Server{Handler: callbackHandler(results, state), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	// Shut down, not Close: the redirect's page ("logged in") is still
	// being written when its result arrives here, and Close would cut it
	// off (the browser then shows a failed page for a login that worked).
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
	}()

	wctx, cancel := context.WithTimeout(ctx, c.a.opts.AuthTimeout)
	defer cancel()
	opened := make(chan error, 1)
	go func() { opened <- interact(wctx, c.name, owner, args.URL) }()
	for {
		select {
		case r := <-results:
			if r.err != "" {
				return nil, fmt.Errorf("the authorization server refused: %s", r.err)
			}
			return &auth.AuthorizationResult{Code: r.code, State: r.state, Iss: r.iss}, nil
		case err := <-opened:
			if err != nil {
				return nil, err
			}
			opened = nil // directed there: wait for the redirect
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("no authorization redirect reached %s within %s", redirect, c.a.opts.AuthTimeout)
		}
	}
}

// callbackHandler serves the redirect URI: the first redirect that brings
// back state (the authorization request's; any when it is "") goes to
// results. Any other request to it (a page or another local process
// forging the redirect) is refused, and the login goes on waiting for the
// real one: a forged redirect neither ends the login nor shows "logged in".
func callbackHandler(results chan<- callback, state string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		cb := callback{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss")}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if state != "" && subtle.ConstantTimeCompare([]byte(cb.state), []byte(state)) != 1 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "<!doctype html><title>mcp-hub</title><p>mcp-hub: this is not the login mcp-hub is waiting for "+
				"(its state does not match): nothing was logged in; the login in progress goes on.</p>")
			return
		}
		if e := q.Get("error"); e != "" {
			cb.err = e
			if d := q.Get("error_description"); d != "" {
				cb.err += ": " + d
			}
		} else if cb.code == "" {
			cb.err = "the redirect carried no authorization code"
		}
		if cb.err != "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "<!doctype html><title>mcp-hub</title><p>mcp-hub: the login failed: %s</p>", html.EscapeString(cb.err))
		} else {
			fmt.Fprint(w, "<!doctype html><title>mcp-hub</title><p>mcp-hub: logged in. You can close this tab.</p>")
		}
		select {
		case results <- cb:
		default:
		}
	})
	return mux
}
