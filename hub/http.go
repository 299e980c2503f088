package hub

import (
	"context"
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
	// MaxSessionsPerSubject caps the sessions of one token subject with
	// Auth (MaxSessions/4, at least 1). A subject at its cap, or at
	// MaxSessions, replaces its own least recently used idle session
	// first: one user's clients cannot push another user's sessions out.
	MaxSessionsPerSubject int
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
	if o.MaxSessionsPerSubject <= 0 {
		o.MaxSessionsPerSubject = max(o.MaxSessions/4, 1)
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
