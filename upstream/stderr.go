package upstream

import (
	"bufio"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// stderrLog turns an upstream's stderr into log records, one per line,
// prefixed with the upstream's name (the logger's "upstream" attribute),
// rate-limited, redacted, and remembered in a short tail for diagnostics.
type stderrLog struct {
	logger *slog.Logger
	secret *redact.Scrubber // the upstream's secret values

	mu         sync.Mutex // guards following
	tail       []string   // ring of the last tailLines lines
	next       int
	tokens     float64
	last       time.Time
	suppressed int
	reporting  bool // a delayed report of suppressed lines is scheduled
}

const (
	tailLines        = 50
	stderrLineMax    = 2048
	stderrRate       = 20.0  // lines per second, sustained
	stderrBurst      = 200.0 // lines
	stderrTruncation = "…[truncated]"
	// stderrReportDelay is when suppressed lines are reported at the latest.
	stderrReportDelay = time.Second
)

// newStderrLog returns the stderr log of an upstream whose secret values
// are secret: every line is scrubbed of them and masked by redact's rules
// before it is logged or kept in the tail.
func newStderrLog(logger *slog.Logger, secret *redact.Scrubber) *stderrLog {
	return &stderrLog{logger: logger, secret: secret, tokens: stderrBurst}
}

// consume reads r line by line until it ends.
func (s *stderrLog) consume(r io.Reader) {
	br := bufio.NewReaderSize(r, 4096)
	for {
		// Read past the cap so that a secret value crossing it is
		// scrubbed whole before the line is cut.
		line, cut, err := readCappedLine(br, stderrLineMax+redact.CutSlack)
		if line != "" {
			s.line(line, cut)
		}
		if err != nil {
			s.flushSuppressed()
			return
		}
	}
}

// readCappedLine reads a line, keeping at most max bytes of it; cut says
// whether it kept less than the whole line.
func readCappedLine(br *bufio.Reader, max int) (line string, cut bool, err error) {
	var b strings.Builder
	truncated := false
	for {
		chunk, err := br.ReadSlice('\n')
		if b.Len() < max {
			room := max - b.Len()
			if len(chunk) > room {
				chunk, truncated = chunk[:room], true
			}
			b.Write(chunk)
		} else if len(chunk) > 0 {
			truncated = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return strings.TrimRight(b.String(), "\r\n"), truncated, err
	}
}

// line logs and keeps one line, scrubbed, masked and cut to stderrLineMax
// (cut says the reader already cut it).
func (s *stderrLog) line(raw string, cut bool) {
	now := time.Now()
	l, cut := redact.Cut(s.secret, raw, stderrLineMax, cut)
	if cut {
		l += stderrTruncation
	}
	s.mu.Lock()
	if len(s.tail) < tailLines {
		s.tail = append(s.tail, l)
	} else {
		s.tail[s.next] = l
		s.next = (s.next + 1) % tailLines
	}
	if !s.last.IsZero() {
		s.tokens = min(stderrBurst, s.tokens+now.Sub(s.last).Seconds()*stderrRate)
	}
	s.last = now
	if s.tokens < 1 {
		s.suppressed++
		if !s.reporting {
			// Report the count even if the upstream then goes quiet.
			s.reporting = true
			time.AfterFunc(stderrReportDelay, s.flushSuppressed)
		}
		s.mu.Unlock()
		return
	}
	s.tokens--
	suppressed := s.suppressed
	s.suppressed = 0
	s.mu.Unlock()
	if suppressed > 0 {
		s.logger.Warn("upstream stderr rate-limited", "suppressed_lines", suppressed)
	}
	s.logger.Info("upstream stderr", "line", l)
}

func (s *stderrLog) flushSuppressed() {
	s.mu.Lock()
	n := s.suppressed
	s.suppressed = 0
	s.reporting = false
	s.mu.Unlock()
	if n > 0 {
		s.logger.Warn("upstream stderr rate-limited", "suppressed_lines", n)
	}
}

// Tail returns the last lines the upstream wrote to stderr, oldest first.
func (s *stderrLog) Tail() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tail))
	if len(s.tail) < tailLines {
		return append(out, s.tail...)
	}
	out = append(out, s.tail[s.next:]...)
	return append(out, s.tail[:s.next]...)
}
