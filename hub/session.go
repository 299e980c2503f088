package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/wire"
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

	listed   atomic.Bool  // a tools/list was answered
	logLevel atomic.Int32 // the level the client set (noLevel: none)

	mu        sync.Mutex // guards following
	inflight  map[string]*call
	sdkCalls  map[string][]byte        // client requests go-sdk is handling, by canonical id
	asks      map[string]chan outReply // requests the hub sent the client, by raw id
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

// call is one forwarded request in flight.
type call struct {
	cancel    func() // set once the request is under way
	cancelled bool   // by the client
}

// newSession registers a session and connects go-sdk's server to it.
func (h *Hub) newSession(ctx context.Context, id string, out outbox) (*session, error) {
	sctx, cancel := context.WithCancel(ctx)
	s := &session{
		h:        h,
		id:       id,
		out:      out,
		logger:   h.logger.With("session", id),
		ctx:      sctx,
		cancel:   cancel,
		done:     make(chan struct{}),
		toSDK:    make(chan jsonrpc.Message, 16),
		inflight: map[string]*call{},
		sdkCalls: map[string][]byte{},
		asks:     map[string]chan outReply{},
	}
	s.logLevel.Store(noLevel)
	if err := h.addSession(s); err != nil {
		cancel()
		return nil, err
	}
	ss, err := h.server.Connect(sctx, sdkTransport{s}, nil)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("start session: %w", err)
	}
	s.ss.Store(ss)
	return s, nil
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
				s.replyError(o.ID, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("message of %d bytes exceeds the hub's limit", o.Size), nil)
				continue
			}
			if errors.Is(err, io.EOF) {
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

// handle dispatches one inbound message.
func (s *session) handle(line []byte) {
	m, err := wire.Parse(line)
	if err != nil {
		code := int64(jsonrpc.CodeParseError)
		if errors.Is(err, wire.ErrEnvelope) || errors.Is(err, wire.ErrBatch) {
			code = jsonrpc.CodeInvalidRequest
		}
		s.replyError(nil, code, err.Error(), nil)
		return
	}
	switch {
	case m.IsRequest():
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
		if m.Method == "notifications/cancelled" && (s.cancelCall(m.Params) || s.cancelAsk(m.Params)) {
			return
		}
	case m.IsResponse():
		if s.answer(m) {
			return
		}
	}
	s.toSDKLine(line)
}

// toSDKLine hands a message to go-sdk.
func (s *session) toSDKLine(line []byte) {
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		s.replyError(nil, jsonrpc.CodeParseError, err.Error(), nil)
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		raw := rawID(req.ID)
		s.mu.Lock()
		s.sdkCalls[canonicalID(raw)] = raw
		s.mu.Unlock()
	}
	select {
	case s.toSDK <- msg:
	case <-s.done:
	}
}

// listTools answers tools/list from the catalog's pre-encoded bytes. The
// session's first list waits (bounded) for upstreams still connecting, for
// clients that list once and ignore list_changed.
func (s *session) listTools(m wire.Message) {
	if !s.listed.Swap(true) && !s.h.settled() {
		id := m.ID
		go func() {
			s.h.waitSettled(s.ctx)
			s.reply(id, s.h.Catalog().ToolsResult())
		}()
		return
	}
	s.reply(m.ID, s.h.Catalog().ToolsResult())
}

func (s *session) reply(id, result []byte) {
	buf := make([]byte, 0, len(result)+len(id)+40)
	_ = s.out.send(outMsg{data: wire.AppendResult(buf, id, result), respTo: id})
}

func (s *session) replyError(id []byte, code int64, msg string, data []byte) {
	_ = s.out.send(outMsg{data: wire.AppendError(nil, id, code, msg, data), respTo: id})
}

func (s *session) replyErrorObject(id, errObj []byte) {
	buf := make([]byte, 0, len(errObj)+len(id)+40)
	_ = s.out.send(outMsg{data: wire.AppendErrorObject(buf, id, errObj), respTo: id})
}

// notify sends a notification; related is the client request it belongs to
// (nil for none).
func (s *session) notify(method string, params, related []byte) {
	if ss := s.ss.Load(); ss == nil || ss.InitializeParams() == nil {
		return // not initialized yet: it will list anyway
	}
	_ = s.out.send(outMsg{data: wire.AppendNotification(nil, method, params), related: related})
}

// track records a forwarded request; it refuses an id already in flight.
func (s *session) track(id string, c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.inflight[id]; dup || s.closed {
		return false
	}
	s.inflight[id] = c
	return true
}

// setCancel records how to cancel a tracked request. When the client
// cancelled before the request was under way, it cancels at once.
func (s *session) setCancel(id string, cancel func()) {
	s.mu.Lock()
	c := s.inflight[id]
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

// untrack forgets a request and reports whether the client cancelled it.
func (s *session) untrack(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.inflight[id]
	delete(s.inflight, id)
	return c != nil && c.cancelled
}

// cancelCall handles notifications/cancelled for a forwarded request; it
// reports whether the request was one of ours.
func (s *session) cancelCall(params []byte) bool {
	v, err := wire.Get(params, "requestId")
	if err != nil || v == nil {
		return false
	}
	s.mu.Lock()
	c := s.inflight[canonicalID(v)]
	var cancel func()
	if c != nil {
		c.cancelled = true
		cancel = c.cancel
	}
	s.mu.Unlock()
	if c == nil {
		return false
	}
	if cancel != nil {
		cancel() // withdraws the request and notifies the upstream
	}
	return true
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
		s.h.removeSession(s)
		if ss := s.ss.Load(); ss != nil {
			_ = ss.Close()
		}
	})
}

// sdkTransport and sdkConn connect go-sdk's server to a session.
type sdkTransport struct{ s *session }

func (t sdkTransport) Connect(context.Context) (mcp.Connection, error) { return sdkConn(t), nil }

type sdkConn struct{ s *session }

func (c sdkConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.s.toSDK:
		return m, nil
	case <-c.s.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c sdkConn) Write(_ context.Context, m jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	o := outMsg{data: b}
	if resp, ok := m.(*jsonrpc.Response); ok {
		o.respTo = rawID(resp.ID)
		c.s.mu.Lock()
		delete(c.s.sdkCalls, canonicalID(o.respTo))
		c.s.mu.Unlock()
	} else {
		// go-sdk does not say which request a message it sends belongs to;
		// when it handles exactly one, it is that one.
		c.s.mu.Lock()
		if len(c.s.sdkCalls) == 1 {
			for _, raw := range c.s.sdkCalls {
				o.related = raw
			}
		}
		c.s.mu.Unlock()
	}
	return c.s.out.send(o)
}

func (c sdkConn) Close() error {
	go c.s.close() // go-sdk may call this while holding its own locks
	return nil
}

func (c sdkConn) SessionID() string { return c.s.id }

// rawID returns the JSON encoding of a go-sdk request id.
func rawID(id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case string:
		return wire.AppendString(nil, v)
	case int64:
		return strconv.AppendInt(nil, v, 10)
	}
	return []byte("null")
}

// canonicalID returns a map key equal for every encoding of the same id
// ("1", "1.0"; "\u0061" and "a").
func canonicalID(raw []byte) string {
	raw = wire.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if s, err := wire.String(raw); err == nil {
			return "s:" + s
		}
		return "r:" + string(raw)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return "n:" + strconv.FormatInt(int64(f), 10)
	}
	return "r:" + string(raw)
}
