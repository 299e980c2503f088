package upstream

// Supervision of the processes of stdio upstreams.
//
// A stdio upstream is a process tree: the child the hub starts (the root)
// and whatever it starts (npx → npm → node, a language server, a daemon).
// Stopping the upstream must stop all of it, and nothing may hold the hub
// up while it does.
//
// On Linux:
//   - [Supervise] makes the hub a child subreaper (PR_SET_CHILD_SUBREAPER):
//     a descendant whose parent exits (the double fork of daemon(3), a
//     grandchild of an npx wrapper that exited) is re-parented to the hub
//     instead of to init, so it stays under the hub's control and the hub
//     can reap it.
//   - Every root gets a marker in its environment, unique to it
//     (internal/proc explains how the marker, the process group, the parent
//     links and start times together find every process of an upstream,
//     whatever its session or group). The family below remembers the
//     members it has seen (pid and start time).
//   - Stopping an upstream (stdioLink.shutdown) closes its stdin, SIGTERMs
//     and then SIGKILLs the root's group, then SIGTERMs every member still
//     found, waits the grace period, SIGKILLs the rest and repeats until
//     none is found; then it reaps the members that were re-parented to the
//     hub.
//   - Reaping is by pid only, never wait(-1): os/exec's cmd.Wait owns the
//     roots (and an embedding program owns its own children), and a
//     blanket wait would steal their exit statuses. The reaper goroutine
//     started by Supervise reaps a zombie child of the hub only when it is
//     a member of a family and not its root: a member the hub remembered
//     (pid and start time), or a process in a family's group (readable even
//     from a zombie). On SIGCHLD and every reapScan while families exist
//     it also looks at the hub's live children: a re-parented process with
//     a family's marker is remembered then, so that it is reaped when it
//     later exits on its own while its upstream runs. (A daemon that leaves
//     the group and exits within reapScan of being re-parented is not
//     recognised; its zombie stays until the hub exits.)
//
// Elsewhere (macOS, the BSDs) there is no subreaper and no /proc: stopping
// an upstream signals its process group only, and a descendant that left
// the group survives the upstream. Windows kills the direct child only.
//
// Whatever survives the graceful sequence, [KillAll] SIGKILLs at once: the
// hub calls it when its shutdown runs out of time.

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/proc"
)

// family is the processes of one stdio upstream.
type family struct {
	tag       string // the marker value its processes carry
	root      int
	rootStart uint64

	mu       sync.Mutex // guards following
	known    map[int]uint64
	rootGone bool // cmd.Wait reaped the root
	closed   bool // the upstream stopped: kept only to reap what is left
}

// families is every family whose processes may still exist.
var families struct {
	sync.Mutex
	set map[*family]struct{}
}

var markerSeq atomic.Uint64

// hubIdentity is this process's pid and start time, which prefix the
// markers (0 start where it cannot be read).
var hubIdentity = sync.OnceValues(func() (int, uint64) {
	pid := os.Getpid()
	start, _ := proc.StartTime(pid)
	return pid, start
})

// newFamily returns the family of a root about to be started, with its
// marker.
func newFamily() *family {
	pid, start := hubIdentity()
	return &family{tag: proc.Marker(pid, start, markerSeq.Add(1)), known: map[int]uint64{}}
}

// started records the root and makes the family visible to the reaper.
func (f *family) started(pid int) {
	f.root = pid
	f.rootStart, _ = proc.StartTime(pid)
	families.Lock()
	if families.set == nil {
		families.set = map[*family]struct{}{}
	}
	families.set[f] = struct{}{}
	families.Unlock()
	wakeReaper()
}

// owner describes the family to internal/proc.
func (f *family) owner() proc.Owner {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := proc.Owner{Root: f.root, RootStart: f.rootStart, Group: f.root, Tag: f.tag, Known: make(map[int]uint64, len(f.known))}
	for p, s := range f.known {
		o.Known[p] = s
	}
	if f.rootGone {
		o.Root = 0 // reaped: the pid may be someone else's now
	}
	return o
}

// members returns the family's live processes (the root included while it
// runs) and remembers them; ok is false where the process table cannot be
// read, and then only the process group is known.
func (f *family) members() (pids []int, ok bool) {
	ms, err := proc.Members(f.owner())
	if err != nil {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range ms {
		if s.PID == f.root && s.Start == f.rootStart {
			pids = append(pids, s.PID)
			continue
		}
		f.known[s.PID] = s.Start
		pids = append(pids, s.PID)
	}
	return pids, true
}

// signal sends sig to every member found, and to the root's process group
// while the root is not reaped (its id names no other group then) or where
// members cannot be found.
func (f *family) signal(sig syscall.Signal) {
	pids, ok := f.members()
	f.mu.Lock()
	rootGone := f.rootGone
	f.mu.Unlock()
	if !ok || !rootGone {
		_ = signalGroup(f.root, sig)
	}
	for _, p := range pids {
		_ = signalPID(p, sig)
	}
}

// alive reports whether anything of the family runs (the root aside once
// it is reaped).
func (f *family) alive() bool {
	if pids, ok := f.members(); ok {
		return len(pids) > 0
	}
	return groupAlive(f.root)
}

// rootReaped records that cmd.Wait reaped the root.
func (f *family) rootReaped() {
	f.mu.Lock()
	f.rootGone = true
	f.mu.Unlock()
}

// killRest takes down what is left once the root is gone: SIGTERM, up to
// grace for it to exit, then SIGKILL until nothing is found. It returns
// whether nothing is left.
func (f *family) killRest(grace time.Duration) bool {
	if !f.alive() {
		return true
	}
	f.signal(sigTerm)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // each look is a scan of the process table
		if !f.alive() {
			return true
		}
	}
	// A process forked between a scan and the signal is found by the next
	// scan (it carries the marker, or its parent is a member).
	for range 50 {
		f.signal(sigKill)
		time.Sleep(10 * time.Millisecond)
		if !f.alive() {
			return true
		}
	}
	return false
}

// finish marks the upstream stopped, reaps what it can now, and leaves the
// rest (zombies the kernel is still re-parenting) to the reaper.
func (f *family) finish() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	deadline := time.Now().Add(time.Second)
	for !f.reap() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	forgetIfDone(f)
}

// forgetIfDone drops a stopped family once nothing of it is left to reap.
func forgetIfDone(f *family) {
	f.mu.Lock()
	done := f.closed && f.rootGone && len(f.known) == 0
	f.mu.Unlock()
	if done {
		families.Lock()
		delete(families.set, f)
		families.Unlock()
	}
}

// snapshot returns the families.
func snapshot() []*family {
	families.Lock()
	defer families.Unlock()
	out := make([]*family, 0, len(families.set))
	for f := range families.set {
		out = append(out, f)
	}
	return out
}

// KillAll SIGKILLs every process of every stdio upstream of this process at
// once, without the graceful sequence, and returns how many it signalled.
// The hub calls it when its shutdown runs out of time, so it exits with
// nothing left behind.
func KillAll() int {
	n := 0
	for range 5 {
		found := 0
		for _, f := range snapshot() {
			// The scan comes first, as in signal: a root killed through
			// its group may be reaped before a later scan sees it, and go
			// uncounted.
			pids, _ := f.members()
			f.mu.Lock()
			rootGone := f.rootGone
			f.mu.Unlock()
			if !rootGone {
				_ = signalGroup(f.root, sigKill)
			}
			for _, p := range pids {
				if signalPID(p, sigKill) == nil {
					found++
				}
			}
		}
		n += found
		if found == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, f := range snapshot() {
		f.reap()
	}
	return n
}
