package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Store is what the hub needs from persistent storage. *persist.Store
// satisfies it; errors for a missing or duplicate name wrap
// upstream.ErrNotFound and upstream.ErrExists.
type Store interface {
	List(ctx context.Context) ([]upstream.Registration, error)
	Get(ctx context.Context, name string) (upstream.Registration, error)
	Create(ctx context.Context, r upstream.Registration) (upstream.Registration, error)
	// CreateAll registers all of rs in one transaction, or none of them.
	CreateAll(ctx context.Context, rs []upstream.Registration) ([]upstream.Registration, error)
	Update(ctx context.Context, name string, fn func(*upstream.Registration) error) (upstream.Registration, error)
	Delete(ctx context.Context, name string) error
	// Broken lists the stored registrations that cannot be decoded (List
	// leaves them out); Get of one returns an upstream.BrokenRegistration.
	Broken(ctx context.Context) ([]upstream.BrokenRegistration, error)
	SaveInventory(ctx context.Context, name string, inv upstream.Inventory) error
	Inventories(ctx context.Context) (map[string]upstream.Inventory, error)
	SaveStatus(ctx context.Context, st upstream.Status) error
	// Audit records who did what. detail is marshalled to JSON and must not
	// hold secret values.
	Audit(ctx context.Context, actor, action, upstream string, detail any) error
	// Changed reports whether another process changed the store since the
	// last call.
	Changed(ctx context.Context) (bool, error)
	// Pins returns the tool pins of every upstream that has any, by name.
	Pins(ctx context.Context) (map[string][]upstream.Pin, error)
	// RecordPins stores pins with their history and an audit entry in one
	// transaction; see upstream.PinRecord for its errors.
	RecordPins(ctx context.Context, name string, rec upstream.PinRecord) error
}

// ConfigServer is an upstream declared in the hub's configuration file.
type ConfigServer struct {
	Spec     upstream.Spec
	Disabled bool
}

// ErrApprovalRequired is wrapped by the error of an upstream that may not be
// started because no person approved its current launch spec.
var ErrApprovalRequired = errors.New("approval required")

// Start registers the configuration file's upstreams, restores every stored
// registration, and starts the approved, enabled, auto-connecting ones. With
// a Store it then keeps following the store (changes made by the mcp-hub
// command line, or another hub) until Close.
func (h *Hub) Start(ctx context.Context, config []ConfigServer) error {
	h.starting.Store(true) // not ready (/readyz) until it returns
	defer h.starting.Store(false)
	defer h.batchNotes()() // sessions hear once that the upstreams came up
	if err := h.allowedConfig(config); err != nil {
		return err
	}
	if h.opts.Store == nil {
		return h.applyConfig(config)
	}
	if err := h.syncConfig(ctx, config); err != nil {
		return err
	}
	if inv, err := h.opts.Store.Inventories(ctx); err == nil {
		h.mu.Lock()
		h.cached = inv
		h.mu.Unlock()
	} else {
		h.logger.Warn("read capability cache", "err", err)
	}
	if _, err := h.opts.Store.Changed(ctx); err != nil { // baseline
		return fmt.Errorf("store: %w", err)
	}
	if err := h.reconcile(ctx); err != nil {
		return err
	}
	h.wg.Go(h.followStore)
	h.wg.Go(h.saveLoop)
	return nil
}

// syncConfig makes the store's source=config rows match the file (see
// syncConfigOnce). Hubs that share a store (replicas starting together)
// may register the same names at once: the one that finds them taken
// reads the store again and compares, so the file is stored once, without
// a leader.
func (h *Hub) syncConfig(ctx context.Context, config []ConfigServer) error {
	for attempt := 1; ; attempt++ {
		err := h.syncConfigOnce(ctx, config)
		if err == nil || !errors.Is(err, upstream.ErrExists) || attempt == 5 {
			return err
		}
		h.logger.Debug("config upstreams registered meanwhile by another hub on the store; comparing again", "err", err)
	}
}

// syncConfigOnce makes the store's source=config rows match the file: the
// file is the operator's truth for its names. A stored registration of
// another source under a name the file uses is replaced, and the
// replacement is reported (log and audit), never silent.
func (h *Hub) syncConfigOnce(ctx context.Context, config []ConfigServer) error {
	st := h.opts.Store
	if err := h.replaceBroken(ctx, config); err != nil {
		return err
	}
	stored, err := st.List(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	byName := map[string]upstream.Registration{}
	for _, r := range stored {
		byName[r.Spec.Name] = r
	}
	inFile := map[string]bool{}
	var create []upstream.Registration // one commit for all the new ones: a first start does not wait for one fsync per upstream
	for _, c := range config {
		inFile[c.Spec.Name] = true
		want := upstream.Registration{
			Spec: c.Spec, Enabled: !c.Disabled, AutoConnect: true,
			Source: upstream.SourceConfig, Approval: upstream.ApprovalApproved, ApprovedHash: c.Spec.Fingerprint(),
		}
		old, ok := byName[c.Spec.Name]
		switch {
		case !ok:
			create = append(create, want)
		case old.Source != upstream.SourceConfig:
			h.logger.Warn("upstream defined in the config file and registered at run time; the config file wins",
				"upstream", c.Spec.Name, "replaced_source", old.Source, "file", h.opts.ConfigFile)
			_ = st.Audit(ctx, "config", "replace", c.Spec.Name, map[string]any{
				"reason": "the config file defines this name", "replacedSource": old.Source,
				"replacedLaunch": old.Spec.RedactedLaunch()})
			fallthrough
		default:
			if old.Source == upstream.SourceConfig && reflect.DeepEqual(old.Spec, c.Spec) && old.Enabled == want.Enabled && old.Approved() {
				continue
			}
			if _, err := st.Update(ctx, c.Spec.Name, func(r *upstream.Registration) error {
				r.Spec, r.Enabled, r.AutoConnect = want.Spec, want.Enabled, true
				r.Source, r.Approval, r.ApprovedHash = want.Source, want.Approval, want.ApprovedHash
				return nil
			}); err != nil {
				return fmt.Errorf("register %s from the config file: %w", c.Spec.Name, err)
			}
		}
	}
	if _, err := st.CreateAll(ctx, create); err != nil {
		return fmt.Errorf("register the config file's upstreams: %w", err)
	}
	for _, r := range stored {
		if r.Source == upstream.SourceConfig && !inFile[r.Spec.Name] {
			if err := st.Delete(ctx, r.Spec.Name); err != nil && !errors.Is(err, upstream.ErrNotFound) {
				return fmt.Errorf("forget %s (no longer in the config file): %w", r.Spec.Name, err)
			}
		}
	}
	return nil
}

// reconcile makes the running upstreams match the store: approved
// registrations run (enabled or not), everything else does not. It returns
// once the upstreams it stops are shut down (process trees included); it
// waits for them, in parallel, after letting go of reconcileMu, so a slow
// shutdown never holds up a change to another upstream.
func (h *Hub) reconcile(ctx context.Context) error {
	stops, err := h.reconcileLocked(ctx)
	for _, stopped := range stops {
		<-stopped
	}
	return err
}

// reconcileLocked applies the store under reconcileMu and returns the
// shutdowns it started.
func (h *Hub) reconcileLocked(ctx context.Context) ([]<-chan struct{}, error) {
	h.reconcileMu.Lock()
	defer h.reconcileMu.Unlock()
	var stops []<-chan struct{}
	regs, err := h.opts.Store.List(ctx)
	if err != nil {
		return stops, fmt.Errorf("store: %w", err)
	}
	if err := h.loadPins(ctx); err != nil {
		return stops, fmt.Errorf("store: %w", err) // never serve unchecked tools
	}
	h.setPolicies(regs)
	h.rememberApprovals(regs)
	h.warnBroken(ctx)
	want := map[string]upstream.Registration{}
	for _, r := range regs {
		if r.Approval != upstream.ApprovalApproved {
			continue
		}
		if !r.Approved() {
			// Approved, but not this launch spec: it was changed outside
			// the hub. Nothing runs until a person approves it again.
			h.revoke(ctx, r.Spec.Name, "the stored spec differs from the one that was approved")
			continue
		}
		if err := h.allowed(r.Spec.Name); err != nil {
			h.warnOnce("not-allowed\x00"+r.Spec.Name, "registered upstream not started", "upstream", r.Spec.Name, "err", err)
			continue
		}
		want[r.Spec.Name] = r
	}
	for _, u := range h.mgr.List() {
		if h.isLocal(u.Name()) {
			delete(want, u.Name()) // the embedding program's own wins
			continue
		}
		if _, ok := want[u.Name()]; !ok {
			if stopped, err := h.mgr.Stop(u.Name()); err == nil {
				h.forgetUpstream(u.Name())
				stops = append(stops, stopped)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		r := want[name]
		u, ok := h.mgr.Get(name)
		if !ok {
			var cached *upstream.Inventory
			h.mu.Lock()
			if inv, ok := h.cached[name]; ok {
				inv.Variants = nil // instances' listings, not the upstream's
				cached = &inv
			}
			h.mu.Unlock()
			spec := r.Spec
			if !r.AutoConnect && spec.Start == upstream.StartEager {
				spec.Start = upstream.StartLazy
			}
			if _, err := h.mgr.Add(spec, upstream.AddOptions{Disabled: !r.Enabled, Cached: cached}); err != nil {
				h.logger.Error("start upstream", "upstream", name, "err", err)
			}
			continue
		}
		spec := r.Spec
		if !r.AutoConnect && spec.Start == upstream.StartEager {
			spec.Start = upstream.StartLazy
		}
		if cur := u.Spec(); !reflect.DeepEqual(cur, spec) {
			if err := h.mgr.Update(spec); err != nil {
				h.logger.Error("update upstream", "upstream", name, "err", err)
			}
		}
		if disabled := u.Status().State == upstream.StateDisabled; disabled == r.Enabled {
			_ = h.mgr.SetEnabled(name, r.Enabled)
		}
	}
	return stops, nil
}

// rememberApprovals keeps the fingerprints the store approved, for gate
// while the store cannot be reached, and who registered each upstream,
// for home.
func (h *Hub) rememberApprovals(regs []upstream.Registration) {
	approved := make(map[string]string, len(regs))
	sources := make(map[string]upstream.Source, len(regs))
	for _, r := range regs {
		if r.Approved() {
			approved[r.Spec.Name] = r.ApprovedHash
		}
		sources[r.Spec.Name] = r.Source
	}
	h.mu.Lock()
	h.approved, h.sources = approved, sources
	h.mu.Unlock()
}

// home says where the named upstream is defined, for the messages that say
// what to change about it (upstream.Options.Home): the config file, or
// the store and the commands that change a registration there. An
// upstream the embedding program added has no home to name.
func (h *Hub) home(name string) upstream.Home {
	h.mu.Lock()
	src, stored := h.sources[name]
	_, inFile := h.configured[name]
	local := h.local[name]
	h.mu.Unlock()
	switch {
	case local:
		return upstream.Home{}
	case inFile && h.opts.Store == nil:
		src = upstream.SourceConfig
	case !stored:
		return upstream.Home{}
	}
	return upstream.Home{Source: src, ConfigFile: h.opts.ConfigFile, Command: h.command}
}

// lastApproved returns the fingerprint the store approved for the named
// upstream when the hub last read it ("" for none).
func (h *Hub) lastApproved(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.approved[name]
}

// errStillApproved aborts a revoke whose registration was approved again
// (or changed) since it was read.
var errStillApproved = errors.New("approval holds")

// revoke puts an upstream whose approval no longer holds back to pending,
// noting that what it runs changed since its approval. One approved again
// meanwhile is left alone.
func (h *Hub) revoke(ctx context.Context, name, why string) {
	_, err := h.opts.Store.Update(ctx, name, func(r *upstream.Registration) error {
		if r.Approval != upstream.ApprovalApproved || r.Approved() {
			return errStillApproved
		}
		r.Approval, r.ApprovedHash, r.ApprovalNote = upstream.ApprovalPending, "", upstream.NoteChangedSinceApproval
		return nil
	})
	if err == nil {
		h.logger.Warn("approval revoked: upstream will not run until approved again", "upstream", name, "reason", why)
		_ = h.opts.Store.Audit(ctx, "hub", "revoke", name, map[string]string{"reason": why})
	}
}

// gate runs before every connection attempt: with a store, the launch spec
// about to run must be the one a person approved.
func (h *Hub) gate(ctx context.Context, spec upstream.Spec) error {
	if err := h.allowed(spec.Name); err != nil {
		return err
	}
	if h.opts.Store == nil || h.isLocal(spec.Name) {
		return nil
	}
	r, err := h.opts.Store.Get(ctx, spec.Name)
	if err != nil {
		if errors.Is(err, upstream.ErrStoreUnavailable) && h.lastApproved(spec.Name) == spec.Fingerprint() {
			// The store is down: what it said last still holds (the hub
			// runs what was approved then, as it keeps serving the rest).
			h.warnOnce("gate-offline\x00"+spec.Name, "store unreachable: (re)starting an upstream under the approval read before the outage",
				"upstream", spec.Name, "err", err)
			return nil
		}
		return fmt.Errorf("%w: %v", ErrApprovalRequired, err)
	}
	switch {
	case r.Approved() && r.ApprovedHash == spec.Fingerprint():
		return nil
	case r.Approved():
		// The store holds another approved spec than the one about to run
		// (a change the next reconcile applies): not this one.
		return fmt.Errorf("%w: what is about to run is not what was approved; the approved change applies shortly", ErrApprovalRequired)
	case r.Approval == upstream.ApprovalApproved:
		h.revoke(ctx, spec.Name, "the stored spec differs from the one that was approved")
	}
	return fmt.Errorf("%w: run `%s` to review and approve what it runs", ErrApprovalRequired, h.approveCmd(spec.Name))
}

// Reload applies an edited configuration file to the running hub: the
// upstreams it adds start, the ones it drops stop, changed ones restart
// with their new spec, and the others, and every client session, are left
// alone. Clients hear list_changed when their lists change.
func (h *Hub) Reload(ctx context.Context, config []ConfigServer) error {
	if err := h.allowedConfig(config); err != nil {
		return err
	}
	defer h.batchNotes()() // sessions hear once of every upstream it changes
	if h.opts.Store == nil {
		return h.applyConfig(config)
	}
	if err := h.syncConfig(ctx, config); err != nil {
		return err
	}
	return h.reconcile(ctx)
}

// allowedConfig checks the config file's names against the allowlist.
func (h *Hub) allowedConfig(config []ConfigServer) error {
	for _, c := range config {
		if err := h.allowed(c.Spec.Name); err != nil {
			return fmt.Errorf("upstream %s in the config file: %w", c.Spec.Name, err)
		}
	}
	return nil
}

// applyConfig makes the running upstreams match config, for a hub without
// a store.
func (h *Hub) applyConfig(config []ConfigServer) error {
	h.mu.Lock()
	old := h.configured
	h.configured = map[string]ConfigServer{}
	for _, c := range config {
		h.configured[c.Spec.Name] = c
	}
	h.mu.Unlock()
	var errs []error
	var stops []<-chan struct{}
	for name := range old {
		if _, keep := h.configured[name]; !keep {
			if stopped, err := h.mgr.Stop(name); err == nil {
				h.forgetUpstream(name)
				stops = append(stops, stopped)
			}
		}
	}
	defer func() { // in parallel, once the rest is applied
		for _, stopped := range stops {
			<-stopped
		}
	}()
	for _, c := range config {
		u, ok := h.mgr.Get(c.Spec.Name)
		if !ok {
			if _, err := h.mgr.Add(c.Spec, upstream.AddOptions{Disabled: c.Disabled}); err != nil {
				errs = append(errs, fmt.Errorf("upstream %s: %w", c.Spec.Name, err))
			}
			continue
		}
		if !reflect.DeepEqual(u.Spec(), c.Spec) {
			if err := h.mgr.Update(c.Spec); err != nil {
				errs = append(errs, fmt.Errorf("upstream %s: %w", c.Spec.Name, err))
			}
		}
		if disabled := u.Status().State == upstream.StateDisabled; disabled != c.Disabled {
			_ = h.mgr.SetEnabled(c.Spec.Name, !c.Disabled)
		}
	}
	return errors.Join(errs...)
}

// StoreNotifier is a [Store] that can tell when another process commits a
// change (PostgreSQL's LISTEN/NOTIFY): the hub then applies it at once
// instead of at its next poll. Notify returns a channel closed at the next
// such change; nil means never (the hub polls Changed every StorePoll).
type StoreNotifier interface {
	Notify() <-chan struct{}
}

// followStore reconciles whenever another process changes the store (the
// command line approves an upstream, another replica registers one): at
// once when the store notifies, else at its next poll. It exits when the
// hub closes.
func (h *Hub) followStore() {
	t := time.NewTicker(h.opts.StorePoll)
	defer t.Stop()
	notifier, _ := h.opts.Store.(StoreNotifier)
	notified := func() <-chan struct{} {
		if notifier == nil {
			return nil
		}
		return notifier.Notify()
	}
	note := notified()
	failing := false
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		case <-note:
		}
		note = notified() // before Changed: a change committed from now on closes it
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		changed, err := h.opts.Store.Changed(ctx)
		if err == nil && changed {
			applied := h.batchNotes() // an import of several servers is heard once
			err = h.reconcile(ctx)
			applied()
		}
		cancel()
		switch {
		case err != nil && !failing:
			// Once per outage: the hub keeps serving what it has.
			h.logger.Warn("follow store: changes made elsewhere are not applied until it is back", "err", err)
		case err == nil && failing:
			h.logger.Info("follow store: the store is back")
		}
		failing = err != nil
	}
}

// saveLoop writes listed inventories (the capability cache) and state
// changes to the store, off every hot path. It exits when the hub closes.
func (h *Hub) saveLoop() {
	type saved struct {
		version  uint64
		variants string // instanceVariants' digest
	}
	savedInv := map[string]saved{}
	savedState := map[string]upstream.Status{}
	for {
		select {
		case <-h.stop:
			return
		case <-h.saveKick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h.savePins(ctx)
		for _, u := range h.mgr.List() {
			name := u.Name()
			inv := u.Inventory()
			var digest string
			inv.Variants, digest = h.instanceVariants(name)
			if now := (saved{inv.Version, digest}); !inv.Stale && inv.Version > 0 && savedInv[name] != now {
				if err := h.opts.Store.SaveInventory(ctx, name, inv); err != nil && !errors.Is(err, upstream.ErrNotFound) {
					h.logger.Warn("save capability cache", "upstream", name, "err", err)
				} else {
					savedInv[name] = now
				}
			}
			st := u.Status()
			if prev, ok := savedState[name]; !ok || prev.State != st.State || prev.LastError != st.LastError || prev.PID != st.PID || prev.Tools != st.Tools || !slices.Equal(prev.Sessions, st.Sessions) {
				if err := h.opts.Store.SaveStatus(ctx, st); err != nil {
					h.logger.Warn("save status", "upstream", name, "err", err)
				} else {
					savedState[name] = st
				}
			}
		}
		cancel()
	}
}

// forgetUpstream drops what the hub remembers about a removed upstream.
func (h *Hub) forgetUpstream(name string) {
	h.mu.Lock()
	delete(h.parsed, name)
	delete(h.cached, name)
	h.mu.Unlock()
	h.auto.switched.Delete(name) // a new registration of the name starts shared
}

// auditDetail is a JSON-safe description of a spec for the audit log: the
// launch spec with its secret values masked.
func auditDetail(spec upstream.Spec) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"launch": spec.RedactedLaunch(), "description": spec.Description})
	return b
}

// warnOnce logs a warning the first time key is seen.
func (h *Hub) warnOnce(key, msg string, args ...any) {
	h.mu.Lock()
	seen := h.shadowed[key]
	h.shadowed[key] = true
	h.mu.Unlock()
	if !seen {
		h.logger.Warn(msg, args...)
	}
}
