package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
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

// sseReader parses a text/event-stream. A line longer than max is never
// held in memory: it is reported as *framing.Oversize as soon as the JSON-RPC
// id in it is known (or at its end), and drained before the next line. A line
// that runs past framing.DrainFactor × max without a newline ends the stream
// with framing.ErrLineTooLong, the same rules as the stdio framing.
type sseReader struct {
	r        *bufio.Reader
	max      int
	maxDrain int64
	draining bool  // in a line reported early: skip its rest first
	drained  int64 // bytes of that line so far
	err      error // sticky: the stream is over
}

func newSSEReader(r io.Reader, max int) *sseReader {
	if max <= 0 {
		max = framing.DefaultMax
	}
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), max: max, maxDrain: framing.DrainFactor * int64(max)}
}

// line returns the next line without its ending.
func (s *sseReader) line() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.draining {
		if err := s.drainRest(); err != nil {
			s.err = err
			return nil, err
		}
	}
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(buf)+len(chunk) > s.max+16 {
			err := s.drain(buf, chunk, err)
			var o *framing.Oversize
			if !errors.As(err, &o) {
				s.err = err
			}
			return nil, err
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

// drain reads an oversize line: to its end, or until its id is known.
func (s *sseReader) drain(buf, chunk []byte, err error) error {
	var sc framing.IDScanner
	sc.Feed(buf)
	sc.Feed(chunk)
	size := int64(len(buf) + len(chunk))
	for errors.Is(err, bufio.ErrBufferFull) {
		if id := sc.ID(); id != nil {
			s.draining, s.drained = true, size
			return &framing.Oversize{Size: int(size), ID: id, Partial: true}
		}
		if size > s.maxDrain {
			return fmt.Errorf("%w (%d bytes)", framing.ErrLineTooLong, s.maxDrain)
		}
		chunk, err = s.r.ReadSlice('\n')
		sc.Feed(chunk)
		size += int64(len(chunk))
	}
	if err != nil {
		return err
	}
	return &framing.Oversize{Size: int(size), ID: sc.ID()}
}

// drainRest skips the rest of a line reported early.
func (s *sseReader) drainRest() error {
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.drained += int64(len(chunk))
		if err == nil {
			s.draining = false
			return nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
		if s.drained > s.maxDrain {
			return fmt.Errorf("%w (%d bytes)", framing.ErrLineTooLong, s.maxDrain)
		}
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
