package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Getting in. A person runs mcp-hub ui, which mints a one-time code with
// the hub's bearer token (POST /ui/login-codes, or in-process when it
// started the hub) and opens /ui/login?code=…; the code is exchanged, once,
// for a session: a random id in an HttpOnly, SameSite=Strict cookie
// scoped to /ui/, and a CSRF token the pages carry. The bearer token
// itself never reaches the browser. Codes and sessions live in memory: a
// restarted hub needs a new link.

const (
	maxCodes    = 32 // codes not used yet; the oldest goes first
	maxSessions = 64 // sessions; the oldest goes first
)

// auth holds the console's login codes and sessions.
type auth struct {
	codeTTL, sessionTTL time.Duration

	mu       sync.Mutex           // guards following
	codes    map[string]time.Time // code hash → expiry
	sessions map[string]*session  // id hash → session
}

// session is one logged-in browser.
type session struct {
	csrf    string
	expires time.Time

	mu    sync.Mutex // guards flash
	flash *flash     // shown once, on the next page
}

// flash is a message for the next page a browser without JavaScript sees
// after an action.
type flash struct {
	OK   bool
	Text string
}

func (a *auth) init(codeTTL, sessionTTL time.Duration) {
	a.codeTTL, a.sessionTTL = codeTTL, sessionTTL
	a.codes = map[string]time.Time{}
	a.sessions = map[string]*session{}
}

// hashKey keys the tables by a hash, so that a map lookup's timing says
// nothing of the secrets.
func hashKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return string(sum[:])
}

// newCode mints a one-time login code.
func (a *auth) newCode() string {
	code := rand.Text()
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, exp := range a.codes {
		if now.After(exp) {
			delete(a.codes, k)
		}
	}
	if len(a.codes) >= maxCodes {
		var oldest string
		for k, exp := range a.codes {
			if oldest == "" || exp.Before(a.codes[oldest]) {
				oldest = k
			}
		}
		delete(a.codes, oldest)
	}
	a.codes[hashKey(code)] = now.Add(a.codeTTL)
	return code
}

// useCode consumes a code: true once, within its lifetime.
func (a *auth) useCode(code string) bool {
	if code == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := hashKey(code)
	exp, ok := a.codes[k]
	delete(a.codes, k)
	return ok && time.Now().Before(exp)
}

// newSession starts a session and returns its id.
func (a *auth) newSession() (string, *session) {
	id := rand.Text() + rand.Text()
	s := &session{csrf: rand.Text(), expires: time.Now().Add(a.sessionTTL)}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	for k, old := range a.sessions {
		if now.After(old.expires) {
			delete(a.sessions, k)
		}
	}
	if len(a.sessions) >= maxSessions {
		var oldest string
		for k, old := range a.sessions {
			if oldest == "" || old.expires.Before(a.sessions[oldest].expires) {
				oldest = k
			}
		}
		delete(a.sessions, oldest)
	}
	a.sessions[hashKey(id)] = s
	return id, s
}

// session returns the request's live session, or nil.
func (a *auth) session(r *http.Request) *session {
	ck, err := r.Cookie(cookieName(r))
	if err != nil || ck.Value == "" {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := hashKey(ck.Value)
	s := a.sessions[k]
	if s != nil && time.Now().After(s.expires) {
		delete(a.sessions, k)
		return nil
	}
	return s
}

// end ends the request's session.
func (a *auth) end(r *http.Request) {
	if ck, err := r.Cookie(cookieName(r)); err == nil {
		a.mu.Lock()
		delete(a.sessions, hashKey(ck.Value))
		a.mu.Unlock()
	}
}

func (s *session) csrfOK(tok string) bool {
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.csrf)) == 1
}

func (s *session) setFlash(f *flash) {
	s.mu.Lock()
	s.flash = f
	s.mu.Unlock()
}

func (s *session) takeFlash() *flash {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.flash
	s.flash = nil
	return f
}

// cookieName names the session cookie after the port: cookies are shared
// by every port of a host, and two hubs on one machine must not log each
// other's browser out.
func cookieName(r *http.Request) string {
	_, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" || strings.Trim(port, "0123456789") != "" {
		port = "80"
	}
	return "mcp_hub_console_" + port
}

// serveLogin exchanges a one-time code for a session cookie and goes to
// the servers page.
func (c *Console) serveLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		c.refuse(w, r, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if !c.auth.useCode(r.URL.Query().Get("code")) {
		c.logger.Warn("console login refused: unknown, used or expired one-time code")
		c.refuse(w, r, http.StatusUnauthorized, "this login link is used or expired (each works once, within minutes): run `mcp-hub ui` for a new one")
		return
	}
	id, _ := c.auth.newSession()
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: id, Path: "/ui/", MaxAge: int(c.opts.SessionTTL.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	c.logger.Info("console login")
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// serveMintCode mints a one-time login code for the holder of the hub's
// bearer token (mcp-hub ui, when a hub serves already).
func (c *Console) serveMintCode(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, actionResult{Message: "method not allowed"})
		return
	}
	if err := c.front.CheckSameOrigin(r); err != nil {
		writeJSON(w, http.StatusForbidden, actionResult{Message: err.Error()})
		return
	}
	if err := c.front.CheckBearer(r); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-hub", error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, actionResult{Message: err.Error() +
			": a console login link is minted only with the hub's bearer token (http.token or <dataDir>/http-token)"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"path": loginPath + "?code=" + c.auth.newCode()})
}

// serveLogout ends the session.
func (c *Console) serveLogout(w http.ResponseWriter, r *http.Request) {
	c.auth.end(r)
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: "/ui/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, actionResult{OK: true, Message: "Logged out.", Redirect: "/ui/"})
		return
	}
	c.refuse(w, r, http.StatusOK, "Logged out. Run `mcp-hub ui` for a new login link.")
}
