// Package probe connects every upstream the hub would run, once, the way
// the hub runs them, builds the catalog the hub would serve, and stops
// everything again; it never changes the store. What it reports is what
// mcp-hub tools and mcp-hub doctor print: the merged tool catalog
// ([NewToolsReport]) and a diagnosis of each upstream ([Diagnose]).
package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/oauth"
	"github.com/mcp-hub/mcp-hub/toolsearch"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Store is what a probe reads of the registration store (a
// *persist.Store is one).
type Store interface {
	List(ctx context.Context) ([]upstream.Registration, error)
	Get(ctx context.Context, name string) (upstream.Registration, error)
	Broken(ctx context.Context) ([]upstream.BrokenRegistration, error)
}

// Options are a probe's settings.
type Options struct {
	// ClientVersion is the version the probe's client reports to the
	// upstreams (as the hub's).
	ClientVersion string
	// Logger receives what the upstreams log; nil discards it.
	Logger *slog.Logger
	// Command is a subcommand of mcp-hub as a person runs it on the store
	// probed ("mcp-hub remove --data-dir /srv/hub"), for the messages that
	// say how to change a registration there (upstream.Home); nil:
	// "mcp-hub remove".
	Command func(sub string) string
}

// stopLimit bounds stopping the upstreams after a probe.
const stopLimit = 10 * time.Second

// Target is an upstream of the config file or the store.
type Target struct {
	Spec   upstream.Spec
	Source string // "config" (the file) or the registration's source
	// NotRun says why the hub would not run it ("" when it would): not
	// approved, rejected, disabled.
	NotRun string
	// Stored is set for store registrations: their approval is checked
	// again right before they start.
	Stored bool
	// Broken says why a stored registration cannot be decoded ("" when it
	// can); such a target is never run (NotRun says so too).
	Broken string
}

// Targets lists the upstreams of the config file and the store, sorted
// by name, as the hub would run them: the file wins a name both define,
// and only approved registrations run.
func Targets(ctx context.Context, cfg *config.Config, st Store) ([]Target, error) {
	var out []Target
	inFile := map[string]bool{}
	for _, s := range cfg.Servers {
		inFile[s.Spec.Name] = true
		t := Target{Spec: s.Spec, Source: string(upstream.SourceConfig)}
		if s.Disabled {
			t.NotRun = "disabled in " + fileOr(cfg.File)
		}
		out = append(out, t)
	}
	regs, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range regs {
		if inFile[r.Spec.Name] {
			continue
		}
		t := Target{Spec: r.Spec, Source: string(r.Source), Stored: true}
		switch {
		case r.Source == upstream.SourceConfig:
			t.NotRun = StaleWhy(cfg, r.Spec.Name)
		case r.Approval == upstream.ApprovalRejected:
			t.NotRun = "rejected"
		case r.Approval != upstream.ApprovalApproved:
			t.NotRun = fmt.Sprintf("not approved (%s): review it with mcp-hub approve %s", r.ApprovalState(), r.Spec.Name)
		case !r.Approved():
			t.NotRun = fmt.Sprintf("not approved: what it runs changed since its approval; review it with mcp-hub approve %s", r.Spec.Name)
		case !r.Enabled:
			t.NotRun = "disabled"
		}
		out = append(out, t)
	}
	broken, err := st.Broken(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range broken {
		if !inFile[b.Name] { // else the file's entry replaces it when a hub starts
			out = append(out, Target{Spec: upstream.Spec{Name: b.Name}, Source: string(b.Source), Stored: true,
				NotRun: BrokenWhy(b) + "; " + BrokenFix(b.Name), Broken: BrokenWhy(b)})
		}
	}
	slices.SortFunc(out, func(a, b Target) int { return strings.Compare(a.Spec.Name, b.Spec.Name) })
	return out, nil
}

// Result is what one probed upstream did.
type Result struct {
	Target
	Status  upstream.Status
	Inv     upstream.Inventory
	Stderr  []string      // the last lines it wrote to stderr
	Ready   time.Duration // from start to connected (spawn or dial, initialize, listing)
	Settled bool          // its first attempt finished within the wait
	// NonJSON counts the stdout lines that were not JSON-RPC (at least
	// one when any); FirstNonJSON is the first of them.
	NonJSON      int
	FirstNonJSON string
	// Rejected are the items the catalog could not parse, with the reason.
	Rejected []string
	// Auth is the login state of an upstream with an OAuth client.
	Auth string
}

// Connected reports whether the upstream connected and was listed.
func (r *Result) Connected() bool {
	return r.NotRun == "" && r.Status.State == upstream.StateConnected
}

// Report is the outcome of running the targets once.
type Report struct {
	Results []*Result
	Catalog *catalog.Catalog
	// Search indexes the catalog's tools as the hub does (hub_search_tools).
	Search *toolsearch.Index
	// Searching is set when the hub serves this catalog in search mode
	// (catalog.expose search, or auto over searchAbove tools); Listed are
	// then the tools its tools/list holds (the hub's own and
	// alwaysExpose), in its order.
	Searching bool
	Listed    []catalog.Entry
	Wait      time.Duration // the bound on waiting for the upstreams

	homes map[string]upstream.Home // where each target is defined
}

// Home says where the named upstream is defined: its config file, or the
// store (and the commands that change a registration there).
func (p *Report) Home(name string) upstream.Home { return p.homes[name] }

// Run starts every target that would run, waits (bounded by the
// initialize and list timeouts, and by ctx) until each has connected or
// failed once, builds the catalog of those that connected, and stops them
// all. It returns once every child process has exited; when ctx ended
// first, it returns the report of what it saw and ctx's error.
func Run(ctx context.Context, cfg *config.Config, targets []Target, st Store, o *Options) (*Report, error) {
	if o == nil {
		o = &Options{}
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	capture := &nonJSONCapture{seen: map[string]*nonJSON{}}
	logger = slog.New(&captureHandler{next: logger.Handler(), sink: capture})
	changed := make(chan struct{}, 1)
	opts := upstreamOptions(cfg, len(targets), o.ClientVersion)
	opts.Logger = logger
	opts.OnChange = func(string) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	// As the hub's gate: a stored registration runs only with the launch
	// spec a person approved, checked again right before it starts.
	stored := map[string]bool{}
	homes := map[string]upstream.Home{}
	for _, t := range targets {
		stored[t.Spec.Name] = t.Stored
		homes[t.Spec.Name] = upstream.Home{Source: upstream.Source(t.Source), ConfigFile: cfg.File, Command: o.Command}
	}
	opts.Home = func(name string) upstream.Home { return homes[name] }
	opts.Gate = func(ctx context.Context, spec upstream.Spec) error {
		if !stored[spec.Name] {
			return nil
		}
		r, err := st.Get(ctx, spec.Name)
		if err != nil {
			return fmt.Errorf("%w: %v", hub.ErrApprovalRequired, err)
		}
		if !r.Approved() || r.ApprovedHash != spec.Fingerprint() {
			return fmt.Errorf("%w: run `mcp-hub approve %s` to review and approve what it runs", hub.ErrApprovalRequired, spec.Name)
		}
		return nil
	}
	if ts, ok := st.(upstream.TokenStore); ok {
		opts.Auth = oauth.New(oauth.Options{Store: ts, Logger: logger}) // stored tokens; nobody is asked to log in
	}
	// What the hub declares, so a server lists what it lists for the hub.
	opts.ClientCapabilities = hub.ClientCapabilities
	ev := &events{}
	opts.Events = ev
	mgr := upstream.NewManager(&opts)
	ev.mgr = mgr
	mo := mgr.Options()

	p := &Report{homes: homes}
	started := map[string]time.Time{}
	ups := map[string]*upstream.Upstream{}
	for _, t := range targets {
		p.Results = append(p.Results, &Result{Target: t})
		if t.NotRun != "" {
			continue
		}
		spec := t.Spec
		spec.Start = upstream.StartEager // lazy ones too: list what they offer
		started[spec.Name] = time.Now()
		u, err := mgr.Add(spec, upstream.AddOptions{})
		if err != nil {
			mgr.Close()
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
		ups[spec.Name] = u
		p.Wait = max(p.Wait, pick(spec.InitTimeout.Std(), mo.InitTimeout)+pick(spec.ListTimeout.Std(), mo.ListTimeout))
	}
	p.Wait += 2 * time.Second

	deadline := time.NewTimer(p.Wait)
	defer deadline.Stop()
wait:
	for {
		all := true
		for _, u := range ups {
			if !u.Status().Settled {
				all = false
			}
		}
		if all {
			break
		}
		select {
		case <-changed:
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}

	var srcs []catalog.Source
	descs := map[string]string{}
	for _, r := range p.Results {
		u := ups[r.Spec.Name]
		if u == nil {
			continue
		}
		r.Status, r.Inv = u.Status(), u.Inventory()
		r.Settled = r.Status.Settled
		listedOnly(u, &r.Status)
		if a, ok := u.AuthStatus(); ok {
			r.Auth = a.String()
		}
		if r.Status.State == upstream.StateConnected {
			r.Ready = r.Status.Since.Sub(started[r.Spec.Name])
			src := catalog.Source{Server: r.Spec.Name, Filter: catalog.Filter{Allow: r.Spec.Tools.Allow, Deny: r.Spec.Tools.Deny}}
			descs[r.Spec.Name] = toolsearch.ServerDescription(r.Spec.Description, r.Inv.ServerInfo)
			src.Tools = parseItems(r.Inv.Tools, catalog.ParseTool, &r.Rejected)
			src.Prompts = parseItems(r.Inv.Prompts, catalog.ParsePrompt, &r.Rejected)
			src.Resources = parseItems(r.Inv.Resources, catalog.ParseResource, &r.Rejected)
			src.Templates = parseItems(r.Inv.Templates, catalog.ParseTemplate, &r.Rejected)
			srcs = append(srcs, src)
		}
	}
	p.Catalog = catalog.Build(srcs, &catalog.Options{
		Policy:    catalog.Policy(cfg.CatalogPolicy),
		Separator: cfg.CatalogSeparator,
		Own:       ownTools(cfg),
	})
	p.Search = toolsearch.Build(toolsearch.FromCatalog(p.Catalog, srcs, descs), nil)
	if ex := cfg.Exposure(); ex.Searching(p.Catalog) {
		p.Searching, p.Listed = true, ex.Listed(p.Catalog)
	}

	closed := make(chan struct{})
	go func() {
		mgr.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(stopLimit):
		logger.Error("stopping the upstreams took too long", "limit", stopLimit)
	}
	for _, r := range p.Results {
		if u := ups[r.Spec.Name]; u != nil {
			r.Stderr = u.StderrTail()
			if n := capture.get(r.Spec.Name); n != nil {
				r.NonJSON, r.FirstNonJSON = n.count, n.first
			}
		}
	}
	return p, ctx.Err()
}

// upstreamOptions are the upstream options the hub runs with, for one
// attempt per upstream and no health pings.
func upstreamOptions(cfg *config.Config, n int, clientVersion string) upstream.Options {
	o := cfg.UpstreamOptions(nil)
	o.ClientName, o.ClientVersion = "mcp-hub", clientVersion
	o.Backoff.MaxAttempts = 1
	o.HealthInterval = -1
	o.HealthFailures = 0
	o.MaxConcurrentSpawns = max(cfg.MaxSpawns, min(n, 16)) // time each one's start, not its wait for a slot
	return o
}

func parseItems(raws []json.RawMessage, parse func([]byte) (catalog.Item, error), rejected *[]string) []catalog.Item {
	var out []catalog.Item
	for _, raw := range raws {
		it, err := parse(raw)
		if err != nil {
			*rejected = append(*rejected, err.Error())
			continue
		}
		out = append(out, it)
	}
	return out
}

// ownTools returns the hub's own tools (hub_*) as the configuration selects
// them (the admin tools, tool search, code mode), taken from a hub built
// with the configuration's options that never starts.
func ownTools(cfg *config.Config) []catalog.Item {
	o := cfg.HubOptions(config.HubParams{})
	o.Logger = slog.New(slog.DiscardHandler)
	h, err := hub.New(o)
	if err != nil {
		return nil
	}
	defer h.Close()
	var items []catalog.Item
	for _, e := range h.Catalog().ServerEntries("") {
		if it, err := catalog.ParseTool(e.Raw); err == nil {
			items = append(items, it)
		}
	}
	return items
}

func pick(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
