package upstream

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
)

type httpOptions struct {
	Logger          *slog.Logger
	MaxMessageBytes int
	// Wrap, when set, wraps the client's transport (OAuth: see AuthClient).
	Wrap func(http.RoundTripper) http.RoundTripper
	// StandardHeaders puts the stateless era's standard headers (Mcp-Method,
	// Mcp-Name) on the session-era POSTs too: for a session beside a
	// stateless-era connection to the same server (sessionera.go), whose
	// transport wants them on every POST.
	StandardHeaders bool
	// Where says where a person changes the upstream's url, for the error
	// of a redirect to another origin (redirect.Refused.Where); nil: the
	// error says only that a new URL needs a new approval.
	Where func() string
}

// ErrSessionMissing is wrapped by the error of a streamable HTTP link whose
// session the upstream no longer knows (HTTP 404). The request that got the
// 404 was not processed, so it may be retried on a new session.
var ErrSessionMissing = errors.New("upstream session expired")

// ErrUnreachable is wrapped by the error of an HTTP link whose upstream
// stopped accepting connections.
var ErrUnreachable = errors.New("upstream unreachable")

// errSessionExpired ends a link whose session the upstream forgot; requests
// in flight then may or may not have run, so they are not retried.
var errSessionExpired = errors.New("upstream session expired (HTTP 404)")

// expire fails the request the upstream refused with 404 (it never ran, so
// it may be retried: ErrSessionMissing) and ends the link.
func expire(s sink, id []byte) {
	if id != nil {
		s.abort(id, fmt.Errorf("%w (HTTP 404)", ErrSessionMissing))
	}
	s.fail(errSessionExpired)
}

func startHTTP(ctx context.Context, spec *Spec, headers map[string]string, opts httpOptions, s sink) (link, error) {
	client := newHTTPClient(headers, opts.Logger)
	if opts.Wrap != nil {
		client.Transport = opts.Wrap(client.Transport)
	}
	lctx, cancel := context.WithCancel(context.Background())
	if spec.Transport == TransportSSE {
		l := &sseLink{url: spec.URL, client: client, static: headers, s: s, logger: opts.Logger, max: opts.MaxMessageBytes, ctx: lctx, cancel: cancel, where: opts.Where}
		s.attach(l)
		if err := l.start(ctx); err != nil {
			l.close()
			return nil, err
		}
		return l, nil
	}
	l := &streamLink{url: spec.URL, client: client, static: headers, s: s, logger: opts.Logger, max: opts.MaxMessageBytes, ctx: lctx, cancel: cancel,
		getReady: make(chan struct{}), standard: opts.StandardHeaders, where: opts.Where}
	s.attach(l)
	return l, nil
}

// streamLink speaks the streamable HTTP transport (2025-03-26 and later):
// every message is a POST; a request's answer comes back as JSON or as an
// SSE stream (carrying notifications and server→client requests related to
// it first); a standalone GET stream carries everything else. A POST stream
// that breaks is resumed with GET + Last-Event-ID after the server's retry
// delay, or when the request's client comes back (pause.go).
type streamLink struct {
	url    string
	client *http.Client
	static map[string]string // the upstream's configured headers
	s      sink
	logger *slog.Logger
	where  func() string // where its url is changed (httpOptions.Where)
	max    int

	ctx    context.Context // lifetime of the link
	cancel context.CancelFunc
	wg     sync.WaitGroup // background POSTs and streams

	mu        sync.Mutex // guards following
	sessionID string
	version   string
	getOn     bool
	closing   bool // close waits for wg: no more background work starts

	// getReady is closed once the first standalone GET was answered (or
	// failed): requests wait for it, because some servers send what they
	// have for the client only on that stream and drop it while it is not
	// open yet.
	getReady     chan struct{}
	getReadyOnce sync.Once

	closeOnce sync.Once
	aborted   atomic.Bool // close without the DELETE that ends the session

	standard bool // the standard headers on every POST (httpOptions.StandardHeaders)

	// posts are the stateless-era requests in flight, by raw id: on
	// streamable HTTP such a request is cancelled by closing its stream.
	posts sync.Map // string → context.CancelFunc
}

// standaloneWait bounds how long a request waits for the standalone stream.
const standaloneWait = 2 * time.Second

// awaitStandalone waits (bounded) until the standalone stream was answered,
// once it has been started.
func (l *streamLink) awaitStandalone() {
	select {
	case <-l.getReady:
		return
	default:
	}
	l.mu.Lock()
	on := l.getOn
	l.mu.Unlock()
	if !on {
		return
	}
	t := time.NewTimer(standaloneWait)
	defer t.Stop()
	select {
	case <-l.getReady:
	case <-t.C:
	case <-l.ctx.Done():
	}
}

func (l *streamLink) pid() int { return 0 }

// headers sets the headers of a POST or GET: the configured ones, and
// the session's id and version, unless version is of the stateless era
// (a request that carries its version in _meta has no session).
func (l *streamLink) headers(h http.Header, version string) {
	setHeaders(h, l.static)
	if era.IsStateless(version) {
		h.Set(era.HeaderProtocolVersion, version)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sessionID != "" {
		h.Set("Mcp-Session-Id", l.sessionID)
	}
	if l.version != "" {
		h.Set("Mcp-Protocol-Version", l.version)
	}
}

func (l *streamLink) hasSession() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sessionID != ""
}

// post sends one message. A stateless-era message (its _meta names the
// version) carries the version and the standard headers (Mcp-Method,
// Mcp-Name, Mcp-Param-*) instead of the session's.
func (l *streamLink) post(ctx context.Context, msg []byte, method string, params []byte, version string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if replayable(method) {
		// Lets net/http replay it on a keep-alive connection the server
		// closed; never set for tools/call, which may not run twice.
		req.Header.Set("Idempotency-Key", rand.Text())
	}
	l.headers(req.Header, version)
	if era.IsStateless(version) || l.standard {
		era.Headers(method, params, l.s.paramHeaders, req.Header.Set)
	}
	telemetry.FromContext(ctx).SetHeaders(req.Header)
	resp, err := do(l.client, req)
	if err != nil {
		return nil, requestErr(err, l.where)
	}
	return resp, nil
}

func (l *streamLink) send(ctx context.Context, msg []byte) error {
	m, err := wire.Parse(msg)
	if err != nil {
		return err
	}
	if m.Method == "notifications/cancelled" && l.cancelPost(m.Params) {
		return nil // a stateless-era request: its stream is closed instead
	}
	if m.IsRequest() {
		// The answer may take as long as the tool runs; post in the
		// background. Failures come back as a failure of this request.
		sp := telemetry.FromContext(ctx)
		if !l.spawn(func() { l.request(sp, msg, m) }) {
			return ErrClosed
		}
		return nil
	}
	ctx, done := linkCtx(ctx, l.ctx)
	defer done()
	version := era.RequestVersion(m.Params)
	if version == "" && m.IsResponse() && l.s.Stateless() {
		// The answer to a request the server sent on a response stream,
		// which the stateless era forbids (it asks with input_required)
		// and so leaves no way to answer: posted as a stateless-era
		// message, with the version header such a server checks first,
		// for a server lenient enough to take it.
		version = l.s.ProtocolVersion()
	}
	resp, err := l.post(ctx, msg, m.Method, m.Params, version)
	if err != nil {
		if linkLost(err) {
			l.s.fail(err)
		}
		return err
	}
	defer drainClose(resp.Body)
	if resp.StatusCode == http.StatusNotFound && l.hasSession() {
		expire(l.s, nil)
		return fmt.Errorf("%w (HTTP 404)", ErrSessionMissing)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	if m.Method == "notifications/initialized" {
		l.mu.Lock()
		start := !l.getOn
		l.getOn = true
		l.mu.Unlock()
		if start {
			l.spawn(l.standalone)
		}
	}
	return nil
}

// cancelPost cancels the stateless-era request a notifications/cancelled
// names, and reports whether there was one.
func (l *streamLink) cancelPost(params []byte) bool {
	id, err := wire.Get(params, "requestId")
	if err != nil || id == nil {
		return false
	}
	v, ok := l.posts.LoadAndDelete(string(wire.TrimSpace(id)))
	if ok {
		v.(context.CancelFunc)()
	}
	return ok
}

// request posts a request and delivers everything that comes back for it;
// sp is the request's span (nil: not traced).
func (l *streamLink) request(sp *telemetry.Span, msg []byte, m wire.Message) {
	id := m.ID
	version := era.RequestVersion(m.Params)
	stateless := era.IsStateless(version)
	ctx := l.ctx
	if stateless {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(l.ctx)
		key := string(wire.TrimSpace(id))
		l.posts.Store(key, cancel)
		defer func() {
			l.posts.Delete(key)
			cancel()
		}()
	} else {
		l.awaitStandalone()
	}
	resp, err := l.post(telemetry.ContextWith(ctx, sp), msg, m.Method, m.Params, version)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		switch {
		case linkLost(err):
			l.s.fail(err)
		case handshakeDiscover(m):
			l.s.fail(fmt.Errorf("server/discover: %w", err))
		}
		l.s.abort(id, err)
		return
	}
	if handshakeDiscover(m) && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		drainClose(resp.Body)
		l.s.fail(fmt.Errorf("server/discover refused: HTTP %s: %s", resp.Status, l.s.preview(bytes.TrimSpace(body))))
		return
	}
	if resp.StatusCode == http.StatusNotFound && l.hasSession() && !stateless {
		drainClose(resp.Body)
		expire(l.s, id)
		return
	}
	if m.Method == "initialize" && resp.StatusCode/100 == 2 {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			l.mu.Lock()
			l.sessionID = sid
			l.mu.Unlock()
		}
	}
	deliver := func(b []byte) []byte {
		if m.Method == "initialize" {
			l.noteVersion(b)
		}
		return l.s.receive(b, id)
	}
	switch {
	case resp.StatusCode/100 != 2:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		drainClose(resp.Body)
		// A JSON-RPC error body answers the request (one with a null id
		// too: a server that refuses a request before reading its id
		// answers that way, and this is the request's own answer);
		// anything else is a transport failure of this one request.
		if msg, err := wire.Parse(body); err == nil && msg.IsResponse() {
			if msg.Error != nil && (msg.ID == nil || string(wire.TrimSpace(msg.ID)) == "null") {
				body = wire.AppendErrorObject(nil, id, msg.Error)
			}
			deliver(body)
			return
		}
		l.s.abort(id, fmt.Errorf("HTTP %s: %s", resp.Status, l.s.preview(bytes.TrimSpace(body))))
	case isEventStream(resp.Header.Get("Content-Type")):
		l.readPostStream(resp, id, deliver, !stateless)
	case resp.StatusCode == http.StatusAccepted:
		drainClose(resp.Body) // the answer will come on the standalone stream
	case m.Method == "subscriptions/listen":
		// Its answer stays open: some servers stream it as JSON lines.
		l.readJSONLines(resp.Body, deliver)
		drainClose(resp.Body)
	default:
		body, err := readBody(resp, l.max)
		drainClose(resp.Body)
		switch {
		case err != nil:
			l.s.abort(id, err)
		case len(body) > l.max:
			l.s.oversize(&framing.Oversize{Size: len(body), ID: id})
		default:
			l.deliverBody(body, deliver)
		}
	}
}

// handshakeDiscover reports whether m is go-sdk's server/discover, the
// first request of the handshake (the hub's own requests carry hub ids).
// go-sdk falls back to initialize when it fails in any way, which is right
// for a server that answers but does not speak the stateless era, and wrong
// when it got no answer or was refused for want of authorization (401, or
// 403 after the OAuth client did what it could): initialize would then ask
// for the same authorization again (a second browser tab for a login), and
// a stateless-only server refuses it for its missing MCP-Protocol-Version
// header, which hides the reason. Such a failure ends the link instead, and
// the attempt fails with it.
func handshakeDiscover(m wire.Message) bool {
	if m.Method != "server/discover" {
		return false
	}
	_, hub := wire.ParseHubID(m.ID)
	return !hub
}

// replayable reports whether sending a message twice is harmless: requests
// that only read, and notifications and responses (which carry no work).
func replayable(method string) bool {
	switch method {
	case "initialize", "ping", "tools/list", "prompts/list", "prompts/get", "resources/list",
		"resources/templates/list", "resources/read", "completion/complete", "logging/setLevel",
		"resources/subscribe", "resources/unsubscribe":
		return true
	}
	return strings.HasPrefix(method, "notifications/") || method == ""
}

// deliverBody delivers one JSON message, each message of a batch, or each
// of several messages written as JSON lines (servers that send a call's
// notifications before its answer in an application/json body do so; a
// line break before an object is the cheap sign of it).
func (l *streamLink) deliverBody(body []byte, deliver func([]byte) []byte) {
	body = wire.TrimSpace(body)
	switch {
	case len(body) > 0 && body[0] == '[':
		_ = wire.Elements(body, func(e []byte) error {
			deliver(e)
			return nil
		})
	case bytes.Contains(body, []byte("\n{")):
		var msgs [][]byte
		if err := wire.Values(body, func(v []byte) error {
			msgs = append(msgs, v)
			return nil
		}); err != nil {
			deliver(body) // not JSON lines after all: let the parser say why
			return
		}
		for _, msg := range msgs {
			deliver(msg)
		}
	default:
		deliver(body)
	}
}

// readJSONLines delivers each line of a body that streams JSON lines, as
// they arrive, until it ends.
func (l *streamLink) readJSONLines(body io.Reader, deliver func([]byte) []byte) {
	r := framing.NewLineReader(body, l.max)
	defer r.Release()
	for {
		line, err := r.Next()
		var o *framing.Oversize
		switch {
		case errors.As(err, &o):
			l.s.oversize(o)
			continue
		case err != nil:
			return
		}
		if line = wire.TrimSpace(line); len(line) > 0 {
			l.deliverBody(line, deliver)
		}
	}
}

// isEventStream reports whether a Content-Type is text/event-stream
// (parameters and case aside), without mime.ParseMediaType's allocations.
func isEventStream(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

func (l *streamLink) noteVersion(b []byte) {
	m, err := wire.Parse(b)
	if err != nil || m.Result == nil {
		return
	}
	v, err := wire.Get(m.Result, "protocolVersion")
	if err != nil || v == nil {
		return
	}
	if s, err := wire.String(v); err == nil {
		l.mu.Lock()
		l.version = s
		l.mu.Unlock()
	}
}

// readPostStream reads the SSE answer to one request, resuming with GET +
// Last-Event-ID (when resume is set: the session era has it, the stateless
// one does not) when the stream breaks before the response arrived: after
// the server's retry delay, or sooner when the request's client was told
// and came back (pause.go).
func (l *streamLink) readPostStream(resp *http.Response, id []byte, deliver func([]byte) []byte, resume bool) {
	var lastID string
	retry := time.Second
	gotReply := false
	// The answer is the stream's last message: reading stops there, as a
	// resumed stream (a GET) may stay open after it.
	watch := func(b []byte) bool {
		if rid := deliver(b); rid != nil && bytes.Equal(rid, id) {
			gotReply = true
		}
		return gotReply
	}
	for attempt := 0; ; attempt++ {
		lastID, retry = l.readEvents(resp.Body, lastID, retry, watch)
		if gotReply {
			if attempt == 0 {
				drainClose(resp.Body) // a POST's stream ends with its answer: the connection is reused
			} else {
				resp.Body.Close() // a resumed stream may stay open: no drain
			}
			return
		}
		drainClose(resp.Body)
		if l.ctx.Err() != nil {
			return
		}
		if lastID == "" || attempt >= 5 || !resume {
			l.s.abort(id, errors.New("the upstream closed the response stream before answering"))
			return
		}
		if !l.pause(id, retry) {
			return
		}
		var err error
		resp, err = l.get(lastID)
		if err != nil {
			l.s.abort(id, fmt.Errorf("resume response stream: %w", err))
			return
		}
		if resp.StatusCode/100 != 2 {
			drainClose(resp.Body)
			if resp.StatusCode == http.StatusNotFound {
				expire(l.s, nil)
				return
			}
			l.s.abort(id, fmt.Errorf("resume response stream: HTTP %s", resp.Status))
			return
		}
	}
}

// readEvents delivers the message events of one SSE body until it ends
// (or deliver reports that the stream is done) and returns the last event
// id and retry delay seen.
func (l *streamLink) readEvents(body io.Reader, lastID string, retry time.Duration, deliver func([]byte) (done bool)) (string, time.Duration) {
	r := newSSEReader(body, l.max, lastID, retry)
	defer r.release()
	for {
		ev, err := r.nextFor(l.s)
		if err != nil {
			return r.lastEventID(lastID), r.retry
		}
		if ev.event == "" && len(wire.TrimSpace(ev.data)) > 0 && deliver(ev.data) {
			return r.lastEventID(lastID), r.retry
		}
	}
}

func (l *streamLink) get(lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(l.ctx, http.MethodGet, l.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	l.headers(req.Header, "")
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, requestErr(err, l.where)
	}
	return resp, nil
}

// standalone keeps the GET stream for server-initiated messages open for the
// life of the link. A server without one is fine: it should answer 405, and
// a first GET refused with any 4xx is taken the same way (servers answer
// 404 or 400 too; a session that is really gone shows on the next POST).
// Once the stream was open, a 404 means the server forgot the session, and
// an unreachable server ends the link.
func (l *streamLink) standalone() {
	var lastID string
	retry := time.Second
	failures := 0
	opened := false
	defer l.getReadyOnce.Do(func() { close(l.getReady) })
	for l.ctx.Err() == nil {
		resp, err := l.get(lastID)
		l.getReadyOnce.Do(func() { close(l.getReady) })
		switch {
		case err != nil:
			if l.ctx.Err() != nil {
				return
			}
			if linkLost(err) {
				l.s.fail(err)
				return
			}
			failures++
		case resp.StatusCode == http.StatusMethodNotAllowed,
			!opened && resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusTooManyRequests:
			drainClose(resp.Body)
			l.logger.Debug("upstream offers no event stream", "status", resp.StatusCode)
			return
		case resp.StatusCode == http.StatusNotFound:
			drainClose(resp.Body)
			expire(l.s, nil)
			return
		case resp.StatusCode/100 != 2:
			drainClose(resp.Body)
			failures++
		default:
			failures = 0
			opened = true
			lastID, retry = l.readEvents(resp.Body, lastID, retry, func(b []byte) bool { l.s.receive(b, nil); return false })
			drainClose(resp.Body)
		}
		if failures >= 5 {
			l.logger.Warn("upstream event stream keeps failing; continuing without it", "err", err)
			return
		}
		if !sleepCtx(l.ctx, retry) {
			return
		}
	}
}

// abort closes the link without ending the session with a DELETE: the
// attempt was abandoned, and the upstream may not answer it either.
func (l *streamLink) abort() {
	l.aborted.Store(true)
	l.close()
}

func (l *streamLink) close() {
	l.closeOnce.Do(func() {
		l.cancel()
		l.mu.Lock()
		sid := l.sessionID
		l.mu.Unlock()
		if sid != "" && !l.aborted.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, l.url, nil)
			if err == nil {
				l.headers(req.Header, "")
				if resp, err := l.client.Do(req); err == nil {
					drainClose(resp.Body)
				}
			}
			cancel()
		}
		l.mu.Lock()
		l.closing = true
		l.mu.Unlock()
		l.wg.Wait()
		l.client.CloseIdleConnections()
	})
}

// spawn runs f in the background, owned by the link's wait group, unless
// the link is closing (then it reports false and f never runs).
func (l *streamLink) spawn(f func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f()
	}()
	return true
}

// linkCtx returns ctx ending also when the link's own context does (close,
// abort), so a POST made for a caller never outlives the link: go-sdk sends
// notifications/cancelled under a context of its own when a handshake is
// abandoned, and waits for that send before it lets the attempt end.
func linkCtx(ctx, link context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(link, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

func drainClose(r io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r, 256<<10))
	r.Close()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
