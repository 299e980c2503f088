package framing

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// The measurement behind this package (see the note at the top of
// framing.go): reading a stream of small messages with Reader against
// bufio.Scanner with the same cap. Scanner is not an option whatever it
// costs: a line over its cap ends the stream (bufio.ErrTooLong), where the
// hub must fail the one request and keep reading.

func smallLines() []byte {
	return []byte(strings.Repeat(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hello"}]}}`+"\n", 10000))
}

func BenchmarkReadLinesFraming(b *testing.B) {
	in := smallLines()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(in), DefaultMax)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

func BenchmarkReadLinesScanner(b *testing.B) {
	in := smallLines()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s := bufio.NewScanner(bytes.NewReader(in))
		s.Buffer(make([]byte, 0, 64<<10), DefaultMax)
		for s.Scan() {
			_ = bytes.Clone(s.Bytes()) // Reader's lines are the caller's to keep
		}
	}
}
