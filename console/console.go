// Package console is mcp-hub's web console: pages at /ui/ on the hub's HTTP
// server that show every upstream (state, last error in words, stderr
// tail, uptime), the merged catalog (who won each contested name, the
// schemas), what waits for a person's approval (the registrations with
// exactly what they would run, and quarantined tool changes with their
// diff), recent calls and the configuration in effect, kept current over
// server-sent events; and the buttons that connect, disconnect, restart,
// remove, log in, approve and reject.
//
// It owns no logic of the hub's: every page reads the hub's exported
// state, and every button runs the function the REST API or the command
// line runs for the same job (package hub), recorded in the audit log as
// "console". It owns its security: a person gets in through a one-time
// link (mcp-hub ui mints it with the bearer token), which sets an
// HttpOnly, SameSite=Strict session cookie; every state-changing request
// needs the session's CSRF token and must come from the console's own
// origin; Host and Origin are checked as on /mcp (hub.Front). Nothing it
// shows holds a secret value: what the hub reports is masked already, and
// every page passes through redact's rules once more.
//
// The pages are server-rendered (html/template) and readable without
// JavaScript; one small module (assets/console.js) adds live updates and
// actions without a reload. Everything is embedded: no CDN, no build step.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Options configures a [Console]. A zero field selects the default in its
// comment.
type Options struct {
	// Logger receives the console's records (nil: discard).
	Logger *slog.Logger
	// Settings returns the configuration in effect for the settings page,
	// secrets masked (config.Config.Settings); nil shows none.
	Settings func() []config.Setting
	// CodeTTL is how long a one-time login link stays valid (5m).
	CodeTTL time.Duration
	// SessionTTL is how long a browser session lasts after the login (12h).
	SessionTTL time.Duration
	// Poll is how often an open page checks for changes the hub does not
	// announce (a registration added by the command line, new calls) (1s).
	Poll time.Duration
}

// Console serves the web console under /ui/. Create one with [New], mount
// it with [Console.Beside] and [Console.Close] it before the hub.
type Console struct {
	h       *hub.Hub
	front   *hub.Front
	opts    Options
	logger  *slog.Logger
	pages   map[string]*template.Template
	assets  http.Handler
	auth    auth
	rates   rates
	streams chan struct{} // a slot per open event stream

	ctx    context.Context // ends at Close: logins, event streams, the sampler
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

// New returns a console of h, whose HTTP front is front.
func New(h *hub.Hub, front *hub.Front, opts *Options) (*Console, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.CodeTTL <= 0 {
		o.CodeTTL = 5 * time.Minute
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Console{h: h, front: front, opts: o, logger: o.Logger.With("front", "console"), pages: pages,
		assets: http.StripPrefix("/ui/assets/", http.FileServerFS(sub)), streams: make(chan struct{}, maxStreams), ctx: ctx, cancel: cancel}
	c.auth.init(o.CodeTTL, o.SessionTTL)
	c.rates.sample(h.CallTotals(), time.Now())
	c.wg.Go(c.sampleRates)
	return c, nil
}

// Close ends the console's event streams, logins in progress and sampler,
// and waits for them. It is idempotent.
func (c *Console) Close() {
	c.closed.Do(func() {
		c.cancel()
		c.wg.Wait()
	})
}

// Beside returns a handler that serves the console's paths (/ui and
// everything under /ui/) and passes every other request to next, the hub's
// HTTP front: the console sits beside it on the same server and origin.
func (c *Console) Beside(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "/ui" || strings.HasPrefix(p, "/ui/") {
			c.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoginLink mints a one-time login link for the console served at base
// (scheme://host:port): what mcp-hub ui prints and opens.
func (c *Console) LoginLink(base string) string {
	return strings.TrimRight(base, "/") + loginPath + "?code=" + c.auth.newCode()
}

// loginPath is where a one-time link logs a browser in.
const loginPath = "/ui/login"

// ServeHTTP serves the console: Host and Origin are checked first, as on
// /mcp, then the route's own rules (a session for pages, a session, the
// console's origin and the CSRF token for changes).
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w.Header())
	if err := c.front.CheckHost(r); err != nil {
		c.refuse(w, r, http.StatusForbidden, err.Error())
		return
	}
	if err := c.front.CheckOrigin(r); err != nil {
		c.refuse(w, r, http.StatusForbidden, err.Error())
		return
	}
	path := r.URL.Path
	switch {
	case path == "/ui":
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	case strings.HasPrefix(path, "/ui/assets/"):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			c.refuse(w, r, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		c.assets.ServeHTTP(w, r)
		return
	case path == loginPath:
		c.serveLogin(w, r)
		return
	case path == "/ui/login-codes":
		c.serveMintCode(w, r)
		return
	}
	s := c.auth.session(r)
	if s == nil {
		c.refuse(w, r, http.StatusUnauthorized, "log in first: run `mcp-hub ui`, which prints a one-time link to this console")
		return
	}
	if r.Method == http.MethodPost {
		if err := c.checkChange(w, r, s); err != nil {
			c.refuse(w, r, http.StatusForbidden, err.Error())
			return
		}
		c.serveAction(w, r, s)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, POST")
		c.refuse(w, r, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	c.servePage(w, r, s)
}

// checkChange refuses a state-changing request from a page of another
// origin (as the admin API does) or without the session's CSRF token.
func (c *Console) checkChange(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := c.front.CheckSameOrigin(r); err != nil {
		return err
	}
	tok := r.Header.Get("X-CSRF-Token")
	if tok == "" {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			return fmt.Errorf("cannot read the form: %w", err)
		}
		tok = r.PostForm.Get("csrf")
	}
	if !s.csrfOK(tok) {
		return errors.New("missing or wrong CSRF token: reload the page and try again")
	}
	return nil
}

// secureHeaders are on every answer of the console: only its own scripts
// and styles, never in a frame, no referrer to another origin (a login
// link must not leak), nothing cached. The referrer policy is
// same-origin, not no-referrer: under no-referrer a browser sends
// "Origin: null" with a form's post, and the same-origin check refuses
// every button of a page read without JavaScript.
func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// refuse answers a request the console does not serve: JSON for the
// console's script, a small page for a person.
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	msg = redact.Bound(msg) // it may quote what the request named
	if wantsJSON(r) {
		writeJSON(w, status, actionResult{Message: msg})
		return
	}
	c.message(w, status, msg, "", "")
}

// message answers with the small page of a message, and a link to follow
// when link is not empty.
func (c *Console) message(w http.ResponseWriter, status int, msg, link, linkText string) {
	msg = redact.Bound(msg)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = c.pages["refused"].ExecuteTemplate(w, "refused", map[string]any{"Status": status, "Text": http.StatusText(status), "Message": msg,
		"Link": link, "LinkText": linkText})
}
