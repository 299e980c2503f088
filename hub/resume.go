package hub

import (
	"net/http"
	"strconv"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/sse"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Resumable event streams of the session era's streamable HTTP (SEP-1699;
// the stateless era has none; package sse writes them and keeps their
// logs). Every event the hub writes on a session's
// streams carries an id, "<stream>:<n>"; a stream opens with a priming
// event (an id, the retry delay, no data), so a client whose connection
// breaks knows where it was and when to come back. It comes back with a
// GET that names the last id it saw in Last-Event-ID: the hub replays what
// followed and, for the answer to a POST, goes on with the rest of that
// request's stream, its answer last. A request whose client went away is
// not cancelled (a disconnect is not a cancellation): what it sends after
// is kept for the resume.
//
// An upstream that polls (SEP-1699) closes a call's stream before the
// answer and asks for a retry delay; when that call's client is such a
// session, the hub closes the client's stream the same way, with the
// upstream's delay, and resumes the upstream's stream when the client
// comes back (or after the delay at the latest: upstream/pause.go). So the
// wait is the client's choice, as it is talking to the server directly.

// retryMs is the reconnection delay the hub's priming events ask for.
const retryMs = 1000

// standaloneStream names the session's standalone GET stream in event ids.
const standaloneStream = "g"

// NewLog implements sse.Logs: it registers the event stream a POST's
// answer turned into and returns its log.
func (p *postWait) NewLog() *sse.Log {
	hs := p.hs
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.streamSeq++
	p.log = sse.NewLog("r" + strconv.FormatUint(hs.streamSeq, 10))
	if hs.streams == nil {
		hs.streams = map[string]*postWait{}
	}
	hs.streams[p.log.Name()] = p
	return p.log
}

// streamDone forgets a POST's stream once its answer was written.
func (hs *httpSession) streamDone(p *postWait) {
	if p.log == nil {
		return
	}
	hs.mu.Lock()
	delete(hs.streams, p.log.Name())
	hs.mu.Unlock()
}

// resume serves a GET with Last-Event-ID: a POST's stream goes on where
// the client lost it, to the end of its answer; the standalone stream
// replays what the client missed and goes on. It reports false when the id
// names no stream the hub can resume (the caller opens a plain standalone
// stream).
func (f *httpFront) resume(w http.ResponseWriter, r *http.Request, hs *httpSession, lastID string) bool {
	stream, n, ok := sse.ParseID(lastID)
	if !ok || stream == standaloneStream {
		return false
	}
	hs.mu.Lock()
	p := hs.streams[stream]
	attached := p != nil && p.attached
	var paused *upstream.Pause
	if p != nil && !attached {
		p.attached = true
		paused, p.pause = p.pause, nil
	}
	hs.mu.Unlock()
	switch {
	case p == nil:
		rpcHTTPError(w, http.StatusNotFound, "no stream to resume: it ended, or the session forgot it")
		return true
	case attached:
		rpcHTTPError(w, http.StatusConflict, "that stream is still open")
		return true
	}
	if paused != nil {
		paused.Resume() // the client's reconnect, relayed to the upstream
	}
	ev := &sse.Answer{W: w, Log: p.log, RetryMs: retryMs}
	ev.Start(false)
	ids, data := p.log.After(n)
	for i := range ids {
		sse.WriteEventID(w, ids[i], data[i])
	}
	ev.Flush()
	f.pumpAnswer(w, r, hs, p, ev)
	return true
}

// pumpAnswer writes a POST's events and then its answer on ev until the
// answer is written (true) or the client goes away (false: the stream is
// kept for another resume).
func (f *httpFront) pumpAnswer(w http.ResponseWriter, r *http.Request, hs *httpSession, p *postWait, ev *sse.Answer) bool {
	defer func() {
		hs.mu.Lock()
		p.attached = false
		hs.mu.Unlock()
	}()
	for {
		select {
		case msg := <-p.events:
			if len(msg) == 0 {
				if hs.pauseStream(p, ev) {
					return false // the upstream paused again
				}
				continue
			}
			ev.Event(msg)
			ev.Flush()
		case data, ok := <-p.final:
			if !ok {
				return true // the session closed
			}
			ev.Final(p.events, data)
			hs.streamDone(p)
			return true
		case <-r.Context().Done():
			return false
		}
	}
}

// Paused implements upstream.PauseRelay: the pause of the upstream's
// stream of a call is relayed to a session-era streamable HTTP client
// that knows of such pauses (2025-11-25) and waits for that call's answer
// on a stream it can resume. Anyone else (stdio, legacy SSE and 2026-07-28
// clients, older clients, a code-mode script's inner calls) waits in the
// hub for the upstream's retry delay.
func (r *callRef) Paused(up *upstream.Pause) bool {
	if r.inner || r.s.stateless != nil {
		return false
	}
	hs, ok := r.s.out.(*httpSession)
	if !ok || hs.legacy {
		return false
	}
	if ss := r.s.ss.Load(); ss == nil || ss.InitializeParams() == nil || !era.Polls(ss.InitializeParams().ProtocolVersion) {
		return false
	}
	return hs.pause(r.id, up)
}

// pause records the upstream's pause on the POST waiting for request id
// and wakes whoever writes its stream (an empty message: pauseStream). It
// reports false when no POST waits, or its queue is full.
func (hs *httpSession) pause(id []byte, up *upstream.Pause) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	p := hs.pending[canonicalID(id)]
	if p == nil || hs.closed {
		return false
	}
	select {
	case p.events <- nil:
		p.pause = up
		return true
	default:
		return false
	}
}

// pauseStream ends the stream ev writes for p when its upstream's stream
// is paused and not resumed yet: an event with the upstream's retry tells
// the client where it is and when to come back. It reports whether it
// did; the caller then lets go of the stream and ends the response, which
// sends the event.
func (hs *httpSession) pauseStream(p *postWait, ev *sse.Answer) bool {
	hs.mu.Lock()
	up := p.pause
	hs.mu.Unlock()
	return up != nil && ev.Pause(up.Retry)
}
