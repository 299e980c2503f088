//go:build linux

package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
)

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return parseStat(pid, b)
}

// parseStat parses a stat line: the command name is in parentheses and may
// hold spaces and parentheses itself, so fields are counted after the last
// ')'.
func parseStat(pid int, b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return Stat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+2:]))
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime
	if len(f) < 20 || len(f[0]) == 0 {
		return Stat{}, errors.New("malformed stat")
	}
	s := Stat{PID: pid, State: f[0][0]}
	var err error
	if s.PPID, err = strconv.Atoi(f[1]); err != nil {
		return Stat{}, err
	}
	if s.PGID, err = strconv.Atoi(f[2]); err != nil {
		return Stat{}, err
	}
	if s.SID, err = strconv.Atoi(f[3]); err != nil {
		return Stat{}, err
	}
	if s.Start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return Stat{}, err
	}
	return s, nil
}

// StartTime returns when process pid started, in clock ticks since boot:
// with the pid, it names one process.
func StartTime(pid int) (uint64, error) {
	s, err := ReadStat(pid)
	return s.Start, err
}

// All returns every process in the process table.
func All() ([]Stat, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make([]Stat, 0, len(ents))
	for _, de := range ents {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if s, err := ReadStat(pid); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// Children returns the pids of the children of process pid (zombies
// included), from /proc/PID/task/*/children: a few small reads instead of a
// scan of the whole table. Where the kernel lacks that file, it scans.
func Children(pid int) ([]int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if errors.Is(err, os.ErrNotExist) {
			return childrenByScan(pid)
		}
		if err != nil {
			continue // the thread exited
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func childrenByScan(pid int) ([]int, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, s := range all {
		if s.PPID == pid {
			out = append(out, s.PID)
		}
	}
	return out, nil
}

// MarkerOf returns the marker in the environment process pid was started
// with; ok is false when it has none or the environment is not readable
// (another uid, a zombie).
func MarkerOf(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	prefix := []byte(MarkerVar + "=")
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.HasPrefix(kv, prefix) {
			return string(kv[len(prefix):]), true
		}
	}
	return "", false
}

// Members returns the live processes (zombies excluded) that belong to o,
// from one scan of the process table; see the package comment for what
// belongs. The root is included while it runs.
func Members(o Owner) ([]Stat, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	byPID := make(map[int]Stat, len(all))
	for _, s := range all {
		byPID[s.PID] = s
	}
	group := o.Group
	if l, ok := byPID[group]; ok && group != 0 && l.Start != o.RootStart {
		// A process other than the one that led the group has its id: the
		// group is gone and the id was given to a newer one.
		group = 0
	}
	memo := map[int]bool{}
	var belongs func(s Stat, depth int) bool
	belongs = func(s Stat, depth int) bool {
		if v, ok := memo[s.PID]; ok {
			return v
		}
		v := false
		switch {
		case s.Start < o.RootStart:
			// Older than the upstream: never its.
		case o.Root != 0 && s.PID == o.Root && s.Start == o.RootStart:
			v = true
		case o.Known != nil && o.Known[s.PID] == s.Start && s.Start != 0:
			v = true
		case group != 0 && s.PGID == group:
			v = true
		default:
			if m, ok := MarkerOf(s.PID); ok && o.matches(m) {
				v = true
			} else if p, ok := byPID[s.PPID]; ok && s.PPID > 1 && depth < 64 {
				v = belongs(p, depth+1)
			}
		}
		memo[s.PID] = v
		return v
	}
	var out []Stat
	for _, s := range all {
		if !s.Zombie() && s.PID != os.Getpid() && belongs(s, 0) {
			out = append(out, s)
		}
	}
	return out, nil
}
