package upstream

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-hub/mcp-hub/era"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/proc"
)

// A link moves raw JSON-RPC messages to and from one upstream. Inbound
// messages go to the sink the link was started with, possibly from several
// goroutines at once (HTTP streams); a link reports its own death through
// the sink's fail.
type link interface {
	// send writes one message (no trailing newline).
	send(ctx context.Context, msg []byte) error
	// close shuts the link down gracefully and releases everything it owns.
	// It returns when that is done; it is safe to call more than once.
	close()
	// abort is close for a link whose session never started or was
	// abandoned: no grace for an orderly exit (the process is signalled at
	// once), so an admin call on an upstream stuck connecting answers fast.
	abort()
	// pid is the child's process id, or 0.
	pid() int
}

// sink receives what a link reads.
type sink interface {
	// attach binds the link to the sink before the link reads anything.
	attach(l link)
	// receive handles one inbound message. origin, when non-nil, is the raw
	// id of the hub request whose HTTP response stream carried it. It
	// returns the raw id of a response (nil for anything else).
	receive(msg []byte, origin []byte) (responseID []byte)
	// oversize reports a message that was dropped for exceeding the cap.
	oversize(o *framing.Oversize)
	// fail reports that the link is dead, and why.
	fail(err error)
	// abort fails the one request with the given raw id, whose answer the
	// link will never deliver.
	abort(id []byte, err error)
	// preview returns the start of something the upstream wrote, for a log
	// line or an error: scrubbed of the upstream's secret values, masked
	// by redact's rules and cut short.
	preview(b []byte) string
	// Stateless reports whether the connection speaks the stateless era,
	// and ProtocolVersion which version it negotiated.
	Stateless() bool
	ProtocolVersion() string
	// paramHeaders returns the x-mcp-header annotations of a tool (the
	// HTTP link mirrors its arguments into headers), or nil.
	paramHeaders(tool string) []era.ParamHeader
	// paused reports the pause of the response stream of the request with
	// raw id id (pause.go), and whether it was relayed to its client.
	paused(id []byte, p *Pause) bool
}

// stdioOptions configures a stdio link.
type stdioOptions struct {
	Env             []string // full child environment
	MaxMessageBytes int
	// Grace is how long to wait after closing stdin before SIGTERM, and
	// after SIGTERM before SIGKILL.
	Grace  time.Duration
	Stderr *stderrLog
	Logger *slog.Logger
	Groups ProcessGroups // nil: none kept
}

// ProcessGroups keeps a register of the process groups of stdio upstreams,
// so that a later hub can kill what a hub that died left behind.
type ProcessGroups interface {
	// Add records the group led by pid, started for the upstream name.
	Add(pid int, name string) error
	// Remove forgets it once nothing of it is left.
	Remove(pid int) error
}

// stdioLink runs an upstream as a child process in its own process group and
// speaks newline-delimited JSON-RPC over its stdin and stdout.
type stdioLink struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end
	stdout *os.File // our end
	stderr *os.File // our end
	w      framing.Writer
	grace  time.Duration
	logger *slog.Logger
	groups ProcessGroups
	fam    *family // every process of the upstream

	exited  chan struct{} // closed when cmd.Wait returned
	exitErr error         // set before exited is closed

	readers   sync.WaitGroup
	closeOnce sync.Once
}

// ErrExited is wrapped by the error of a link whose child process exited.
var ErrExited = errors.New("upstream process exited")

func startStdio(spec *Spec, opts stdioOptions, s sink) (_ *stdioLink, err error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	fam := newFamily()
	// The marker goes last: a spec cannot set it to another upstream's.
	cmd.Env = append(slices.DeleteFunc(slices.Clone(opts.Env), func(kv string) bool {
		return strings.HasPrefix(kv, proc.MarkerVar+"=")
	}), proc.MarkerVar+"="+fam.tag)
	cmd.Dir = spec.Cwd
	setProcessGroup(cmd)

	// Own the pipes (rather than StdinPipe & co.) so cmd.Wait reports the
	// child's exit at once even while a grandchild still holds a pipe open.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	framing.GrowPipe(inW)
	framing.GrowPipe(outR)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := startCmd(cmd); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("start %s: %w", spec.Command, err)
	}
	closeAll(inR, outW, errW) // the child has its copies
	fam.started(cmd.Process.Pid)

	l := &stdioLink{
		cmd: cmd, stdin: inW, stdout: outR, stderr: errR,
		grace: opts.Grace, logger: opts.Logger, groups: opts.Groups, fam: fam,
		exited: make(chan struct{}),
	}
	if l.groups != nil {
		if err := l.groups.Add(cmd.Process.Pid, spec.Name); err != nil {
			opts.Logger.Warn("cannot record the upstream's process group", "err", err)
		}
	}
	if l.grace <= 0 {
		l.grace = 2 * time.Second
	}
	l.w.W = inW
	s.attach(l)

	go func() {
		l.exitErr = cmd.Wait()
		fam.rootReaped()
		close(l.exited)
		s.fail(l.exitError())
	}()
	l.readers.Add(2)
	go func() {
		defer l.readers.Done()
		if opts.Stderr != nil {
			opts.Stderr.consume(errR)
		}
	}()
	go func() {
		defer l.readers.Done()
		l.readLoop(framing.NewReader(outR, opts.MaxMessageBytes), s)
	}()
	return l, nil
}

func (l *stdioLink) exitError() error {
	if l.exitErr != nil {
		return fmt.Errorf("%w: %v", ErrExited, l.exitErr)
	}
	return fmt.Errorf("%w: exit status 0", ErrExited)
}

func (l *stdioLink) readLoop(fr *framing.Reader, s sink) {
	for {
		line, err := fr.Next()
		if err == nil {
			s.receive(line, nil)
			continue
		}
		var o *framing.Oversize
		if errors.As(err, &o) {
			s.oversize(o)
			continue
		}
		if errors.Is(err, framing.ErrLineTooLong) {
			// Nothing after an endless line can ever be read.
			s.fail(fmt.Errorf("upstream wrote a line that never ends: %w", err))
			return
		}
		// stdout ended: usually the child exited; prefer its exit status.
		select {
		case <-l.exited:
			s.fail(l.exitError())
		case <-time.After(500 * time.Millisecond):
			s.fail(fmt.Errorf("upstream closed its stdout: %w", err))
		}
		return
	}
}

func (l *stdioLink) send(_ context.Context, msg []byte) error {
	return l.w.Write(msg)
}

func (l *stdioLink) pid() int {
	if l.cmd.Process == nil {
		return 0
	}
	return l.cmd.Process.Pid
}

// close follows the MCP stdio shutdown sequence: close the child's stdin,
// wait the grace period, SIGTERM the process group, wait again, SIGKILL the
// group. Then it takes down every other process of the upstream, whatever
// its session or group (see supervise.go), reaps them, and stops the
// readers. It holds no lock while it waits, and every wait is bounded.
func (l *stdioLink) close() { l.shutdown(false) }

func (l *stdioLink) abort() { l.shutdown(true) }

// hurryGrace bounds each wait of an aborted link's shutdown.
const hurryGrace = 250 * time.Millisecond

// drainWait is how long the readers may drain what the dead processes
// wrote (their last stderr lines explain a crash) before they are cut off.
const drainWait = time.Second

func (l *stdioLink) shutdown(hurry bool) {
	l.closeOnce.Do(func() {
		pid := l.pid()
		grace := l.grace
		if hurry {
			grace = min(grace, hurryGrace)
		}
		l.stdin.Close()
		if hurry || !waitFor(l.exited, grace) {
			_ = signalGroup(pid, sigTerm)
			if !waitFor(l.exited, grace) {
				_ = signalGroup(pid, sigKill)
				if !waitFor(l.exited, max(grace, time.Second)) {
					l.logger.Warn("upstream process still not reaped after SIGKILL", "pid", pid)
				}
			}
		}
		// The child is gone; take down whatever it left, wherever it went.
		clean := l.fam.killRest(grace)
		l.fam.finish()
		if !clean {
			l.logger.Warn("some processes of the upstream could not be stopped")
		}
		if l.groups != nil && clean {
			if err := l.groups.Remove(pid); err != nil {
				l.logger.Warn("cannot update the register of process groups", "err", err)
			}
		}
		// Let the readers drain what the dead processes wrote, then cut them
		// off: the pipes are in the runtime poller, so closing our ends wakes
		// a read even while a process we could not stop holds the other end.
		drained := make(chan struct{})
		go func() {
			l.readers.Wait()
			close(drained)
		}()
		if !waitFor(drained, drainWait) {
			l.stdout.Close()
			l.stderr.Close()
			if !waitFor(drained, drainWait) {
				l.logger.Warn("upstream output readers did not stop")
			}
		}
		l.stdout.Close()
		l.stderr.Close()
	})
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}
