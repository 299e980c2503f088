package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a slog handler that keeps records.
type recorder struct {
	mu   sync.Mutex
	recs []string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	r.recs = append(r.recs, b.String())
	r.mu.Unlock()
	return nil
}

func (r *recorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &withAttrs{r, as}
}

func (r *recorder) WithGroup(string) slog.Handler { return r }

type withAttrs struct {
	r  *recorder
	as []slog.Attr
}

func (w *withAttrs) Enabled(context.Context, slog.Level) bool { return true }

func (w *withAttrs) Handle(ctx context.Context, rec slog.Record) error {
	rec.AddAttrs(w.as...)
	return w.r.Handle(ctx, rec)
}

func (w *withAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return &withAttrs{w.r, append(append([]slog.Attr{}, w.as...), as...)}
}

func (w *withAttrs) WithGroup(string) slog.Handler { return w }

func (r *recorder) matching(sub string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.recs {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

func TestStderrIsLoggedRateLimitedAndRedacted(t *testing.T) {
	rec := &recorder{}
	opts := fastOptions(t)
	opts.Logger = slog.New(rec)
	m := newManager(t, opts)
	u, _ := m.Add(Spec{Name: "chatty", Command: fixture, Args: []string{"-stderr-lines", "1000", "-only", "getenv"},
		Env: map[string]string{"SECRET_TOKEN": "stderr line 123"}}, AddOptions{})
	waitState(t, u, 10*time.Second, StateConnected)
	deadline := time.Now().Add(5 * time.Second)
	for len(rec.matching("suppressed_lines")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no rate-limit record after 1000 stderr lines")
		}
		time.Sleep(10 * time.Millisecond)
	}
	lines := rec.matching("upstream stderr line=")
	if len(lines) < 100 || len(lines) > 300 {
		t.Errorf("%d stderr lines logged for 1000 written; want about the burst of 200", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, "upstream=chatty") {
			t.Fatalf("stderr record lacks the upstream name: %s", l)
		}
	}
	if got := rec.matching("stderr line 123"); len(got) > 0 {
		t.Errorf("secret value logged: %q", got)
	}
	if got := rec.matching("line=fixture ***"); len(got) != 1 {
		t.Errorf("redacted line logged %d times, want once", len(got))
	}
	if slices.ContainsFunc(u.StderrTail(), func(s string) bool { return strings.Contains(s, "stderr line 123") }) {
		t.Error("secret value in the stderr tail")
	}
}
