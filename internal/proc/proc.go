// Package proc finds the processes that belong to a stdio upstream, so that
// stopping the upstream can kill every one of them, whatever session or
// process group it moved to, and a hub that starts after one that died can
// kill what that hub left behind.
//
// # What "belongs to an upstream" means
//
// A process started by an upstream can leave the upstream's process group
// (setsid, setpgid) and be re-parented (its parent exits: the double fork
// of daemon(3)), so neither the group nor the parent link alone finds it.
// Three facts are combined, each cheap to read from /proc and each robust
// against a different escape:
//
//   - The marker: the hub starts every stdio upstream with MCP_HUB_UPSTREAM
//     set to a value unique to that upstream's process
//     ("<hub pid>.<hub start>.<n>"). Every descendant inherits it unless it
//     clears its environment, and /proc/PID/environ shows the environment a
//     process was started with (readable for our own uid), whatever it did
//     to its session, group or parent since. This is what finds a daemon.
//   - The process group the upstream leads: what never calls setsid or
//     setpgid stays in it, and the group is readable even from a zombie
//     (whose environ is gone).
//   - The parent links: a process whose parent belongs, belongs (a child
//     started with a cleared environment by a process that is still there).
//
// Every test is paired with the process start time (clock ticks since boot,
// /proc/PID/stat field 22), so a pid the system gave to a newer process
// after ours exited is never mistaken for ours: a member must have started
// no earlier than the upstream's first process, and a pid remembered as a
// member counts only with the start time it was remembered with.
//
// What cannot be found: a descendant that clears its environment and leaves
// the group after its parent is gone. Processes of another uid (setuid
// programs) cannot be read or killed by the hub at all.
//
// On systems without /proc (macOS, the BSDs) the functions report
// [ErrUnsupported]; callers fall back to process groups.
package proc

import (
	"errors"
	"fmt"
	"strings"
)

// MarkerVar is the environment variable that marks an upstream's processes.
const MarkerVar = "MCP_HUB_UPSTREAM"

// ErrUnsupported is returned where the process table cannot be read.
var ErrUnsupported = errors.New("the process table is not readable on this system")

// HubPrefix is the prefix of the markers of every upstream started by the
// hub process pid that started at start.
func HubPrefix(pid int, start uint64) string { return fmt.Sprintf("%d.%d.", pid, start) }

// Marker returns the marker value of the n-th upstream process started by
// the hub process pid that started at start.
func Marker(pid int, start uint64, n uint64) string {
	return fmt.Sprintf("%s%d", HubPrefix(pid, start), n)
}

// Stat is what the process table says about one process.
type Stat struct {
	PID, PPID, PGID, SID int
	State                byte   // R, S, D, Z, …
	Start                uint64 // clock ticks since boot
}

// Zombie reports whether the process exited and waits to be reaped.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// Owner describes the processes of one upstream (or, with TagPrefix, of
// every upstream of one hub).
type Owner struct {
	Root      int    // the upstream's first process (0: none)
	RootStart uint64 // its start time: no member started earlier
	Group     int    // the process group it leads (0: none)
	Tag       string // the exact marker value ("": none)
	TagPrefix string // or a marker prefix ("": none)
	// Known holds pids remembered as members, with their start times.
	Known map[int]uint64
}

// matches reports whether a marker value is the owner's.
func (o *Owner) matches(marker string) bool {
	return (o.Tag != "" && marker == o.Tag) || (o.TagPrefix != "" && strings.HasPrefix(marker, o.TagPrefix))
}
