package hub

// Sessions of the HTTP front: a client session over streamable HTTP or
// legacy SSE, its streams and pending POSTs, its lifetime (created, found
// by its id, closed, reaped when idle).

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/sse"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// httpSession is one client session over streamable HTTP or legacy SSE.
type httpSession struct {
	front  *httpFront
	id     string
	legacy bool   // legacy SSE: everything goes to the one stream
	sub    string // the token subject that opened it (auth), which alone may use it
	s      *session

	mu         sync.Mutex // guards following
	pending    map[string]*postWait
	stream     *sseStream           // the standalone GET stream (or the legacy stream)
	backlog    [][]byte             // messages waiting for a stream
	glog       *sse.Log             // the standalone stream's numbered events, for a resume
	streams    map[string]*postWait // POST answers that are event streams, by stream name (resume.go)
	streamSeq  uint64
	active     int // requests being handled (see begin)
	lastActive time.Time
	closed     bool
}

// maxBacklog bounds messages kept for a client without a GET stream.
const maxBacklog = 256

// postWait is a POST waiting for its response, and for the messages that
// belong to its request.
type postWait struct {
	hs     *httpSession
	events chan []byte // related notifications and requests (dropped when full)
	final  chan []byte // the response
	// log numbers the events once the answer is an event stream; attached
	// says a response is writing them (the POST's, or a resuming GET's).
	// Guarded by the session's mu.
	log      *sse.Log
	attached bool
	// pause is the upstream's pause of the call's stream, relayed to the
	// client and resumed when it comes back (resume.go); guarded by the
	// session's mu.
	pause *upstream.Pause
}

// sseStream is an open text/event-stream to a client.
type sseStream struct {
	ch      chan []byte
	dropped int
}

func (st *sseStream) push(b []byte) bool {
	select {
	case st.ch <- b:
		return true
	default:
		st.dropped++
		return false
	}
}

func (hs *httpSession) touch() {
	hs.mu.Lock()
	hs.lastActive = time.Now()
	hs.mu.Unlock()
}

// send routes a message: a response to the POST that asked, a related
// message to that POST's stream, anything else to the standalone stream
// (kept for a while when the client has none open).
func (hs *httpSession) send(m outMsg) error {
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		return errSessionClosed
	}
	if !hs.legacy {
		if m.respTo != nil {
			key := canonicalID(m.respTo)
			if p := hs.pending[key]; p != nil {
				delete(hs.pending, key)
				hs.mu.Unlock()
				p.final <- m.data
				return nil
			}
		} else if m.related != nil {
			if p := hs.pending[canonicalID(m.related)]; p != nil {
				hs.mu.Unlock()
				select {
				case p.events <- m.data:
				default: // a flood; the response still gets through
				}
				return nil
			}
		}
		if m.respTo != nil {
			hs.mu.Unlock()
			return nil // its POST is gone: the client stopped waiting
		}
	}
	st := hs.stream
	if st == nil {
		if len(hs.backlog) >= maxBacklog {
			hs.backlog = hs.backlog[1:]
		}
		hs.backlog = append(hs.backlog, m.data)
		hs.mu.Unlock()
		return nil
	}
	hs.mu.Unlock()
	if !st.push(m.data) {
		hs.front.logger.Warn("client stream full; message dropped", "session", hs.id)
	}
	return nil
}

var errSessionClosed = errors.New("session closed")

// newHTTPSession registers a session of the token subject sub ("" without
// auth); the caller must call end on it once its first request is handled
// (or its stream is open). At the session cap, or sub's cap (auth), the
// least recently used idle session is closed to make room, sub's own
// first (see makeRoomLocked); when none may go, it returns
// errTooManySessions.
func (f *httpFront) newHTTPSession(ctx context.Context, legacy bool, sub string) (*httpSession, error) {
	hs := &httpSession{front: f, id: rand.Text(), legacy: legacy, sub: sub, pending: map[string]*postWait{}, active: 1, lastActive: time.Now()}
	f.mu.Lock()
	evicted, idleFor, limit, err := f.makeRoomLocked(sub)
	if err != nil {
		f.mu.Unlock()
		return nil, err
	}
	f.sessions[hs.id] = hs
	f.mu.Unlock()
	if evicted != nil {
		f.logger.Info("session limit reached: closed the least recently used idle session for a new client (it gets 404 and initializes again)",
			"session", shortID(evicted.id), "idle", idleFor.Round(time.Second), "limit", limit)
		f.closeSession(evicted, true)
	}
	s, err := f.h.newSession(context.WithoutCancel(ctx), hs.id, hs)
	if err != nil {
		f.dropSession(hs)
		return nil, err
	}
	hs.s = s
	kind := "streamable"
	if legacy {
		kind = "sse"
	}
	f.h.metrics.sessionOpened(kind)
	return hs, nil
}

var errTooManySessions = errors.New("too many sessions")

// subjectOf is the token subject of r ("" without auth).
func subjectOf(r *http.Request) string {
	if ti := tokenInfo(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// sessionRefused answers an initialize that got no session.
func (f *httpFront) sessionRefused(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errSubjectSessions):
		w.Header().Set("Retry-After", "5")
		rpcHTTPError(w, http.StatusServiceUnavailable, fmt.Sprintf(
			"you have %d sessions with this hub, all of them busy (the most one user may have); close one or try again shortly", f.opts.MaxSessionsPerSubject))
	case errors.Is(err, errTooManySessions):
		w.Header().Set("Retry-After", "5")
		rpcHTTPError(w, http.StatusServiceUnavailable, "the hub has too many sessions, all of them busy; try again shortly")
	default:
		rpcHTTPError(w, http.StatusInternalServerError, err.Error())
	}
}

func (f *httpFront) session(id string) *httpSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessions[id]
}

// sessionFor returns the session id names when the request's principal
// opened it (with auth, a session belongs to its token's subject; another
// one gets 404 as for an unknown session), and records the request's
// token for it.
func (f *httpFront) sessionFor(r *http.Request, id string) *httpSession {
	hs := f.session(id)
	if hs == nil {
		return nil
	}
	ti := tokenInfo(r.Context())
	if f.rs != nil && (ti == nil || ti.UserID != hs.sub) {
		return nil
	}
	if ti != nil && hs.s != nil {
		hs.s.token.Store(ti)
	}
	return hs
}

func (f *httpFront) dropSession(hs *httpSession) {
	f.mu.Lock()
	_, was := f.sessions[hs.id]
	delete(f.sessions, hs.id)
	f.mu.Unlock()
	f.closeSession(hs, was)
}

// closeSession closes a session taken out of the table; counted says it was
// in the table (and in the session metrics).
func (f *httpFront) closeSession(hs *httpSession, counted bool) {
	hs.mu.Lock()
	hs.closed = true
	pending := hs.pending
	hs.pending = map[string]*postWait{}
	hs.mu.Unlock()
	for _, p := range pending {
		close(p.final)
	}
	if hs.s != nil {
		hs.s.close()
	}
	if counted && hs.s != nil {
		kind := "streamable"
		if hs.legacy {
			kind = "sse"
		}
		f.h.metrics.sessionClosed(kind)
	}
}

// janitor closes sessions idle for longer than the idle timeout. It exits
// when the hub closes (then every session is closed).
func (f *httpFront) janitor() {
	t := time.NewTicker(min(f.opts.SessionIdleTimeout/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-f.h.stop:
			f.mu.Lock()
			all := make([]*httpSession, 0, len(f.sessions))
			for _, hs := range f.sessions {
				all = append(all, hs)
			}
			f.mu.Unlock()
			for _, hs := range all {
				f.dropSession(hs)
			}
			return
		case <-t.C:
		}
		f.mu.Lock()
		var idle []*httpSession
		for _, hs := range f.sessions {
			hs.mu.Lock()
			if hs.idleLocked() && time.Since(hs.lastActive) > f.opts.SessionIdleTimeout {
				idle = append(idle, hs)
			}
			hs.mu.Unlock()
		}
		f.mu.Unlock()
		for _, hs := range idle {
			f.logger.Info("closing idle session", "session", shortID(hs.id))
			f.dropSession(hs)
		}
	}
}
