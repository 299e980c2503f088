package probe

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// nonJSON is what an upstream wrote to stdout that was not JSON-RPC.
type nonJSON struct {
	count int
	first string
}

// nonJSONCapture collects, per upstream, the "not JSON-RPC" warnings of the
// upstream package.
type nonJSONCapture struct {
	mu   sync.Mutex
	seen map[string]*nonJSON
}

func (c *nonJSONCapture) add(name, line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.seen[name]
	if n == nil {
		n = &nonJSON{first: line}
		c.seen[name] = n
	}
	n.count++
}

func (c *nonJSONCapture) get(name string) *nonJSON {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[name]
}

// captureHandler passes records on to next and reports the upstream
// package's warnings about stdout lines that are not JSON-RPC to sink.
type captureHandler struct {
	next  slog.Handler
	attrs []slog.Attr
	sink  *nonJSONCapture
}

// Enabled implements slog.Handler.
func (h *captureHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *captureHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && strings.Contains(r.Message, "not JSON-RPC") {
		name, line := "", ""
		visit := func(a slog.Attr) bool {
			switch a.Key {
			case "upstream":
				name = a.Value.String()
			case "line":
				line = a.Value.String()
			}
			return true
		}
		for _, a := range h.attrs {
			visit(a)
		}
		r.Attrs(visit)
		if name != "" {
			h.sink.add(name, line)
		}
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &captureHandler{next: h.next.WithAttrs(as), attrs: append(slices.Clip(h.attrs), as...), sink: h.sink}
}

// WithGroup implements slog.Handler.
func (h *captureHandler) WithGroup(name string) slog.Handler {
	return &captureHandler{next: h.next.WithGroup(name), attrs: h.attrs, sink: h.sink}
}
