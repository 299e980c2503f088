package redact

import (
	"strconv"
	"unicode/utf8"
)

// Errors quote what they refuse ("invalid name %q"), and what they refuse
// can be anything a client sent: a megabyte of name, a field name of a
// megabyte. The hub's error outputs (JSON-RPC errors, tool errors, the
// REST API's and the console's messages) go through [Bound], so that none
// quotes more than a bounded prefix of any input.

const (
	// MaxRun is the longest run of non-space bytes an error shows whole;
	// a longer one is cut to its first RunPrefix bytes and its size.
	MaxRun    = 256
	RunPrefix = 160
	// MaxError is the most an error message shows: a longer one keeps its
	// start and its end (which says what to do), and says what it cut.
	MaxError  = 4096
	errorHead = 3072
	errorTail = 768
)

// Bound shortens an error message: every run of more than MaxRun bytes
// without white space to its first RunPrefix bytes and its size, then the
// whole message to at most about MaxError bytes. A message within the
// bounds is returned as it is.
func Bound(s string) string {
	if len(s) <= MaxRun {
		return s
	}
	var out []byte
	start, last := -1, 0 // start of the current run; end of what was copied
	flush := func(end int) {
		if start >= 0 && end-start > MaxRun {
			if out == nil {
				out = make([]byte, 0, MaxError)
			}
			cut := start + RunPrefix
			for cut > start && !utf8.RuneStart(s[cut]) {
				cut--
			}
			out = append(out, s[last:cut]...)
			out = append(out, "…("...)
			out = strconv.AppendInt(out, int64(end-start), 10)
			out = append(out, " bytes)"...)
			last = end
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			flush(i)
		default:
			if start < 0 {
				start = i
			}
		}
	}
	flush(len(s))
	if out != nil {
		out = append(out, s[last:]...)
		s = string(out)
	}
	if len(s) <= MaxError {
		return s
	}
	head, tail := errorHead, len(s)-errorTail
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + " …(" + strconv.Itoa(tail-head) + " bytes cut)… " + s[tail:]
}

// Error is an error message as the hub shows it: masked ([Text]) and
// bounded ([Bound]).
func Error(s string) string { return Bound(Text(s)) }
