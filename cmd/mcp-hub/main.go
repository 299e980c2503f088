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
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/sweep"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func main() {
	// Processes that stdio upstreams start and orphan (daemons) are
	// re-parented to the hub, which stops and reaps them with their
	// upstream (Linux; a no-op elsewhere).
	if err := upstream.Supervise(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-hub: cannot supervise the processes of upstreams:", err)
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
}

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1
	exitConfig = 2
)

// shutdownLimit bounds shutdown: every upstream is stopped (in parallel)
// within it. killMargin before it runs out, whatever is still running of
// any upstream is SIGKILLed, so the hub exits with nothing left behind.
const (
	shutdownLimit = 10 * time.Second
	killMargin    = 2 * time.Second
)

// run is main without the process: it parses args, runs the command, and
// returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if c, ok := commands[args[0]]; ok {
			return c.run(ctx, &cmdEnv{args: args[1:], stdin: stdin, stdout: stdout, stderr: stderr, environ: environ, name: args[0]})
		}
		fmt.Fprintf(stderr, "mcp-hub: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitConfig
	}
	return serve(ctx, &cmdEnv{args: args, stdin: stdin, stdout: stdout, stderr: stderr, environ: environ, name: ""})
}

// cmdEnv is what a command runs with.
type cmdEnv struct {
	name           string
	args           []string
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
}

// command is one mcp-hub subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, e *cmdEnv) int
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"serve":   {"serve MCP over stdio (the default)", serve},
		"list":    {"list the registered upstreams", cmdList},
		"status":  {"show each upstream's state as the running hub last reported it", cmdStatus},
		"add":     {"register an upstream: add NAME -- COMMAND [ARGS...], or add NAME --url URL", cmdAdd},
		"remove":  {"remove a registered upstream", cmdRemove},
		"approve": {"review and approve what an upstream runs", cmdApprove},
		"reject":  {"reject an upstream so it never runs", cmdReject},
		"import":  {"register the servers of a Claude Desktop, Cursor or VS Code config file", cmdImport},
		"export":  {"write the registered upstreams as a Claude Desktop or hub.yaml config", cmdExport},
		"tools":   {"connect every upstream and print the merged tool catalog", cmdTools},
		"doctor":  {"connect every upstream and diagnose the ones that fail", cmdDoctor},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: mcp-hub [command] [flags]\n\nWith no command, mcp-hub serves MCP over stdio in front of its upstream MCP servers.\n\nCommands:\n")
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun mcp-hub COMMAND --help for a command's flags.\n")
}

// flags returns a flag set with the config flags every command accepts.
func (e *cmdEnv) flags(use string) *pflag.FlagSet {
	name := "mcp-hub"
	if e.name != "" {
		name += " " + e.name
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(e.stderr)
	config.AddFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: %s %s\n\nFlags:\n%s", name, use, fs.FlagUsages())
	}
	return fs
}

// parse parses the command's flags and loads the configuration. ok is false
// when the command should exit with code.
func (e *cmdEnv) parse(fs *pflag.FlagSet) (cfg *Config, code int, ok bool) {
	if err := fs.Parse(e.args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, exitOK, false
		}
		return nil, exitConfig, false
	}
	cfg, err := loadConfig(fs, e.environ)
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-hub:", err)
		return nil, exitConfig, false
	}
	return cfg, 0, true
}

// serve runs the hub as an MCP server on stdio.
func serve(ctx context.Context, e *cmdEnv) int {
	fs := e.flags("[flags]")
	showVersion := fs.Bool("version", false, "print version information and exit")
	fs.String("http", "", "also serve MCP over HTTP on this address, e.g. 127.0.0.1:7411 (streamable HTTP at /mcp, legacy SSE at /sse)")
	stdioToo := fs.Bool("stdio", false, "with --http: serve stdio as well")
	fs.Bool("http-no-auth", false, "with --http: no bearer token (loopback only; for tools that cannot send headers)")
	fs.Bool("http-allow-remote", false, "with --http: allow a non-loopback address (a token is then mandatory)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file (for development)")
	_ = fs.MarkHidden("cpuprofile")
	if e.name == "" {
		fs.Usage = func() {
			usage(e.stderr)
			fmt.Fprintf(e.stderr, "\nFlags:\n%s", fs.FlagUsages())
		}
	}
	if err := fs.Parse(e.args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitConfig
	}
	if *showVersion {
		printVersion(e.stdout)
		return exitOK
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "mcp-hub: unexpected argument %q (run mcp-hub --help)\n", fs.Arg(0))
		return exitConfig
	}
	cfg, err := loadConfig(fs, e.environ)
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-hub:", err)
		return exitConfig
	}
	logger := newLogger(e.stderr, cfg)
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
	var (
		ln    net.Listener
		hopts *hub.HTTPOptions
	)
	if cfg.HTTPListen != "" {
		if ln, hopts, err = httpSetup(cfg, e.stderr, logger); err != nil {
			fmt.Fprintln(e.stderr, "mcp-hub:", err)
			return exitConfig
		}
		defer ln.Close()
	}
	serveStdio := cfg.HTTPListen == "" || *stdioToo
	st, err := openStore(ctx, cfg)
	if err != nil {
		logger.Error("start", "err", err)
		return exitFail
	}
	defer st.Close()
	// Kill what hubs that died (SIGKILL, a crash) left behind: the
	// processes of their stdio upstreams (groups, marked daemons).
	groups := sweep.Open(filepath.Join(filepath.Dir(st.Path()), "process-groups"))
	if left, err := groups.Sweep(); err != nil {
		logger.Warn("sweep the process groups of earlier hubs", "err", err)
	} else {
		for _, l := range left {
			logger.Warn("killed a process a hub that died left behind", "pid", l.PID, "pgid", l.PGID, "upstream", l.Upstream)
		}
	}
	h, err := hub.New(cfg.HubOptions(config.HubParams{Version: version(), Logger: logger, Store: hubStore{st}, ProcessGroups: groups}))
	if err != nil {
		logger.Error("start", "err", err)
		return exitFail
	}
	if err := h.Start(ctx, cfg.HubServers()); err != nil {
		logger.Error("start", "err", err)
		h.Close()
		return exitFail
	}

	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	runCtx, endRun := context.WithCancel(sctx)
	defer endRun()
	var wg sync.WaitGroup
	if cfg.File != "" && cfg.ConfigPoll > 0 {
		w := &configWatcher{fs: fs, environ: e.environ, hub: h, logger: logger, last: cfg}
		wg.Go(func() { w.run(runCtx, cfg.ConfigPoll) })
	}
	var httpErr error
	if ln != nil {
		handler, err := h.HTTPHandler(hopts)
		if err != nil {
			logger.Error("start", "err", err)
			h.Close()
			return exitFail
		}
		base := "http://" + ln.Addr().String()
		logger.Info("mcp-hub serving HTTP", "streamable", base+"/mcp", "sse", base+"/sse", "store", st.Path(), "version", version())
		wg.Go(func() {
			httpErr = serveHTTP(runCtx, ln, handler, cfg.HTTPReadHeader, logger)
			endRun()
		})
	}
	var serveErr error
	if serveStdio {
		logger.Info("mcp-hub serving on stdio", "config", cfg.File, "store", st.Path(), "version", version())
		for _, s := range []any{e.stdin, e.stdout} {
			if f, ok := s.(*os.File); ok {
				framing.GrowPipe(f)
			}
		}
		serveErr = h.ServeStdio(runCtx, e.stdin, e.stdout)
		if serveErr == nil {
			logger.Info("client closed stdin; shutting down")
		}
	} else {
		<-runCtx.Done()
	}
	switch {
	case sctx.Err() != nil && ctx.Err() == nil:
		logger.Info("signal received; shutting down")
		serveErr = nil
	case errors.Is(serveErr, context.Canceled):
		serveErr = nil
	case serveErr != nil:
		logger.Error("serve", "err", serveErr)
	}
	endRun()
	ok := closeWithin(h, shutdownLimit, logger)
	wg.Wait()
	if httpErr != nil && !errors.Is(httpErr, http.ErrServerClosed) {
		logger.Error("http", "err", httpErr)
		return exitFail
	}
	if !ok || serveErr != nil {
		return exitFail
	}
	return exitOK
}

// closeWithin closes the hub, giving up after limit. Close stops the
// upstreams gracefully; killMargin before the limit every process of every
// upstream still running is killed instead, so none outlives the hub.
func closeWithin(h *hub.Hub, limit time.Duration, logger *slog.Logger) bool {
	done := make(chan struct{})
	go func() {
		h.Close()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(max(limit-killMargin, 0)):
	}
	if n := upstream.KillAll(); n > 0 {
		logger.Warn("shutdown running out of time: killed what was left of the upstreams", "processes", n)
	}
	select {
	case <-done:
		return true
	case <-time.After(min(killMargin, limit)):
		upstream.KillAll()
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
	// Every record, from the hub or a library, is masked by redact's rules.
	l := slog.New(redact.NewHandler(handler, nil))
	slog.SetDefault(l) // stray log.Printf calls go to stderr too
	return l
}
