package sse

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type logsFunc func() *Log

func (f logsFunc) NewLog() *Log { return f() }

func TestLog(t *testing.T) {
	l := NewLog("r7")
	if id := l.PrimingID(); id != "r7:0" {
		t.Errorf("priming id of a new stream = %q", id)
	}
	for i := 1; i <= MaxReplay+10; i++ {
		if id := l.Add([]byte(fmt.Sprint(i))); id != fmt.Sprintf("r7:%d", i) {
			t.Fatalf("event %d: id %q", i, id)
		}
	}
	if id := l.PrimingID(); id != fmt.Sprintf("r7:%d", MaxReplay+10) {
		t.Errorf("priming id = %q, want the last event's", id)
	}
	ids, data := l.After(MaxReplay + 7)
	if len(ids) != 3 || ids[0] != fmt.Sprintf("r7:%d", MaxReplay+8) || string(data[2]) != fmt.Sprint(MaxReplay+10) {
		t.Errorf("After = %v %q", ids, data)
	}
	// Only the last MaxReplay are kept: a client further behind gets what
	// is left.
	ids, _ = l.After(0)
	if len(ids) != MaxReplay || ids[0] != "r7:11" {
		t.Errorf("After(0) = %d events from %v, want %d from r7:11", len(ids), ids[0], MaxReplay)
	}
}

func TestParseID(t *testing.T) {
	for _, tt := range []struct {
		id     string
		stream string
		n      uint64
		ok     bool
	}{
		{"r3:12", "r3", 12, true},
		{"g:0", "g", 0, true},
		{"g", "", 0, false},
		{":4", "", 0, false},
		{"r1:x", "r1", 0, false},
		{"r1:-1", "r1", 0, false},
		{"", "", 0, false},
	} {
		stream, n, ok := ParseID(tt.id)
		if ok != tt.ok || ok && (stream != tt.stream || n != tt.n) {
			t.Errorf("ParseID(%q) = %q %d %v", tt.id, stream, n, ok)
		}
	}
}

func TestWrite(t *testing.T) {
	var b strings.Builder
	WritePriming(&b, "r1:0", 1000)
	WriteEventID(&b, "r1:1", []byte(`{"a":1}`))
	WriteEvent(&b, []byte(`{"b":2}`))
	want := "id: r1:0\nretry: 1000\ndata: \n\n" +
		"id: r1:1\nevent: message\ndata: {\"a\":1}\n\n" +
		"event: message\ndata: {\"b\":2}\n\n"
	if b.String() != want {
		t.Errorf("wrote %q\nwant  %q", b.String(), want)
	}
}

// TestAnswer: an answer with nothing before it is left to the caller (to
// write as JSON); a message before it turns the response into a stream,
// resumable (a priming event, numbered events) when a log is given.
func TestAnswer(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		rec := httptest.NewRecorder()
		a := &Answer{W: rec, Logs: logsFunc(func() *Log { t.Fatal("no stream, no log"); return nil })}
		if a.Final(make(chan []byte), []byte(`{"id":1}`)) || a.Streaming() || rec.Body.Len() != 0 {
			t.Errorf("streaming %v, body %q: want the answer left to the caller", a.Streaming(), rec.Body)
		}
	})
	t.Run("resumable stream", func(t *testing.T) {
		rec := httptest.NewRecorder()
		var log *Log
		a := &Answer{W: rec, RetryMs: 500, Logs: logsFunc(func() *Log { log = NewLog("r1"); return log })}
		events := make(chan []byte, 2)
		events <- []byte(`{"n":2}`)
		a.Event([]byte(`{"n":1}`))
		if !a.Final(events, []byte(`{"id":1}`)) {
			t.Fatal("Final on a stream reports false")
		}
		want := "id: r1:0\nretry: 500\ndata: \n\n" +
			"id: r1:1\nevent: message\ndata: {\"n\":1}\n\n" +
			"id: r1:2\nevent: message\ndata: {\"n\":2}\n\n" +
			"id: r1:3\nevent: message\ndata: {\"id\":1}\n\n"
		if got := rec.Body.String(); got != want {
			t.Errorf("stream %q\nwant   %q", got, want)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" || rec.Code != http.StatusOK {
			t.Errorf("status %d, Content-Type %q", rec.Code, ct)
		}
		if ids, _ := log.After(1); len(ids) != 2 {
			t.Errorf("the log kept %v after r1:1", ids)
		}
	})
	t.Run("plain stream", func(t *testing.T) {
		rec := httptest.NewRecorder()
		a := &Answer{W: rec}
		a.Event([]byte(`{"n":1}`))
		a.Final(make(chan []byte), []byte(`{"id":1}`))
		if got, want := rec.Body.String(), "event: message\ndata: {\"n\":1}\n\nevent: message\ndata: {\"id\":1}\n\n"; got != want {
			t.Errorf("stream %q, want %q", got, want)
		}
	})
}

// TestAnswerPause: a paused answer ends with an event that says where the
// stream is and when to come back (the upstream's retry, not the hub's):
// the response turns into a resumable stream first when nothing was
// written yet; one that cannot be resumed writes nothing. Empty messages
// (a writer's wake-up) are no events.
func TestAnswerPause(t *testing.T) {
	t.Run("before any event", func(t *testing.T) {
		rec := httptest.NewRecorder()
		a := &Answer{W: rec, RetryMs: 1000, Logs: logsFunc(func() *Log { return NewLog("r4") })}
		if !a.Pause(5 * time.Second) {
			t.Fatal("Pause of a resumable answer reports false")
		}
		if got, want := rec.Body.String(), "id: r4:1\nretry: 5000\ndata: \n\n"; got != want || !a.Streaming() {
			t.Errorf("streaming %v, wrote %q, want %q", a.Streaming(), got, want)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type %q", ct)
		}
	})
	t.Run("after events", func(t *testing.T) {
		rec := httptest.NewRecorder()
		a := &Answer{W: rec, RetryMs: 1000, Logs: logsFunc(func() *Log { return NewLog("r5") })}
		a.Event([]byte(`{"n":1}`))
		a.Pause(30 * time.Second)
		want := "id: r5:0\nretry: 1000\ndata: \n\n" +
			"id: r5:1\nevent: message\ndata: {\"n\":1}\n\n" +
			"id: r5:2\nretry: 30000\ndata: \n\n"
		if got := rec.Body.String(); got != want {
			t.Errorf("wrote %q\nwant  %q", got, want)
		}
		// Each pause is a new position; a resume from it replays nothing.
		if ids, _ := a.Log.After(2); len(ids) != 0 {
			t.Errorf("after the pause's id: %v", ids)
		}
		if ids, _ := a.Log.After(0); len(ids) != 1 || ids[0] != "r5:1" {
			t.Errorf("the log keeps %v, want r5:1 alone", ids)
		}
	})
	t.Run("not resumable", func(t *testing.T) {
		rec := httptest.NewRecorder()
		a := &Answer{W: rec}
		if a.Pause(5*time.Second) || a.Streaming() || rec.Body.Len() != 0 {
			t.Errorf("Pause without a log: streaming %v, wrote %q", a.Streaming(), rec.Body)
		}
	})
	t.Run("wake-up skipped", func(t *testing.T) {
		rec := httptest.NewRecorder()
		a := &Answer{W: rec, Log: NewLog("r6")}
		a.Start(false)
		events := make(chan []byte, 2)
		events <- nil
		a.Final(events, []byte(`{"id":1}`))
		if got, want := rec.Body.String(), "id: r6:1\nevent: message\ndata: {\"id\":1}\n\n"; got != want {
			t.Errorf("wrote %q, want %q", got, want)
		}
	})
}
