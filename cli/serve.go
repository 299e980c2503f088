package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/console"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/sweep"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// shutdownLimit bounds shutdown: every upstream is stopped (in parallel)
// within it. killMargin before it runs out, whatever is still running of
// any upstream is SIGKILLed, so the hub exits with nothing left behind.
const (
	shutdownLimit = 10 * time.Second
	killMargin    = 2 * time.Second
)

// Serve runs the hub as an MCP server on stdio, or HTTP (--http), or both,
// until the client closes stdin, a signal, or ctx ends.
func Serve(ctx context.Context, e *Env) int {
	fs := e.flags("[flags]")
	showVersion := fs.Bool("version", false, "print version information and exit")
	fs.String("http", "", "also serve MCP over HTTP on this address, e.g. 127.0.0.1:7411 (streamable HTTP at /mcp, legacy SSE at /sse)")
	stdioToo := fs.Bool("stdio", false, "with --http: serve stdio as well")
	addExposeFlag(fs)
	fs.Bool("http-no-auth", false, "with --http: no bearer token (loopback only; for tools that cannot send headers)")
	fs.Bool("http-allow-remote", false, "with --http: allow a non-loopback address (a token is then mandatory)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file (for development)")
	_ = fs.MarkHidden("cpuprofile")
	if e.Name == "" {
		e.use = "[command] [flags]"
		fs.Usage = func() {
			e.usage(e.Stdout)
			fmt.Fprintf(e.Stdout, "\nFlags:\n%s", fs.FlagUsages())
		}
	}
	if code, ok := e.parseFlags(fs); !ok {
		return code
	}
	if *showVersion {
		printVersion(e.Stdout, e.Build)
		return ExitOK
	}
	if fs.NArg() > 0 {
		switch _, known := e.commands[fs.Arg(0)]; {
		case e.Name == "" && known:
			return e.usageError("the command goes before its flags: mcp-hub %s [flags]", fs.Arg(0))
		case e.Name == "":
			return e.unknownCommand(fs.Arg(0))
		}
		return e.argCountError(fs.Args(), 0)
	}
	cfg, err := loadConfig(fs, e.Environ)
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub:", err)
		return ExitConfig
	}
	if n := hubsAbove(e.Environ); n >= maxHubsAbove {
		fmt.Fprintln(e.Stderr, "mcp-hub:", tooDeep(n))
		return ExitConfig
	}
	logger := newLogger(e.Stderr, cfg)
	logHubEntries(logger, cfg, nil)
	if cfg.Misplaced != "" {
		logger.Warn("config file not read: mcp-hub reads <user config dir>/mcp-hub/hub.yaml", "file", cfg.Misplaced, "move_to", cfg.Missing)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			logger.Error("cpu profile", "err", err)
			return ExitFail
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
		if ln, hopts, err = httpSetup(cfg, e.Stderr, logger, e.approveCommand(cfg)); err != nil {
			if addrInUse(err) {
				fmt.Fprintf(e.Stderr, "mcp-hub: %v: %s\n", err, e.whoListens(ctx, cfg, cfg.HTTPListen))
				return ExitFail
			}
			fmt.Fprintln(e.Stderr, "mcp-hub:", err)
			return ExitConfig
		}
		defer ln.Close()
	}
	serveStdio := cfg.HTTPListen == "" || *stdioToo
	st, err := openStore(ctx, e, cfg)
	if err != nil {
		logger.Error("start", "err", err)
		return ExitFail
	}
	defer st.Close()
	dataDir, err := hubstore.Dir(cfg.DataDir)
	if err != nil {
		logger.Error("start", "err", err)
		return ExitFail
	}
	// Kill what hubs that died (SIGKILL, a crash) left behind: the
	// processes of their stdio upstreams (groups, marked daemons). They are
	// this machine's: with a shared PostgreSQL store, each replica's stdio
	// upstreams are its own.
	groups := sweep.Open(filepath.Join(dataDir, "process-groups"))
	if left, err := groups.Sweep(); err != nil {
		logger.Warn("sweep the process groups of earlier hubs", "err", err)
	} else {
		for _, l := range left {
			logger.Warn("killed a process a hub that died left behind", "pid", l.PID, "pgid", l.PGID, "upstream", l.Upstream)
		}
	}
	ho := cfg.HubOptions(config.HubParams{Version: e.Build.version(), Logger: logger, Store: hubstore.Store{Store: st}, ProcessGroups: groups})
	ho.ApproveCommand = e.approveCommand(cfg)
	ho.Command = func(sub string) string { return e.storeCommand(cfg, sub) }
	tracer, err := startTracing(ctx, e, cfg, logger)
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub:", err)
		return ExitConfig
	}
	// After the hub closed (deferred calls run last to first): its last
	// spans ended, and are exported now.
	defer stopTracing(tracer, logger)
	ho.Tracer = tracer
	oa := withOAuth(ho, st, logger, e.Environ, e.Build.version())
	h, err := hub.New(ho)
	if err != nil {
		logger.Error("start", "err", err)
		return ExitFail
	}
	oa.SetInteract(h.OAuthInteract, h.OAuthCanInteract)
	if err := h.Start(ctx, cfg.HubServers()); err != nil {
		logger.Error("start", "err", err)
		h.Close()
		return ExitFail
	}

	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	runCtx, endRun := context.WithCancel(sctx)
	defer endRun()
	var wg sync.WaitGroup
	if cfg.File != "" && cfg.ConfigPoll > 0 {
		w := &configWatcher{fs: fs, environ: e.Environ, hub: h, logger: logger, last: cfg}
		wg.Go(func() { w.run(runCtx, cfg.ConfigPoll) })
	}
	var httpErr error
	var con *console.Console
	if ln != nil {
		handler, c, err := httpHandler(h, hopts, cfg, st.Path(), logger)
		if err != nil {
			logger.Error("start", "err", err)
			h.Close()
			return ExitFail
		}
		con = c
		base := "http://" + ln.Addr().String()
		logger.Info("mcp-hub serving HTTP", "streamable", base+"/mcp", "sse", base+"/sse", "console", base+"/ui/", "store", st.Path(), "version", e.Build.version())
		defer advertise(cfg, base, logger)()
		wg.Go(func() {
			httpErr = serveHTTP(runCtx, ln, handler, cfg.HTTPReadHeader, logger)
			endRun()
		})
		if e.httpReady != nil {
			e.httpReady(base, con)
		}
	}
	var serveErr error
	if serveStdio {
		logger.Info("mcp-hub serving on stdio", "config", cfg.InEffect(), "store", st.Path(), "version", e.Build.version())
		if isTerminal(e.Stdin) {
			fmt.Fprint(e.Stderr, terminalHint(e.prog()))
		}
		for _, s := range []any{e.Stdin, e.Stdout} {
			if f, ok := s.(*os.File); ok {
				framing.GrowPipe(f)
			}
		}
		serveErr = h.ServeStdio(runCtx, e.Stdin, e.Stdout)
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
	if con != nil {
		// Its event streams end at once, so the HTTP server can stop; it
		// waits for an upstream login it started, which ends when the hub
		// closes: both close together.
		wg.Go(con.Close)
	}
	ok := closeWithin(h, shutdownLimit, logger)
	wg.Wait()
	if httpErr != nil && !errors.Is(httpErr, http.ErrServerClosed) {
		logger.Error("http", "err", httpErr)
		return ExitFail
	}
	if !ok || serveErr != nil {
		return ExitFail
	}
	return ExitOK
}

// terminalHint is what serve says on stderr when a person started it in a
// terminal (as prog): stdout stays the MCP channel, stdin is where a client
// writes.
func terminalHint(prog string) string {
	var b strings.Builder
	b.WriteString(`
mcp-hub is an MCP server: it now waits for an MCP client to write JSON-RPC
on its stdin, this terminal. Clients (Claude Desktop, Claude Code, Cursor,
VS Code) start it themselves; press Ctrl-C to stop this one.
To try it from a terminal:
`)
	tw := tabwriter.NewWriter(&b, 0, 4, 4, ' ', 0)
	for _, l := range [][2]string{
		{"doctor", "start every server once and say what fails"},
		{"tools", "the merged tool catalog a client sees"},
		{"serve --http 127.0.0.1:7411", "serve over HTTP, for clients that connect by URL"},
		{"help", "every command"},
	} {
		fmt.Fprintf(tw, "  %s %s\t%s\n", prog, l[0], l[1])
	}
	tw.Flush()
	b.WriteString("\n")
	return b.String()
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
	n := upstream.KillAll()
	logger.Warn("shutdown running out of time: killed what was left of the upstreams", "processes", n)
	select {
	case <-done:
		return true
	case <-time.After(min(killMargin, limit)):
		upstream.KillAll()
		logger.Error("shutdown took too long; exiting anyway", "limit", limit)
		return false
	}
}

func newLogger(w io.Writer, cfg *config.Config) *slog.Logger {
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

// approveCommand is how the hub's messages tell a person to approve a
// registration in the store this hub serves: the program as it was run
// and, when they are not the defaults, the data dir or store (a store's
// secret masked: it is shown as written, ${VAR} included).
func (e *Env) approveCommand(cfg *config.Config) string {
	return e.storeCommand(cfg, "approve")
}

// storeCommand is mcp-hub's subcommand sub as the hub's messages show it
// for the store cfg names ([Env.approveCommand]): "./bin/mcp-hub remove
// --data-dir /srv/hub".
func (e *Env) storeCommand(cfg *config.Config, sub string) string {
	var flags []string
	switch {
	case cfg.Store != "":
		flags = []string{"--store", string(cfg.Store)}
	case cfg.DataDir != "":
		flags = []string{"--data-dir", cfg.DataDir}
	}
	cmd := e.prog() + " " + sub
	for _, a := range redact.Argv(flags) {
		cmd += " " + shellQuote(a)
	}
	return cmd
}

// oursAt is [Env.ours] for a command run on the store cfg names: a
// "mcp-hub approve NAME" of the text also names that store's data dir or
// URL when it is not the default one ([Env.approveCommand]), so that the
// command, copied, approves in the store that was looked at. One that
// names its flags already is left alone.
func (e *Env) oursAt(cfg *config.Config, s string) string {
	s = e.ours(s)
	plain, full := e.prog()+" approve", e.approveCommand(cfg)
	if full == plain {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, plain+" ")
		if i < 0 {
			break
		}
		rest := s[i+len(plain)+1:]
		b.WriteString(s[:i])
		if strings.HasPrefix(rest, "-") {
			b.WriteString(plain + " ")
		} else {
			b.WriteString(full + " ")
		}
		s = rest
	}
	b.WriteString(s)
	return b.String()
}

// addExposeFlag defines --catalog-expose (the catalog.expose key), which
// serve and tools take: which tools a client's tools/list holds.
func addExposeFlag(fs *pflag.FlagSet) {
	fs.String("catalog-expose", "", "all, search or auto: which tools tools/list holds (also $MCP_HUB_CATALOG__EXPOSE)")
}
