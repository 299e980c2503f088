package upstream

import (
	"bytes"
	"github.com/mcp-hub/mcp-hub/internal/framing"
	"io"
	"strconv"
	"time"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	event    string // "" means "message"
	data     []byte
	id       string
	hasID    bool
	retry    time.Duration
	hasRetry bool
}

// sseReader parses a text/event-stream. Its lines follow the stdio
// framing's rules: a line longer than the cap is never held in memory, it is
// reported as *framing.Oversize as soon as the JSON-RPC id in it is known (or
// at its end) and drained before the next line; a line that runs past
// framing.DrainFactor × the cap without a newline ends the stream with
// framing.ErrLineTooLong.
type sseReader struct {
	lines *framing.Reader
}

func newSSEReader(r io.Reader, max int) *sseReader {
	if max <= 0 {
		max = framing.DefaultMax
	}
	return &sseReader{lines: framing.NewLineReader(r, max+16)} // +16: room for "data: "
}

// line returns the next line without its ending.
func (s *sseReader) line() ([]byte, error) { return s.lines.Next() }

// next returns the next event that carries data. Events without data still
// update id and retry, which are reported with the next data event.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data [][]byte
	for {
		l, err := s.line()
		if err != nil && l == nil {
			return ev, err
		}
		if len(l) == 0 {
			if len(data) > 0 {
				ev.data = bytes.Join(data, []byte{'\n'})
				return ev, nil
			}
			ev.event = ""
			if err != nil {
				return ev, err
			}
			continue
		}
		if l[0] != ':' {
			field, value, _ := bytes.Cut(l, []byte{':'})
			value = bytes.TrimPrefix(value, []byte{' '})
			switch string(field) {
			case "event":
				ev.event = string(value)
			case "data":
				data = append(data, bytes.Clone(value))
			case "id":
				if !bytes.Contains(value, []byte{0}) {
					ev.id, ev.hasID = string(value), true
				}
			case "retry":
				if ms, perr := strconv.Atoi(string(value)); perr == nil && ms >= 0 {
					ev.retry, ev.hasRetry = time.Duration(ms)*time.Millisecond, true
				}
			}
		}
		if err != nil {
			if len(data) > 0 {
				ev.data = bytes.Join(data, []byte{'\n'})
				return ev, nil
			}
			return ev, err
		}
	}
}
