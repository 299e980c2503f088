package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/telemetry"
)

// startTracing starts exporting traces when the telemetry section or the
// OTEL_* variables say where to; nil means tracing is off.
func startTracing(ctx context.Context, e *Env, cfg *config.Config, logger *slog.Logger) (*telemetry.Tracer, error) {
	lookup := lookupOf(e.Environ)
	tc, err := cfg.TelemetryConfig(e.Build.version(), lookup)
	if err != nil {
		return nil, err
	}
	t, err := telemetry.Setup(ctx, tc)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if t != nil {
		telemetry.LogErrors(logger)
		logger.Info("tracing on: exporting spans with OTLP", "to", tc.Destination())
	}
	return t, nil
}

// stopTracing exports the spans still buffered (bounded: a collector that
// does not answer must not hold the hub's exit up).
func stopTracing(t *telemetry.Tracer, logger *slog.Logger) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		logger.Warn("telemetry: the last spans were not exported", "err", err)
	}
}
