package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Per-session instances. An upstream whose scope is session (or auto, once
// the hub switched it) runs one instance per client session: an Upstream
// of its own, with its own supervisor, connection, process group and
// stderr, made from the registered upstream's spec. Instances are not
// registered: Get and List never return them, the catalog is built from
// the registered upstream's listing (the shared listing, kept in the
// capability cache), and they are reached through the registered one
// ([Upstream.Instances]). They share the manager's spawn slots, gate and
// events, and stop with the same kill-and-reap sequence as any upstream:
// when their owner stops them, when the registered upstream is stopped or
// removed, and when the manager closes.

// instanceList is a registered upstream's live instances.
type instanceList struct {
	mu   sync.Mutex // guards list; taken after Manager.mu
	list []*Upstream
	// differs is set on an instance once it listed other items than the
	// shared listing (logged once per instance).
	differs atomic.Bool
}

// InstanceLimitError is the error of an instance the caps refuse: Limit
// instances of the upstream Name run already, or Limit of all upstreams
// together when Total is set.
type InstanceLimitError struct {
	Name  string
	Limit int
	Total bool
}

func (e *InstanceLimitError) Error() string {
	if e.Total {
		return fmt.Sprintf("upstream %q: the hub already runs %d per-session instances of its upstreams, its limit (limits.maxTotalInstances); close a client session or raise the limit", e.Name, e.Limit)
	}
	return fmt.Sprintf("upstream %q already runs %d instances, one per client session, its limit (maxInstances); close another client session that uses it, or raise the limit", e.Name, e.Limit)
}

// StartInstance starts an instance of the registered upstream name for
// owner (the hub passes a client session; [Conn.Owner] returns it for
// every connection of the instance). label names the owner in logs and
// status. The instance starts connecting at once; a call waits for it as
// for any upstream. It fails when there is no such upstream, when it is
// disabled or disconnected by an admin ([*NotReadyError]), or when the
// upstream's or the manager's cap of instances is reached
// ([*InstanceLimitError]). Its owner stops it with [Manager.StopInstance].
func (m *Manager) StartInstance(name string, owner any, label string) (*Upstream, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrStopped
	}
	t, ok := m.upstreams[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	spec, st := t.Spec(), t.Status()
	if st.State == StateDisabled || st.Manual {
		return nil, &NotReadyError{Name: name, State: st.State, LastError: st.LastError}
	}
	t.insts.mu.Lock()
	defer t.insts.mu.Unlock()
	if h := t.held.Load(); h != nil && st.Applied < h.sent {
		// Checked under insts.mu, which instancesFollow takes after the
		// hold was set: an instance is refused here or stopped there.
		return nil, &NotReadyError{Name: name, State: h.state}
	}
	if limit := pickInt(spec.MaxInstances, m.opts.MaxInstances); len(t.insts.list) >= limit {
		return nil, &InstanceLimitError{Name: name, Limit: limit}
	}
	if m.instances >= m.opts.MaxTotalInstances {
		return nil, &InstanceLimitError{Name: name, Limit: m.opts.MaxTotalInstances, Total: true}
	}
	u := m.newUpstream(spec, []any{"session", label})
	u.parent, u.owner, u.label = t, owner, label
	t.insts.list = append(t.insts.list, u)
	m.instances++
	m.gen.Add(1)
	go u.run(StateConnecting)
	return u, nil
}

// StopInstance stops an instance (closing its connection, which for stdio
// takes down every process it started) and forgets it. The channel is
// closed when that is done; the shutdown is bounded as for any upstream,
// and Close waits for it too. Stopping an instance again, or one already
// stopped with its registered upstream, just waits for it.
func (m *Manager) StopInstance(u *Upstream) <-chan struct{} {
	t := u.parent
	if t == nil {
		return u.stopped // not an instance: its name is what stops it
	}
	m.mu.Lock()
	t.insts.mu.Lock()
	i := slices.Index(t.insts.list, u)
	if i >= 0 {
		t.insts.list = slices.Delete(t.insts.list, i, i+1)
		m.instances--
		m.gen.Add(1)
		m.stopping.Add(1)
	}
	t.insts.mu.Unlock()
	m.mu.Unlock()
	if i < 0 {
		return u.stopped
	}
	close(u.stop)
	done := make(chan struct{})
	go func() {
		defer m.stopping.Done()
		<-u.stopped
		m.gen.Add(1)
		m.changed(u.name)
		close(done)
	}()
	return done
}

// takeInstancesLocked takes every instance of t out of its list, for the
// caller to stop (close its stop channel, wait for stopped). m.mu is held.
func (m *Manager) takeInstancesLocked(t *Upstream) []*Upstream {
	t.insts.mu.Lock()
	defer t.insts.mu.Unlock()
	out := t.insts.list
	t.insts.list = nil
	m.instances -= len(out)
	return out
}

// updateInstances gives t's instances t's new spec, restarting them when
// the change affects how they are reached. When the upstream becomes
// shared, its instances stop: their sessions use the shared one now.
func (m *Manager) updateInstances(t *Upstream, old, spec *Spec) {
	for _, i := range t.Instances() {
		if spec.Scope == ScopeShared {
			m.StopInstance(i)
			continue
		}
		i.mu.Lock()
		i.spec = *spec
		i.status.Transport = spec.Transport
		i.mu.Unlock()
		if needsRestart(old, spec) {
			i.send(cmdRestart)
		}
	}
}

// hold is a disconnect or disable an admin sent to a registered upstream:
// its instances are stopped at once, and StartInstance refuses new ones
// from then on, also before the supervisor applied the command (until
// Status.Applied reaches sent, the status does not show it yet). sent is
// the command's number ([Upstream.CommandsSent]), state the state it
// leads to.
type hold struct {
	sent  uint64
	state State
}

// holdFor records the hold of admin command c, number n: a disconnect or
// disable holds, a later connect or restart lifts the hold, a later
// enable lifts a disable's. A command sent before the hold (concurrent
// admin commands) leaves it alone.
func (u *Upstream) holdFor(c command, n uint64) {
	switch c {
	case cmdDisconnect:
		u.held.Store(&hold{n, StateDisconnected})
	case cmdDisable:
		u.held.Store(&hold{n, StateDisabled})
	case cmdConnect, cmdRestart, cmdEnable:
		for {
			h := u.held.Load()
			if h == nil || h.sent > n || (c == cmdEnable && h.state != StateDisabled) || u.held.CompareAndSwap(h, nil) {
				return
			}
		}
	}
}

// instancesFollow applies an admin command sent to a registered upstream
// to its instances: a disconnect or disable stops them (no new one starts
// until the upstream is connected or enabled again), a restart restarts
// them.
func (m *Manager) instancesFollow(t *Upstream, c command) {
	for _, i := range t.Instances() {
		switch c {
		case cmdDisconnect, cmdDisable:
			m.StopInstance(i)
		case cmdRestart:
			i.send(cmdRestart)
		}
	}
}

// Instances returns the live instances of a registered upstream (none for
// an instance).
func (u *Upstream) Instances() []*Upstream {
	u.insts.mu.Lock()
	defer u.insts.mu.Unlock()
	return slices.Clone(u.insts.list)
}

// Parent returns the registered upstream u is an instance of, or nil when
// u is a registered upstream.
func (u *Upstream) Parent() *Upstream { return u.parent }

// Owner returns whom the instance runs for (see [Manager.StartInstance]),
// or nil for a registered upstream.
func (u *Upstream) Owner() any { return u.owner }

// Label returns the name the instance's owner was given, or "".
func (u *Upstream) Label() string { return u.label }

// Stopped is closed once the upstream has shut down (stopped, removed, or
// its manager closed).
func (u *Upstream) Stopped() <-chan struct{} { return u.stopped }

// Stopping reports whether the upstream was told to stop (it may still be
// shutting down).
func (u *Upstream) Stopping() bool {
	select {
	case <-u.stop:
		return true
	default:
		return false
	}
}

// Scope returns the upstream's scope.
func (u *Upstream) Scope() Scope {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.spec.Scope
}

// listsOnly reports whether the upstream's own connection only lists: a
// registered upstream with scope session serves its sessions through their
// instances, so after listing what it offers (the catalog's source) it
// stops.
func (u *Upstream) listsOnly() bool {
	return u.parent == nil && u.Scope() == ScopeSession
}

// errPerSession is the error of a call made to a registered upstream that
// serves its sessions through instances.
func (u *Upstream) errPerSession() error {
	return fmt.Errorf("upstream %q runs one instance per client session; requests go to the calling session's instance", u.name)
}

// instanceListed compares what instance i listed with the shared listing,
// the catalog's source. While the registered upstream has no live listing
// (it never listed, or only its cached inventory is known), i's becomes
// it. Otherwise an instance that lists other items is logged, once: the
// catalog keeps the shared listing, and what the instance may serve of its
// own is the hub's to decide (Options.VetInstance).
func (u *Upstream) instanceListed(i *Upstream, inv Inventory) {
	u.mu.Lock()
	shared := u.inv
	u.mu.Unlock()
	if shared.Version == 0 || shared.Stale {
		u.update(func(_ *Status, cur *Inventory) {
			if cur.Version == 0 || cur.Stale {
				v := cur.Version + 1
				*cur = inv
				cur.Version, cur.Stale = v, false
			}
		})
		return
	}
	for _, k := range []struct {
		kind     string
		got, has []json.RawMessage
	}{
		{"tools", inv.Tools, shared.Tools},
		{"prompts", inv.Prompts, shared.Prompts},
		{"resources", inv.Resources, shared.Resources},
		{"resource templates", inv.Templates, shared.Templates},
	} {
		if !sameItems(k.got, k.has) && !i.insts.differs.Swap(true) {
			i.logger.Warn("an instance lists other "+k.kind+" than the shared listing; the catalog keeps the shared listing",
				"instance_items", len(k.got), "shared_items", len(k.has))
			return
		}
	}
}

// sameItems reports whether two listings hold the same items, byte for
// byte, in any order.
func sameItems(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	sorted := func(l []json.RawMessage) []json.RawMessage {
		c := slices.Clone(l)
		slices.SortFunc(c, func(x, y json.RawMessage) int { return bytes.Compare(x, y) })
		return c
	}
	return slices.EqualFunc(sorted(a), sorted(b), func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// listedStatus is the status of a registered upstream that serves its
// sessions through instances, once it has listed: stopped, its items
// listed (as for an idle upstream).
func listedStatus(s *Status) {
	s.State, s.Idle, s.PID, s.NextRetry, s.LastError = StateDisconnected, true, 0, time.Time{}, ""
}
