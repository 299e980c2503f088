package upstream

import (
	"bufio"
	"bytes"
	"errors"
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

// sseReader parses a text/event-stream. Lines longer than max are drained
// and reported as *framing.Oversize (with the JSON-RPC id found in them, if any).
type sseReader struct {
	r   *bufio.Reader
	max int
}

func newSSEReader(r io.Reader, max int) *sseReader {
	if max <= 0 {
		max = framing.DefaultMax
	}
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), max: max}
}

// line returns the next line without its ending.
func (s *sseReader) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(buf)+len(chunk) > s.max+16 {
			var sc framing.IDScanner
			sc.Feed(buf)
			sc.Feed(chunk)
			size := len(buf) + len(chunk)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = s.r.ReadSlice('\n')
				sc.Feed(chunk)
				size += len(chunk)
			}
			if err != nil {
				return nil, err
			}
			return nil, &framing.Oversize{Size: size, ID: sc.ID()}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf, chunk...)
			continue
		}
		buf = append(buf, chunk...)
		if err != nil && len(buf) == 0 {
			return nil, err
		}
		if len(buf) > 0 && buf[len(buf)-1] == '\n' {
			buf = buf[:len(buf)-1]
		}
		if len(buf) > 0 && buf[len(buf)-1] == '\r' {
			buf = buf[:len(buf)-1]
		}
		return buf, err
	}
}

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
