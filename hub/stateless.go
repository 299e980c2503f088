package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/sse"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Stateless clients. From protocol version 2026-07-28 (SEP-2575) a client
// has no session: no initialize, no Mcp-Session-Id; each request carries in
// its _meta the protocol version, the client's capabilities and who it is,
// and the Mcp-Protocol-Version, Mcp-Method and Mcp-Name headers mirror the
// body. The HTTP front serves each such request on a session of its own
// that lives as long as the POST: the progress of a forwarded call, and the
// requests the hub sends the client for it (an upstream's elicitation,
// sampling or roots request), travel on that POST's event stream, and
// nothing of the client stays on the hub afterwards, so any replica of the
// hub answers any of its requests. An upstream that speaks 2026-07-28 and
// needs client input answers with an input_required result (multi
// round-trip requests), which reaches the client as it is: the client calls
// again with the answers, on whichever replica.
//
// A stateless client reaches shared upstreams (scope auto ones share their
// instance with it); one with scope session serves session-era clients
// only. It hears of list changes through subscriptions/listen, for as long
// as that request's stream stays open.

// statelessVersion is the protocol version of stateless clients.
const statelessVersion = era.Stateless

// legacyVersions are the session-era protocol versions, newest first.
var legacyVersions = era.SessionVersions

// The 2026-07-28 error codes.
const (
	codeUnsupportedProtocolVersion = era.CodeUnsupportedProtocolVersion
	codeHeaderMismatch             = era.CodeHeaderMismatch
)

// statelessInfo is what one stateless request says about its client.
type statelessInfo struct {
	version  string
	caps     *mcp.ClientCapabilities
	logLevel string     // the _meta log level it asked for, or ""
	method   string     // the request's method
	label    string     // what it is for (a tool name, a prompt, a uri), once forwarded
	sub      string     // the subject of the request's token (auth), or ""
	listen   *listenSub // the request is a subscriptions/listen
}

// listenSub is what a subscriptions/listen asked to hear of.
type listenSub struct {
	id                        []byte
	tools, prompts, resources bool
}

// metaVersion returns the per-request protocol version of request params,
// or "".
func metaVersion(params []byte) string { return era.RequestVersion(params) }

// newProtocol reports whether request params are a 2026-07-28 (or later)
// client's.
func newProtocol(params []byte) bool { return era.IsStateless(metaVersion(params)) }

// parseStatelessMeta reads the client's capabilities from a stateless
// request's _meta; they are required.
func parseStatelessMeta(params []byte) (*statelessInfo, error) {
	info := &statelessInfo{version: metaVersion(params)}
	raw := wire.GetMeta(params, mcp.MetaKeyClientCapabilities)
	// The 2026-07-28 shape: roots is an object.
	var caps struct {
		mcp.ClientCapabilities
		//lint:ignore SA1019 roots are deprecated in 2026-07-28 but a client may still declare them
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if raw == nil || raw[0] != '{' || json.Unmarshal(raw, &caps) != nil {
		return nil, fmt.Errorf("missing or invalid _meta field %q", mcp.MetaKeyClientCapabilities)
	}
	c := caps.ClientCapabilities
	//lint:ignore SA1019 roots are deprecated in 2026-07-28 but a client may still declare them
	c.RootsV2 = caps.Roots
	info.caps = &c
	if v := wire.GetMeta(params, era.MetaLogLevel); v != nil {
		if l, err := wire.String(v); err == nil {
			if _, ok := logLevels[l]; ok {
				info.logLevel = l
			}
		}
	}
	return info, nil
}

// clientCaps returns the capabilities the session's client declared, or nil.
func (s *session) clientCaps() *mcp.ClientCapabilities {
	if s.stateless != nil {
		return s.stateless.caps
	}
	if ss := s.ss.Load(); ss != nil && ss.InitializeParams() != nil {
		return ss.InitializeParams().Capabilities
	}
	return nil
}

// notifyStateless sends a stateless client what belongs to its request
// (progress, log messages of its call) and, on a subscriptions/listen
// stream, the list changes it asked for. Anything else has nowhere to go.
func (s *session) notifyStateless(method string, params, related []byte) {
	if related == nil {
		l := s.stateless.listen
		if l == nil {
			return
		}
		switch method {
		case "notifications/tools/list_changed":
			if !l.tools {
				return
			}
		case "notifications/prompts/list_changed":
			if !l.prompts {
				return
			}
		case "notifications/resources/list_changed":
			if !l.resources {
				return
			}
		default:
			return
		}
		params = append([]byte(`{"_meta":{"`+mcp.MetaKeySubscriptionID+`":`), l.id...)
		params = append(params, "}}"...)
		related = l.id
	}
	_ = s.out.send(outMsg{data: wire.AppendNotification(nil, method, params), related: related})
}

// listenOf reads what a subscriptions/listen asks to hear of.
func listenOf(m wire.Message) *listenSub {
	l := &listenSub{id: m.ID}
	n, _ := wire.Get(m.Params, "notifications")
	if n == nil {
		return l
	}
	for k, p := range map[string]*bool{"toolsListChanged": &l.tools, "promptsListChanged": &l.prompts, "resourcesListChanged": &l.resources} {
		if v, _ := wire.Get(n, k); string(v) == "true" {
			*p = true
		}
	}
	return l
}

// passInputRequired hands a stateless client an upstream's input_required
// result as it is, when the hub's policy lets the upstream ask for each
// input and the client declared what it takes; otherwise the call fails
// with the reason.
func (s *session) passInputRequired(key, id []byte, up *upstream.Upstream, method, label string, token, result []byte, start time.Time, span *telemetry.Span) {
	fail := func(msg string) {
		s.finish(key, id, up, method, label, token, upstream.Reply{Result: toolResultError(msg)}, nil, start, span)
	}
	reqs, _, err := era.InputRequests(result)
	refusal := ""
	for _, in := range reqs {
		if refusal = s.mayAsk(up, in.Method, in.Params); refusal != "" {
			break
		}
	}
	switch {
	case refusal != "":
		fail(refusal)
	case err != nil:
		fail(fmt.Sprintf("upstream %q sent an invalid input_required result: %v", up.Name(), err))
	default:
		s.finish(key, id, up, method, label, token, upstream.Reply{Result: result}, nil, start, span)
	}
}

// statelessOut is the outbox of a stateless request's session: the answer
// and what belongs to the request go to its POST, nothing else goes
// anywhere.
type statelessOut struct {
	key    string      // idKey of the request
	method string      // its method
	events chan []byte // related notifications and requests (dropped when full)
	final  chan []byte // the answer
}

func (o *statelessOut) send(m outMsg) error {
	switch {
	case m.respTo != nil:
		if canonicalID(m.respTo) == o.key {
			select {
			case o.final <- m.data:
			default:
			}
		}
	case m.related != nil && canonicalID(m.related) == o.key:
		select {
		case o.events <- m.data:
		default: // a flood; the answer still gets through
		}
	}
	return nil
}

// isStatelessPost reports whether a POST without a session id is a
// stateless client's: its Mcp-Protocol-Version or its _meta says 2026-07-28
// or later.
func isStatelessPost(r *http.Request, m wire.Message) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= statelessVersion || (m.IsRequest() && newProtocol(m.Params))
}

// statelessPost serves one message of a stateless client.
func (f *httpFront) statelessPost(w http.ResponseWriter, r *http.Request, body []byte, m wire.Message) {
	if !m.IsRequest() {
		// A notification needs nothing of a stateless hub (a request is
		// cancelled by closing its stream); a response answers a request
		// the hub sent on a stream of this replica.
		if m.IsResponse() {
			f.statelessAnswer(r, m)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if status, out := f.checkStateless(r, m); out != nil {
		writeJSON(w, status, out)
		return
	}
	if era.Removed(m.Method) {
		// initialize, ping, logging/setLevel, resources/subscribe, …:
		// the session era's, gone from this revision.
		writeJSON(w, http.StatusNotFound, wire.AppendError(nil, m.ID, jsonrpc.CodeMethodNotFound,
			fmt.Sprintf("method not found: %s is not part of protocol version %s", m.Method, statelessVersion), nil))
		return
	}
	info, err := parseStatelessMeta(m.Params)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, wire.AppendError(nil, m.ID, jsonrpc.CodeInvalidParams, err.Error(), nil))
		return
	}
	if m.Method == "subscriptions/listen" {
		info.listen = listenOf(m)
	}
	info.method = m.Method
	ti := tokenInfo(r.Context())
	if ti != nil {
		info.sub = ti.UserID
	}
	out := &statelessOut{key: canonicalID(m.ID), method: m.Method, events: make(chan []byte, 64), final: make(chan []byte, 1)}
	s, err := f.h.openSession(context.WithoutCancel(r.Context()), "", out, info)
	if err != nil {
		rpcHTTPError(w, http.StatusInternalServerError, err.Error())
		return
	}
	// The session ends with the POST: a client that goes away cancels
	// its request (it cannot get the answer anywhere else).
	defer s.close()
	if ti != nil {
		s.token.Store(ti)
	}
	s.handleWith(body, r.Header)
	f.awaitStateless(w, r, out)
}

// statelessAnswer delivers a stateless client's answer to a request the
// hub sent it, when the request is this replica's and the answer comes
// from the same principal.
func (f *httpFront) statelessAnswer(r *http.Request, m wire.Message) {
	v, ok := f.h.statelessAsks.Load(string(wire.TrimSpace(m.ID)))
	if !ok {
		f.logger.Debug("a stateless client answered no request of this hub's", "id", string(m.ID))
		return
	}
	s := v.(*session)
	sub := ""
	if ti := tokenInfo(r.Context()); ti != nil {
		sub = ti.UserID
	}
	if sub != s.stateless.sub {
		f.logger.Warn("an answer to a request sent to another principal's client was dropped")
		return
	}
	s.answer(m)
}

// writeJSON writes a JSON body with a status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// checkStateless checks a stateless request's version and mirrored
// headers against its body. A mismatch is a 400 with the 2026-07-28 error
// (an intermediary may have routed or authorized the request by the
// headers); it returns the status and the answer, or a nil answer.
func (f *httpFront) checkStateless(r *http.Request, m wire.Message) (int, []byte) {
	bad := func(code int64, data []byte, format string, a ...any) (int, []byte) {
		return http.StatusBadRequest, wire.AppendError(nil, m.ID, code, fmt.Sprintf(format, a...), data)
	}
	for _, h := range []string{"Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name"} {
		if len(r.Header.Values(h)) > 1 {
			return bad(codeHeaderMismatch, nil, "more than one %s header", h)
		}
	}
	hv, mv := r.Header.Get("Mcp-Protocol-Version"), metaVersion(m.Params)
	switch {
	case hv == "":
		return bad(codeHeaderMismatch, nil, "the Mcp-Protocol-Version header is required for requests carrying _meta %q", mcp.MetaKeyProtocolVersion)
	case mv == "":
		return bad(jsonrpc.CodeInvalidParams, nil, "missing or invalid _meta field %q (a request without a session carries its protocol version)", mcp.MetaKeyProtocolVersion)
	case hv != mv:
		return bad(codeHeaderMismatch, nil, "the Mcp-Protocol-Version header %q does not match the request's _meta %q %q", hv, mcp.MetaKeyProtocolVersion, mv)
	case !slices.Contains(f.opts.ProtocolVersions, mv) || mv < statelessVersion:
		return bad(codeUnsupportedProtocolVersion, era.UnsupportedVersionData(f.opts.ProtocolVersions, mv), "unsupported protocol version %q", mv)
	}
	switch method := r.Header.Get("Mcp-Method"); {
	case method == "":
		return bad(codeHeaderMismatch, nil, "missing required Mcp-Method header")
	case method != m.Method:
		return bad(codeHeaderMismatch, nil, "header mismatch: the Mcp-Method header %q does not match the body's method %q", method, m.Method)
	}
	member := ""
	switch m.Method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	default:
		return 0, nil
	}
	v, _ := wire.Get(m.Params, member)
	body, err := wire.String(v)
	if v == nil || err != nil {
		return bad(jsonrpc.CodeInvalidParams, nil, "params.%s must be a string", member)
	}
	name, ok := era.DecodeValue(r.Header.Get("Mcp-Name"))
	switch {
	case r.Header.Get("Mcp-Name") == "":
		return bad(codeHeaderMismatch, nil, "missing required Mcp-Name header for method %q", m.Method)
	case !ok:
		return bad(codeHeaderMismatch, nil, "the Mcp-Name header holds invalid base64")
	case name != body && r.Header.Get("Mcp-Name") != body:
		return bad(codeHeaderMismatch, nil, "header mismatch: the Mcp-Name header %q does not match the body's %s %q", r.Header.Get("Mcp-Name"), member, body)
	}
	if m.Method == "tools/call" {
		if msg := f.checkParamHeaders(r.Header, body, m.Params); msg != "" {
			return bad(codeHeaderMismatch, nil, "header mismatch: %s", msg)
		}
	}
	return 0, nil
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against
// its arguments, for the properties the tool's input schema mirrors into
// headers (x-mcp-header). It returns what is wrong, or "".
func (f *httpFront) checkParamHeaders(hdr http.Header, tool string, params []byte) string {
	e, ok := f.h.Catalog().Tool(tool)
	if !ok {
		return "" // unknown tools are answered as such
	}
	schema, _ := wire.Get(e.Raw, "inputSchema")
	bindings, err := era.ParamHeaders(schema)
	if err != nil || len(bindings) == 0 {
		return ""
	}
	return era.CheckParamHeaders(params, bindings, hdr.Get)
}

// awaitStateless answers a stateless request: as JSON when the answer comes
// first, as an event stream when messages of the request come before it.
// A protocol error the 2026-07-28 transport maps to a status (method not
// found: 404; invalid params, unsupported version, missing capability:
// 400) gets it when the answer is not streamed.
func (f *httpFront) awaitStateless(w http.ResponseWriter, r *http.Request, out *statelessOut) {
	ev := &sse.Answer{W: w}
	event, flush := ev.Event, ev.Flush
	tick := time.NewTicker(f.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case msg := <-out.events:
			event(msg)
			flush()
		case data := <-out.final:
			data = f.h.completeAnswer(out.method, data)
			if ev.Final(out.events, data) {
				return
			}
			writeJSON(w, era.Status(data), data)
			return
		case <-tick.C:
			if ev.Streaming() {
				_, _ = w.Write([]byte(": keep-alive\n\n"))
				flush()
			}
		case <-r.Context().Done():
			return
		case <-f.h.stop:
			if !ev.Streaming() {
				rpcHTTPError(w, http.StatusServiceUnavailable, "the hub is shutting down")
			}
			return
		}
	}
}
