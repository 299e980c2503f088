// Package framing reads and writes newline-delimited JSON-RPC streams (the
// MCP stdio transport) with a size cap per message. It is shared by the
// hub's downstream stdio server and its stdio upstreams.
//
// Why not bufio.Scanner: a line over Scanner's cap ends the whole stream
// (bufio.ErrTooLong), while the hub must fail the one request an oversize
// message answers (its id is recovered while the line drains) and go on
// reading. Reader costs the same as Scanner on small messages: 10,000 lines
// of 80 bytes in 0.95 ms against 0.99 ms (BenchmarkReadLines*, 2 cores).
package framing

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMax is the default cap on one inbound message (16 MiB).
const DefaultMax = 16 << 20

// Reader reads newline-delimited messages with a size cap. A line over
// the cap is drained to its newline, never held in memory; its top-level "id"
// is recovered on the way so the one request it answers can be failed. As
// soon as that id is known the line is reported (see [Oversize.Partial]), so
// the request fails even while the line is still arriving. A line that runs
// past the drain limit without a newline ends the stream with
// [ErrLineTooLong]: nothing after it could ever be read.
type Reader struct {
	r        *bufio.Reader
	max      int
	maxDrain int64

	draining  bool   // in a reported oversize line: drain the rest first
	drained   int64  // bytes of that line so far
	err       error  // sticky: the stream is over
	keepEmpty bool   // return empty lines too (text/event-stream)
	scratch   []byte // NextView's line when it spans buffer fills
	pooled    bool   // from linePool: Release returns it
}

// DrainFactor times the cap is how long one oversize line may get before
// the stream is declared broken (1 GiB for the default cap).
const DrainFactor = 64

// ErrLineTooLong ends a stream with a line longer than the drain limit.
var ErrLineTooLong = errors.New("line exceeds the drain limit without a newline")

// NewReader returns a reader of newline-delimited messages of at most max
// bytes (DefaultMax when max <= 0) from r.
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMax
	}
	return &Reader{r: bufio.NewReaderSize(r, 256<<10), max: max, maxDrain: DrainFactor * int64(max)}
}

// linePool keeps line readers with their buffers: an HTTP upstream reads
// one short text/event-stream per request, and a fresh 16 KiB buffer per
// stream was most of what such a request allocated.
var linePool = sync.Pool{New: func() any {
	return &Reader{r: bufio.NewReaderSize(nil, 16<<10), keepEmpty: true, pooled: true}
}}

// maxKeptScratch bounds the scratch buffer a pooled reader keeps.
const maxKeptScratch = 256 << 10

// NewLineReader is NewReader for line-based formats where empty lines
// matter (text/event-stream): Next and NextView return them as empty,
// non-nil slices. The reader comes from a pool; Release returns it.
func NewLineReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMax
	}
	f := linePool.Get().(*Reader)
	f.r.Reset(r)
	f.max, f.maxDrain = max, DrainFactor*int64(max)
	return f
}

// Release returns a reader from NewLineReader to its pool; neither it nor
// a line it returned may be used afterwards. Release of a reader from
// NewReader does nothing.
func (f *Reader) Release() {
	if !f.pooled {
		return
	}
	f.r.Reset(nil)
	scratch := f.scratch[:0]
	if cap(scratch) > maxKeptScratch {
		scratch = nil
	}
	*f = Reader{r: f.r, keepEmpty: true, pooled: true, scratch: scratch}
	linePool.Put(f)
}

// Oversize describes a drained message that exceeded the cap.
type Oversize struct {
	Size int
	ID   []byte // raw top-level id, nil when none was found
	// Partial is set when the message was reported as soon as its id was
	// known: Size is what had arrived by then, and the reader drains the
	// rest before the next message.
	Partial bool
}

func (o *Oversize) Error() string {
	if o.Partial {
		return fmt.Sprintf("message of at least %d bytes exceeds the limit", o.Size)
	}
	return fmt.Sprintf("message of %d bytes exceeds the limit", o.Size)
}

// Next returns the next non-empty line without its line ending, in memory the
// caller owns (see NextView for a line read in place). An oversized line is reported as a *Oversize error; the reader
// stays usable. Other errors (io.EOF and ErrLineTooLong included) end the
// stream.
func (f *Reader) Next() ([]byte, error) { return f.next(false) }

// NextView is Next without the copy: the line is only valid until the next
// call (or Release). A line that fits the read buffer is returned in place.
func (f *Reader) NextView() ([]byte, error) { return f.next(true) }

// next reads the next line; view: in the read buffer or scratch.
func (f *Reader) next(view bool) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	if f.draining {
		if err := f.drainRest(); err != nil {
			f.err = err
			return nil, err
		}
	}
	var buf []byte
	if view {
		buf = f.scratch[:0]
	}
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(buf)+len(chunk) > f.max+2 { // +2: the line ending is not part of the message
			err := f.drain(buf, chunk, err)
			var o *Oversize
			if !errors.As(err, &o) {
				f.err = err
			}
			return nil, err
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf, chunk...)
			if view {
				f.scratch = buf
			}
			continue
		}
		switch {
		case view && len(buf) == 0:
			buf = chunk // in place: valid until the next read
		case buf == nil:
			buf = make([]byte, len(chunk))
			copy(buf, chunk)
		default:
			buf = append(buf, chunk...)
			if view {
				f.scratch = buf
			}
		}
		line := bytes.TrimRight(buf, "\r\n")
		if err != nil {
			if len(bytes.TrimSpace(line)) > 0 && errors.Is(err, io.EOF) {
				return line, nil // a final message without a newline
			}
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if f.keepEmpty {
				return line[:0], nil
			}
			buf = nil
			if view {
				buf = f.scratch[:0]
			}
			continue
		}
		return line, nil
	}
}

// drain reads an oversize line: to its end, or until its id is known.
func (f *Reader) drain(buf, chunk []byte, err error) error {
	var s IDScanner
	s.Feed(buf)
	s.Feed(chunk)
	size := int64(len(buf) + len(chunk))
	for errors.Is(err, bufio.ErrBufferFull) {
		if id := s.ID(); id != nil {
			f.draining, f.drained = true, size
			return &Oversize{Size: int(size), ID: id, Partial: true}
		}
		if size > f.maxDrain {
			return fmt.Errorf("%w (%d bytes)", ErrLineTooLong, f.maxDrain)
		}
		chunk, err = f.r.ReadSlice('\n')
		s.Feed(chunk)
		size += int64(len(chunk))
	}
	if err != nil {
		return err
	}
	return &Oversize{Size: int(size), ID: s.ID()}
}

// drainRest skips the rest of a line reported early.
func (f *Reader) drainRest() error {
	for {
		chunk, err := f.r.ReadSlice('\n')
		f.drained += int64(len(chunk))
		if err == nil {
			f.draining = false
			return nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
		if f.drained > f.maxDrain {
			return fmt.Errorf("%w (%d bytes)", ErrLineTooLong, f.maxDrain)
		}
	}
}

// IDScanner follows a JSON object in a stream, tracking only nesting and
// strings, and captures the raw value of its top-level "id" member.
type IDScanner struct {
	depth     int
	inStr     bool
	esc       bool
	phase     int // at depth 1: 0 expect key, 1 in key, 2 expect colon, 3 in value
	key       []byte
	capturing bool
	idVal     []byte
	found     bool
}

// ID returns the captured raw id, or nil.
func (s *IDScanner) ID() []byte {
	if !s.found || len(s.idVal) == 0 {
		return nil
	}
	return s.idVal
}

// Feed scans the next bytes of the stream. Once the id is found, nothing
// more is scanned.
func (s *IDScanner) Feed(b []byte) {
	if s.found {
		return
	}
	for _, c := range b {
		if s.inStr {
			if s.capturing && len(s.idVal) < 128 {
				s.idVal = append(s.idVal, c)
			}
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.depth == 1 && s.phase == 1 {
					s.phase = 2
				}
			default:
				if s.depth == 1 && s.phase == 1 && len(s.key) < 16 {
					s.key = append(s.key, c)
				}
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.phase == 0 {
				s.phase = 1
				s.key = s.key[:0]
				continue
			}
			if s.capturing {
				s.idVal = append(s.idVal, c)
			}
		case '{', '[':
			s.depth++
			if s.depth == 1 {
				s.phase = 0
			}
		case '}', ']':
			s.depth--
			if s.depth == 0 && s.capturing {
				s.capturing, s.found = false, true
				return
			}
		case ':':
			if s.depth == 1 && s.phase == 2 {
				s.phase = 3
				s.capturing = !s.found && string(s.key) == "id"
			}
		case ',':
			if s.depth == 1 {
				s.phase = 0
				if s.capturing {
					s.capturing, s.found = false, true
					return
				}
			}
		case ' ', '\t', '\r', '\n':
		default:
			if s.capturing && len(s.idVal) < 128 {
				s.idVal = append(s.idVal, c)
			}
		}
	}
}

// Writer writes newline-terminated messages to w from many goroutines.
// Messages are never interleaved. While one goroutine is writing, others
// queue their messages and return; the writing goroutine flushes the queue
// in one write ("group commit"), so a busy connection makes fewer syscalls
// and an idle one adds no delay.
type Writer struct {
	W io.Writer // the stream; set before first use

	mu       sync.Mutex // guards following
	buf      []byte     // queued bytes
	spare    []byte     // the buffer being written, reused once done
	flushing bool
	err      error
}

// maxQueued bounds the queue when the peer stops reading.
const maxQueued = 64 << 20

// ErrPeerNotReading is returned when too much output is queued.
var ErrPeerNotReading = errors.New("peer is not reading its input")

// Write queues msg plus a newline and returns once it is written or queued
// behind a write in progress.
func (lw *Writer) Write(msg []byte) error {
	lw.mu.Lock()
	if lw.err != nil {
		err := lw.err
		lw.mu.Unlock()
		return err
	}
	if len(lw.buf) > maxQueued {
		lw.mu.Unlock()
		return ErrPeerNotReading
	}
	lw.buf = append(lw.buf, msg...)
	lw.buf = append(lw.buf, '\n')
	if lw.flushing {
		lw.mu.Unlock()
		return nil
	}
	lw.flushing = true
	for len(lw.buf) > 0 && lw.err == nil {
		b := lw.buf
		lw.buf = lw.spare[:0]
		lw.mu.Unlock()
		_, err := lw.W.Write(b)
		lw.mu.Lock()
		lw.spare = b[:0]
		if cap(lw.spare) > 1<<20 {
			lw.spare = nil // do not pin a huge buffer
		}
		if err != nil {
			lw.err = err
		}
	}
	lw.flushing = false
	err := lw.err
	lw.mu.Unlock()
	return err
}
