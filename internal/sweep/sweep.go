// Package sweep keeps a register of the process groups a hub started, so
// that a hub starting later can kill what a hub that died (SIGKILL, a crash,
// power cut) left behind.
//
// The parent-death signal takes a stdio upstream down with the hub, but not
// the processes the upstream started itself (npx → node, a daemon). Every
// upstream runs in its own process group, so the register records each
// group with its leader's start time and the hub's own pid and start time.
// At start a hub kills what is left of the hubs in the register that no
// longer run, with the notion of "belongs to an upstream" the hub uses to
// stop one (internal/proc): the members of their groups, every process
// carrying one of their upstreams' markers whatever its session or group
// (a daemon that called setsid), and the descendants of those. It never
// touches a group of a hub that is alive, nor a group whose id the system
// has given to a newer process since.
//
// The register is a small text file shared by every hub on one data
// directory; updates hold an exclusive lock on a companion lock file.
package sweep

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-hub/mcp-hub/internal/proc"
)

// Register records the process groups of one hub process.
type Register struct {
	off      bool
	path     string
	hubPID   int
	hubStart uint64
	mu       sync.Mutex // serialises this process's updates
}

// Open returns the register in path for the calling process. Nothing is
// read or written until it is used. Where processes cannot be identified
// (no /proc), the register is off: it records and sweeps nothing.
func Open(path string) *Register {
	pid := os.Getpid()
	start, err := proc.StartTime(pid)
	if err != nil {
		return &Register{off: true}
	}
	return &Register{path: path, hubPID: pid, hubStart: start}
}

// entry is one line: hub pid, hub start, group id, leader start, name.
type entry struct {
	hubPID      int
	hubStart    uint64
	pgid        int
	leaderStart uint64
	name        string
}

func (e entry) String() string {
	return fmt.Sprintf("%d %d %d %d %s", e.hubPID, e.hubStart, e.pgid, e.leaderStart, e.name)
}

func parse(line string) (entry, bool) {
	f := strings.SplitN(line, " ", 5)
	if len(f) != 5 {
		return entry{}, false
	}
	var e entry
	var err error
	if e.hubPID, err = strconv.Atoi(f[0]); err != nil {
		return entry{}, false
	}
	if e.hubStart, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return entry{}, false
	}
	if e.pgid, err = strconv.Atoi(f[2]); err != nil || e.pgid <= 1 {
		return entry{}, false
	}
	if e.leaderStart, err = strconv.ParseUint(f[3], 10, 64); err != nil {
		return entry{}, false
	}
	e.name = f[4]
	return e, true
}

// update rewrites the register under the lock; fn edits the entries.
func (r *Register) update(fn func([]entry) []entry) error {
	if r.off {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(r.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	unlock, err := lockFile(lock)
	if err != nil {
		return fmt.Errorf("lock %s: %w", r.path, err)
	}
	defer unlock()
	var entries []entry
	b, err := os.ReadFile(r.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if e, ok := parse(sc.Text()); ok {
			entries = append(entries, e)
		}
	}
	entries = fn(entries)
	var out bytes.Buffer
	for _, e := range entries {
		out.WriteString(e.String())
		out.WriteByte('\n')
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.path)
}

// Add records the process group led by pid (which must lead its own group),
// started for the upstream name.
func (r *Register) Add(pid int, name string) error {
	if r.off {
		return nil
	}
	start, err := proc.StartTime(pid)
	if err != nil {
		return err
	}
	name = strings.Map(func(c rune) rune {
		if c == '\n' || c == '\r' {
			return ' '
		}
		return c
	}, name)
	return r.update(func(es []entry) []entry {
		return append(es, entry{hubPID: r.hubPID, hubStart: r.hubStart, pgid: pid, leaderStart: start, name: name})
	})
}

// Remove forgets the group led by pid, once it is gone.
func (r *Register) Remove(pid int) error {
	return r.update(func(es []entry) []entry {
		out := es[:0]
		for _, e := range es {
			if e.pgid != pid || e.hubPID != r.hubPID || e.hubStart != r.hubStart {
				out = append(out, e)
			}
		}
		return out
	})
}

// Leftover is a process a sweep killed.
type Leftover struct {
	PID      int    // the process
	PGID     int    // its group, which a dead hub started
	Upstream string // the upstream the group was started for
}

// Sweep kills the processes still in groups that hubs which no longer run
// started, and those carrying their upstreams' markers, and forgets those
// hubs' entries. Entries of this process and of hubs still running stay.
func (r *Register) Sweep() ([]Leftover, error) {
	var killed []Leftover
	err := r.update(func(es []entry) []entry {
		out := es[:0]
		type hub struct {
			pid   int
			start uint64
		}
		dead := map[hub][]entry{}
		var order []hub
		for _, e := range es {
			if hubAlive(e.hubPID, e.hubStart) {
				out = append(out, e)
				continue
			}
			h := hub{e.hubPID, e.hubStart}
			if _, ok := dead[h]; !ok {
				order = append(order, h)
			}
			dead[h] = append(dead[h], e)
		}
		for _, h := range order {
			killed = append(killed, killHub(h.pid, h.start, dead[h])...)
		}
		return out
	})
	return killed, err
}

// hubAlive reports whether the process pid that started at start runs.
func hubAlive(pid int, start uint64) bool {
	s, err := proc.StartTime(pid)
	return err == nil && s == start
}

// killHub kills what is left of a dead hub's upstreams: the members of the
// groups it registered, and every process with one of its markers. When a
// process with a group's id exists but started at another time, the id was
// given to a newer process: that group is not the hub's.
func killHub(pid int, start uint64, es []entry) []Leftover {
	names := map[int]string{}
	var owners []proc.Owner
	for _, e := range es {
		if s, err := proc.StartTime(e.pgid); err == nil && s != e.leaderStart {
			continue
		}
		// Members started after the group did; anything older is not one
		// of ours.
		owners = append(owners, proc.Owner{Group: e.pgid, RootStart: e.leaderStart})
		names[e.pgid] = e.name
	}
	owners = append(owners, proc.Owner{TagPrefix: proc.HubPrefix(pid, start), RootStart: start})
	seen := map[int]bool{}
	var out []Leftover
	for _, o := range owners {
		ms, err := proc.Members(o)
		if err != nil {
			continue
		}
		for _, m := range ms {
			if seen[m.PID] {
				continue
			}
			seen[m.PID] = true
			if kill(m.PID) == nil {
				name, ok := names[m.PGID]
				if !ok {
					name = "(left its process group)"
				}
				out = append(out, Leftover{PID: m.PID, PGID: m.PGID, Upstream: name})
			}
		}
	}
	return out
}
