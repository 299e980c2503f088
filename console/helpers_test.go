package console

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

var fixture string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "console-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixture, err = testbin.Build(dir, "./testdata/fixture")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const testToken = "console-test-token-0123456789abcdef"

// env is a hub with a real store and real upstreams, served over HTTP on
// 127.0.0.1 with its console beside its front.
type env struct {
	t     *testing.T
	h     *hub.Hub
	con   *Console
	st    *persist.Store
	srv   *httptest.Server
	base  string
	store hub.Store
}

// startEnv starts a hub with the config file's upstreams cfg.
func startEnv(t *testing.T, opts *Options, cfg ...hub.ConfigServer) *env {
	t.Helper()
	ctx := context.Background()
	st, err := persist.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.New(&hub.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: hubstore.Store{Store: st},
		StorePoll: 100 * time.Millisecond, ConfigFile: "hub.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	front, err := h.HTTPFront(&hub.HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Settings == nil {
		o.Settings = func() []config.Setting { return []config.Setting{{Key: "http.listen", Value: "127.0.0.1:0"}} }
	}
	if o.Poll == 0 {
		o.Poll = 100 * time.Millisecond
	}
	con, err := New(h, front, &o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(con.Beside(front))
	t.Cleanup(func() {
		con.Close()
		srv.Close()
		h.Close()
		st.Close()
	})
	return &env{t: t, h: h, con: con, st: st, srv: srv, base: srv.URL, store: hubstore.Store{Store: st}}
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, as a person's browser would hold the console's cookie.
type browser struct {
	t    *testing.T
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) newBrowser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: e.t, e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// login logs the browser in through a fresh one-time link.
func (e *env) login() *browser {
	e.t.Helper()
	b := e.newBrowser()
	res := b.get(e.con.LoginLink(e.base), nil)
	if res.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("login: %d", res.StatusCode)
	}
	b.readCSRF()
	return b
}

// readCSRF reads the session's CSRF token from the servers page.
func (b *browser) readCSRF() {
	b.t.Helper()
	body := b.page("/ui/")
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no CSRF token on the servers page:\n%s", body)
	}
	b.csrf = m[1]
}

func (b *browser) get(u string, hdr http.Header) *http.Response {
	b.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = b.e.base + u
	}
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { res.Body.Close() })
	return res
}

// page GETs a page and returns its body; it must be 200.
func (b *browser) page(path string) string {
	b.t.Helper()
	res := b.get(path, nil)
	body := readAll(b.t, res)
	if res.StatusCode != http.StatusOK {
		b.t.Fatalf("GET %s: %d\n%s", path, res.StatusCode, body)
	}
	return body
}

// text is a page's text with HTML entities decoded and tags kept.
func (b *browser) text(path string) string {
	b.t.Helper()
	return html.UnescapeString(b.page(path))
}

// post sends a form the way the console's script does (JSON answer),
// same origin, with the session's CSRF token unless form sets csrf.
func (b *browser) post(path string, form url.Values, hdr ...string) (int, actionResult) {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if !form.Has("csrf") {
		form.Set("csrf", b.csrf)
	}
	req, err := http.NewRequest("POST", b.e.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Origin", b.e.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var out actionResult
	body, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(body, &out); err != nil {
		b.t.Fatalf("POST %s: %d, not JSON: %s", path, res.StatusCode, body)
	}
	return res.StatusCode, out
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// state returns the upstream's state as the hub reports it.
func (e *env) state(name string) string {
	vs, err := e.h.Servers(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, v := range vs {
		if v.Name == name {
			return v.State
		}
	}
	return ""
}

// audit returns the audit log of an upstream as actor:action words, but
// the hub's own entries (its first pins).
func (e *env) audit(name string) string {
	log, err := e.st.AuditLog(context.Background(), name, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, a := range log {
		if a.Actor != "hub" {
			out = append(out, a.Actor+":"+a.Action)
		}
	}
	return strings.Join(out, " ")
}

// register stores a registration as a client's hub_add_server does:
// pending until a person approves it.
func (e *env) register(spec upstream.Spec) {
	e.t.Helper()
	if _, err := e.store.Create(context.Background(), upstream.Registration{Spec: spec, Source: upstream.SourceAdmin,
		Approval: upstream.ApprovalPending, Enabled: true, AutoConnect: true}); err != nil {
		e.t.Fatal(err)
	}
}

func fixtureSpec(name string, args ...string) upstream.Spec {
	return upstream.Spec{Name: name, Command: fixture, Args: args}
}
