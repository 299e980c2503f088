package upstream

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-hub/mcp-hub/internal/framing"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Reply is an upstream's answer to a request: exactly one of Result and
// Error is set, each the raw JSON the upstream sent.
type Reply struct {
	Result []byte
	Error  []byte // a JSON-RPC error object
}

// Events receives what an upstream sends on its own initiative. Methods are
// called from the connection's reader goroutines, in the order the messages
// arrived on each stream; they must not block for long.
type Events interface {
	// Notification is called for every notification. origin, when non-nil,
	// is the raw id of the hub request whose response stream carried it.
	Notification(c *Conn, method string, params []byte, origin []byte)
	// Request is called for every server→client request except ping, which
	// the connection answers itself. The receiver must answer with
	// [Conn.Respond], from any goroutine.
	Request(c *Conn, id []byte, method string, params []byte, origin []byte)
}

// Errors of a connection.
var (
	// ErrClosed is the error of a connection the hub closed.
	ErrClosed = errors.New("connection closed by the hub")
	// ErrTooLarge is returned for a request whose response exceeded the
	// message size limit; the connection stays up.
	ErrTooLarge = errors.New("upstream response exceeds the message size limit")
)

// Conn is one live, initialized connection to an upstream server. Requests
// travel as raw bytes ([Conn.Call]); go-sdk only performed the handshake.
// A Conn never reconnects: when it dies, [Conn.Done] is closed and
// [Conn.Err] says why.
type Conn struct {
	name   string
	logger *slog.Logger
	secret *redact.Scrubber // the values the hub passed to the upstream
	link   link
	events Events
	owner  any // the owner of the instance it belongs to, or nil

	session *mcp.ClientSession
	init    *mcp.InitializeResult
	era     connEra
	listens listens
	// dual is the session-era connection beside a stateless-era one to a
	// server that may speak both eras (sessionera.go), or nil.
	dual *sessionEra

	nextID atomic.Uint64

	mu      sync.Mutex // guards following
	pending map[uint64]*waiter
	err     error

	done      chan struct{}
	closeOnce sync.Once
	forbidden sync.Once // logs the first request a stateless-era server should not have sent
	sdkIn     chan jsonrpc.Message
	badLines  rateLimiter
}

type result struct {
	r   Reply
	err error
}

// waiter is a request in flight: a caller blocked on ch, or a callback
// (done) run by whoever settles the request first: the reader with the
// reply, the timer, a cancel, or the connection's death.
type waiter struct {
	ch    chan result
	done  func(Reply, error)
	timer *time.Timer
	tag   any // the caller's, for attributing what the upstream sends meanwhile
}

type tagKey struct{}

// spanOf returns the span of a tag whose request is traced (see package
// telemetry): the hub's tags carry the client span of the request, to
// which the upstream reports its queue wait and retries, and whose context
// an HTTP link sends as W3C headers.
func spanOf(tag any) *telemetry.Span {
	if t, ok := tag.(interface{ Span() *telemetry.Span }); ok {
		return t.Span()
	}
	return nil
}

// WithTag returns a context that tags the requests made with it ([Conn.Call],
// [Upstream.Call]), so that notifications and requests the upstream sends
// while serving them can be attributed ([Conn.Tag], [Conn.Tags]).
func WithTag(ctx context.Context, tag any) context.Context {
	return context.WithValue(ctx, tagKey{}, tag)
}

// Tag returns the tag of the request in flight with the raw hub id id (an
// origin passed to [Events]), or nil.
func (c *Conn) Tag(id []byte) any {
	n, ok := wire.ParseHubID(id)
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.pending[n]; w != nil {
		return w.tag
	}
	return nil
}

// Tags returns the tags of the requests in flight that have one.
func (c *Conn) Tags() []any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []any
	for _, w := range c.pending {
		if w.tag != nil {
			out = append(out, w.tag)
		}
	}
	return out
}

func (w *waiter) settle(r result) {
	if w.done == nil {
		w.ch <- r
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.done(r.r, r.err)
}

func newConn(name string, logger *slog.Logger, events Events) *Conn {
	return &Conn{
		name:    name,
		logger:  logger,
		events:  events,
		pending: make(map[uint64]*waiter),
		done:    make(chan struct{}),
		sdkIn:   make(chan jsonrpc.Message, 8),
	}
}

// Name returns the upstream's name.
func (c *Conn) Name() string { return c.name }

// Owner returns the owner of the per-session instance the connection
// belongs to ([Manager.StartInstance]), or nil for a registered upstream's
// connection: what such a connection sends is that owner's.
func (c *Conn) Owner() any { return c.owner }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// PID returns the upstream's process id (stdio), or 0.
func (c *Conn) PID() int { return c.link.pid() }

// InitializeResult returns what the upstream answered to initialize.
func (c *Conn) InitializeResult() *mcp.InitializeResult { return c.init }

// Call sends a request and waits for its reply. params is raw JSON (nil for
// none). When ctx ends first, the hub tells the upstream with
// notifications/cancelled and returns ctx's error.
func (c *Conn) Call(ctx context.Context, method string, params []byte) (Reply, error) {
	if c.era.stateless {
		switch method {
		case "resources/subscribe":
			return c.subscribe(ctx, params)
		case "resources/unsubscribe":
			return c.unsubscribe(params)
		case "logging/setLevel":
			// Gone from the stateless era: the level travels with each
			// request (Requester).
			return Reply{Result: []byte(`{}`)}, nil
		}
	}
	w := &waiter{ch: make(chan result, 1), tag: ctx.Value(tagKey{})}
	params, err := c.prepare(params, w.tag)
	if err != nil {
		return Reply{}, fmt.Errorf("%s: params: %w", method, err)
	}
	n, id, err := c.register(w)
	if err != nil {
		return Reply{}, err
	}
	if err := c.link.send(ctx, requestMsg(id, method, params)); err != nil {
		c.forget(n)
		return Reply{}, fmt.Errorf("send %s: %w", method, err)
	}
	select {
	case r := <-w.ch:
		return r.r, r.err
	case <-ctx.Done():
		if c.forget(n) != nil {
			c.cancelUpstream(id, ctx.Err())
		}
		return Reply{}, ctx.Err()
	}
}

// Start sends a request without waiting: done is called exactly once, with
// the reply (from the connection's reader goroutine), with the connection's
// error when it dies first, or with ErrTimeout when timeout passes first (the
// request is then cancelled upstream). tag is as for [WithTag]. The returned cancel withdraws the
// request and notifies the upstream; done then gets context.Canceled, unless
// the reply won the race. done must not block. When Start returns an error,
// done is never called.
func (c *Conn) Start(method string, params []byte, timeout time.Duration, tag any, done func(Reply, error)) (cancel func(), err error) {
	n := c.nextID.Add(1)
	return c.startN(n, method, params, timeout, tag, done)
}

// startN is Start for a request whose hub id n the caller chose (and may
// have recorded, as subscriptions do, before anything can answer it).
func (c *Conn) startN(n uint64, method string, params []byte, timeout time.Duration, tag any, done func(Reply, error)) (cancel func(), err error) {
	if params, err = c.prepare(params, tag); err != nil {
		return nil, fmt.Errorf("%s: params: %w", method, err)
	}
	id := wire.HubID(make([]byte, 0, 24), n)
	withdraw := func(why error) {
		if w := c.forget(n); w != nil {
			c.cancelUpstream(id, why)
			w.settle(result{err: why})
		}
	}
	w := &waiter{done: done, tag: tag}
	if timeout > 0 {
		// Armed before the waiter is published, so settle never races with
		// this assignment.
		w.timer = time.AfterFunc(timeout, func() {
			withdraw(fmt.Errorf("%w after %s waiting for the reply (the request was cancelled upstream)", ErrTimeout, timeout))
		})
	}
	if err := c.insert(n, w); err != nil {
		if w.timer != nil {
			w.timer.Stop()
		}
		return nil, err
	}
	if err := c.link.send(telemetry.ContextWith(context.Background(), spanOf(tag)), requestMsg(id, method, params)); err != nil {
		if w := c.forget(n); w != nil {
			if w.timer != nil {
				w.timer.Stop()
			}
			return nil, fmt.Errorf("send %s: %w", method, err)
		}
		// The connection died and fail already ran done: the request is
		// settled, and the caller must not settle it again.
	}
	return func() { withdraw(context.Canceled) }, nil
}

// insert publishes a waiter under id n, unless the connection is dead.
func (c *Conn) insert(n uint64, w *waiter) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.pending[n] = w
	return nil
}

// register adds a waiter under a fresh hub id.
func (c *Conn) register(w *waiter) (uint64, []byte, error) {
	n := c.nextID.Add(1)
	if err := c.insert(n, w); err != nil {
		return 0, nil, err
	}
	return n, wire.HubID(make([]byte, 0, 24), n), nil
}

func requestMsg(id []byte, method string, params []byte) []byte {
	return wire.AppendRequest(make([]byte, 0, len(method)+len(params)+len(id)+48), id, method, params)
}

// forget removes a pending request and returns it, or nil when it was
// already settled.
func (c *Conn) forget(n uint64) *waiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.pending[n]
	delete(c.pending, n)
	return w
}

func (c *Conn) cancelUpstream(id []byte, why error) {
	params := []byte(`{"requestId":` + string(id) + `,"reason":` + string(wire.AppendString(nil, why.Error())) + `}`)
	msg := wire.AppendNotification(nil, "notifications/cancelled", params)
	// Best effort and off the caller's path: a stuck upstream must not delay
	// the caller's return.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.link.send(ctx, msg)
	}()
}

// Notify sends a notification.
func (c *Conn) Notify(ctx context.Context, method string, params []byte) error {
	if err := c.Err(); err != nil {
		return err
	}
	if c.era.stateless && method != "notifications/cancelled" {
		return nil // the stateless era has no other client notification
	}
	return c.link.send(ctx, wire.AppendNotification(nil, method, params))
}

// Respond answers a server→client request with a result or, when errObj is
// non-nil, a JSON-RPC error object.
func (c *Conn) Respond(ctx context.Context, id []byte, result []byte, errObj []byte) error {
	if err := c.Err(); err != nil {
		return err
	}
	var msg []byte
	if errObj != nil {
		msg = wire.AppendErrorObject(nil, id, errObj)
	} else {
		msg = wire.AppendResult(nil, id, result)
	}
	return c.link.send(ctx, msg)
}

// receive routes one inbound message (the sink side of the link) and
// returns the raw id of a response.
func (c *Conn) receive(msg []byte, origin []byte) []byte {
	m, err := wire.Parse(msg)
	if err != nil {
		if c.badLines.allow() {
			c.logger.Warn("upstream wrote a line that is not JSON-RPC; skipped",
				"err", err, "line", c.preview(msg))
		}
		return nil
	}
	switch {
	case m.IsResponse():
		if n, ok := wire.ParseHubID(m.ID); ok {
			c.resolve(n, result{r: Reply{Result: m.Result, Error: m.Error}})
		} else {
			c.toSDK(msg)
		}
		return m.ID
	case m.IsNotification():
		if m.Method == "notifications/subscriptions/acknowledged" && c.acknowledged(m.Params) {
			return nil
		}
		if c.events != nil {
			c.events.Notification(c, m.Method, m.Params, origin)
		}
	default: // a request
		if c.era.stateless && origin != nil {
			c.forbidden.Do(func() {
				c.logger.Info("upstream sent a request of its own on a response stream, which its protocol version forbids (a server asks with input_required there); routed as in the session era, and its answer posted back",
					"method", m.Method, "version", c.ProtocolVersion())
			})
		}
		if m.Method == "ping" {
			_ = c.Respond(context.Background(), m.ID, []byte(`{}`), nil)
			return nil
		}
		if c.events != nil {
			c.events.Request(c, m.ID, m.Method, m.Params, origin)
			return nil
		}
		_ = c.Respond(context.Background(), m.ID, nil,
			wire.AppendErrorBody(nil, jsonrpc.CodeMethodNotFound, "method not found: "+m.Method, nil))
	}
	return nil
}

func (c *Conn) attach(l link) { c.link = l }

// abort fails one request whose answer will never come.
func (c *Conn) abort(id []byte, err error) {
	if n, ok := wire.ParseHubID(id); ok {
		c.resolve(n, result{err: err})
		return
	}
	if jid, derr := decodeID(id); derr == nil {
		select {
		case c.sdkIn <- &jsonrpc.Response{ID: jid, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}:
		case <-c.done:
		}
	}
}

func (c *Conn) resolve(n uint64, r result) {
	if w := c.forget(n); w != nil {
		w.settle(r)
	}
}

// toSDK hands a response to go-sdk's session (which made the request).
func (c *Conn) toSDK(msg []byte) {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return
	}
	select {
	case c.sdkIn <- m:
	case <-c.done:
	}
}

func (c *Conn) oversize(o *framing.Oversize) {
	c.logger.Warn("upstream message exceeds the size limit; dropped", "bytes", o.Size, "partial", o.Partial)
	if n, ok := wire.ParseHubID(o.ID); ok {
		size := fmt.Sprintf("%d bytes", o.Size)
		if o.Partial {
			size = "at least " + size
		}
		c.resolve(n, result{err: fmt.Errorf("%w (%s)", ErrTooLarge, size)})
		return
	}
	if o.ID != nil {
		// go-sdk's own request (initialize): answer it with an error.
		if id, err := decodeID(o.ID); err == nil {
			select {
			case c.sdkIn <- &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: ErrTooLarge.Error()}}:
			case <-c.done:
			}
		}
	}
}

func decodeID(raw []byte) (jsonrpc.ID, error) {
	m, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + string(raw) + `,"result":{}}`))
	if err != nil {
		return jsonrpc.ID{}, err
	}
	return m.(*jsonrpc.Response).ID, nil
}

// fail records why the connection ended and fails every pending request.
// The first error wins.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = map[uint64]*waiter{}
	c.mu.Unlock()
	close(c.done)
	for _, w := range pending {
		w.settle(result{err: err})
	}
}

// Close shuts the connection down (for stdio: stdin closed, grace period,
// SIGTERM, SIGKILL to the process group, then every other process the
// upstream started) and waits until it is done.
func (c *Conn) Close() { c.shutdown(false) }

// closeNow is Close for a connection whose handshake failed or was abandoned:
// the upstream gets no grace for an orderly exit.
func (c *Conn) closeNow() { c.shutdown(true) }

func (c *Conn) shutdown(hurry bool) {
	c.closeOnce.Do(func() {
		if c.dual != nil {
			c.dual.close()
		}
		c.fail(ErrClosed)
		if hurry {
			c.link.abort()
		} else {
			c.link.close()
		}
	})
	if c.session != nil {
		_ = c.session.Close()
	}
}

// sdkTransport gives go-sdk a Connection over the Conn, for the handshake.
type sdkTransport struct{ c *Conn }

func (t sdkTransport) Connect(context.Context) (mcp.Connection, error) { return sdkConn(t), nil }

type sdkConn struct{ c *Conn }

func (s sdkConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-s.c.sdkIn:
		return m, nil
	case <-s.c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s sdkConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if err := s.c.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	return s.c.link.send(ctx, b)
}

func (s sdkConn) Close() error {
	s.c.fail(ErrClosed)
	return nil
}

func (s sdkConn) SessionID() string { return "" }

// preview returns the start of a line for a log record.
// previewLen is how much of an upstream's output a preview shows.
const previewLen = 200

func preview(b []byte) string {
	if len(b) > previewLen {
		return string(b[:previewLen]) + "…"
	}
	return string(b)
}

// preview implements sink: the start of b, scrubbed of the values the hub
// passed to the upstream and masked, then cut.
func (c *Conn) preview(b []byte) string {
	more := len(b) > previewLen+redact.CutSlack
	s, cut := redact.Cut(c.secret, string(b[:min(len(b), previewLen+redact.CutSlack)]), previewLen, more)
	if cut {
		s += "…"
	}
	return s
}

// rateLimiter allows a burst of events and then one per interval.
type rateLimiter struct {
	mu     sync.Mutex
	count  int
	window time.Time
}

// allow reports whether an event may be logged: at most 10 per minute.
func (r *rateLimiter) allow() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if now.Sub(r.window) > time.Minute {
		r.window, r.count = now, 0
	}
	r.count++
	return r.count <= 10
}
