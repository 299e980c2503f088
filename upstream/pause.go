package upstream

import (
	"sync"
	"time"
)

// A server that polls (SEP-1699) closes a call's response stream before
// the answer, after an event that says where the stream was and how long
// to wait (retry) before resuming it with GET and Last-Event-ID; the spec
// says the client MUST wait that long. When the hub's client of that call
// can resume a stream the same way (a session-era streamable HTTP client
// of the hub), the hub relays the disconnect instead of hiding it: it
// closes the client's stream after an event with the upstream's retry, and
// resumes the upstream's stream when that client comes back, its
// reconnect relayed, or after the retry at the latest. The pacing is then
// the client's, which was told the server's retry; every other client's
// call waits the retry in the hub, as before.

// Pause is a request's response stream the upstream closed before the
// answer, waiting to be resumed.
type Pause struct {
	// Retry is the delay the upstream asked for before the resume.
	Retry time.Duration

	once sync.Once
	now  chan struct{}
}

func newPause(retry time.Duration) *Pause {
	return &Pause{Retry: retry, now: make(chan struct{})}
}

// Resume resumes the upstream's stream now: the client the pause was
// relayed to came back. Later calls do nothing.
func (p *Pause) Resume() { p.once.Do(func() { close(p.now) }) }

// PauseRelay is implemented by the tag of a request ([WithTag],
// [Conn.Start]) whose client may be told of a pause of its response
// stream.
type PauseRelay interface {
	// Paused is called, from the link's goroutine (it must not block),
	// when the upstream closed the request's response stream before its
	// answer. It reports whether the pause was relayed to the client:
	// then the stream is resumed at p.Resume or after p.Retry, whichever
	// comes first; otherwise after p.Retry.
	Paused(p *Pause) bool
}

// paused offers the pause of request id's stream to its tag (the sink
// side of the link).
func (c *Conn) paused(id []byte, p *Pause) bool {
	r, ok := c.Tag(id).(PauseRelay)
	return ok && r.Paused(p)
}

// pause waits before resuming request id's stream: retry, or less when the
// pause was relayed and the client came back first. It reports false when
// the link closed meanwhile.
func (l *streamLink) pause(id []byte, retry time.Duration) bool {
	p := newPause(retry)
	if !l.s.paused(id, p) {
		return sleepCtx(l.ctx, retry)
	}
	t := time.NewTimer(retry)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.now:
	case <-l.ctx.Done():
		return false
	}
	return true
}
