package upstream

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures a [Manager]. A zero field selects the default given in
// its comment.
type Options struct {
	// Logger receives the manager's and the upstreams' records (nil: discard).
	Logger *slog.Logger
	// SDKLogger is handed to go-sdk's clients (nil: discard).
	SDKLogger *slog.Logger
	// ClientName and ClientVersion identify the hub in initialize
	// ("mcp-hub", "dev").
	ClientName, ClientVersion string
	// ProtocolVersion the hub asks for (DefaultProtocolVersion).
	ProtocolVersion string
	// InitTimeout bounds spawn/dial plus initialize (30s).
	InitTimeout time.Duration
	// ListTimeout bounds listing tools, prompts and resources (15s).
	ListTimeout time.Duration
	// CallTimeout bounds one call (120s).
	CallTimeout time.Duration
	// MaxInFlight caps concurrent calls per upstream (10).
	MaxInFlight int
	// MaxMessageBytes caps one inbound message (16 MiB).
	MaxMessageBytes int
	// ShutdownGrace is each wait of the stdio shutdown sequence: after
	// closing stdin, and after SIGTERM (2s).
	ShutdownGrace time.Duration
	// Backoff is the reconnect schedule (DefaultBackoff).
	Backoff Backoff
	// HealthInterval is how often an idle connection is pinged (30s;
	// negative: never). HealthFailures pings in a row must fail before the
	// upstream is declared unhealthy and reconnected (3).
	HealthInterval time.Duration
	HealthFailures int
	// KeepAlive is how often an idle HTTP or SSE upstream is pinged, so a
	// dead one is noticed within about two seconds even without an event
	// stream (1s; negative: never).
	KeepAlive time.Duration
	// MaxConcurrentSpawns caps connection attempts running at once (4).
	MaxConcurrentSpawns int
	// MaxInstances caps the per-session instances of one upstream running
	// at once, unless its spec sets its own cap (16). MaxTotalInstances
	// caps those of all upstreams together (64). See
	// [Manager.StartInstance].
	MaxInstances      int
	MaxTotalInstances int
	// InheritEnv names extra variables children inherit from the hub.
	InheritEnv []string
	// Environ and LookupEnv stand in for os.Environ and os.LookupEnv.
	Environ   func() []string
	LookupEnv func(string) (string, bool)
	// Events receives notifications and server→client requests.
	Events Events
	// OnChange is called after an upstream's status or inventory changed.
	// It must not block.
	OnChange func(name string)
	// VetInstance, when set, is asked what a per-session instance
	// withholds of each listing it makes (see [Withheld]), before a
	// request can reach it after that listing. [Upstream.Withhold] changes
	// it later. It must not block.
	VetInstance func(i *Upstream, inv Inventory) Withheld
	// Gate, when set, is asked before every connection attempt; an error
	// stops the attempt (it becomes the upstream's last error).
	Gate func(ctx context.Context, spec Spec) error
	// ClientCapabilities returns the capabilities the hub declares to an
	// upstream (none by default).
	ClientCapabilities func(*Spec) *mcp.ClientCapabilities
	// ProcessGroups, when set, records the process group of every stdio
	// upstream while it exists.
	ProcessGroups ProcessGroups
	// Auth, when set, gives sse and http upstreams an OAuth client.
	Auth Authenticator
	// Home, when set, says where the named upstream is defined, so that
	// the messages that say what to change about it (hints, a refused
	// redirect) say where. It must not block.
	Home func(name string) Home
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.SDKLogger == nil {
		o.SDKLogger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.ClientName == "" {
		o.ClientName = "mcp-hub"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = DefaultProtocolVersion
	}
	o.InitTimeout = pick(o.InitTimeout, 30*time.Second)
	o.ListTimeout = pick(o.ListTimeout, 15*time.Second)
	o.CallTimeout = pick(o.CallTimeout, 120*time.Second)
	o.ShutdownGrace = pick(o.ShutdownGrace, 2*time.Second)
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 10
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = framing.DefaultMax
	}
	o.Backoff = o.Backoff.withDefaults()
	if o.HealthInterval == 0 {
		o.HealthInterval = 30 * time.Second
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = time.Second
	}
	if o.HealthFailures <= 0 {
		o.HealthFailures = 3
	}
	if o.MaxConcurrentSpawns <= 0 {
		o.MaxConcurrentSpawns = 4
	}
	if o.MaxInstances <= 0 {
		o.MaxInstances = 16
	}
	if o.MaxTotalInstances <= 0 {
		o.MaxTotalInstances = 64
	}
	return o
}

// Manager owns every registered upstream and its supervisor, and their
// per-session instances (see [Manager.StartInstance]).
type Manager struct {
	opts       Options
	spawnSlots chan struct{} // semaphore: connection attempts at once

	gen atomic.Uint64 // see Generation

	stopping sync.WaitGroup // upstreams removed and still shutting down

	mu        sync.Mutex // guards following; taken before an upstream's mu
	upstreams map[string]*Upstream
	instances int // per-session instances of every upstream, but those stopping
	closed    bool
}

// Generation is a counter that increases before any change to an upstream's
// status, inventory or spec, or to the set of upstreams, becomes visible to
// readers. A reader that records the generation, then reads upstreams, has
// seen every change up to that generation; one that sees a change has a
// generation that includes it. The OnChange hook runs after the change.
func (m *Manager) Generation() uint64 { return m.gen.Load() }

// NewManager returns a manager with no upstreams. opts may be nil.
func NewManager(opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	return &Manager{
		opts:       o,
		spawnSlots: make(chan struct{}, o.MaxConcurrentSpawns),
		upstreams:  map[string]*Upstream{},
	}
}

// Options returns the manager's effective options (defaults filled in).
func (m *Manager) Options() Options { return m.opts }

// Errors of the manager.
var (
	ErrExists   = errors.New("upstream already registered")
	ErrNotFound = errors.New("upstream not found")
	ErrStopped  = errors.New("manager closed")
)

// AddOptions tunes how an upstream starts.
type AddOptions struct {
	// Disabled registers the upstream without connecting it.
	Disabled bool
	// Cached is a previously listed inventory served (marked stale) until
	// the upstream has been listed live.
	Cached *Inventory
}

// Add registers an upstream and starts its supervisor. Eager upstreams
// start connecting at once; lazy ones on their first call.
func (m *Manager) Add(spec Spec, opts AddOptions) (*Upstream, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrStopped
	}
	if _, ok := m.upstreams[spec.Name]; ok {
		return nil, fmt.Errorf("%w: %s", ErrExists, spec.Name)
	}
	u := m.newUpstream(spec, nil)
	if opts.Cached != nil {
		u.inv = *opts.Cached
		u.inv.Stale = true
		u.status.Tools, u.status.Stale = len(u.inv.Tools), true
	}
	start := StateConnecting
	switch {
	case opts.Disabled:
		start = StateDisabled
	case spec.Start == StartLazy:
		start = StatePending
	}
	m.gen.Add(1)
	m.upstreams[spec.Name] = u
	go u.run(start)
	return u, nil
}

// newUpstream returns an upstream of spec, not yet running; logger
// attributes, when given, name it in its records beside its name.
func (m *Manager) newUpstream(spec Spec, attrs []any) *Upstream {
	secret := redact.NewScrubber()
	u := &Upstream{
		m:        m,
		name:     spec.Name,
		secret:   secret,
		logger:   slog.New(redact.NewHandler(m.opts.Logger.Handler(), secret)).With("upstream", spec.Name).With(attrs...),
		inflight: make(chan struct{}, pickInt(spec.MaxInFlight, m.opts.MaxInFlight)),
		cmds:     make(chan command, 4),
		kick:     make(chan struct{}, 1),
		abandon:  make(chan struct{}, 1),
		relist:   make(chan struct{}, 1),
		stop:     make(chan struct{}),
		stopped:  make(chan struct{}),
		spec:     spec,
		changed:  make(chan struct{}),
	}
	u.stderr = newStderrLog(u.logger, secret)
	u.status = Status{Name: spec.Name, Transport: spec.Transport, State: StatePending, Since: time.Now()}
	return u
}

func pickInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Get returns the upstream with the given name.
func (m *Manager) Get(name string) (*Upstream, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.upstreams[name]
	return u, ok
}

// List returns every upstream, sorted by name.
func (m *Manager) List() []*Upstream {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Upstream, 0, len(m.upstreams))
	for _, n := range sortedNames(m.upstreams) {
		out = append(out, m.upstreams[n])
	}
	return out
}

// Remove stops an upstream (closing its connection, which for stdio takes
// down every process it started) and forgets it. It returns when the
// upstream is fully shut down.
func (m *Manager) Remove(name string) error {
	stopped, err := m.Stop(name)
	if err != nil {
		return err
	}
	<-stopped
	return nil
}

// Stop forgets an upstream at once and starts shutting it down; the
// channel is closed when that is done (the shutdown is bounded: see
// Options.ShutdownGrace). The name is free for a new upstream meanwhile,
// and Close waits for the shutdown too.
func (m *Manager) Stop(name string) (<-chan struct{}, error) {
	m.mu.Lock()
	u, ok := m.upstreams[name]
	var insts []*Upstream
	if ok {
		m.gen.Add(1)
		delete(m.upstreams, name)
		insts = m.takeInstancesLocked(u)
		m.stopping.Add(1)
	}
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	close(u.stop)
	for _, i := range insts {
		close(i.stop)
	}
	done := make(chan struct{})
	go func() {
		defer m.stopping.Done()
		<-u.stopped
		for _, i := range insts {
			<-i.stopped
		}
		m.gen.Add(1)
		m.changed(name)
		close(done)
	}()
	return done, nil
}

// Update replaces an upstream's spec. A change that affects how it is
// reached (transport, command, args, env, cwd, url, headers, protocol
// version) restarts it; other changes apply to the next call.
func (m *Manager) Update(spec Spec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	u, ok := m.Get(spec.Name)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, spec.Name)
	}
	u.mu.Lock()
	m.gen.Add(1)
	old := u.spec
	u.spec = spec
	u.status.Transport = spec.Transport
	u.mu.Unlock()
	if needsRestart(&old, &spec) {
		st := u.Status()
		if st.State != StateDisabled && !st.Manual {
			u.send(cmdRestart)
		}
	}
	m.updateInstances(u, &old, &spec)
	m.changed(spec.Name)
	return nil
}

func needsRestart(a, b *Spec) bool {
	return a.Transport != b.Transport || a.Command != b.Command || !reflect.DeepEqual(a.Args, b.Args) ||
		!reflect.DeepEqual(a.Env, b.Env) || a.Cwd != b.Cwd || a.URL != b.URL ||
		!reflect.DeepEqual(a.Headers, b.Headers) || a.ProtocolVersion != b.ProtocolVersion || a.Scope != b.Scope || !reflect.DeepEqual(a.OAuth, b.OAuth)
}

// Connect asks an upstream to connect now (clearing a manual disconnect and
// the backoff).
func (m *Manager) Connect(name string) error { return m.command(name, cmdConnect) }

// Disconnect stops an upstream and keeps it down until Connect.
func (m *Manager) Disconnect(name string) error { return m.command(name, cmdDisconnect) }

// Restart reconnects an upstream now.
func (m *Manager) Restart(name string) error { return m.command(name, cmdRestart) }

// SetEnabled enables or disables an upstream.
func (m *Manager) SetEnabled(name string, enabled bool) error {
	if enabled {
		return m.command(name, cmdEnable)
	}
	return m.command(name, cmdDisable)
}

func (m *Manager) command(name string, c command) error {
	u, ok := m.Get(name)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	u.holdFor(c, u.send(c))
	m.instancesFollow(u, c) // after the hold: an instance started before it is stopped
	return nil
}

// Close stops every upstream in parallel and waits for all of them, and
// for those removed and still shutting down.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	ups := m.upstreams
	m.upstreams = map[string]*Upstream{}
	var insts []*Upstream
	for _, u := range ups {
		insts = append(insts, m.takeInstancesLocked(u)...)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, u := range slices.Concat(slices.Collect(maps.Values(ups)), insts) {
		close(u.stop)
		wg.Go(func() { <-u.stopped })
	}
	wg.Wait()
	m.stopping.Wait()
}

func (m *Manager) changed(name string) {
	if m.opts.OnChange != nil {
		m.opts.OnChange(name)
	}
}
