package hub

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/telemetry"

	"github.com/mcp-hub/mcp-hub/internal/wire"
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
const statelessVersion = "2026-07-28"

// legacyVersions are the session-era protocol versions, newest first.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// codeUnsupportedProtocolVersion and codeHeaderMismatch are the
// 2026-07-28 error codes (go-sdk's mcp.CodeUnsupportedProtocolVersion and
// mcp.CodeHeaderMismatch).
const (
	codeUnsupportedProtocolVersion = mcp.CodeUnsupportedProtocolVersion
	codeHeaderMismatch             = mcp.CodeHeaderMismatch
)

// statelessInfo is what one stateless request says about its client.
type statelessInfo struct {
	version string
	caps    *mcp.ClientCapabilities
	sub     string     // the subject of the request's token (auth), or ""
	listen  *listenSub // the request is a subscriptions/listen
}

// listenSub is what a subscriptions/listen asked to hear of.
type listenSub struct {
	id                        []byte
	tools, prompts, resources bool
}

// requestMeta returns the _meta object of request params, or nil.
func requestMeta(params []byte) []byte {
	if len(params) == 0 || params[0] != '{' {
		return nil
	}
	meta, err := wire.Get(params, "_meta")
	if err != nil || meta == nil || meta[0] != '{' {
		return nil
	}
	return meta
}

// metaVersion returns the per-request protocol version of request params,
// or "".
func metaVersion(params []byte) string {
	meta := requestMeta(params)
	if meta == nil {
		return ""
	}
	v, err := wire.Get(meta, mcp.MetaKeyProtocolVersion)
	if err != nil || v == nil {
		return ""
	}
	s, err := wire.String(v)
	if err != nil {
		return ""
	}
	return s
}

// newProtocol reports whether request params are a 2026-07-28 (or later)
// client's.
func newProtocol(params []byte) bool { return metaVersion(params) >= statelessVersion }

// unsupportedVersionData is the data of an unsupported-version error.
func unsupportedVersionData(supported []string, requested string) []byte {
	b, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: requested})
	return b
}

// parseStatelessMeta reads the client's capabilities from a stateless
// request's _meta; they are required.
func parseStatelessMeta(params []byte) (*statelessInfo, error) {
	meta := requestMeta(params)
	info := &statelessInfo{version: metaVersion(params)}
	raw, _ := wire.Get(meta, mcp.MetaKeyClientCapabilities)
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
	reqs, err := wire.Get(result, "inputRequests")
	if err != nil || reqs == nil || reqs[0] != '{' {
		fail(fmt.Sprintf("upstream %q sent an input_required result without inputRequests", up.Name()))
		return
	}
	refusal := ""
	err = wire.Members(reqs, func(k, v []byte) error {
		m, err := wire.Get(v, "method")
		if err != nil || m == nil {
			return fmt.Errorf("input request %q has no method", k)
		}
		reqMethod, err := wire.String(m)
		if err != nil {
			return err
		}
		reqParams, _ := wire.Get(v, "params")
		if refusal = s.mayAsk(up, reqMethod, reqParams); refusal != "" {
			return errStop
		}
		return nil
	})
	switch {
	case refusal != "":
		fail(refusal)
	case err != nil:
		fail(fmt.Sprintf("upstream %q needs client input: %v", up.Name(), err))
	default:
		s.finish(key, id, up, method, label, token, upstream.Reply{Result: result}, nil, start, span)
	}
}

// statelessOut is the outbox of a stateless request's session: the answer
// and what belongs to the request go to its POST, nothing else goes
// anywhere.
type statelessOut struct {
	key    string      // idKey of the request
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
	info, err := parseStatelessMeta(m.Params)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, wire.AppendError(nil, m.ID, jsonrpc.CodeInvalidParams, err.Error(), nil))
		return
	}
	if m.Method == "subscriptions/listen" {
		info.listen = listenOf(m)
	}
	ti := tokenInfo(r.Context())
	if ti != nil {
		info.sub = ti.UserID
	}
	out := &statelessOut{key: canonicalID(m.ID), events: make(chan []byte, 64), final: make(chan []byte, 1)}
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
		return bad(codeUnsupportedProtocolVersion, unsupportedVersionData(f.opts.ProtocolVersions, mv), "unsupported protocol version %q", mv)
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
	name, ok := decodeHeaderValue(r.Header.Get("Mcp-Name"))
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

// decodeHeaderValue decodes a mirrored header value, which may be
// "=?base64?…?=" (SEP-2243).
func decodeHeaderValue(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	enc, ok = strings.CutSuffix(enc, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against
// its arguments, for the properties the tool's input schema mirrors into
// headers (x-mcp-header): a header is required for a present argument,
// refused for an absent one, and must equal it. It returns what is wrong,
// or "".
func (f *httpFront) checkParamHeaders(hdr http.Header, tool string, params []byte) string {
	e, ok := f.h.Catalog().Tool(tool)
	if !ok {
		return "" // unknown tools are answered as such
	}
	var t struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if json.Unmarshal(e.Raw, &t) != nil || t.InputSchema == nil {
		return ""
	}
	var bindings []paramHeader
	collectParamHeaders(t.InputSchema, nil, &bindings)
	if len(bindings) == 0 {
		return ""
	}
	var args map[string]json.RawMessage
	if raw, _ := wire.Get(params, "arguments"); raw != nil {
		_ = json.Unmarshal(raw, &args)
	}
	for _, b := range bindings {
		name := "Mcp-Param-" + b.header
		hv := hdr.Get(name)
		arg, present := lookupArg(args, b.path)
		if !present || string(arg) == "null" {
			if hv != "" {
				return fmt.Sprintf("%s is set but the argument %q is absent", name, strings.Join(b.path, "."))
			}
			continue
		}
		if hv == "" {
			return fmt.Sprintf("missing %s header for the argument %q", name, strings.Join(b.path, "."))
		}
		dec, ok := decodeHeaderValue(hv)
		if !ok || !headerMatches(dec, arg) {
			return fmt.Sprintf("the %s header does not match the argument %q", name, strings.Join(b.path, "."))
		}
	}
	return ""
}

// paramHeader is one x-mcp-header annotation: a property path and its
// header name.
type paramHeader struct {
	path   []string
	header string
}

// collectParamHeaders walks a schema's properties for x-mcp-header.
func collectParamHeaders(schema json.RawMessage, prefix []string, out *[]paramHeader) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return
	}
	for name, prop := range s.Properties {
		path := append(slices.Clone(prefix), name)
		var p struct {
			Header string `json:"x-mcp-header"`
		}
		if json.Unmarshal(prop, &p) == nil && p.Header != "" {
			*out = append(*out, paramHeader{path: path, header: p.Header})
		}
		collectParamHeaders(prop, path, out)
	}
}

// lookupArg finds the argument at path.
func lookupArg(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	for _, p := range path[1:] {
		if !ok {
			return nil, false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		cur, ok = obj[p]
	}
	return cur, ok
}

// headerMatches compares a header value with a primitive argument.
func headerMatches(h string, arg json.RawMessage) bool {
	var v any
	if json.Unmarshal(arg, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return h == v
	case bool:
		return h == strconv.FormatBool(v)
	case float64:
		n, err := strconv.ParseFloat(h, 64)
		return err == nil && n == v
	}
	return false
}

// awaitStateless answers a stateless request: as JSON when the answer comes
// first, as an event stream when messages of the request come before it.
// A protocol error the 2026-07-28 transport maps to a status (method not
// found: 404; invalid params, unsupported version, missing capability:
// 400) gets it when the answer is not streamed.
func (f *httpFront) awaitStateless(w http.ResponseWriter, r *http.Request, out *statelessOut) {
	ev := &eventWriter{w: w}
	event, flush := ev.event, ev.flush
	tick := time.NewTicker(f.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case msg := <-out.events:
			event(msg)
			flush()
		case data := <-out.final:
			if ev.final(out.events, data) {
				return
			}
			writeJSON(w, errorStatus(data), data)
			return
		case <-tick.C:
			if ev.streaming {
				_, _ = w.Write([]byte(": keep-alive\n\n"))
				flush()
			}
		case <-r.Context().Done():
			return
		case <-f.h.stop:
			if !ev.streaming {
				rpcHTTPError(w, http.StatusServiceUnavailable, "the hub is shutting down")
			}
			return
		}
	}
}

// errorStatus is the HTTP status of a stateless answer.
func errorStatus(data []byte) int {
	e, err := wire.Get(data, "error")
	if err != nil || e == nil {
		return http.StatusOK
	}
	code, _ := wire.Get(e, "code")
	switch string(code) {
	case strconv.Itoa(jsonrpc.CodeMethodNotFound):
		return http.StatusNotFound
	case strconv.Itoa(jsonrpc.CodeInvalidParams), strconv.Itoa(codeUnsupportedProtocolVersion), strconv.Itoa(mcp.CodeMissingRequiredClientCapabilities):
		return http.StatusBadRequest
	}
	return http.StatusOK
}
