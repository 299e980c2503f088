package telemetry

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// schemaURL is the semantic conventions' version the names follow.
const schemaURL = semconv.SchemaURL

// Attributes of the hub's own (no convention names them).
const (
	// AttrUpstream is the name of the upstream that serves a request.
	AttrUpstream = attribute.Key("mcp_hub.upstream.name")
	// AttrUpstreamTransport is its transport: stdio, sse or http.
	AttrUpstreamTransport = attribute.Key("mcp_hub.upstream.transport")
	// AttrInstance is the session label of a per-session instance.
	AttrInstance = attribute.Key("mcp_hub.upstream.instance")
	// AttrQueueWait is how long a request waited for a free slot
	// (maxInFlight), in seconds.
	AttrQueueWait = attribute.Key("mcp_hub.queue.wait")
	// AttrRetries is how often a request was sent again.
	AttrRetries = attribute.Key("mcp_hub.retries")
	// AttrOutcome is the outcome the hub's metrics count the request under.
	AttrOutcome = attribute.Key("mcp_hub.outcome")
)

// Span is one span of the hub's. A nil *Span (tracing off, or no span) is
// safe to use: its methods do nothing.
type Span struct {
	s       trace.Span
	tr      *Tracer
	baggage string // the W3C baggage the trace came with, carried on as it is

	retries atomic.Int64
}

// Request describes a request for its span.
type Request struct {
	Method string
	// Target is the tool's or prompt's name, "" for none: the span is named
	// "{method} {target}".
	Target string
	// URI is a resource's URI (masked as logs mask URLs).
	URI string
	// ID is the raw JSON-RPC id, nil for a notification.
	ID []byte
	// Session is the session's label (never its id: an HTTP session id
	// is a credential).
	Session string
	// Transport is the client's transport: stdio, sse or http.
	Transport string
}

// Upstream describes the upstream a client span's request goes to.
type Upstream struct {
	Name      string
	Transport string // stdio, sse or http
	URL       string // sse and http; server.address and server.port come from it
	Instance  string // the session label of a per-session instance
}

// Bounds of attribute values a client or an upstream chose: a trace
// backend indexes them, and keeps what it is sent.
const (
	maxNameAttr = 128  // a tool's or prompt's name (MCP names are at most 128)
	maxIDAttr   = 128  // a JSON-RPC id
	maxURIAttr  = 1024 // a resource's URI, masked as logs mask URLs
)

// bounded is s as an attribute value: at most max bytes (cut at a rune,
// "…" marking the cut), control characters replaced by U+FFFD. It does not
// allocate for a value that is within its bounds.
func bounded(s string, max int) string {
	clean := len(s) <= max
	for i := 0; clean && i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			clean = false
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			r = unicode.ReplacementChar
		}
		if b.Len()+utf8.RuneLen(r) > max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

func requestAttrs(r Request, attrs []attribute.KeyValue) []attribute.KeyValue {
	attrs = append(attrs, semconv.McpMethodNameKey.String(r.Method))
	if r.ID != nil {
		attrs = append(attrs, semconv.JSONRPCRequestID(bounded(idString(r.ID), maxIDAttr)))
	}
	attrs = targetAttrs(r.Method, r.Target, attrs)
	if r.URI != "" {
		attrs = append(attrs, semconv.McpResourceURI(bounded(redact.URL(r.URI), maxURIAttr)))
	}
	if r.Session != "" {
		attrs = append(attrs, semconv.McpSessionID(r.Session))
	}
	switch r.Transport {
	case "stdio":
		attrs = append(attrs, semconv.NetworkTransportPipe)
	case "http", "sse":
		attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	}
	return attrs
}

func targetAttrs(method, target string, attrs []attribute.KeyValue) []attribute.KeyValue {
	if target == "" {
		return attrs
	}
	switch method {
	case "tools/call":
		attrs = append(attrs, semconv.GenAIToolName(bounded(target, maxNameAttr)), semconv.GenAIOperationNameExecuteTool)
	case "prompts/get":
		attrs = append(attrs, semconv.GenAIPromptName(bounded(target, maxNameAttr)))
	}
	return attrs
}

// spanName is "{method} {target}", or the method alone. Only a target the
// hub knows (a tool or prompt of its catalog, or of an upstream it
// forwards to) goes into a name: names are what trace backends index
// spans by, so they must come from a bounded set, and never carry text a
// client chose (OpenTelemetry's MCP conventions: "{mcp.method.name}"
// when no low-cardinality target is available).
func spanName(method, target string) string {
	if target == "" || (method != "tools/call" && method != "prompts/get") {
		return method
	}
	return method + " " + target
}

// idString is a JSON-RPC id as the attribute shows it: a string's content,
// a number as written.
func idString(raw []byte) string {
	if len(raw) >= 2 && raw[0] == '"' {
		if s, err := strconv.Unquote(string(raw)); err == nil {
			return s
		}
		return string(raw[1 : len(raw)-1])
	}
	return string(raw)
}

// Server starts the server span of a request the hub serves: the child of
// the trace context in the request's raw params._meta when it has one, else
// of the W3C headers h (an HTTP request's; nil for none), else of fallback
// (nil: a new root).
func (t *Tracer) Server(meta []byte, h http.Header, fallback *Span, r Request) *Span {
	if t == nil {
		return nil
	}
	ctx, bag := extract(meta, h)
	if !trace.SpanContextFromContext(ctx).IsValid() && fallback != nil {
		ctx, bag = trace.ContextWithSpan(ctx, fallback.s), fallback.baggage
	}
	var buf [10]attribute.KeyValue
	_, s := t.tr.Start(ctx, spanName(r.Method, r.Target),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(requestAttrs(r, buf[:0])...))
	return &Span{s: s, tr: t, baggage: bag}
}

// Client starts the client span of a request the hub sends (to an upstream,
// or to a client), the child of parent (nil: a new root). up is nil for a
// request to a client.
func (t *Tracer) Client(parent *Span, r Request, up *Upstream) *Span {
	if t == nil {
		return nil
	}
	ctx, bag := context.Background(), ""
	if parent != nil {
		ctx, bag = trace.ContextWithSpan(ctx, parent.s), parent.baggage
	}
	var buf [14]attribute.KeyValue
	attrs := requestAttrs(r, buf[:0])
	if up != nil {
		attrs = append(attrs, AttrUpstream.String(up.Name), AttrUpstreamTransport.String(up.Transport))
		if up.Instance != "" {
			attrs = append(attrs, AttrInstance.String(up.Instance))
		}
		if up.Transport == "stdio" {
			attrs = append(attrs, semconv.NetworkTransportPipe)
		} else {
			attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
			if u, err := url.Parse(up.URL); err == nil && u.Hostname() != "" {
				attrs = append(attrs, semconv.ServerAddress(u.Hostname()))
				if p, err := strconv.Atoi(u.Port()); err == nil {
					attrs = append(attrs, semconv.ServerPort(p))
				}
			}
		}
	}
	_, s := t.tr.Start(ctx, spanName(r.Method, r.Target),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return &Span{s: s, tr: t, baggage: bag}
}

// Child starts an internal span under s: a wait that makes the request
// slow (a lazy start, an instance's start, an approval). It returns nil
// when s is nil.
func (s *Span) Child(name string, attrs ...attribute.KeyValue) *Span {
	if s == nil {
		return nil
	}
	ctx := trace.ContextWithSpan(context.Background(), s.s)
	_, c := s.tr.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return &Span{s: c, tr: s.tr, baggage: s.baggage}
}

// Wait starts the span of a wait for an upstream (its start, an
// instance's start, a person's approval) under s; instance is the session
// label of a per-session instance, "" for none.
func (s *Span) Wait(name, upstream, instance string) *Span {
	if s == nil {
		return nil
	}
	if instance != "" {
		return s.Child(name, AttrUpstream.String(upstream), AttrInstance.String(instance))
	}
	return s.Child(name, AttrUpstream.String(upstream))
}

// Waited records a wait under s that is over: a span from since to now.
func (s *Span) Waited(name string, since time.Time, attrs ...attribute.KeyValue) {
	if s == nil {
		return
	}
	ctx := trace.ContextWithSpan(context.Background(), s.s)
	_, c := s.tr.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(since), trace.WithAttributes(attrs...))
	c.End()
}

// SetTarget names what the request is for, once the hub has read it: the
// tool or prompt, and a resource's URI. known says whether the hub knows
// the tool or prompt (its catalog has it): only then does its name go into
// the span's name; an unknown one, which the client chose, is only an
// attribute, bounded as every value a client chose is.
func (s *Span) SetTarget(method, target, uri string, known bool) {
	if s == nil {
		return
	}
	if target != "" {
		if known {
			s.s.SetName(spanName(method, target))
		}
		var buf [2]attribute.KeyValue
		s.s.SetAttributes(targetAttrs(method, target, buf[:0])...)
	}
	if uri != "" {
		s.s.SetAttributes(semconv.McpResourceURI(bounded(redact.URL(uri), maxURIAttr)))
	}
}

// SetUpstream records the upstream that serves the request.
func (s *Span) SetUpstream(name string) {
	if s == nil {
		return
	}
	s.s.SetAttributes(AttrUpstream.String(name))
}

// SetAttributes adds attributes to the span.
func (s *Span) SetAttributes(attrs ...attribute.KeyValue) {
	if s == nil {
		return
	}
	s.s.SetAttributes(attrs...)
}

// SetString sets a string attribute of the hub's own (a fixed vocabulary:
// never a value a client or upstream chose).
func (s *Span) SetString(key, value string) {
	if s == nil {
		return
	}
	s.s.SetAttributes(attribute.String(key, value))
}

// Queued records how long the request waited for a free slot of its
// upstream (maxInFlight): an attribute, and a span of the wait.
func (s *Span) Queued(since time.Time) {
	if s == nil {
		return
	}
	s.s.SetAttributes(AttrQueueWait.Float64(time.Since(since).Seconds()))
	s.Waited("queue wait", since)
}

// Retry records that the request is sent again, and why (a fixed phrase,
// never a message of the upstream's).
func (s *Span) Retry(why string) {
	if s == nil {
		return
	}
	n := s.retries.Add(1)
	s.s.AddEvent("retry", trace.WithAttributes(attribute.String("mcp_hub.retry.reason", why), AttrRetries.Int64(n)))
}

// Outcome is how a request ended.
type Outcome struct {
	// Code is the JSON-RPC error code of an error answer; 0 for a result.
	Code int64
	// Error is the error's type when the request failed without a JSON-RPC
	// error, or its result says isError ("tool_error", "timeout", …);
	// "" otherwise.
	Error string
	// Label is the outcome as the hub's metrics count it ("ok", "timeout",
	// …); "" to leave it out.
	Label string
}

// End ends the span with the request's outcome. Messages are never
// recorded: an upstream's error text may quote the arguments.
func (s *Span) End(o Outcome) {
	if s == nil {
		return
	}
	var buf [4]attribute.KeyValue
	attrs := buf[:0]
	if n := s.retries.Load(); n > 0 {
		attrs = append(attrs, AttrRetries.Int64(n))
	}
	if o.Label != "" {
		attrs = append(attrs, AttrOutcome.String(o.Label))
	}
	switch {
	case o.Code != 0:
		code := strconv.FormatInt(o.Code, 10)
		attrs = append(attrs, semconv.RPCResponseStatusCode(code), semconv.ErrorTypeKey.String(code))
		s.s.SetStatus(codes.Error, "JSON-RPC error "+code)
	case o.Error != "":
		attrs = append(attrs, semconv.ErrorTypeKey.String(o.Error))
		s.s.SetStatus(codes.Error, o.Error)
	}
	if len(attrs) > 0 {
		s.s.SetAttributes(attrs...)
	}
	s.s.End()
}

// Finish ends a span that has no outcome to speak of (a wait).
func (s *Span) Finish(err error) {
	if s == nil {
		return
	}
	if err != nil {
		s.s.SetStatus(codes.Error, "failed")
		s.s.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	}
	s.s.End()
}

// errorType is error.type for a Go error: its type name, never its
// message.
func errorType(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "error"
}

// SpanContext returns the span's context (the zero value for nil).
func (s *Span) SpanContext() trace.SpanContext {
	if s == nil {
		return trace.SpanContext{}
	}
	return s.s.SpanContext()
}

type spanKey struct{}

// ContextWith returns ctx carrying s (for [FromContext]) and its
// OpenTelemetry span (for instrumentation that reads one).
func ContextWith(ctx context.Context, s *Span) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(trace.ContextWithSpan(ctx, s.s), spanKey{}, s)
}

// FromContext returns the span ctx carries ([ContextWith]), or nil.
func FromContext(ctx context.Context) *Span {
	s, _ := ctx.Value(spanKey{}).(*Span)
	return s
}

// Start starts an internal span under the span ctx carries and returns a
// context carrying it; with none it returns ctx and nil. The OAuth token
// refresh uses it: it runs under whatever request needed the token.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, *Span) {
	p := FromContext(ctx)
	if p == nil {
		return ctx, nil
	}
	c := p.Child(name, attrs...)
	return ContextWith(ctx, c), c
}
