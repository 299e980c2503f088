package telemetry

import (
	"context"
	"encoding/hex"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// The W3C trace context travels in a request's params._meta (SEP-414, for
// every transport) under the names of the W3C headers, and in the headers
// themselves on HTTP. The hub reads the client's, starts its spans under
// it, and writes its own span's in place of the client's before the
// request goes on: the upstream sees the hub's span as its parent, and the
// client's tracestate and baggage travel on unchanged.

// Keys of the trace context in _meta and in HTTP headers.
const (
	KeyTraceparent = "traceparent"
	KeyTracestate  = "tracestate"
	KeyBaggage     = "baggage"
)

// maxBaggage is the W3C limit of a baggage header; longer is not carried.
const maxBaggage = 8192

// pair is a TextMapCarrier of the two trace context values.
type pair struct{ traceparent, tracestate string }

func (p *pair) Get(key string) string {
	switch key {
	case KeyTraceparent:
		return p.traceparent
	case KeyTracestate:
		return p.tracestate
	}
	return ""
}

func (p *pair) Set(key, value string) {
	switch key {
	case KeyTraceparent:
		p.traceparent = value
	case KeyTracestate:
		p.tracestate = value
	}
}

func (p *pair) Keys() []string { return []string{KeyTraceparent, KeyTracestate} }

// TraceContext reads the trace context of a raw _meta object: traceparent,
// tracestate and baggage, "" for each one absent or not a string.
func TraceContext(meta []byte) (traceparent, tracestate, baggage string) {
	if len(meta) == 0 || meta[0] != '{' {
		return "", "", ""
	}
	_ = wire.Members(meta, func(k, v []byte) error {
		if len(k) < len(KeyBaggage) || len(k) > len(KeyTraceparent) || v[0] != '"' {
			return nil
		}
		switch string(k) {
		case KeyTraceparent:
			traceparent, _ = wire.String(v)
		case KeyTracestate:
			tracestate, _ = wire.String(v)
		case KeyBaggage:
			baggage, _ = wire.String(v)
		}
		return nil
	})
	return traceparent, tracestate, baggage
}

// extract returns a context with the remote parent that meta (first) or
// the headers h name, and the baggage that came with it.
func extract(meta []byte, h http.Header) (context.Context, string) {
	ctx := context.Background()
	tp, ts, bag := TraceContext(meta)
	if tp == "" && h != nil {
		tp, ts, bag = h.Get(KeyTraceparent), h.Get(KeyTracestate), h.Get(KeyBaggage)
	}
	if tp == "" {
		return ctx, ""
	}
	ctx = propagation.TraceContext{}.Extract(ctx, &pair{traceparent: tp, tracestate: ts})
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return context.Background(), "" // a malformed traceparent: a new root
	}
	if len(bag) > maxBaggage {
		bag = ""
	}
	return ctx, bag
}

// appendTraceparent appends the W3C traceparent of sc (version 00).
func appendTraceparent(dst []byte, sc trace.SpanContext) []byte {
	tid, sid := sc.TraceID(), sc.SpanID()
	dst = append(dst, "00-"...)
	dst = hex.AppendEncode(dst, tid[:])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, sid[:])
	dst = append(dst, '-')
	return hex.AppendEncode(dst, []byte{byte(sc.TraceFlags())})
}

// Meta appends to dst the members a request sent under s carries in its
// params._meta (see [wire.EditMeta]): traceparent naming s,
// tracestate (removed when the trace has none) and the baggage the trace
// came with (left as it is when there is none). It returns dst unchanged
// for a nil s.
func (s *Span) Meta(dst []wire.Member) []wire.Member {
	if s == nil {
		return dst
	}
	sc := s.s.SpanContext()
	buf := make([]byte, 0, 57)
	buf = append(buf, '"')
	buf = appendTraceparent(buf, sc)
	buf = append(buf, '"')
	dst = append(dst, wire.Member{Key: KeyTraceparent, Value: buf})
	var ts []byte
	if st := sc.TraceState(); st.Len() > 0 {
		ts = wire.AppendString(nil, st.String())
	}
	dst = append(dst, wire.Member{Key: KeyTracestate, Value: ts})
	if s.baggage != "" {
		dst = append(dst, wire.Member{Key: KeyBaggage, Value: wire.AppendString(nil, s.baggage)})
	}
	return dst
}

// InjectMeta returns params with s's trace context in its _meta (see
// [Span.Meta]); params itself for a nil s.
func (s *Span) InjectMeta(params []byte) ([]byte, error) {
	if s == nil {
		return params, nil
	}
	var buf [3]wire.Member
	return wire.EditMeta(params, s.Meta(buf[:0]), nil)
}

// SetHeaders sets the W3C headers of a request sent under s: traceparent,
// tracestate and baggage, as in its _meta.
func (s *Span) SetHeaders(h http.Header) {
	if s == nil {
		return
	}
	sc := s.s.SpanContext()
	h.Set(KeyTraceparent, string(appendTraceparent(make([]byte, 0, 55), sc)))
	if st := sc.TraceState(); st.Len() > 0 {
		h.Set(KeyTracestate, st.String())
	} else {
		h.Del(KeyTracestate)
	}
	if s.baggage != "" {
		h.Set(KeyBaggage, s.baggage)
	}
}

// Under starts an internal span under the W3C context in the headers h
// (as [Span.SetHeaders] writes them); nil when t is nil or h names none.
// The hub's own tools, which go-sdk runs, find their request's span so.
func (t *Tracer) Under(h http.Header, name, upstream string) *Span {
	if t == nil || h.Get(KeyTraceparent) == "" {
		return nil
	}
	ctx, bag := extract(nil, h)
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	_, s := t.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(AttrUpstream.String(upstream)))
	return &Span{s: s, tr: t, baggage: bag}
}

// MetaMap is [Span.Meta] as a map, for a request go-sdk encodes (its
// Meta field); nil for a nil s.
func (s *Span) MetaMap() map[string]any {
	if s == nil {
		return nil
	}
	m := map[string]any{}
	for _, kv := range s.Meta(nil) {
		if kv.Value != nil {
			v, _ := wire.String(kv.Value)
			m[kv.Key] = v
		}
	}
	return m
}
