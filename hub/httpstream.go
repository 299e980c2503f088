package hub

// The transports of the HTTP front: streamable HTTP at /mcp (POST, GET,
// DELETE) and legacy SSE at /sse with its message endpoint.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/sse"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

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
	sid := r.Header.Get("Mcp-Session-Id")
	// A stateless POST's version is checked with its body, so the error
	// answers the request's id.
	sessionless := sid == "" && r.Method == http.MethodPost && v >= statelessVersion
	if v != "" && !slices.Contains(f.opts.ProtocolVersions, v) && !sessionless {
		if v >= statelessVersion {
			// The 2026-07-28 answer, which tells the client what to use.
			writeJSON(w, http.StatusBadRequest, wire.AppendError(nil, nil, codeUnsupportedProtocolVersion,
				fmt.Sprintf("unsupported protocol version %q", v), era.UnsupportedVersionData(f.opts.ProtocolVersions, v)))
			return
		}
		rpcHTTPError(w, http.StatusBadRequest, fmt.Sprintf("unsupported MCP-Protocol-Version %q (supported: %s)", v, strings.Join(f.opts.ProtocolVersions, ", ")))
		return
	}
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
		if hs, err = f.newHTTPSession(r.Context(), false, subjectOf(r)); err != nil {
			f.sessionRefused(w, err)
			return
		}
		if ti := tokenInfo(r.Context()); ti != nil {
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
		hs.s.handleWith(body, r.Header)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	p := &postWait{hs: hs, events: make(chan []byte, 64), final: make(chan []byte, 1), attached: true}
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
	hs.s.handleWith(body, r.Header)
	f.awaitResponse(w, r, hs, key, p)
}

// awaitResponse answers a POSTed request: as JSON when the response comes
// first, as an SSE stream when messages of the request come before it.
func (f *httpFront) awaitResponse(w http.ResponseWriter, r *http.Request, hs *httpSession, key string, p *postWait) {
	detached := false
	defer func() {
		hs.mu.Lock()
		p.attached = false
		if hs.pending[key] == p && !detached {
			delete(hs.pending, key)
		}
		hs.mu.Unlock()
		hs.touch()
	}()
	ev := &sse.Answer{W: w, RetryMs: retryMs, Logs: p}
	event, flush := ev.Event, ev.Flush
	for {
		select {
		case msg := <-p.events:
			if len(msg) == 0 {
				// The upstream paused the call's stream: the client's
				// ends too, kept for its resume (resume.go).
				if detached = hs.pauseStream(p, ev); detached {
					return
				}
				continue
			}
			event(msg)
			flush()
		case data, ok := <-p.final:
			if !ok {
				if !ev.Streaming() {
					rpcHTTPError(w, http.StatusNotFound, "the session closed")
				}
				return
			}
			if ev.Final(p.events, data) {
				hs.streamDone(p)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(data)
			return
		case <-r.Context().Done():
			// The client went away. Its request keeps running (a
			// disconnect is not a cancellation). An answer that was an
			// event stream is kept for a resume (GET with Last-Event-ID);
			// otherwise the response is dropped.
			detached = ev.Streaming()
			return
		}
	}
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
	lastID := r.Header.Get("Last-Event-ID")
	if lastID != "" && f.resume(w, r, hs, lastID) {
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
	if hs.glog == nil {
		hs.glog = sse.NewLog(standaloneStream)
	}
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		if hs.stream == st {
			hs.stream = nil
		}
		hs.lastActive = time.Now()
		hs.mu.Unlock()
	}()
	var replay [][]byte
	if stream, n, ok := sse.ParseID(lastID); ok && stream == standaloneStream {
		// What the client missed on its last standalone stream, then
		// what waited for it.
		_, replay = hs.glog.After(n)
	}
	f.pumpStream(w, r, hs, st, append(replay, backlog...), nil)
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
	writeEvent := sse.WriteEvent
	if !hs.legacy && hs.glog != nil {
		// A streamable session's standalone stream: numbered, so a
		// client can resume it.
		sse.WritePriming(w, hs.glog.PrimingID(), retryMs)
		writeEvent = func(w io.Writer, data []byte) { sse.WriteEventID(w, hs.glog.Add(data), data) }
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
	hs, err := f.newHTTPSession(r.Context(), true, subjectOf(r))
	if err != nil {
		f.sessionRefused(w, err)
		return
	}
	defer f.dropSession(hs)
	if ti := tokenInfo(r.Context()); ti != nil {
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
	hs.s.handleWith(body, r.Header)
	w.WriteHeader(http.StatusAccepted)
}
