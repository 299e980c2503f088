package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// HTTPOptions configures the hub's HTTP front. A zero field selects the
// default in its comment.
type HTTPOptions struct {
	// Token is the bearer token every request must carry. Empty requires
	// NoAuth. With NoAuth it is still required to approve over the admin
	// API (POST /api/servers/{name}/approve); with NoAuth and no Token,
	// approval over the API is refused (people approve with mcp-hub
	// approve).
	Token string
	// NoAuth turns the token off for MCP clients and the rest of the API
	// (for tools that cannot send headers), never for approval. Host and
	// Origin checks stay on.
	NoAuth bool
	// AllowedHosts are Host names accepted besides localhost, 127.0.0.1 and
	// ::1 (DNS-rebinding protection).
	AllowedHosts []string
	// AllowedOrigins are Origins (scheme://host[:port]) accepted besides
	// loopback ones. A request without Origin is accepted.
	AllowedOrigins []string
	// MaxBodyBytes caps a request body (16 MiB).
	MaxBodyBytes int64
	// MaxSessions caps concurrent client sessions (64). At the cap, a new
	// client's session replaces the least recently used idle one (no
	// request in flight, no open stream); when none is idle it gets 503.
	MaxSessions int
	// SessionIdleTimeout closes sessions idle this long (30m).
	SessionIdleTimeout time.Duration
	// KeepAlive is how often idle SSE streams get a comment line (15s).
	KeepAlive time.Duration
	// ProtocolVersions are the MCP-Protocol-Version header values accepted.
	ProtocolVersions []string
	// BodyTimeout bounds reading one request body (30s), so a body that
	// never ends cannot hold a handler.
	BodyTimeout time.Duration
	// Auth makes the front an OAuth 2.1 resource server (resource.go):
	// requests need a JWT from the identity provider it names instead of
	// Token, which must then be empty (as must NoAuth).
	Auth *AuthOptions
}

// httpFront serves MCP over streamable HTTP (/mcp) and legacy SSE (/sse),
// the operations endpoints and the admin API.
type httpFront struct {
	h         *Hub
	opts      HTTPOptions
	tokenHash [32]byte
	logger    *slog.Logger
	mux       *http.ServeMux
	rs        *resourceServer // nil: the static token (or no auth)

	mu       sync.Mutex // guards following
	sessions map[string]*httpSession
}

// HTTPHandler returns an http.Handler serving the hub: streamable HTTP MCP at
// /mcp, legacy SSE at /sse (messages POSTed to /message), /healthz,
// /readyz, /metrics and the admin API under /api/servers. Every route but
// /healthz and /readyz requires the bearer token (unless NoAuth), and every
// route checks Host and Origin. /healthz is liveness (the process serves);
// /readyz is readiness, for load balancers: 200 once Start returned and
// while the store can be reached, else 503; only a request with the token
// gets its details.
func (h *Hub) HTTPHandler(opts *HTTPOptions) (http.Handler, error) {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Auth != nil && (o.Token != "" || o.NoAuth):
		return nil, errors.New("http: auth (an identity provider's tokens) excludes the static token and NoAuth")
	case o.Auth == nil && o.Token == "" && !o.NoAuth:
		return nil, errors.New("http: a token is required unless NoAuth is set")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 16 << 20
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 64
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = 30 * time.Minute
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 30 * time.Second
	}
	if len(o.ProtocolVersions) == 0 {
		o.ProtocolVersions = append([]string{statelessVersion}, legacyVersions...)
	}
	f := &httpFront{h: h, opts: o, tokenHash: sha256.Sum256([]byte(o.Token)), logger: h.logger.With("front", "http"),
		sessions: map[string]*httpSession{}}
	if o.Auth != nil {
		rs, err := newResourceServer(*o.Auth, f)
		if err != nil {
			return nil, err
		}
		f.rs = rs
		h.wg.Go(func() {
			<-h.stop
			rs.verify.Close()
		})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", f.serveStreamable)
	mux.HandleFunc("GET /sse", f.serveSSE)
	mux.HandleFunc("POST /message", f.serveSSEMessage)
	mux.HandleFunc("GET /healthz", f.serveHealthz)
	mux.HandleFunc("GET /readyz", f.serveReadyz)
	mux.Handle("GET /metrics", h.metrics.handler())
	f.adminRoutes(mux)
	f.mux = mux
	h.wg.Go(f.janitor)
	return f, nil
}

func (f *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg, ok := f.checkHost(r); !ok {
		rpcHTTPError(w, http.StatusForbidden, msg)
		return
	}
	if f.rs != nil && f.rs.servesMetadata(w, r) {
		return // public, for clients of any origin
	}
	if msg, ok := f.checkOrigin(r); !ok {
		rpcHTTPError(w, http.StatusForbidden, msg)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		if err := f.checkAPIRequest(r); err != nil {
			writeAPI(w, 0, "", adminResult{}, err)
			return
		}
	}
	open := r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
	if !open && f.rs != nil {
		var ok bool
		if r, ok = f.rs.authenticate(w, r); !ok {
			return
		}
	} else if !open {
		if msg, ok := f.checkToken(r); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-hub", error="invalid_token"`)
			rpcHTTPError(w, http.StatusUnauthorized, msg)
			return
		}
	}
	f.mux.ServeHTTP(w, r)
}

// rpcHTTPError writes an HTTP error whose body is a JSON-RPC error without
// an id.
func rpcHTTPError(w http.ResponseWriter, status int, msg string) {
	code := int64(jsonrpc.CodeInvalidRequest)
	if status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	body := []byte(`{"jsonrpc":"2.0","error":`)
	body = wire.AppendErrorBody(body, code, msg, nil)
	body = append(body, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func isLoopbackName(host string) bool {
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1", "[::1]":
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// checkHost refuses requests for a Host that is not ours: a DNS-rebinding
// attack arrives on loopback with the attacker's Host.
func (f *httpFront) checkHost(r *http.Request) (string, bool) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if isLoopbackName(host) || slices.ContainsFunc(f.opts.AllowedHosts, func(a string) bool { return strings.EqualFold(a, host) }) {
		return "", true
	}
	return fmt.Sprintf("host %q is not allowed", r.Host), false
}

// checkOrigin accepts requests without Origin (non-browser clients) and
// browser requests from loopback or configured origins; duplicate and
// "null" origins are refused.
func (f *httpFront) checkOrigin(r *http.Request) (string, bool) {
	vals := r.Header.Values("Origin")
	switch {
	case len(vals) == 0:
		return "", true
	case len(vals) > 1:
		return "duplicate Origin headers", false
	}
	o := vals[0]
	if o == "null" {
		return `origin "null" is not allowed`, false
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Sprintf("origin %q is not allowed", o), false
	}
	if isLoopbackName(u.Hostname()) || slices.ContainsFunc(f.opts.AllowedOrigins, func(a string) bool { return strings.EqualFold(strings.TrimRight(a, "/"), o) }) {
		return "", true
	}
	return fmt.Sprintf("origin %q is not allowed", o), false
}

// checkToken verifies the bearer token in constant time. Tokens in the
// query string are never accepted.
func (f *httpFront) checkToken(r *http.Request) (string, bool) {
	q := r.URL.Query()
	for _, k := range []string{"token", "access_token", "auth", "key", "api_key"} {
		if q.Has(k) {
			return "tokens in the query string are not accepted; send Authorization: Bearer <token>", false
		}
	}
	if f.opts.NoAuth {
		return "", true
	}
	return f.checkBearer(r)
}

// checkBearer verifies the Authorization header's bearer token in constant
// time. The scheme is case-insensitive (RFC 9110, 11.1).
func (f *httpFront) checkBearer(r *http.Request) (string, bool) {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimLeft(tok, " ")
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "missing bearer token (Authorization: Bearer <token>)", false
	}
	sum := sha256.Sum256([]byte(tok))
	if f.opts.Token == "" || subtle.ConstantTimeCompare(sum[:], f.tokenHash[:]) != 1 {
		return "invalid bearer token", false
	}
	return "", true
}

func (f *httpFront) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "ok\n")
}

// storePinger is a Store that can check it reaches its database cheaply.
type storePinger interface {
	Ping(ctx context.Context) error
}

func (f *httpFront) serveReadyz(w http.ResponseWriter, r *http.Request) {
	status, storeState := http.StatusOK, "none"
	if st := f.h.opts.Store; st != nil {
		storeState = "ok"
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		var err error
		if p, ok := st.(storePinger); ok {
			err = p.Ping(ctx)
		} else {
			_, err = st.List(ctx)
		}
		if err != nil {
			storeState, status = "error: "+redact.Text(err.Error()), http.StatusServiceUnavailable
		}
		cancel()
	}
	starting := f.h.starting.Load()
	if starting {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if _, ok := f.checkToken(r); !ok {
		// A load balancer's check: the verdict, nothing about the hub.
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"ready":%t}`+"\n", status == http.StatusOK)
		return
	}
	total, connected := 0, 0
	for _, u := range f.h.mgr.List() {
		total++
		if st := u.Status(); st.State == upstream.StateConnected {
			connected++
		}
	}
	body, _ := json.Marshal(map[string]any{
		"store": storeState, "starting": starting, "upstreams": map[string]int{"connected": connected, "total": total},
		"sessions": f.h.sessionCount(), "ready": status == http.StatusOK,
	})
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// httpSession is one client session over streamable HTTP or legacy SSE.
type httpSession struct {
	front  *httpFront
	id     string
	legacy bool   // legacy SSE: everything goes to the one stream
	sub    string // the token subject that opened it (auth), which alone may use it
	s      *session

	mu         sync.Mutex // guards following
	pending    map[string]*postWait
	stream     *sseStream // the standalone GET stream (or the legacy stream)
	backlog    [][]byte   // messages waiting for a stream
	active     int        // requests being handled (see begin)
	lastActive time.Time
	closed     bool
}

// maxBacklog bounds messages kept for a client without a GET stream.
const maxBacklog = 256

// postWait is a POST waiting for its response, and for the messages that
// belong to its request.
type postWait struct {
	events chan []byte // related notifications and requests (dropped when full)
	final  chan []byte // the response
}

// sseStream is an open text/event-stream to a client.
type sseStream struct {
	ch      chan []byte
	dropped int
}

func (st *sseStream) push(b []byte) bool {
	select {
	case st.ch <- b:
		return true
	default:
		st.dropped++
		return false
	}
}

func (hs *httpSession) touch() {
	hs.mu.Lock()
	hs.lastActive = time.Now()
	hs.mu.Unlock()
}

// send routes a message: a response to the POST that asked, a related
// message to that POST's stream, anything else to the standalone stream
// (kept for a while when the client has none open).
func (hs *httpSession) send(m outMsg) error {
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		return errSessionClosed
	}
	if !hs.legacy {
		if m.respTo != nil {
			key := canonicalID(m.respTo)
			if p := hs.pending[key]; p != nil {
				delete(hs.pending, key)
				hs.mu.Unlock()
				p.final <- m.data
				return nil
			}
		} else if m.related != nil {
			if p := hs.pending[canonicalID(m.related)]; p != nil {
				hs.mu.Unlock()
				select {
				case p.events <- m.data:
				default: // a flood; the response still gets through
				}
				return nil
			}
		}
		if m.respTo != nil {
			hs.mu.Unlock()
			return nil // its POST is gone: the client stopped waiting
		}
	}
	st := hs.stream
	if st == nil {
		if len(hs.backlog) >= maxBacklog {
			hs.backlog = hs.backlog[1:]
		}
		hs.backlog = append(hs.backlog, m.data)
		hs.mu.Unlock()
		return nil
	}
	hs.mu.Unlock()
	if !st.push(m.data) {
		hs.front.logger.Warn("client stream full; message dropped", "session", hs.id)
	}
	return nil
}

var errSessionClosed = errors.New("session closed")

// newHTTPSession registers a session; the caller must call end on it once
// its first request is handled (or its stream is open). At the session cap
// the least recently used idle session is closed to make room; when none is
// idle, it returns errTooManySessions.
func (f *httpFront) newHTTPSession(ctx context.Context, legacy bool) (*httpSession, error) {
	hs := &httpSession{front: f, id: rand.Text(), legacy: legacy, pending: map[string]*postWait{}, active: 1, lastActive: time.Now()}
	f.mu.Lock()
	var evicted *httpSession
	var idleFor time.Duration
	if len(f.sessions) >= f.opts.MaxSessions {
		if evicted, idleFor = f.evictLocked(); evicted == nil {
			f.mu.Unlock()
			return nil, errTooManySessions
		}
	}
	f.sessions[hs.id] = hs
	f.mu.Unlock()
	if evicted != nil {
		f.logger.Info("session limit reached: closed the least recently used idle session for a new client (it gets 404 and initializes again)",
			"session", shortID(evicted.id), "idle", idleFor.Round(time.Second), "limit", f.opts.MaxSessions)
		f.closeSession(evicted, true)
	}
	s, err := f.h.newSession(context.WithoutCancel(ctx), hs.id, hs)
	if err != nil {
		f.dropSession(hs)
		return nil, err
	}
	hs.s = s
	kind := "streamable"
	if legacy {
		kind = "sse"
	}
	f.h.metrics.sessionOpened(kind)
	return hs, nil
}

var errTooManySessions = errors.New("too many sessions")

func (f *httpFront) session(id string) *httpSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessions[id]
}

// sessionFor returns the session id names when the request's principal
// opened it (with auth, a session belongs to its token's subject; another
// one gets 404 as for an unknown session), and records the request's
// token for it.
func (f *httpFront) sessionFor(r *http.Request, id string) *httpSession {
	hs := f.session(id)
	if hs == nil {
		return nil
	}
	ti := tokenInfo(r.Context())
	if f.rs != nil && (ti == nil || ti.UserID != hs.sub) {
		return nil
	}
	if ti != nil && hs.s != nil {
		hs.s.token.Store(ti)
	}
	return hs
}

func (f *httpFront) dropSession(hs *httpSession) {
	f.mu.Lock()
	_, was := f.sessions[hs.id]
	delete(f.sessions, hs.id)
	f.mu.Unlock()
	f.closeSession(hs, was)
}

// closeSession closes a session taken out of the table; counted says it was
// in the table (and in the session metrics).
func (f *httpFront) closeSession(hs *httpSession, counted bool) {
	hs.mu.Lock()
	hs.closed = true
	pending := hs.pending
	hs.pending = map[string]*postWait{}
	hs.mu.Unlock()
	for _, p := range pending {
		close(p.final)
	}
	if hs.s != nil {
		hs.s.close()
	}
	if counted && hs.s != nil {
		kind := "streamable"
		if hs.legacy {
			kind = "sse"
		}
		f.h.metrics.sessionClosed(kind)
	}
}

// janitor closes sessions idle for longer than the idle timeout. It exits
// when the hub closes (then every session is closed).
func (f *httpFront) janitor() {
	t := time.NewTicker(min(f.opts.SessionIdleTimeout/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-f.h.stop:
			f.mu.Lock()
			all := make([]*httpSession, 0, len(f.sessions))
			for _, hs := range f.sessions {
				all = append(all, hs)
			}
			f.mu.Unlock()
			for _, hs := range all {
				f.dropSession(hs)
			}
			return
		case <-t.C:
		}
		f.mu.Lock()
		var idle []*httpSession
		for _, hs := range f.sessions {
			hs.mu.Lock()
			if hs.idleLocked() && time.Since(hs.lastActive) > f.opts.SessionIdleTimeout {
				idle = append(idle, hs)
			}
			hs.mu.Unlock()
		}
		f.mu.Unlock()
		for _, hs := range idle {
			f.logger.Info("closing idle session", "session", shortID(hs.id))
			f.dropSession(hs)
		}
	}
}

// readBody reads a request body up to the cap; too large is 413.
func (f *httpFront) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength > f.opts.MaxBodyBytes {
		// Declared too large: refused without reading it.
		w.Header().Set("Connection", "close")
		rpcHTTPError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", f.opts.MaxBodyBytes))
		return nil, false
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(f.opts.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.opts.MaxBodyBytes))
	if err != nil {
		// The connection is not reusable: the rest of the body is unread.
		w.Header().Set("Connection", "close")
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			rpcHTTPError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", f.opts.MaxBodyBytes))
		} else {
			rpcHTTPError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
		}
		return nil, false
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, true
}

// serveStreamable implements the streamable HTTP transport on /mcp.
func (f *httpFront) serveStreamable(w http.ResponseWriter, r *http.Request) {
	v := r.Header.Get("Mcp-Protocol-Version")
	if v != "" && !slices.Contains(f.opts.ProtocolVersions, v) {
		if v >= statelessVersion {
			// The 2026-07-28 answer, which tells the client what to use.
			writeJSON(w, http.StatusBadRequest, wire.AppendError(nil, nil, codeUnsupportedProtocolVersion,
				fmt.Sprintf("unsupported protocol version %q", v), unsupportedVersionData(f.opts.ProtocolVersions, v)))
			return
		}
		rpcHTTPError(w, http.StatusBadRequest, fmt.Sprintf("unsupported MCP-Protocol-Version %q (supported: %s)", v, strings.Join(f.opts.ProtocolVersions, ", ")))
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid != "" && !validSessionID(sid) {
		rpcHTTPError(w, http.StatusBadRequest, "malformed Mcp-Session-Id")
		return
	}
	if sid == "" && v >= statelessVersion && r.Method != http.MethodPost {
		// A stateless client has no stream of its own but its POSTs'.
		w.Header().Set("Allow", "POST")
		rpcHTTPError(w, http.StatusMethodNotAllowed, "protocol version "+v+" has no session: POST each request")
		return
	}
	switch r.Method {
	case http.MethodPost:
		f.streamablePost(w, r, sid)
	case http.MethodGet:
		f.streamableGet(w, r, sid)
	case http.MethodDelete:
		hs := f.sessionFor(r, sid)
		if hs == nil || hs.legacy {
			rpcHTTPError(w, http.StatusNotFound, "unknown session")
			return
		}
		f.dropSession(hs)
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		rpcHTTPError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// validSessionID: visible ASCII only (0x21–0x7E), bounded.
func validSessionID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func (f *httpFront) streamablePost(w http.ResponseWriter, r *http.Request, sid string) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		rpcHTTPError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	m, err := wire.Parse(body)
	if err != nil {
		code := int64(jsonrpc.CodeParseError)
		if errors.Is(err, wire.ErrEnvelope) || errors.Is(err, wire.ErrBatch) {
			code = jsonrpc.CodeInvalidRequest
		}
		out := wire.AppendError(nil, nil, code, err.Error(), nil)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(out)
		return
	}
	if sid == "" && isStatelessPost(r, m) {
		f.statelessPost(w, r, body, m)
		return
	}
	var hs *httpSession
	switch {
	case sid == "" && m.Method == "initialize":
		if hs, err = f.newHTTPSession(r.Context(), false); err != nil {
			if errors.Is(err, errTooManySessions) {
				w.Header().Set("Retry-After", "5")
				rpcHTTPError(w, http.StatusServiceUnavailable, "the hub has too many sessions, all of them busy; try again shortly")
				return
			}
			rpcHTTPError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if ti := tokenInfo(r.Context()); ti != nil {
			hs.sub = ti.UserID
			hs.s.token.Store(ti)
		}
		w.Header().Set("Mcp-Session-Id", hs.id)
	case sid == "":
		rpcHTTPError(w, http.StatusBadRequest, "missing Mcp-Session-Id (initialize first)")
		return
	default:
		if hs = f.sessionFor(r, sid); hs == nil || hs.legacy || !hs.begin() {
			rpcHTTPError(w, http.StatusNotFound, "unknown or expired session")
			return
		}
	}
	defer hs.end() // newHTTPSession began the first request
	if !m.IsRequest() {
		hs.s.handle(body)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	p := &postWait{events: make(chan []byte, 64), final: make(chan []byte, 1)}
	key := canonicalID(m.ID)
	hs.mu.Lock()
	if _, dup := hs.pending[key]; dup {
		hs.mu.Unlock()
		// Answered like any refused request: under its id, the first
		// request with that id still gets its own answer.
		out := wire.AppendError(nil, m.ID, jsonrpc.CodeInvalidRequest, errIDInUse.Error(), nil)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
		return
	}
	hs.pending[key] = p
	hs.mu.Unlock()
	hs.s.handle(body)
	f.awaitResponse(w, r, hs, key, p)
}

// awaitResponse answers a POSTed request: as JSON when the response comes
// first, as an SSE stream when messages of the request come before it.
func (f *httpFront) awaitResponse(w http.ResponseWriter, r *http.Request, hs *httpSession, key string, p *postWait) {
	defer func() {
		hs.mu.Lock()
		if hs.pending[key] == p {
			delete(hs.pending, key)
		}
		hs.mu.Unlock()
		hs.touch()
	}()
	var flusher http.Flusher
	streaming := false
	// event writes a message as an SSE event, turning the response into
	// an event stream first.
	event := func(data []byte) {
		if !streaming {
			streaming = true
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			flusher, _ = w.(http.Flusher)
		}
		writeEvent(w, data)
	}
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	for {
		select {
		case ev := <-p.events:
			event(ev)
			flush()
		case data, ok := <-p.final:
			if !ok {
				if !streaming {
					rpcHTTPError(w, http.StatusNotFound, "the session closed")
				}
				return
			}
			// Messages that came before the response go first.
			for drained := false; !drained; {
				select {
				case ev := <-p.events:
					event(ev)
				default:
					drained = true
				}
			}
			if streaming {
				event(data)
				flush()
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(data)
			return
		case <-r.Context().Done():
			// The client went away. Its request keeps running (a
			// disconnect is not a cancellation); the response is dropped.
			return
		}
	}
}

func writeEvent(w io.Writer, data []byte) {
	buf := make([]byte, 0, len(data)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	_, _ = w.Write(buf)
}

// streamableGet opens the standalone stream of server-initiated messages.
func (f *httpFront) streamableGet(w http.ResponseWriter, r *http.Request, sid string) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		rpcHTTPError(w, http.StatusNotAcceptable, "GET needs Accept: text/event-stream")
		return
	}
	hs := f.sessionFor(r, sid)
	if sid == "" || hs == nil || hs.legacy {
		rpcHTTPError(w, http.StatusNotFound, "unknown or expired session")
		return
	}
	st := &sseStream{ch: make(chan []byte, 1024)}
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		rpcHTTPError(w, http.StatusNotFound, "unknown or expired session")
		return
	}
	if hs.stream != nil {
		hs.mu.Unlock()
		rpcHTTPError(w, http.StatusConflict, "this session already has an open event stream")
		return
	}
	hs.stream = st
	backlog := hs.backlog
	hs.backlog = nil
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		if hs.stream == st {
			hs.stream = nil
		}
		hs.lastActive = time.Now()
		hs.mu.Unlock()
	}()
	f.pumpStream(w, r, hs, st, backlog, nil)
}

// pumpStream writes a stream's messages (after backlog and a first event)
// and keep-alive comments until the client or the session goes away.
func (f *httpFront) pumpStream(w http.ResponseWriter, r *http.Request, hs *httpSession, st *sseStream, backlog [][]byte, first func(io.Writer)) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	if first != nil {
		first(w)
	}
	for _, b := range backlog {
		writeEvent(w, b)
	}
	flush()
	tick := time.NewTicker(f.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case b := <-st.ch:
			writeEvent(w, b)
			for more := true; more; { // batch what is queued into one flush
				select {
				case b := <-st.ch:
					writeEvent(w, b)
				default:
					more = false
				}
			}
			flush()
		case <-tick.C:
			_, _ = io.WriteString(w, ": keep-alive\n\n")
			flush()
		case <-r.Context().Done():
			return
		case <-hs.s.done:
			return
		}
	}
}

// serveSSE implements the legacy HTTP+SSE transport: the GET stream is the
// session; messages are POSTed to /message?sessionId=….
func (f *httpFront) serveSSE(w http.ResponseWriter, r *http.Request) {
	hs, err := f.newHTTPSession(r.Context(), true)
	if err != nil {
		if errors.Is(err, errTooManySessions) {
			w.Header().Set("Retry-After", "5")
			rpcHTTPError(w, http.StatusServiceUnavailable, "the hub has too many sessions, all of them busy; try again shortly")
			return
		}
		rpcHTTPError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer f.dropSession(hs)
	if ti := tokenInfo(r.Context()); ti != nil {
		hs.sub = ti.UserID
		hs.s.token.Store(ti)
	}
	st := &sseStream{ch: make(chan []byte, 4096)}
	hs.mu.Lock()
	hs.stream = st // the session's one stream: it is never idle
	backlog := hs.backlog
	hs.backlog = nil
	hs.mu.Unlock()
	hs.end()
	endpoint := "/message?sessionId=" + url.QueryEscape(hs.id)
	f.pumpStream(w, r, hs, st, backlog, func(w io.Writer) {
		_, _ = io.WriteString(w, "event: endpoint\ndata: "+endpoint+"\n\n")
	})
}

func (f *httpFront) serveSSEMessage(w http.ResponseWriter, r *http.Request) {
	hs := f.sessionFor(r, r.URL.Query().Get("sessionId"))
	if hs == nil || !hs.legacy {
		rpcHTTPError(w, http.StatusNotFound, "unknown or expired session")
		return
	}
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	if _, err := wire.Parse(body); err != nil {
		rpcHTTPError(w, http.StatusBadRequest, err.Error())
		return
	}
	hs.touch()
	hs.s.handle(body)
	w.WriteHeader(http.StatusAccepted)
}
