package upstream

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/framing"
)

// sseEvent is one server-sent event that carries data.
type sseEvent struct {
	event string // "" means "message"
	data  []byte // the caller's to keep
}

// sseReader parses a text/event-stream. Its lines follow the stdio
// framing's rules: a line longer than the cap is never held in memory, it is
// reported as *framing.Oversize as soon as the JSON-RPC id in it is known (or
// at its end) and drained before the next line; a line that runs past
// framing.DrainFactor × the cap without a newline ends the stream with
// framing.ErrLineTooLong.
//
// Lines are read in place (framing.Reader.NextView) from a pooled buffer and
// an event's data is gathered in a buffer the reader reuses: the one
// allocation per event is the copy of its data handed to the caller. The
// stream's last event id and retry delay are kept as the stream goes.
type sseReader struct {
	lines  *framing.Reader
	data   []byte // the data of the event being read
	event  []byte // its event type
	lastID []byte // the last event id seen, per the SSE spec
	idSeen bool   // an id field was seen on this stream
	retry  time.Duration
}

// newSSEReader reads r; lastID and retry carry over from the stream this
// one resumes. Release must be called when the stream is done.
func newSSEReader(r io.Reader, max int, lastID string, retry time.Duration) *sseReader {
	if max <= 0 {
		max = framing.DefaultMax
	}
	s := ssePool.Get().(*sseReader)
	s.lines = framing.NewLineReader(r, max+16) // +16: room for "data: "
	s.lastID, s.idSeen, s.retry = append(s.lastID[:0], lastID...), false, retry
	return s
}

var ssePool = sync.Pool{New: func() any { return new(sseReader) }}

// release returns the reader and its buffers to their pools.
func (s *sseReader) release() {
	s.lines.Release()
	s.lines = nil
	if cap(s.data) > 64<<10 {
		s.data = nil
	}
	ssePool.Put(s)
}

// lastEventID returns the id to resume the stream from ("" for none).
func (s *sseReader) lastEventID(before string) string {
	if !s.idSeen {
		return before
	}
	return string(s.lastID)
}

// next returns the next event that carries data. Events without data still
// update the last event id and the retry delay.
func (s *sseReader) next() (sseEvent, error) {
	s.data, s.event = s.data[:0], s.event[:0]
	hasData := false
	for {
		l, err := s.lines.NextView()
		if err != nil && l == nil {
			return sseEvent{}, err
		}
		if len(l) == 0 {
			if hasData {
				return s.emit(), nil
			}
			s.event = s.event[:0]
			if err != nil {
				return sseEvent{}, err
			}
			continue
		}
		if l[0] != ':' {
			field, value, _ := bytes.Cut(l, []byte{':'})
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
			switch string(field) { // no allocation: a comparison
			case "event":
				s.event = append(s.event[:0], value...)
			case "data":
				if hasData {
					s.data = append(s.data, '\n')
				}
				s.data = append(s.data, value...)
				hasData = true
			case "id":
				if bytes.IndexByte(value, 0) < 0 {
					s.lastID, s.idSeen = append(s.lastID[:0], value...), true
				}
			case "retry":
				if ms, perr := strconv.Atoi(string(value)); perr == nil && ms >= 0 {
					s.retry = time.Duration(ms) * time.Millisecond
				}
			}
		}
		if err != nil {
			if hasData {
				return s.emit(), nil
			}
			return sseEvent{}, err
		}
	}
}

// nextFor returns the next event, reporting to s every oversize event it
// drains on the way; the error ends the stream.
func (s *sseReader) nextFor(k sink) (sseEvent, error) {
	for {
		ev, err := s.next()
		var o *framing.Oversize
		if errors.As(err, &o) {
			k.oversize(o)
			continue
		}
		return ev, err
	}
}

// emit hands out the gathered event.
func (s *sseReader) emit() sseEvent {
	ev := sseEvent{data: bytes.Clone(s.data)}
	if len(s.event) > 0 && string(s.event) != "message" {
		ev.event = string(s.event)
	}
	return ev
}
