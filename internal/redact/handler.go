package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// NewHandler returns a log handler that passes every record on to next
// with its message and attribute values (strings, errors, fmt.Stringers,
// in groups too) scrubbed of s's values (s may be nil) and masked by
// [Text]. The hub's root logger and each upstream's logger (with that
// upstream's values) go through it, so no log line at any level, from the
// hub or from a library such as go-retryablehttp, shows a secret.
func NewHandler(next slog.Handler, s *Scrubber) slog.Handler {
	return &handler{next: next, s: s}
}

type handler struct {
	next slog.Handler
	s    *Scrubber
}

// Enabled implements slog.Handler.
func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.clean(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = h.attr(a)
	}
	return &handler{next: h.next.WithAttrs(clean), s: h.s}
}

// WithGroup implements slog.Handler.
func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(name), s: h.s}
}

func (h *handler) clean(s string) string { return Text(h.s.Scrub(s)) }

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.clean(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = h.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.clean(safeString(x.Error)))
		case fmt.Stringer:
			return slog.String(a.Key, h.clean(safeString(x.String)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// safeString calls f, turning a panic (a method on a nil pointer) into a
// note, as slog's own handlers do.
func safeString(f func() string) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("!PANIC: %v", r)
		}
	}()
	return f()
}
