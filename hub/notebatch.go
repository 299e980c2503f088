package hub

// A change of several upstreams at once (the hub's start, a reload of the
// config file, a store change made elsewhere) rebuilds the catalog once per
// upstream that comes up, goes or changes, each at its own time: the
// sessions were told list_changed after each rebuild that changed a list,
// and a client re-listed as many times (TestReloadNotifiesOnce, per
// session: a start with four servers 3 or 4 tools/list_changed, a reload
// restarting three servers, removing one and adding one 4 or 5, three
// servers registered at once elsewhere 3; now 1 each). While such a
// change takes effect, the sessions' list_changed notifications are held,
// each kind owed at most once per session, and sent when the attempts of
// the upstreams the change touched (added, or sent a command such as a
// restart) are over and the catalog reflects them, or after batchLimit:
// one that was hanging on its initialize before holds back nothing. The
// catalog itself is swapped in at every rebuild as before: a session that
// lists meanwhile gets what is there, and is told once more at the end.

import (
	"slices"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// batchLimit bounds how long a change holds the notifications: an upstream
// that takes longer to come up is announced on its own.
const batchLimit = 10 * time.Second

// listKinds are the list_changed notifications a session is owed.
type listKinds struct{ tools, prompts, resources bool }

func (k listKinds) any() bool { return k.tools || k.prompts || k.resources }

// noteBatches holds the list_changed notifications while changes of
// several upstreams take effect.
type noteBatches struct {
	mu   sync.Mutex
	open []*noteBatch
	owed map[*session]listKinds
}

// noteBatch is one change of several upstreams.
type noteBatch struct {
	before map[*upstream.Upstream]uint64 // the upstreams before the change, and the commands they were sent
	// touched are the upstreams the change added or sent a command, once
	// it is applied (nil before): it ends when none is busy.
	touched []*upstream.Upstream
	applied bool
	timer   *time.Timer
}

// batchNotes holds the sessions' list_changed notifications from now until
// the change the caller is making took effect: call the function it
// returns once the change is applied (the upstreams started, stopped or
// updated); the notifications owed are sent when the upstreams are quiet,
// or after batchLimit.
func (h *Hub) batchNotes() (applied func()) {
	b := &noteBatch{before: map[*upstream.Upstream]uint64{}}
	for _, u := range h.mgr.List() {
		b.before[u] = u.CommandsSent()
	}
	n := &h.notes
	n.mu.Lock()
	n.open = append(n.open, b)
	b.timer = time.AfterFunc(batchLimit, func() { h.endBatches(func(x *noteBatch) bool { return x == b }) })
	n.mu.Unlock()
	return func() {
		var touched []*upstream.Upstream
		for _, u := range h.mgr.List() {
			if sent, ok := b.before[u]; !ok || u.CommandsSent() > sent {
				touched = append(touched, u)
			}
		}
		n.mu.Lock()
		b.touched, b.applied, b.before = touched, true, nil
		n.mu.Unlock()
		h.upstreamChanged("") // a rebuild sees whether it is over already
	}
}

// notifyLists tells s which lists changed, or owes it that while a batch
// is open.
func (h *Hub) notifyLists(s *session, k listKinds) {
	if !k.any() {
		return
	}
	n := &h.notes
	n.mu.Lock()
	if len(n.open) > 0 {
		if n.owed == nil {
			n.owed = map[*session]listKinds{}
		}
		o := n.owed[s]
		n.owed[s] = listKinds{o.tools || k.tools, o.prompts || k.prompts, o.resources || k.resources}
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	s.sendLists(k)
}

// sendLists sends s the list_changed notifications of k.
func (s *session) sendLists(k listKinds) {
	if k.tools {
		s.notify("notifications/tools/list_changed", nil, nil)
	}
	if k.prompts {
		s.notify("notifications/prompts/list_changed", nil, nil)
	}
	if k.resources {
		s.notify("notifications/resources/list_changed", nil, nil)
	}
}

// endQuietBatches ends the applied batches whose upstreams' attempts are
// over, once the catalog reflects them (rebuildNow asks after each
// rebuild).
func (h *Hub) endQuietBatches() {
	n := &h.notes
	n.mu.Lock()
	var ready []*noteBatch
	for _, b := range n.open {
		if b.applied {
			ready = append(ready, b)
		}
	}
	n.mu.Unlock()
	if len(ready) == 0 || !h.catalogCurrent() {
		return
	}
	ready = slices.DeleteFunc(ready, func(b *noteBatch) bool { return !quiet(b.touched) })
	h.endBatches(func(b *noteBatch) bool { return slices.Contains(ready, b) })
}

// endBatches ends the open batches that end says to; once none is open,
// the sessions still there get what they are owed.
func (h *Hub) endBatches(end func(*noteBatch) bool) {
	n := &h.notes
	n.mu.Lock()
	n.open = slices.DeleteFunc(n.open, func(b *noteBatch) bool {
		if end(b) {
			b.timer.Stop()
			return true
		}
		return false
	})
	var owed map[*session]listKinds
	if len(n.open) == 0 {
		owed, n.owed = n.owed, nil
	}
	n.mu.Unlock()
	if len(owed) == 0 {
		return
	}
	h.mu.Lock()
	var to []*session
	for s := range owed {
		if _, ok := h.sessions[s]; ok {
			to = append(to, s)
		}
	}
	h.mu.Unlock()
	for _, s := range to {
		s.sendLists(owed[s])
	}
}

// quiet reports whether none of us has a command to apply or an attempt
// under way.
func quiet(us []*upstream.Upstream) bool {
	for _, u := range us {
		if attemptBusy(u.Status(), u.CommandsSent()) {
			return false
		}
	}
	return true
}

// attemptBusy reports whether an upstream of status st has a command of
// the sent ones still to apply, or a connection attempt under way.
func attemptBusy(st upstream.Status, sent uint64) bool {
	return st.Applied < sent || st.State == upstream.StateConnecting ||
		(st.State == upstream.StatePending && st.Attempts == 0 && !st.Settled)
}
