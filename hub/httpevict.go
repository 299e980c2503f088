package hub

import (
	"fmt"
	"time"
)

// The session table's cap is kept by eviction: a new client's session
// replaces the least recently used idle one (no request being handled or
// waiting for its response, no open stream), so idle sessions that never
// said goodbye cannot lock new clients out. Only when every session is busy
// does a new client get 503.

// begin marks a request of the client as being handled, so that the session
// is not idle (and cannot be evicted) until end. It reports false when the
// session is closed: the client must initialize again.
func (hs *httpSession) begin() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closed {
		return false
	}
	hs.active++
	hs.lastActive = time.Now()
	return true
}

// end undoes begin.
func (hs *httpSession) end() {
	hs.mu.Lock()
	hs.active--
	hs.lastActive = time.Now()
	hs.mu.Unlock()
}

// idleLocked reports whether nothing of the session is going on: no request
// being handled or waiting for its response, no open stream. hs.mu is held.
func (hs *httpSession) idleLocked() bool {
	return hs.active == 0 && len(hs.pending) == 0 && hs.stream == nil
}

// shortID is a session id shortened for logs: enough to tell sessions
// apart, not enough to use one.
func shortID(id string) string {
	if len(id) <= 8 {
		return id
	}
	return id[:8] + "…"
}

// errSubjectSessions is errTooManySessions for one token subject at its
// own cap (HTTPOptions.MaxSessionsPerSubject) with every session busy.
var errSubjectSessions = fmt.Errorf("%w of this user", errTooManySessions)

// makeRoomLocked makes room for a new session of the token subject sub
// ("" without auth), and returns the session it evicted (the caller closes
// it) and the cap that made it go. With auth, a subject at its own cap
// replaces its own least recently used idle session, or gets
// errSubjectSessions; at the hub's cap, the subject's own idle sessions go
// first, then anyone's, else errTooManySessions. f.mu is held.
func (f *httpFront) makeRoomLocked(sub string) (*httpSession, time.Duration, int, error) {
	own := func(hs *httpSession) bool { return hs.sub == sub }
	if f.rs != nil {
		n := 0
		for _, hs := range f.sessions {
			if hs.sub == sub {
				n++
			}
		}
		if n >= f.opts.MaxSessionsPerSubject {
			if hs, idle := f.evictLocked(own); hs != nil {
				return hs, idle, f.opts.MaxSessionsPerSubject, nil
			}
			return nil, 0, 0, errSubjectSessions
		}
	}
	if len(f.sessions) < f.opts.MaxSessions {
		return nil, 0, 0, nil
	}
	if f.rs != nil {
		if hs, idle := f.evictLocked(own); hs != nil {
			return hs, idle, f.opts.MaxSessions, nil
		}
	}
	if hs, idle := f.evictLocked(nil); hs != nil {
		return hs, idle, f.opts.MaxSessions, nil
	}
	return nil, 0, 0, errTooManySessions
}

// evictLocked picks the least recently used idle session that match
// accepts (nil: any), marks it closed (so no request can start on it any
// more) and takes it out of the table; the caller closes it. It returns
// nil when no such session is idle. f.mu is held.
func (f *httpFront) evictLocked(match func(*httpSession) bool) (*httpSession, time.Duration) {
	// A request may begin on the chosen session between the scan and the
	// claim (begin takes only the session's lock): then choose again.
	for range 3 {
		var lru *httpSession
		var lruAt time.Time
		for _, hs := range f.sessions {
			if match != nil && !match(hs) {
				continue
			}
			hs.mu.Lock()
			if !hs.closed && hs.idleLocked() && (lru == nil || hs.lastActive.Before(lruAt)) {
				lru, lruAt = hs, hs.lastActive
			}
			hs.mu.Unlock()
		}
		if lru == nil {
			return nil, 0
		}
		lru.mu.Lock()
		if !lru.closed && lru.idleLocked() {
			lru.closed = true
			idle := time.Since(lru.lastActive)
			lru.mu.Unlock()
			delete(f.sessions, lru.id)
			return lru, idle
		}
		lru.mu.Unlock()
	}
	return nil, 0
}
