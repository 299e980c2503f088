package hub

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// go-sdk runs initialize, ping, logging/setLevel and the hub's admin tools.
// Its jsonrpc.ID holds an int64 or a string, so a client id such as 4.5,
// 1e2 or 9223372036854775808 cannot pass through it unchanged. go-sdk
// therefore never sees a client's id: each request the hub hands it gets an
// integer id of the hub's own (1, 2, … per session), the client's
// notifications/cancelled for it is renumbered the same way, and go-sdk's
// answer is written under the client's raw id again. The translation lives
// here, in the connection between a session and go-sdk, so go-sdk keeps
// doing what it does (version negotiation, capabilities, tool dispatch,
// elicitation for approvals) and no method is implemented twice.

// toSDKMsg hands a client message to go-sdk.
func (s *session) toSDKMsg(line []byte, m wire.Message) {
	if err := s.connectSDK(); err != nil {
		if m.IsRequest() {
			s.replyError(m.ID, jsonrpc.CodeInternalError, err.Error(), nil)
		}
		return
	}
	var msg jsonrpc.Message
	switch {
	case m.IsRequest():
		n, ok := s.sdkCall(m)
		if !ok {
			return // the session closed
		}
		id, _ := jsonrpc.MakeID(float64(n)) // exact: n stays far below 2^53
		req := &jsonrpc.Request{ID: id, Method: m.Method, Params: m.Params}
		var extra *mcp.RequestExtra
		if ti := s.token.Load(); ti != nil {
			// The verified token of the client's request, for the admin
			// tools (admin scope, the subject in the audit log).
			extra = &mcp.RequestExtra{TokenInfo: ti}
		}
		if sp := s.spanOf(m.ID); sp != nil {
			// The request's span, for the spans of what the admin
			// tools wait for (a person's approval).
			if extra == nil {
				extra = &mcp.RequestExtra{}
			}
			extra.Header = http.Header{}
			sp.SetHeaders(extra.Header)
		}
		if extra != nil {
			req.Extra = extra
		}
		msg = req
	case m.IsNotification():
		msg = &jsonrpc.Request{Method: m.Method, Params: m.Params}
	default:
		// An answer to a request go-sdk sent the client. go-sdk numbers its
		// requests 1, 2, …: any other id is not one of them, and decoding
		// it would make it one (4.5 would answer request 4).
		if !plainInt(wire.TrimSpace(m.ID)) {
			s.logger.Debug("dropped a response to no request of the hub's", "id", string(m.ID))
			return
		}
		dec, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			s.logger.Debug("dropped a response go-sdk cannot read", "err", err)
			return
		}
		msg = dec
	}
	s.sendSDK(msg)
}

func (s *session) sendSDK(msg jsonrpc.Message) {
	select {
	case s.toSDK <- msg:
	case <-s.done:
	}
}

// sdkCall gives the client request m (registered by accept) the id go-sdk
// will know it by.
func (s *session) sdkCall(m wire.Message) (int64, bool) {
	key := idKey(m.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, false
	}
	c := s.inflight[string(key)]
	if c == nil { // not registered: cannot happen, but go-sdk must answer it
		c = &call{id: m.ID}
		s.inflight[string(key)] = c
	}
	s.sdkSeq++
	c.sdk = s.sdkSeq
	s.sdkCalls[c.sdk] = c
	return c.sdk, true
}

// cancelSDK passes the client's notifications/cancelled for a request go-sdk
// handles on to go-sdk, under go-sdk's id for it.
func (s *session) cancelSDK(params []byte, n int64) {
	p, err := wire.EditObject(params, []wire.Member{{Key: "requestId", Value: strconv.AppendInt(nil, n, 10)}})
	if err != nil {
		return
	}
	s.sendSDK(&jsonrpc.Request{Method: "notifications/cancelled", Params: p})
}

// fromSDK writes go-sdk's answer to a client request under the client's id.
func (s *session) fromSDK(resp *jsonrpc.Response) error {
	n, _ := resp.ID.Raw().(int64)
	s.mu.Lock()
	c := s.sdkCalls[n]
	if c != nil {
		delete(s.sdkCalls, n)
		key := idKey(c.id)
		if s.inflight[string(key)] == c {
			delete(s.inflight, string(key))
		}
		if c.initialize && resp.Error != nil {
			s.initialized.Store(false) // a failed initialize may be sent again
		}
	}
	s.mu.Unlock()
	if c == nil {
		s.logger.Debug("go-sdk answered a request the hub did not hand it", "id", n)
		return nil
	}
	var data []byte
	if resp.Error != nil {
		code, msg, edata := sdkError(resp.Error)
		data = wire.AppendError(nil, c.id, code, msg, edata)
	} else {
		result := []byte(resp.Result)
		if result == nil {
			result = []byte("null")
		}
		data = wire.AppendResult(make([]byte, 0, len(result)+len(c.id)+40), c.id, result)
	}
	if c.span != nil {
		var code int64
		if resp.Error != nil {
			code, _, _ = sdkError(resp.Error)
		}
		endSpan(c.span, data, code)
	}
	err := s.out.send(outMsg{data: data, respTo: c.id})
	s.settled()
	return err
}

// sdkError returns the code, message and data go-sdk means by err, the way
// go-sdk itself would encode it, except that an error without a code (go-sdk
// sends code 0 for a plain Go error) is an internal error.
func sdkError(err error) (code int64, msg string, data []byte) {
	if w, ok := err.(*jsonrpc.Error); ok {
		code, msg, data = w.Code, w.Message, w.Data
	} else {
		msg = err.Error()
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			code = we.Code
		}
	}
	if code == 0 {
		code = jsonrpc.CodeInternalError
	}
	return code, msg, data
}

// sdkTransport and sdkConn connect go-sdk's server to a session.
type sdkTransport struct{ s *session }

func (t sdkTransport) Connect(context.Context) (mcp.Connection, error) { return sdkConn(t), nil }

// SupportsProtocolVersion implements mcp.ProtocolVersionSupporter, which
// go-sdk's server/discover consults: a stateless client's request is served
// at 2026-07-28, every other transport speaks the session era.
func (t sdkTransport) SupportsProtocolVersion(v string) bool {
	return t.s.stateless != nil || v < statelessVersion
}

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
	if resp, ok := m.(*jsonrpc.Response); ok {
		return c.s.fromSDK(resp)
	}
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "notifications/subscriptions/acknowledged" {
		c.s.renumberSubscription(req)
	}
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	o := outMsg{data: b}
	// go-sdk does not say which request a message it sends belongs to;
	// when it handles exactly one, it is that one.
	c.s.mu.Lock()
	if len(c.s.sdkCalls) == 1 {
		for _, call := range c.s.sdkCalls {
			o.related = call.id
		}
	}
	c.s.mu.Unlock()
	return c.s.out.send(o)
}

// renumberSubscription gives go-sdk's acknowledgement of a
// subscriptions/listen the client's id for it: the subscription id is the
// listen request's id, and go-sdk knows that request by the hub's number.
func (s *session) renumberSubscription(req *jsonrpc.Request) {
	v := wire.GetMeta(req.Params, mcp.MetaKeySubscriptionID)
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return
	}
	s.mu.Lock()
	c := s.sdkCalls[n]
	s.mu.Unlock()
	if c == nil {
		return
	}
	if p, err := wire.EditMeta(req.Params, []wire.Member{{Key: mcp.MetaKeySubscriptionID, Value: c.id}}, nil); err == nil {
		req.Params = p
	}
}

func (c sdkConn) Close() error {
	go c.s.close() // go-sdk may call this while holding its own locks
	return nil
}

func (c sdkConn) SessionID() string { return c.s.id }
