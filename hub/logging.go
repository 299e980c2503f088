package hub

import (
	"context"
	"log/slog"
)

// quieter wraps a handler and lowers every record by one level (INFO becomes
// DEBUG): go-sdk reports each session start and stop at INFO, which is
// detail for the hub's operator.
type quieter struct{ h slog.Handler }

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return q.h.Enabled(ctx, lower(l))
}

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lower(r.Level)
	return q.h.Handle(ctx, r)
}

func (q quieter) WithAttrs(a []slog.Attr) slog.Handler { return quieter{q.h.WithAttrs(a)} }
func (q quieter) WithGroup(n string) slog.Handler      { return quieter{q.h.WithGroup(n)} }

func lower(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}
