//go:build linux

package upstream

import (
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcp-hub/mcp-hub/internal/proc"
)

// reapScan is how often, while stdio upstreams run, the reaper looks at the
// hub's children for re-parented processes (a few small reads of /proc).
const reapScan = time.Second

var (
	reaperOnce sync.Once
	reaperWake = make(chan struct{}, 1)
)

// Supervise makes this process a child subreaper, so processes that stdio
// upstreams start and that lose their parent (daemons, double forks) are
// re-parented to it rather than to init, and starts the goroutine that reaps
// them (see the top of supervise.go). Call it once, early, from the
// program's main: being a subreaper is a property of the whole process.
// Without it, stopping an upstream still kills every process of it that
// can be found; orphans are then reaped by init.
func Supervise() error {
	var err error
	reaperOnce.Do(func() {
		if err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			err = os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err)
			return
		}
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGCHLD)
		go reapLoop(sigs)
	})
	return err
}

func wakeReaper() {
	select {
	case reaperWake <- struct{}{}:
	default:
	}
}

// reapLoop runs for the life of the process: on SIGCHLD, and every
// reapScan while families exist, it looks at the hub's children.
func reapLoop(sigs <-chan os.Signal) {
	t := time.NewTimer(reapScan)
	for {
		select {
		case <-sigs:
		case <-reaperWake:
		case <-t.C:
		}
		busy := reapOrphans()
		t.Stop()
		if busy {
			t.Reset(reapScan)
		}
	}
}

// reapOrphans looks at every child of this process: a member of a family
// (never a root: cmd.Wait owns those) is remembered while it runs and
// reaped once it is a zombie. Children it cannot attribute are left alone.
// It reports whether any family exists.
func reapOrphans() bool {
	fams := snapshot()
	if len(fams) == 0 {
		return false
	}
	kids, err := proc.Children(os.Getpid())
	if err != nil {
		return true
	}
	for _, kid := range kids {
		st, err := proc.ReadStat(kid)
		if err != nil {
			continue
		}
		f := attribute(fams, st)
		if f == nil {
			continue
		}
		if st.Zombie() {
			f.reapOne(kid, st.Start)
		} else {
			f.mu.Lock()
			f.known[kid] = st.Start
			f.mu.Unlock()
		}
	}
	for _, f := range fams {
		forgetIfDone(f)
	}
	return true
}

// attribute returns the family a child of this process belongs to, or nil
// for a root (os/exec reaps those) and for a child of no family.
func attribute(fams []*family, st proc.Stat) *family {
	for _, f := range fams {
		if st.PID == f.root && st.Start == f.rootStart {
			return nil
		}
	}
	for _, f := range fams {
		f.mu.Lock()
		s, ok := f.known[st.PID]
		f.mu.Unlock()
		if ok && s == st.Start {
			return f
		}
	}
	for _, f := range fams {
		f.mu.Lock()
		rootGone := f.rootGone
		f.mu.Unlock()
		// While the root is not reaped, its pid (the group's id) is no
		// one else's.
		if !rootGone && st.PGID == f.root && st.Start >= f.rootStart {
			return f
		}
	}
	if st.Zombie() {
		return nil // its environment is gone
	}
	if m, ok := proc.MarkerOf(st.PID); ok {
		for _, f := range fams {
			if m == f.tag && st.Start >= f.rootStart {
				return f
			}
		}
	}
	return nil
}

// reapOne reaps the zombie child pid, a member of f that started at start.
// A process whose main thread is a zombie while its other threads still
// exit cannot be reaped yet (wait4 reports nothing): it stays a member, and
// the SIGCHLD that comes when it can be brings the reaper back.
func (f *family) reapOne(pid int, start uint64) {
	var ws unix.WaitStatus
	wpid, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	if (err == nil && wpid == pid) || errors.Is(err, unix.ECHILD) {
		f.mu.Lock()
		if f.known[pid] == start {
			delete(f.known, pid)
		}
		f.mu.Unlock()
	}
}

// reap reaps the members that are zombie children of this process and
// forgets the ones that are gone. It reports whether none is left (alive,
// or a zombie someone has yet to reap).
func (f *family) reap() bool {
	f.mu.Lock()
	known := make(map[int]uint64, len(f.known))
	for p, s := range f.known {
		known[p] = s
	}
	f.mu.Unlock()
	self := os.Getpid()
	left := 0
	for pid, start := range known {
		st, err := proc.ReadStat(pid)
		switch {
		case err != nil || st.Start != start:
			f.forget(pid, start) // gone (the pid may be someone else's now)
		case st.Zombie() && st.PPID == self:
			f.reapOne(pid, start)
			if s, err := proc.ReadStat(pid); err == nil && s.Start == start {
				left++
			}
		case st.Zombie():
			f.forget(pid, start) // dead; its parent reaps it
		default:
			left++
		}
	}
	return left == 0
}

func (f *family) forget(pid int, start uint64) {
	f.mu.Lock()
	if f.known[pid] == start {
		delete(f.known, pid)
	}
	f.mu.Unlock()
}
