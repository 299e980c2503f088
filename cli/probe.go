package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
)

// runProbe probes targets for mcp-hub tools and doctor: logging as
// probeLogger says, and stopping early, with the error "interrupted", on
// SIGINT or SIGTERM.
func runProbe(ctx context.Context, e *Env, cfg *config.Config, targets []probe.Target, st *persist.Store) (*probe.Report, error) {
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := probe.Run(sctx, cfg, targets, st, &probe.Options{ClientVersion: e.Build.version(), Logger: probeLogger(e.Stderr, cfg),
		Command: func(sub string) string { return e.storeCommand(cfg, sub) }})
	switch {
	case p == nil:
		return nil, err
	case sctx.Err() != nil && ctx.Err() == nil:
		return p, errors.New("interrupted")
	}
	return p, nil
}

// probeLogger logs to stderr at the configured log level, except that the
// default level (info) logs nothing: the commands report what went wrong
// on stdout themselves.
func probeLogger(w io.Writer, cfg *config.Config) *slog.Logger {
	if cfg.LogLevel == "" || cfg.LogLevel == "info" {
		return slog.New(slog.DiscardHandler)
	}
	return newLogger(w, cfg)
}
