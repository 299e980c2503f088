// Package sse writes the Server-Sent Events of MCP's streamable HTTP
// transport as a server: message events, with ids on a resumable stream,
// the priming event that opens one (an id and the retry delay, no data),
// the log of numbered events a client's GET with Last-Event-ID replays
// (SEP-1699; the session era only), and the answer to a POST that turns
// from JSON into an event stream when a message must go before it. It
// knows nothing of sessions or of what the messages say: the hub's HTTP
// front wires it in. Reading event streams is the upstream links' business
// (package upstream).
package sse

import (
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxReplay bounds the events a Log keeps for a resume.
const MaxReplay = 256

// logged is an event written on a stream, kept for a resume.
type logged struct {
	seq  uint64
	data []byte
}

// Log is what one stream wrote, numbered, the last MaxReplay events kept.
// Its event ids are "<name>:<n>". It is safe for concurrent use.
type Log struct {
	name string

	mu  sync.Mutex // guards following
	seq uint64
	log []logged
}

// NewLog returns the log of the stream name (no ':' in it).
func NewLog(name string) *Log { return &Log{name: name} }

// Name returns the stream's name.
func (l *Log) Name() string { return l.name }

// Add numbers data and keeps it; it returns the event's id.
func (l *Log) Add(data []byte) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if len(l.log) == MaxReplay {
		l.log = append(l.log[:0], l.log[1:]...)
	}
	l.log = append(l.log, logged{seq: l.seq, data: data})
	return l.id(l.seq)
}

// PrimingID is the id of a priming event: the stream's current position.
func (l *Log) PrimingID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.id(l.seq)
}

// Mark advances the stream's position without an event and returns its
// id: the id of a pause's event (Answer.Pause), so that a client that
// counts a resume without a new position as no progress (go-sdk gives up
// after a few) sees each pause of a long call as progress.
func (l *Log) Mark() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return l.id(l.seq)
}

// After returns the kept events numbered after n, with their ids.
func (l *Log) After(n uint64) (ids []string, data [][]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.log {
		if e.seq > n {
			ids = append(ids, l.id(e.seq))
			data = append(data, e.data)
		}
	}
	return ids, data
}

func (l *Log) id(n uint64) string { return l.name + ":" + strconv.FormatUint(n, 10) }

// ParseID splits an event id a Log made into its stream and number.
func ParseID(id string) (stream string, n uint64, ok bool) {
	stream, num, found := strings.Cut(id, ":")
	if !found || stream == "" {
		return "", 0, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	return stream, n, err == nil
}

// WritePriming writes a priming event: the stream's position id and the
// reconnection delay retryMs, no data.
func WritePriming(w io.Writer, id string, retryMs int32) {
	_, _ = io.WriteString(w, "id: "+id+"\nretry: "+strconv.Itoa(int(retryMs))+"\ndata: \n\n")
}

// WriteEvent writes a message as an event without an id.
func WriteEvent(w io.Writer, data []byte) {
	buf := make([]byte, 0, len(data)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	_, _ = w.Write(buf)
}

// WriteEventID writes a message as an event with an id.
func WriteEventID(w io.Writer, id string, data []byte) {
	buf := make([]byte, 0, len(data)+len(id)+32)
	buf = append(buf, "id: "...)
	buf = append(buf, id...)
	buf = append(buf, "\nevent: message\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	_, _ = w.Write(buf)
}

// Answer answers a POST as JSON until a message must go before the
// answer: then the response turns into an event stream. Its events carry
// ids when it has a Log (or gets one from Logs as it turns into a
// stream): a resumable stream, which opens with a priming event.
type Answer struct {
	W http.ResponseWriter
	// Log numbers the events of a resumable stream; nil: events carry no
	// id, unless Logs gives the stream one when the answer turns into it.
	Log  *Log
	Logs Logs

	flusher http.Flusher
	// RetryMs is the reconnection delay a priming event asks for.
	RetryMs   int32
	streaming bool
}

// Logs gives a stream its Log when an Answer turns into one (an interface
// rather than a func: a POST's waiter implements it, where a closure would
// cost an allocation per request).
type Logs interface {
	NewLog() *Log
}

// Streaming reports whether the response is an event stream.
func (a *Answer) Streaming() bool { return a.streaming }

// Start turns the response into an event stream, with a priming event
// when asked and the stream is resumable.
func (a *Answer) Start(priming bool) {
	a.streaming = true
	a.W.Header().Set("Content-Type", "text/event-stream")
	a.W.Header().Set("Cache-Control", "no-cache")
	a.W.WriteHeader(http.StatusOK)
	a.flusher, _ = a.W.(http.Flusher)
	if priming && a.Log != nil {
		WritePriming(a.W, a.Log.PrimingID(), a.RetryMs)
	}
}

// Event writes a message as an event, turning the response into an event
// stream first.
func (a *Answer) Event(data []byte) {
	if !a.streaming {
		if a.Logs != nil {
			a.Log = a.Logs.NewLog()
		}
		a.Start(true)
	}
	if a.Log != nil {
		WriteEventID(a.W, a.Log.Add(data), data)
		return
	}
	WriteEvent(a.W, data)
}

// Final writes the answer after the messages queued before it on events
// (an empty one is no message: a writer's wake-up, skipped): as the last
// event when the answer is an event stream (it reports true), else it
// leaves the response to the caller (false).
func (a *Answer) Final(events <-chan []byte, data []byte) bool {
	for drained := false; !drained; {
		select {
		case msg := <-events:
			if len(msg) > 0 {
				a.Event(msg)
			}
		default:
			drained = true
		}
	}
	if !a.streaming {
		return false
	}
	a.Event(data)
	a.Flush()
	return true
}

// Pause ends the answer before it is written, as a server that polls does
// (SEP-1699): the response turns into a resumable event stream if it is
// not one yet, and an event with a new position of the stream (Mark) asks
// the client to resume it after retry (whole milliseconds). The caller
// then ends the response, which sends the event: not flushed here, so the
// client cannot come back before the caller let go of the stream. It
// reports false, writing nothing, when the stream cannot be resumed (no
// Log).
func (a *Answer) Pause(retry time.Duration) bool {
	if !a.streaming && a.Log == nil && a.Logs != nil {
		a.Log = a.Logs.NewLog()
	}
	if a.Log == nil {
		return false
	}
	if !a.streaming {
		a.Start(false)
	}
	WritePriming(a.W, a.Log.Mark(), int32(min(max(retry.Milliseconds(), 0), math.MaxInt32)))
	return true
}

// Flush sends what was written.
func (a *Answer) Flush() {
	if a.flusher != nil {
		a.flusher.Flush()
	}
}
