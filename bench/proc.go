package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// own makes cmd the leader of a new process group, so that stopTree can
// kill everything it leaves behind, and has the kernel kill it if the bench
// dies first.
func own(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// descendants returns the live descendants of pid, children first.
func descendants(pid int) []int {
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range testbin.Children(queue[0]) {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// stopTree stops the process tree of a started cmd: it sends sig to cmd,
// waits up to 10 s for it to exit, then SIGKILLs its process group (if
// own made it a leader) and every descendant seen before the stop that is
// still alive (some peers start their children in process groups of their
// own), and reaps cmd. It reports processes that survive all that.
func stopTree(cmd *exec.Cmd, sig syscall.Signal) error {
	pid := cmd.Process.Pid
	kids := descendants(pid)
	_ = cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	return reapTree(pid, kids, done)
}

// reapTree kills what is left of the process group pid leads and of kids,
// waits for done (cmd.Wait returned), and reports survivors.
func reapTree(pid int, kids []int, done <-chan struct{}) error {
	_ = syscall.Kill(-pid, syscall.SIGKILL) // ESRCH when there is no such group
	for _, k := range kids {
		if testbin.Alive(k) {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
	}
	if done != nil {
		<-done
	}
	if left := testbin.WaitGone(5*time.Second, append(kids, pid)...); len(left) > 0 {
		return fmt.Errorf("processes %v of the tree of %d survived SIGKILL", left, pid)
	}
	return nil
}

// memKB returns a /proc/pid/status field in kB, such as "VmHWM" (the peak
// resident set size), or 0.
func memKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// treeMem is the peak RSS of a process tree, split into the server or proxy
// (the root and every descendant that is not an upstream: node, sh) and the
// upstreams (processes running the fixture binary).
type treeMem struct {
	proxyKB, upstreamKB int64
	proxies, upstreams  int
}

// peakRSS sums VmHWM over the tree of root; a process whose executable is
// upstreamExe counts as an upstream.
func peakRSS(root int, upstreamExe string) treeMem {
	var m treeMem
	for _, p := range append([]int{root}, descendants(root)...) {
		hwm := memKB(p, "VmHWM")
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); exe == upstreamExe {
			m.upstreamKB += hwm
			m.upstreams++
		} else if hwm > 0 {
			m.proxyKB += hwm
			m.proxies++
		}
	}
	return m
}
