package upstream

import (
	"bufio"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// stderrLog turns an upstream's stderr into log records, one per line,
// prefixed with the upstream's name (the logger's "upstream" attribute),
// rate-limited, redacted, and remembered in a short tail for diagnostics.
type stderrLog struct {
	logger *slog.Logger

	mu         sync.Mutex // guards following
	redact     func(string) string
	tail       []string // ring of the last tailLines lines
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

func newStderrLog(logger *slog.Logger) *stderrLog {
	return &stderrLog{logger: logger, tokens: stderrBurst}
}

// setRedactor installs the function applied to every line (it masks the
// upstream's secret values).
func (s *stderrLog) setRedactor(f func(string) string) {
	s.mu.Lock()
	s.redact = f
	s.mu.Unlock()
}

// consume reads r line by line until it ends.
func (s *stderrLog) consume(r io.Reader) {
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := readCappedLine(br, stderrLineMax)
		if line != "" {
			s.line(line)
		}
		if err != nil {
			s.flushSuppressed()
			return
		}
	}
}

func readCappedLine(br *bufio.Reader, max int) (string, error) {
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
		s := strings.TrimRight(b.String(), "\r\n")
		if truncated {
			s += stderrTruncation
		}
		return s, err
	}
}

func (s *stderrLog) line(l string) {
	now := time.Now()
	s.mu.Lock()
	if s.redact != nil {
		l = s.redact(l)
	}
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

// secretRedactor returns a function that replaces every occurrence of the
// given secret values (of 4 bytes or more) by "***".
func secretRedactor(secrets []string) func(string) string {
	var olds []string
	for _, v := range secrets {
		if len(v) >= 4 {
			olds = append(olds, v, "***")
		}
	}
	if len(olds) == 0 {
		return func(s string) string { return s }
	}
	r := strings.NewReplacer(olds...)
	return r.Replace
}
