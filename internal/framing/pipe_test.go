package framing

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestGrowPipeKeepsPollerMode: after GrowPipe, read deadlines work and
// closing the read end of a pipe wakes a Read in progress, even while a
// writer (a daemon an upstream started) keeps the other end open. With
// f.Fd() the file went into blocking mode and the Read never returned.
func TestGrowPipeKeepsPollerMode(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	GrowPipe(r)
	GrowPipe(w)
	// The writer stays open throughout; closing it at the end releases a
	// read stuck in blocking mode, so a failing test still ends.
	defer w.Close()

	if err := r.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatalf("SetReadDeadline after GrowPipe: %v", err)
	}
	if ok, err := readWithin(r, 5*time.Second, nil); !ok {
		t.Fatal("a read deadline did not end the read")
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: err = %v, want a deadline error", err)
	}
	if err := r.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	ok, err := readWithin(r, 5*time.Second, func() { r.Close() })
	if !ok {
		t.Fatal("closing the read end did not wake the read")
	}
	if !errors.Is(err, os.ErrClosed) {
		t.Errorf("read after close: err = %v, want os.ErrClosed", err)
	}
}

// readWithin reads one byte from r, running then (if set) once the read is
// under way; ok is false when the read did not end within d.
func readWithin(r *os.File, d time.Duration, then func()) (ok bool, err error) {
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 1))
		done <- err
	}()
	if then != nil {
		time.Sleep(50 * time.Millisecond) // let the read block
		then()
	}
	select {
	case err := <-done:
		return true, err
	case <-time.After(d):
		return false, nil
	}
}
