package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/codemode"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
	"github.com/mcp-hub/mcp-hub/toolsearch"
	"github.com/mcp-hub/mcp-hub/upstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures a [Hub]. A zero field selects the default in its
// comment.
type Options struct {
	// Name and Version identify the hub in initialize ("mcp-hub", "dev").
	Name, Version string
	// Logger receives the hub's records (nil: discard). Nothing is ever
	// written to stdout.
	Logger *slog.Logger
	// Catalog selects the naming policy (merge by default).
	Catalog catalog.Options
	// ApproveCommand is how a person approves a registration of this
	// hub's store from a terminal, without the server's name, as the
	// hub's messages show it ("Ask the user to run this in a terminal"):
	// "mcp-hub approve" when empty. The mcp-hub command sets it to the
	// program as it was run and the data dir or store it serves
	// (./bin/mcp-hub approve --data-dir /srv/hub), so that the command
	// shown approves in this hub's store, not the default one.
	ApproveCommand string
	// Command is a subcommand of mcp-hub as a person runs it on this hub's
	// store ("./bin/mcp-hub remove --data-dir /srv/hub" for "remove"), for
	// the messages that say how to change a registration of the store
	// (upstream.Home); nil: "mcp-hub remove".
	Command func(sub string) string
	// FirstListWait bounds how long a session's first tools/list waits for
	// upstreams still on their first connect attempt (10s; negative: no
	// wait).
	FirstListWait time.Duration
	// MaxMessageBytes caps one inbound client message (16 MiB).
	MaxMessageBytes int
	// Upstream configures the upstream manager. Its Events, OnChange and
	// Logger fields are set by the hub.
	Upstream upstream.Options
	// Instructions are sent to clients in initialize.
	Instructions string
	// Expose says which tools tools/list holds: every tool (the default),
	// or, in search mode, the hub's own, a few always listed and those a
	// session found and called (search.go).
	Expose toolsearch.Exposure

	// Store keeps registrations, approvals and capability caches. Nil
	// means none: upstreams come from code (AddUpstream) or Start's config
	// list, and the admin tools that change registrations are refused.
	Store Store
	// Admin selects the hub_* admin tools (on by default).
	Admin AdminMode
	// Approval says how client registrations are approved (ask by default).
	Approval ApprovalMode
	// ConfigFile names the config file in messages ("defined in <file>").
	ConfigFile string
	// StorePoll is how often the hub checks the store for changes made by
	// other processes (1s).
	StorePoll time.Duration
	// MaxToolOutputLength caps the characters of text in one tools/call
	// result: longer text is cut with a visible marker and a _meta flag
	// (0: no limit).
	MaxToolOutputLength int
	// AllowedServerNames, when not empty, are the only upstream names the
	// hub registers or runs, whoever asks.
	AllowedServerNames []string
	// ToolPolicy decides per tool whether a call goes ahead, asks the
	// person first, or is refused (nil: every call goes ahead). It applies
	// to direct calls, hub_call_tool and code-mode scripts alike.
	ToolPolicy *toolpolicy.Policy
	// CodeMode configures hub_run_code (off by default).
	CodeMode CodeModeOptions
	// Login logs in to an upstream in NEEDS_LOGIN through a client that
	// supports URL elicitation (nil: clients are told to run mcp-hub
	// login). See LoginFunc.
	Login LoginFunc
	// Tracer traces requests through the hub (package telemetry); nil:
	// tracing is off.
	Tracer *telemetry.Tracer
}

// Hub is an MCP server that serves the merged catalog of its upstreams. It
// is safe for concurrent use. Create one with [New], add upstreams, serve
// sessions ([Hub.ServeStdio], [Hub.Serve]) and [Hub.Close] it.
type Hub struct {
	opts   Options
	logger *slog.Logger
	mgr    *upstream.Manager
	server *mcp.Server // go-sdk: initialize, ping, logging and the hub's own tools

	cat     atomic.Pointer[catalogState]
	rebuild chan struct{} // capacity 1: coalesces rebuild requests
	doneGen atomic.Uint64 // the manager Generation the served catalog reflects
	stop    chan struct{}
	done    chan struct{} // closed when the rebuild loop exits

	progress    progressTable
	subs        subscriptions
	fwd         forwards      // server→client requests forwarded to sessions
	auto        autoSwitch    // upstreams of scope auto that switched to per-session instances
	ilogs       instanceLogs  // log levels set on per-session instances
	askSeq      atomic.Uint64 // ids of requests the hub sends clients
	logs        upstreamLogs
	adminWrites writeLimiter
	metrics     *metrics
	tracer      *telemetry.Tracer // nil: tracing is off
	code        *codemode.Runner  // runs hub_run_code's scripts
	mgrOpts     upstream.Options  // the manager's effective options
	saveKick    chan struct{}     // capacity 1: wakes saveLoop
	wg          sync.WaitGroup    // followStore, saveLoop
	starting    atomic.Bool       // Start is running: not ready
	reconcileMu sync.Mutex        // serializes reconcile
	pins        pinState          // tool pins and what they hold back
	digests     digestKey         // the key of the digests approvals are bound to
	// statelessAsks are the requests the hub sent stateless clients, by
	// raw id, to the session that waits for the answer.
	statelessAsks sync.Map
	// parked are stateless clients' calls waiting for the client's answer
	// to what a session-era upstream asked, by request state (parked.go).
	parked sync.Map

	mu         sync.Mutex // guards following
	sessions   map[*session]struct{}
	parsed     map[string]*parsedInventory   // by upstream name
	shadowed   map[string]bool               // warnings already logged: shadow pairs, …
	cached     map[string]upstream.Inventory // capability cache read at Start
	local      map[string]bool               // added by AddUpstream: not stored, not gated
	configured map[string]ConfigServer       // the config file's upstreams (hubs without a store)
	approved   map[string]string             // approved fingerprints as the store said last (reconcile)
	sources    map[string]upstream.Source    // who registered each upstream, as the store said last (reconcile)
	notes      noteBatches                   // list_changed held while several upstreams change (notebatch.go)
	changed    chan struct{}                 // closed and replaced after each rebuild
	closed     bool

	closeOnce sync.Once
}

// New returns a hub with no upstreams.
func New(opts *Options) (*Hub, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "mcp-hub"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.FirstListWait == 0 {
		o.FirstListWait = 10 * time.Second
	}
	if o.Catalog.Policy != "" && o.Catalog.Policy != catalog.PolicyMerge && o.Catalog.Policy != catalog.PolicyPrefix {
		return nil, fmt.Errorf("catalog policy %q: must be merge or prefix", o.Catalog.Policy)
	}
	switch o.Admin {
	case "":
		o.Admin = AdminOn
	case AdminOn, AdminReadOnly, AdminOff:
	default:
		return nil, fmt.Errorf("admin tools %q: must be on, read-only or off", o.Admin)
	}
	switch o.Approval {
	case "":
		o.Approval = ApprovalAsk
	case ApprovalAsk, ApprovalAuto:
	default:
		return nil, fmt.Errorf("approval %q: must be ask or auto", o.Approval)
	}
	if o.StorePoll <= 0 {
		o.StorePoll = time.Second
	}
	if err := o.Expose.Check(); err != nil {
		return nil, err
	}
	switch o.CodeMode.Mode {
	case "":
		o.CodeMode.Mode = CodeModeOff
	case CodeModeOff:
	case CodeModeOn:
		o.Instructions = joinInstructions(o.Instructions, codemode.Instructions(o.CodeMode.Limits))
	default:
		return nil, fmt.Errorf("code mode %q: must be on or off", o.CodeMode.Mode)
	}
	// A script's result obeys the output limit of any tool, its calls the
	// size limit of a client's message.
	o.CodeMode.Limits.MaxResultChars = o.MaxToolOutputLength
	o.CodeMode.Limits.MaxArgBytes = o.MaxMessageBytes
	if o.MaxToolOutputLength <= 0 {
		o.CodeMode.Limits.MaxResultChars = max(o.MaxMessageBytes, 16<<20)
	}
	h := &Hub{
		opts:     o,
		logger:   o.Logger,
		rebuild:  make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		sessions: map[*session]struct{}{},
		parsed:   map[string]*parsedInventory{},
		local:    map[string]bool{},
		shadowed: map[string]bool{},
		changed:  make(chan struct{}),
		saveKick: make(chan struct{}, 1),
		metrics:  newMetrics(),
		tracer:   o.Tracer,
		code:     codemode.NewRunner(o.CodeMode.Limits),
	}
	h.logs.level = noLevel
	uo := o.Upstream
	uo.Logger = o.Logger
	uo.Events = h
	if uo.ClientCapabilities == nil {
		uo.ClientCapabilities = clientCapabilities
	}
	uo.OnChange = h.upstreamChanged
	uo.VetInstance = h.vetInstance
	uo.Gate = h.gate
	uo.Home = h.home
	if uo.ClientName == "" {
		uo.ClientName = o.Name
	}
	if uo.ClientVersion == "" {
		uo.ClientVersion = o.Version
	}
	sdkLogger := slog.New(quieter{o.Logger.Handler()}).With("component", "go-sdk")
	if uo.SDKLogger == nil {
		uo.SDKLogger = sdkLogger
	}
	h.mgr = upstream.NewManager(&uo)
	h.mgrOpts = h.mgr.Options()
	h.server = mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{
		Logger:       sdkLogger,
		Instructions: o.Instructions,
		// Session-era clients (initialize, list_changed, server→client
		// requests) on every transport; stateless 2026-07-28 clients on
		// the HTTP front (stateless.go; sdkTransport says which).
		SupportedProtocolVersions: append([]string{statelessVersion}, legacyVersions...),
		// Everything a hub may serve, whatever its upstreams offer now:
		// upstreams come and go, and list_changed says when.
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true},
			Completions: &mcp.CompletionCapabilities{},
			//lint:ignore SA1019 logging is deprecated in 2026-07-28 but the protocol versions the hub serves have it
			Logging: &mcp.LoggingCapabilities{},
		},
	})
	h.opts.Catalog.Own = append(append(h.registerAdminTools(), discoveryTools()...), h.codeTools()...)
	h.server.AddReceivingMiddleware(h.searchInstructions)
	h.cat.Store(h.newCatalogState(catalog.Build(nil, h.catalogOptions()), nil, nil, nil))
	go h.rebuildLoop()
	return h, nil
}

func (h *Hub) catalogOptions() *catalog.Options {
	o := h.opts.Catalog
	return &o
}

// ClientCapabilities is what a hub declares to an upstream of spec:
// sampling, elicitation and roots unless the spec forbids them. mcp-hub
// tools and doctor declare the same, so that a server that lists tools
// by what its client can do (server-everything's sampling, elicitation
// and roots tools) lists for them what it lists for the hub.
func ClientCapabilities(spec *upstream.Spec) *mcp.ClientCapabilities { return clientCapabilities(spec) }

// clientCapabilities is what the hub declares to an upstream: sampling,
// elicitation and roots unless the upstream's spec forbids them. Whether a
// given request reaches a client then depends on the session it is for.
func clientCapabilities(spec *upstream.Spec) *mcp.ClientCapabilities {
	on := func(b *bool) bool { return b == nil || *b }
	caps := &mcp.ClientCapabilities{}
	if on(spec.AllowSampling) {
		//lint:ignore SA1019 sampling is deprecated in 2026-07-28; upstreams speak 2025-11-25
		caps.Sampling = &mcp.SamplingCapabilities{}
	}
	if on(spec.AllowElicitation) {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
	}
	if on(spec.AllowRoots) {
		//lint:ignore SA1019 roots are deprecated in 2026-07-28; upstreams speak 2025-11-25
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	return caps
}

// Manager returns the hub's upstream manager.
func (h *Hub) Manager() *upstream.Manager { return h.mgr }

// Catalog returns the catalog the hub serves now.
func (h *Hub) Catalog() *catalog.Catalog { return h.cat.Load().cat }

// ErrNotAllowed is wrapped by the error of an upstream whose name is not in
// Options.AllowedServerNames.
var ErrNotAllowed = errors.New("not an allowed server name")

// allowed reports whether the allowlist admits name.
func (h *Hub) allowed(name string) error {
	if len(h.opts.AllowedServerNames) == 0 || slices.Contains(h.opts.AllowedServerNames, name) {
		return nil
	}
	return fmt.Errorf("%w: %q (allowed: %s)", ErrNotAllowed, name, strings.Join(h.opts.AllowedServerNames, ", "))
}

// AddUpstream adds an upstream for this process only, trusted as the
// program that embeds the hub: it is not stored and needs no approval. It
// fails (upstream.ErrExists) when an upstream of that name runs already;
// while it exists, a stored registration of the same name is not started.
// Eager upstreams start connecting at once.
func (h *Hub) AddUpstream(spec upstream.Spec, opts upstream.AddOptions) error {
	if err := h.allowed(spec.Name); err != nil {
		return err
	}
	h.mu.Lock()
	was := h.local[spec.Name]
	h.local[spec.Name] = true // before it runs: its gate asks
	h.mu.Unlock()
	if _, err := h.mgr.Add(spec, opts); err != nil {
		h.mu.Lock()
		h.local[spec.Name] = was
		h.mu.Unlock()
		return err
	}
	return nil
}

// isLocal reports whether name was added by AddUpstream.
func (h *Hub) isLocal(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.local[name]
}

// RemoveUpstream stops an upstream and removes its tools from the catalog.
// A stored registration of that name is deleted from the store.
func (h *Hub) RemoveUpstream(ctx context.Context, name string) error {
	if h.isLocal(name) || h.opts.Store == nil {
		if err := h.mgr.Remove(name); err != nil {
			return err
		}
		h.mu.Lock()
		delete(h.local, name)
		h.mu.Unlock()
		h.forgetUpstream(name)
		if h.opts.Store != nil {
			return h.reconcile(ctx) // a stored one of that name may run now
		}
		return nil
	}
	if err := h.opts.Store.Delete(ctx, name); err != nil {
		return err
	}
	_ = h.opts.Store.Audit(ctx, "code", "remove", name, nil)
	return h.reconcile(ctx)
}

// Close closes every session, stops every upstream (in parallel, waiting for
// their processes to exit) and stops the hub.
func (h *Hub) Close() error {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		sessions := make([]*session, 0, len(h.sessions))
		for s := range h.sessions {
			sessions = append(sessions, s)
		}
		h.mu.Unlock()
		for _, s := range sessions {
			s.close()
		}
		close(h.stop)
		h.wg.Wait() // the store follower and saver
		h.mgr.Close()
		<-h.done
		h.endBatches(func(*noteBatch) bool { return true }) // their timers
	})
	return nil
}

// ErrClosed is returned by a hub that was closed.
var ErrClosed = errors.New("hub closed")

func (h *Hub) addSession(s *session) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	h.sessions[s] = struct{}{}
	return nil
}

// sessionCount is the number of client sessions currently open.
func (h *Hub) sessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

func (h *Hub) removeSession(s *session) {
	h.mu.Lock()
	delete(h.sessions, s)
	h.mu.Unlock()
	h.progress.dropSession(s)
	h.dropSubscriptions(h.subs.remove(s, ""))
	h.dropInstances(s)
}

// toolResultError is the result the hub returns for a tool call it could not
// complete: a tool error (isError), so the model sees why.
func toolResultError(msg string) []byte {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": redact.Bound(msg)}},
		"isError": true,
	})
	return b
}

// joinInstructions appends b to the instructions a, as a paragraph.
func joinInstructions(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

// approveCmd is the command a person runs to approve name (or what
// changed in its tools) in this hub's store.
func (h *Hub) approveCmd(name string) string {
	return h.command("approve") + " " + name
}

// command is mcp-hub's subcommand sub as a person runs it on this hub's
// store (Options.Command, Options.ApproveCommand).
func (h *Hub) command(sub string) string {
	switch {
	case sub == "approve" && h.opts.ApproveCommand != "":
		return h.opts.ApproveCommand
	case h.opts.Command != nil:
		return h.opts.Command(sub)
	}
	return "mcp-hub " + sub
}
