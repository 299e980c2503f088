package hub

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Resumable event streams of the session era's streamable HTTP (SEP-1699;
// the stateless era has none). Every event the hub writes on a session's
// streams carries an id, "<stream>:<n>"; a stream opens with a priming
// event (an id, the retry delay, no data), so a client whose connection
// breaks knows where it was and when to come back. It comes back with a
// GET that names the last id it saw in Last-Event-ID: the hub replays what
// followed and, for the answer to a POST, goes on with the rest of that
// request's stream, its answer last. A request whose client went away is
// not cancelled (a disconnect is not a cancellation): what it sends after
// is kept for the resume.

// retryMs is the reconnection delay the hub's priming events ask for.
const retryMs = 1000

// maxReplay bounds the events a stream keeps for a resume.
const maxReplay = 256

// standaloneStream names the session's standalone GET stream in event ids.
const standaloneStream = "g"

// loggedEvent is an event written on a stream, kept for a resume.
type loggedEvent struct {
	seq  uint64
	data []byte
}

// eventLog is what a stream wrote, numbered, the last maxReplay kept.
type eventLog struct {
	mu   sync.Mutex
	name string
	seq  uint64
	log  []loggedEvent
}

// add numbers data and keeps it; it returns the event's id.
func (l *eventLog) add(data []byte) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if len(l.log) == maxReplay {
		l.log = append(l.log[:0], l.log[1:]...)
	}
	l.log = append(l.log, loggedEvent{seq: l.seq, data: data})
	return l.name + ":" + strconv.FormatUint(l.seq, 10)
}

// primingID is the id of a priming event: the stream's current position.
func (l *eventLog) primingID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.name + ":" + strconv.FormatUint(l.seq, 10)
}

// after returns the kept events numbered after n, with their ids.
func (l *eventLog) after(n uint64) (ids []string, data [][]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.log {
		if e.seq > n {
			ids = append(ids, l.name+":"+strconv.FormatUint(e.seq, 10))
			data = append(data, e.data)
		}
	}
	return ids, data
}

// parseEventID splits an event id the hub made into its stream and number.
func parseEventID(id string) (stream string, n uint64, ok bool) {
	stream, num, found := strings.Cut(id, ":")
	if !found || stream == "" {
		return "", 0, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	return stream, n, err == nil
}

// writePriming writes a priming event: the stream's position and the
// retry delay, no data.
func writePriming(w io.Writer, id string) {
	_, _ = io.WriteString(w, "id: "+id+"\nretry: "+strconv.Itoa(retryMs)+"\ndata: \n\n")
}

// writeEventID writes a message as an SSE event with an id.
func writeEventID(w io.Writer, id string, data []byte) {
	buf := make([]byte, 0, len(data)+len(id)+32)
	buf = append(buf, "id: "...)
	buf = append(buf, id...)
	buf = append(buf, "\nevent: message\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	_, _ = w.Write(buf)
}

// streamFor registers the event stream a POST's answer turned into and
// returns its log.
func (hs *httpSession) streamFor(p *postWait) *eventLog {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.streamSeq++
	p.log = &eventLog{name: "r" + strconv.FormatUint(hs.streamSeq, 10)}
	if hs.streams == nil {
		hs.streams = map[string]*postWait{}
	}
	hs.streams[p.log.name] = p
	return p.log
}

// streamDone forgets a POST's stream once its answer was written.
func (hs *httpSession) streamDone(p *postWait) {
	if p.log == nil {
		return
	}
	hs.mu.Lock()
	delete(hs.streams, p.log.name)
	hs.mu.Unlock()
}

// resume serves a GET with Last-Event-ID: a POST's stream goes on where
// the client lost it, to the end of its answer; the standalone stream
// replays what the client missed and goes on. It reports false when the id
// names no stream the hub can resume (the caller opens a plain standalone
// stream).
func (f *httpFront) resume(w http.ResponseWriter, r *http.Request, hs *httpSession, lastID string) bool {
	stream, n, ok := parseEventID(lastID)
	if !ok || stream == standaloneStream {
		return false
	}
	hs.mu.Lock()
	p := hs.streams[stream]
	attached := p != nil && p.attached
	if p != nil && !attached {
		p.attached = true
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
	ev := &eventWriter{w: w, log: p.log}
	ev.start(false)
	ids, data := p.log.after(n)
	for i := range ids {
		writeEventID(w, ids[i], data[i])
	}
	ev.flush()
	f.pumpAnswer(w, r, hs, p, ev)
	return true
}

// pumpAnswer writes a POST's events and then its answer on ev until the
// answer is written (true) or the client goes away (false: the stream is
// kept for another resume).
func (f *httpFront) pumpAnswer(w http.ResponseWriter, r *http.Request, hs *httpSession, p *postWait, ev *eventWriter) bool {
	defer func() {
		hs.mu.Lock()
		p.attached = false
		hs.mu.Unlock()
	}()
	for {
		select {
		case msg := <-p.events:
			ev.event(msg)
			ev.flush()
		case data, ok := <-p.final:
			if !ok {
				return true // the session closed
			}
			ev.final(p.events, data)
			hs.streamDone(p)
			return true
		case <-r.Context().Done():
			return false
		}
	}
}
