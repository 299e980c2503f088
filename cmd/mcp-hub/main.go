// Command mcp-hub puts one MCP endpoint in front of every MCP server a person
// uses. Run with no arguments it is a complete MCP server on stdio, which is
// how Claude Desktop and other clients launch it:
//
//	mcp-hub [--config FILE] [--data-dir DIR] [--log-level LEVEL]
//
// Configuration comes from, in rising precedence: built-in defaults, the
// config file (--config, $MCP_HUB_CONFIG, or hub.yaml in the user config
// directory), MCP_HUB_* environment variables, and the flags given. Logs go
// to stderr; stdout carries only JSON-RPC.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
}

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1
	exitConfig = 2
)

// shutdownLimit bounds shutdown: every upstream is stopped (in parallel)
// within it.
const shutdownLimit = 10 * time.Second

// run is main without the process: it parses args, serves, and returns the
// exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	fs := pflag.NewFlagSet("mcp-hub", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	addConfigFlags(fs)
	showVersion := fs.Bool("version", false, "print version information and exit")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file (for development)")
	_ = fs.MarkHidden("cpuprofile")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: mcp-hub [flags]\n\nServes one MCP endpoint over stdio in front of the configured upstream MCP servers.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitConfig
	}
	if *showVersion {
		printVersion(stdout)
		return exitOK
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcp-hub: unknown command %q (run mcp-hub --help)\n", fs.Arg(0))
		return exitConfig
	}
	cfg, err := loadConfig(fs, environ)
	if err != nil {
		fmt.Fprintln(stderr, "mcp-hub:", err)
		return exitConfig
	}
	logger := newLogger(stderr, cfg)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			logger.Error("cpu profile", "err", err)
			return exitFail
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	h, err := newHub(cfg, logger)
	if err != nil {
		logger.Error("start", "err", err)
		return exitFail
	}
	for _, s := range cfg.Servers {
		if err := h.AddUpstream(s.Spec, upstream.AddOptions{Disabled: s.Disabled}); err != nil {
			logger.Error("add upstream", "upstream", s.Spec.Name, "err", err)
		}
	}
	logger.Info("mcp-hub serving on stdio", "config", cfg.File, "upstreams", len(cfg.Servers), "version", version())

	for _, s := range []any{stdin, stdout} {
		if f, ok := s.(*os.File); ok {
			framing.GrowPipe(f)
		}
	}
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	serveErr := h.ServeStdio(sctx, stdin, stdout)
	switch {
	case serveErr == nil:
		logger.Info("client closed stdin; shutting down")
	case sctx.Err() != nil && ctx.Err() == nil:
		logger.Info("signal received; shutting down")
		serveErr = nil
	default:
		logger.Error("serve", "err", serveErr)
	}
	if !closeWithin(h, shutdownLimit, logger) {
		return exitFail
	}
	if serveErr != nil {
		return exitFail
	}
	return exitOK
}

// closeWithin closes the hub, giving up after limit.
func closeWithin(h *hub.Hub, limit time.Duration, logger *slog.Logger) bool {
	done := make(chan struct{})
	go func() {
		h.Close()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		logger.Error("shutdown took too long; exiting anyway", "limit", limit)
		return false
	}
}

func newLogger(w io.Writer, cfg *Config) *slog.Logger {
	var level slog.Level
	switch strings.ToLower(cfg.LogLevel) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogFormat == "json" {
		handler = slog.NewJSONHandler(w, opts)
	}
	l := slog.New(handler)
	slog.SetDefault(l) // stray log.Printf calls go to stderr too
	return l
}

// newHub builds a hub from the configuration.
func newHub(cfg *Config, logger *slog.Logger) (*hub.Hub, error) {
	fw := cfg.FirstListWait
	if fw == 0 {
		fw = -1
	}
	return hub.New(&hub.Options{
		Version:         version(),
		Logger:          logger,
		Catalog:         catalog.Options{Policy: catalog.Policy(cfg.CatalogPolicy), Separator: cfg.CatalogSeparator},
		FirstListWait:   fw,
		MaxMessageBytes: cfg.MaxMessageBytes,
		Upstream: upstream.Options{
			ProtocolVersion:     cfg.ProtocolVersion,
			InitTimeout:         cfg.InitTimeout,
			ListTimeout:         cfg.ListTimeout,
			CallTimeout:         cfg.CallTimeout,
			MaxInFlight:         cfg.MaxInFlight,
			MaxMessageBytes:     cfg.MaxMessageBytes,
			ShutdownGrace:       cfg.ShutdownGrace,
			Backoff:             cfg.Backoff,
			HealthInterval:      cfg.HealthInterval,
			HealthFailures:      cfg.HealthFailures,
			MaxConcurrentSpawns: cfg.MaxSpawns,
			InheritEnv:          cfg.InheritEnv,
		},
	})
}
