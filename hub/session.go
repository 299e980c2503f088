package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	out    func(msg []byte) error // writes one message to the client
	logger *slog.Logger

	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc
	done   chan struct{}
	toSDK  chan jsonrpc.Message
	ss     *mcp.ServerSession

	listed atomic.Bool // a tools/list was answered

	mu        sync.Mutex // guards following
	inflight  map[string]*call
	closed    bool
	closeOnce sync.Once
}

// call is one forwarded request in flight.
type call struct {
	cancel    func() // set once the request is under way
	cancelled bool   // by the client
}

// newSession registers a session and connects go-sdk's server to it.
func (h *Hub) newSession(ctx context.Context, id string, out func([]byte) error) (*session, error) {
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
	}
	if err := h.addSession(s); err != nil {
		cancel()
		return nil, err
	}
	ss, err := h.server.Connect(sctx, sdkTransport{s}, nil)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("start session: %w", err)
	}
	s.ss = ss
	return s, nil
}

// ServeStdio serves one client over a newline-delimited JSON-RPC stream (the
// MCP stdio transport) until r ends or ctx is cancelled. Only JSON-RPC
// messages are ever written to w.
func (h *Hub) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	fw := &framing.Writer{W: w}
	s, err := h.newSession(ctx, "", fw.Write)
	if err != nil {
		return err
	}
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
		}
	case m.IsNotification():
		if m.Method == "notifications/cancelled" && s.cancelCall(m.Params) {
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
	_ = s.out(wire.AppendResult(buf, id, result))
}

func (s *session) replyError(id []byte, code int64, msg string, data []byte) {
	_ = s.out(wire.AppendError(nil, id, code, msg, data))
}

func (s *session) notify(method string, params []byte) {
	if s.ss == nil || s.ss.InitializeParams() == nil {
		return // not initialized yet: it will list anyway
	}
	_ = s.out(wire.AppendNotification(nil, method, params))
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
	c := s.inflight[string(v)]
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
		if s.ss != nil {
			_ = s.ss.Close()
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
	return c.s.out(b)
}

func (c sdkConn) Close() error {
	go c.s.close() // go-sdk may call this while holding its own locks
	return nil
}

func (c sdkConn) SessionID() string { return c.s.id }
