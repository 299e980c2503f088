package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
	"github.com/mcp-hub/mcp-hub/toolsearch"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A session is one connected client. Its inbound messages are dispatched by
// [session.handle]: tools/list and tools/call to upstreams never touch
// go-sdk (they are answered from pre-encoded bytes and forwarded as raw
// bytes); everything else goes to the go-sdk ServerSession, which runs
// initialize, ping, logging/setLevel and the hub's own tools.
type session struct {
	h      *Hub
	id     string
	out    outbox // delivers messages to the client
	logger *slog.Logger

	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc
	done   chan struct{}
	toSDK  chan jsonrpc.Message
	ss     atomic.Pointer[mcp.ServerSession] // set once go-sdk is connected
	// sdkOnce connects go-sdk (connectSDK); sdkErr is why it failed.
	sdkOnce sync.Once
	sdkErr  error

	listed      atomic.Bool       // a tools/list was answered
	found       toolsearch.Recent // tools it found and called (search mode)
	codeMode    atomic.Bool       // the person turned code mode on for this session
	grants      toolpolicy.Grants // tools the person allowed for the rest of the session
	logLevel    atomic.Int32      // the level the client set (noLevel: none)
	initialized atomic.Bool       // an initialize was accepted (set under mu)

	// stateless is set for the one-request session of a 2026-07-28 client
	// (stateless.go); nil for session-era clients.
	stateless *statelessInfo
	// token is the verified bearer token of the client's latest request
	// (HTTP front with auth; see resource.go), nil otherwise.
	token atomic.Pointer[sdkauth.TokenInfo]

	mu        sync.Mutex               // guards following
	inflight  map[string]*call         // every client request in flight, by idKey
	sdkCalls  map[int64]*call          // those go-sdk handles, by the id go-sdk knows
	sdkSeq    int64                    // the last id given to go-sdk
	asks      map[string]chan outReply // requests the hub sent the client, by raw id
	scoped    sessionInstances         // its instances of per-session upstreams
	parked    map[string]*parkedCall   // a stateless client's calls parked for its answer, by idKey
	idle      chan struct{}            // closed when inflight empties and its answers are out (see waitIdle)
	closed    bool
	closeOnce sync.Once
}

// outbox delivers one message to a session's client. A transport that
// multiplexes streams (streamable HTTP) routes by the message's relations.
type outbox interface {
	send(m outMsg) error
}

// outMsg is one outbound message and how it relates to client requests.
type outMsg struct {
	data    []byte
	respTo  []byte // raw id of the client request this answers, or nil
	related []byte // raw id of the client request this belongs to, or nil
}

// lineOutbox writes every message as one line (the stdio transport).
type lineOutbox struct{ w *framing.Writer }

func (o lineOutbox) send(m outMsg) error { return o.w.Write(m.data) }

// call is one client request in flight, from the moment the hub accepts it
// until it is answered (or cancelled, when it gets no answer).
type call struct {
	id         []byte // the client's raw id
	cancel     func() // a forwarded request: set once it is under way
	cancelled  bool   // by the client
	sdk        int64  // the id go-sdk knows it by; 0 when the hub answers it
	initialize bool   // it is the session's initialize
	// span is the request's server span (nil: tracing is off); whoever
	// removes the call from inflight ends it.
	span *telemetry.Span
	// sink takes the answer of a code-mode script's inner request instead
	// of the client (code.go); script is that script.
	sink   func([]byte)
	script *scriptRun
}

// newSession registers a session and connects go-sdk's server to it.
func (h *Hub) newSession(ctx context.Context, id string, out outbox) (*session, error) {
	return h.openSession(ctx, id, out, nil)
}

// openSession is newSession for a session-era client (stateless nil) or
// for one request of a stateless client.
func (h *Hub) openSession(ctx context.Context, id string, out outbox, stateless *statelessInfo) (*session, error) {
	sctx, cancel := context.WithCancel(ctx)
	s := &session{
		h:         h,
		stateless: stateless,
		id:        id,
		out:       out,
		logger:    h.logger.With("session", id),
		ctx:       sctx,
		cancel:    cancel,
		done:      make(chan struct{}),
		toSDK:     make(chan jsonrpc.Message, 16),
		inflight:  map[string]*call{},
		sdkCalls:  map[int64]*call{},
		asks:      map[string]chan outReply{},
	}
	s.logLevel.Store(noLevel)
	s.scoped.seq = h.auto.nextSession()
	if err := h.addSession(s); err != nil {
		cancel()
		return nil, err
	}
	if stateless != nil {
		// Most stateless requests (lists, forwarded calls) never reach
		// go-sdk: it is connected on first use (connectSDK).
		return s, nil
	}
	if err := s.connectSDK(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// connectSDK connects go-sdk's server to the session, once.
func (s *session) connectSDK() error {
	s.sdkOnce.Do(func() {
		ss, err := s.h.server.Connect(s.ctx, sdkTransport{s}, nil)
		if err != nil {
			s.sdkErr = fmt.Errorf("start session: %w", err)
			return
		}
		s.ss.Store(ss)
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed { // close ran meanwhile, and may not have seen ss
			_ = ss.Close()
		}
	})
	return s.sdkErr
}

// ServeStdio serves one client over a newline-delimited JSON-RPC stream (the
// MCP stdio transport) until r ends or ctx is cancelled. Only JSON-RPC
// messages are ever written to w.
func (h *Hub) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	s, err := h.newSession(ctx, "", lineOutbox{&framing.Writer{W: w}})
	if err != nil {
		return err
	}
	h.metrics.sessionOpened("stdio")
	defer h.metrics.sessionClosed("stdio")
	defer s.close()
	fr := framing.NewReader(r, h.opts.MaxMessageBytes)
	lines := make(chan error, 1)
	go func() {
		for {
			line, err := fr.Next()
			if err == nil {
				s.handle(line)
				continue
			}
			var o *framing.Oversize
			if errors.As(err, &o) {
				s.refuse(o.ID, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("message of %d bytes exceeds the hub's limit", o.Size))
				continue
			}
			if errors.Is(err, io.EOF) {
				// The client closed its end: what it asked before is
				// still answered (a client that pipes requests and
				// closes stdin), for a short while.
				s.waitIdle(ctx, stdinDrain)
				err = nil
			}
			lines <- err
			return
		}
	}()
	select {
	case err := <-lines:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return nil
	}
}

// stdinDrain bounds how long a stdio session whose client closed stdin
// waits for the answers to the requests it sent before. It is short: the
// hub exits within seconds of stdin EOF (see mcp-hub's shutdown limit).
const stdinDrain = 2 * time.Second

// waitIdle waits until the session has no client request in flight (every
// one answered, its answer handed to the transport), d passed, or the
// session or ctx ended. It reports whether the session is idle.
func (s *session) waitIdle(ctx context.Context, d time.Duration) bool {
	s.mu.Lock()
	if len(s.inflight) == 0 {
		s.mu.Unlock()
		return true
	}
	if s.idle == nil {
		s.idle = make(chan struct{})
	}
	idle := s.idle
	s.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// settled wakes waitIdle once no request is in flight. It is called after
// an answer was handed to the transport, so a waiter sees it written.
func (s *session) settled() {
	s.mu.Lock()
	if s.idle != nil && len(s.inflight) == 0 {
		close(s.idle)
		s.idle = nil
	}
	s.mu.Unlock()
}

// handle dispatches one inbound message.
func (s *session) handle(line []byte) { s.handleWith(line, nil) }

// handleWith dispatches one inbound message that came in an HTTP request
// with headers h (nil: none), whose W3C trace context a request's span
// continues when its _meta has none.
func (s *session) handleWith(line []byte, h http.Header) {
	m, err := wire.Parse(line)
	if err != nil {
		code := int64(jsonrpc.CodeParseError)
		if errors.Is(err, wire.ErrEnvelope) || errors.Is(err, wire.ErrBatch) {
			code = jsonrpc.CodeInvalidRequest
		}
		s.refuse(nil, code, err.Error())
		return
	}
	switch {
	case m.IsRequest():
		if !s.accept(m, h) {
			return
		}
		switch m.Method {
		case "tools/list":
			s.listTools(m)
			return
		case "tools/call":
			if s.callTool(line, m) {
				return
			}
		case "logging/setLevel":
			s.setLogLevel(m.Params) // and go-sdk answers
		default:
			if s.routeRequest(m) {
				return
			}
		}
	case m.IsNotification():
		if m.Method == "notifications/cancelled" {
			s.cancelRequest(m.Params)
			return
		}
		s.clientNotified(m.Method)
	case m.IsResponse():
		if s.answer(m) {
			return
		}
	}
	s.toSDKMsg(line, m)
}

// accept registers a client request, or refuses it with -32600 (Invalid
// Request): a null id, an id in use by a request still in flight, a request
// before initialize (but ping, and server/discover and sessionless requests
// of 2026-07-28 clients, which go-sdk answers), a second initialize.
func (s *session) accept(m wire.Message, h http.Header) bool {
	if isNull(m.ID) {
		s.refuse(m.ID, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string or a number, not null")
		return false
	}
	c := &call{id: m.ID}
	if s.h.tracer != nil {
		c.span = s.serverSpan(m, h)
	}
	gate := needsInit
	switch {
	case m.Method == "initialize":
		gate = initializes
	case m.Method == "ping" || m.Method == "server/discover":
		gate = anytime
	case s.stateless == nil && newProtocol(m.Params):
		// A 2026-07-28 request on a session-era transport (stdio, legacy
		// SSE, a streamable HTTP session): the version is not one this
		// transport serves.
		_ = s.out.send(outMsg{data: wire.AppendError(nil, m.ID, codeUnsupportedProtocolVersion,
			"unsupported protocol version: this transport serves the session-era protocol (initialize first)",
			era.UnsupportedVersionData(legacyVersions, metaVersion(m.Params))), respTo: m.ID})
		c.span.End(telemetry.Outcome{Code: codeUnsupportedProtocolVersion})
		return false
	case !s.initialized.Load() && sessionless(m.Params):
		gate = anytime
	}
	err := s.begin(idKey(m.ID), c, gate)
	switch {
	case err == nil:
		return true
	case errors.Is(err, errClosed):
		c.span.End(telemetry.Outcome{Error: "session_closed"})
	default:
		s.refuse(m.ID, jsonrpc.CodeInvalidRequest, err.Error())
		c.span.End(telemetry.Outcome{Code: jsonrpc.CodeInvalidRequest})
	}
	return false
}

// listTools answers tools/list from the catalog's pre-encoded bytes. The
// session's first list waits (bounded) for upstreams still connecting, for
// clients that list once and ignore list_changed.
func (s *session) listTools(m wire.Message) {
	if !s.listed.Swap(true) && !s.h.settled() {
		id := m.ID
		go func() {
			s.h.waitSettled(s.ctx)
			s.reply(id, s.toolsResult())
		}()
		return
	}
	s.reply(m.ID, s.toolsResult())
}

// toolsResult is the session's tools/list result (in search mode, its
// own: search.go), with hub_run_code for a session that turned code mode
// on.
func (s *session) toolsResult() []byte {
	res := s.toolsResultOf(s.h.cat.Load())
	if s.codeMode.Load() && s.h.opts.CodeMode.Mode != CodeModeOn {
		return s.h.withCodeTool(res)
	}
	return res
}

// reply, replyError and replyErrorObject answer the client request id
// (and free the id).
func (s *session) reply(id, result []byte) {
	buf := make([]byte, 0, len(result)+len(id)+40)
	s.respond(id, wire.AppendResult(buf, id, result), 0)
}

func (s *session) replyError(id []byte, code int64, msg string, data []byte) {
	s.respond(id, wire.AppendError(nil, id, code, msg, data), code)
}

func (s *session) replyErrorObject(id, errObj []byte) {
	buf := make([]byte, 0, len(errObj)+len(id)+40)
	var code int64
	if s.h.tracer != nil {
		code = rpcErrorCode(errObj)
	}
	s.respond(id, wire.AppendErrorObject(buf, id, errObj), code)
}

// notify sends a notification; related is the client request it belongs to
// (nil for none).
func (s *session) notify(method string, params, related []byte) {
	if s.stateless != nil {
		s.notifyStateless(method, params, related)
		return
	}
	if ss := s.ss.Load(); ss == nil || ss.InitializeParams() == nil {
		return // not initialized yet: it will list anyway
	}
	_ = s.out.send(outMsg{data: wire.AppendNotification(nil, method, params), related: related})
}

// setCancel records how to cancel a forwarded request. When the client
// cancelled before the request was under way, it cancels at once.
func (s *session) setCancel(key []byte, cancel func()) {
	s.mu.Lock()
	c := s.inflight[string(key)]
	if c == nil { // already finished
		s.mu.Unlock()
		return
	}
	c.cancel = cancel
	cancelled := c.cancelled
	s.mu.Unlock()
	if cancelled {
		cancel()
	}
}

// cancelledByClient reports whether the client cancelled a request.
func (s *session) cancelledByClient(key []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.inflight[string(key)]
	return c != nil && c.cancelled
}

// cancelRequest handles the client's notifications/cancelled: a forwarded
// request is withdrawn upstream, one go-sdk handles is cancelled in go-sdk,
// a request the hub sent the client fails. Anything else (a request already
// answered, an unknown id) is ignored.
func (s *session) cancelRequest(params []byte) {
	v, err := wire.Get(params, "requestId")
	if err != nil || v == nil {
		return
	}
	switch c, sdk := s.cancelCall(idKey(v)); {
	case c == nil:
		s.cancelAsk(params)
	case sdk != 0:
		s.cancelSDK(params, sdk)
	}
}

// cancelCall marks the client request registered under key cancelled and,
// unless go-sdk handles it, runs its cancel (which withdraws a forwarded
// request and notifies the upstream). It returns the request (nil when
// none is in flight) and the id go-sdk knows it by (0: none).
func (s *session) cancelCall(key []byte) (*call, int64) {
	s.mu.Lock()
	c := s.inflight[string(key)]
	var (
		cancel func()
		sdk    int64
	)
	if c != nil {
		c.cancelled = true
		cancel, sdk = c.cancel, c.sdk
	}
	s.mu.Unlock()
	if sdk == 0 && cancel != nil {
		cancel()
	}
	return c, sdk
}

// close ends the session: in-flight calls are cancelled (and cancelled
// upstream), go-sdk's session is closed.
func (s *session) close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancel()
		close(s.done)
		s.endSpans()
		s.h.removeSession(s)
		if ss := s.ss.Load(); ss != nil {
			_ = ss.Close()
		}
	})
}
