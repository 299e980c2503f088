// Package telemetry exports the hub's traces with OpenTelemetry: one trace
// from a client's request through the hub to the upstream that serves it,
// and back for what the upstream asks the client meanwhile.
//
// Tracing is off unless configured (an OTLP endpoint in OTEL_* variables or
// in the telemetry section of the config file). Then:
//
//   - every client request gets a server span, the child of the client's
//     params._meta.traceparent (SEP-414), else of the HTTP traceparent
//     header, else a new root;
//   - every request the hub sends an upstream gets a client span, whose
//     context the upstream receives in params._meta (traceparent,
//     tracestate, baggage: the client's values replaced by the hub's span,
//     its tracestate and baggage carried on) and, for an HTTP upstream, in
//     the W3C headers;
//   - what makes a call slow gets a span of its own: waiting for a free
//     slot (maxInFlight), a lazy upstream's start, a per-session instance's
//     start, a person's approval, an OAuth token refresh.
//
// Span and attribute names follow OpenTelemetry's semantic conventions for
// MCP (semconv v1.41.0, the last Go release that carries them; they have
// since moved to the GenAI conventions with the same names). Arguments and
// results are never recorded; URLs are masked as the logs mask them.
//
// hub and upstream call this package through a few hooks on [*Tracer] and
// [*Span], every one of them safe on nil: with tracing off the tracer is
// nil and a hook costs a nil check.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Config is the telemetry section of the configuration. The standard
// OTEL_* environment variables take precedence over it (as MCP_HUB_*
// variables do over the rest of the file), and configure everything it
// does not name (OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*, certificates, …).
type Config struct {
	// Endpoint is the OTLP endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT says it:
	// http://collector:4318 for http/protobuf (/v1/traces is added),
	// http://collector:4317 for grpc. Empty: tracing is off unless the
	// environment names an endpoint.
	Endpoint string
	// Protocol is "http/protobuf" (the default) or "grpc".
	Protocol string
	// Headers are sent with every export (resolved values: a collector's
	// API key).
	Headers map[string]string
	// ServiceName is service.name; "mcp-hub" when empty.
	ServiceName string
	// ResourceAttributes are added to the resource (deployment.environment,
	// service.namespace, …).
	ResourceAttributes map[string]string
	// Sampler and SamplerArg are as OTEL_TRACES_SAMPLER and
	// OTEL_TRACES_SAMPLER_ARG; empty: parentbased_always_on.
	Sampler, SamplerArg string
	// Version is service.version.
	Version string
	// Lookup reads the environment (nil: os.LookupEnv). The OpenTelemetry
	// SDK reads the variables this package does not decide on itself from
	// the process's environment.
	Lookup func(string) (string, bool)
}

// Protocols of the OTLP exporter.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Tracer makes the hub's spans. A nil *Tracer is tracing off: every method
// is safe on it and does nothing.
type Tracer struct {
	tp *sdktrace.TracerProvider
	tr trace.Tracer
}

// env returns the first of the variables keys that is set and not empty.
func (c Config) env(keys ...string) string {
	lookup := c.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	for _, k := range keys {
		if v, ok := lookup(k); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Enabled reports whether cfg and the environment turn tracing on: an OTLP
// endpoint is named (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_ENDPOINT or cfg.Endpoint) or OTEL_TRACES_EXPORTER is
// otlp, and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none
// turns it off.
func Enabled(cfg Config) (bool, error) {
	if strings.EqualFold(cfg.env("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	switch exp := strings.ToLower(cfg.env("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: mcp-hub exports traces with otlp only (or none)", exp)
	}
	return cfg.env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != "" || cfg.Endpoint != "", nil
}

// Setup starts tracing as cfg and the environment say, or returns nil (and
// no error) when they leave it off. The caller must Shutdown the tracer,
// which exports what is still buffered.
func Setup(ctx context.Context, cfg Config) (*Tracer, error) {
	on, err := Enabled(cfg)
	if err != nil || !on {
		return nil, err
	}
	if err := cfg.checkEndpoint(); err != nil {
		return nil, err
	}
	exp, err := exporter(ctx, cfg)
	if err != nil {
		return nil, err
	}
	res, err := newResource(ctx, cfg)
	if err != nil {
		return nil, err
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if cfg.env("OTEL_TRACES_SAMPLER") == "" && cfg.Sampler != "" {
		s, err := sampler(cfg.Sampler, cfg.SamplerArg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithSampler(s))
	}
	return NewTracer(sdktrace.NewTracerProvider(opts...)), nil
}

// NewTracer makes a tracer of a provider of the caller's (a program that
// embeds the hub and exports its own way, or a test with an in-memory
// exporter). Shutdown shuts the provider down.
func NewTracer(tp *sdktrace.TracerProvider) *Tracer {
	return &Tracer{tp: tp, tr: tp.Tracer(scope, trace.WithSchemaURL(schemaURL))}
}

// scope is the instrumentation scope of the hub's spans.
const scope = "github.com/mcp-hub/mcp-hub"

// Shutdown exports the spans still buffered and stops the tracer.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// ForceFlush exports the spans buffered so far.
func (t *Tracer) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}

// exporter returns the OTLP exporter. Options are passed only for what
// the environment leaves unset: the exporter reads OTEL_EXPORTER_OTLP_*
// itself, and an option would override it.
func exporter(ctx context.Context, cfg Config) (*otlptrace.Exporter, error) {
	proto := cfg.env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	if proto == "" {
		proto = cfg.Protocol
	}
	envEndpoint := cfg.env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	envHeaders := cfg.env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS") != ""
	endpoint := strings.TrimRight(cfg.Endpoint, "/")
	switch proto {
	case "", ProtocolHTTP:
		var opts []otlptracehttp.Option
		if !envEndpoint && endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(endpoint+"/v1/traces"))
		}
		if !envHeaders && len(cfg.Headers) > 0 {
			opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
		}
		return otlptracehttp.New(ctx, opts...)
	case ProtocolGRPC:
		var opts []otlptracegrpc.Option
		if !envEndpoint && endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		if !envHeaders && len(cfg.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(cfg.Headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("OTLP protocol %q: want %s or %s", proto, ProtocolHTTP, ProtocolGRPC)
}

// newResource describes the hub: service.name (cfg, else mcp-hub),
// service.version, cfg's attributes, then OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES over them.
func newResource(ctx context.Context, cfg Config) (*resource.Resource, error) {
	name := cfg.ServiceName
	if name == "" {
		name = "mcp-hub"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if cfg.Version != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.Version))
	}
	for k, v := range cfg.ResourceAttributes {
		if k == "service.name" && cfg.ServiceName != "" {
			continue
		}
		attrs = append(attrs, attribute.String(k, v))
	}
	ours, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("resource: %w", err)
	}
	return ours, nil
}

// sampler builds the sampler OTEL_TRACES_SAMPLER would name.
func sampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			return 0, fmt.Errorf("sampler argument %q: want a ratio from 0 to 1", arg)
		}
		return f, nil
	}
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		r, err := ratio()
		return sdktrace.TraceIDRatioBased(r), err
	case "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		r, err := ratio()
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), err
	}
	return nil, fmt.Errorf("sampler %q: want always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio", name)
}

// Destination says where traces go, for the hub's log: the protocol and
// the endpoint (masked as logs mask URLs).
func (c Config) Destination() string {
	proto := c.env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	if proto == "" {
		proto = c.Protocol
	}
	if proto == "" {
		proto = ProtocolHTTP
	}
	endpoint := c.env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
	if endpoint == "" {
		endpoint = c.Endpoint
	}
	if endpoint == "" {
		endpoint = "the exporter's default endpoint"
	}
	return proto + " to " + redact.URL(endpoint)
}

// checkEndpoint refuses an endpoint in effect that is no URL with a scheme
// and a host ("localhost:4318"): the exporter would take "localhost" for
// the scheme, send every batch nowhere, and say so only in a log line at
// each export.
func (c Config) checkEndpoint() error {
	source, v := "telemetry.endpoint", c.Endpoint
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if e := c.env(k); e != "" {
			source, v = k, e
			break
		}
	}
	if v == "" {
		return nil // the exporter's default
	}
	if u, err := url.Parse(v); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	want := v
	if !strings.Contains(v, "://") {
		want = "http://" + v
	}
	return fmt.Errorf("the OTLP endpoint %s (%s) is no URL with a scheme and a host: write it as %s", redact.URL(v), source, redact.URL(want))
}

// LogErrors sends what the OpenTelemetry SDK reports (an export that
// failed: the collector is down or refuses) to logger as warnings, once
// per distinct message and quarter of an hour: the SDK would log each
// failed export at info level through the standard log, every few
// seconds while the collector is away.
func LogErrors(logger *slog.Logger) {
	var (
		mu   sync.Mutex
		last = map[string]time.Time{}
	)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		msg := redact.Error(err.Error())
		mu.Lock()
		seen, ok := last[msg]
		now := time.Now()
		quiet := ok && now.Sub(seen) < 15*time.Minute
		if !quiet {
			if len(last) > 100 {
				clear(last)
			}
			last[msg] = now
		}
		mu.Unlock()
		if quiet {
			logger.Debug("telemetry: traces not exported", "err", msg)
			return
		}
		logger.Warn("telemetry: traces not exported (said once per quarter of an hour)", "err", msg)
	}))
}
