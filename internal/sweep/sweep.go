// Package sweep keeps a register of the process groups a hub started, so
// that a hub starting later can kill what a hub that died (SIGKILL, a crash,
// power cut) left behind.
//
// The parent-death signal takes a stdio upstream down with the hub, but not
// the processes the upstream started itself (npx → node) when they hold none
// of the hub's pipes. Every upstream runs in its own process group, so the
// register records each group with its leader's start time and the hub's own
// pid and start time. At start a hub kills the groups of registered hubs
// that no longer run; it never touches a group of a hub that is alive, nor a
// group whose id the system has given to a newer process since.
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
	"syscall"
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
	start, err := StartTime(pid)
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
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", r.path, err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
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
	start, err := StartTime(pid)
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
// started, and forgets those hubs' entries. Entries of this process and of
// hubs still running stay.
func (r *Register) Sweep() ([]Leftover, error) {
	var killed []Leftover
	err := r.update(func(es []entry) []entry {
		out := es[:0]
		for _, e := range es {
			if hubAlive(e.hubPID, e.hubStart) {
				out = append(out, e)
				continue
			}
			killed = append(killed, killGroup(e)...)
		}
		return out
	})
	return killed, err
}

// hubAlive reports whether the process pid that started at start runs.
func hubAlive(pid int, start uint64) bool {
	s, err := StartTime(pid)
	return err == nil && s == start
}

// killGroup kills what is left of a dead hub's process group. When a
// process with the group's id exists but started at another time, the id
// was given to a newer process: that group is not the hub's.
func killGroup(e entry) []Leftover {
	if s, err := StartTime(e.pgid); err == nil && s != e.leaderStart {
		return nil
	}
	var out []Leftover
	for _, pid := range groupMembers(e.pgid) {
		// Members started after the group did; anything older is not
		// one of ours.
		if s, err := StartTime(pid); err != nil || s < e.leaderStart {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			out = append(out, Leftover{PID: pid, PGID: e.pgid, Upstream: e.name})
		}
	}
	return out
}

// groupMembers returns the live processes in process group pgid.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, de := range ents {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		f, err := statFields(pid)
		if err != nil || len(f) < 3 {
			continue
		}
		if f[0] == "Z" {
			continue // a zombie: already dead
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// statFields returns the fields of /proc/pid/stat after the command name:
// state, ppid, pgrp, …
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return nil, errors.New("malformed stat")
	}
	return strings.Fields(string(b[i+2:])), nil
}

// StartTime returns when process pid started, in clock ticks since boot
// (field 22 of /proc/pid/stat): with the pid, it names one process.
func StartTime(pid int) (uint64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 20 {
		return 0, errors.New("malformed stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}
