package persist

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// The process tests re-execute the test binary with PERSIST_TEST_CHILD set;
// TestMain then runs the named child role instead of the tests.
const childEnv = "PERSIST_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	os.Exit(m.Run())
}

func runChild(role string) int {
	ctx := context.Background()
	db := childDB()
	fail := func(format string, args ...any) int {
		fmt.Printf("error: "+format+"\n", args...)
		return 1
	}
	stdin := bufio.NewReader(os.Stdin)
	waitGo := func() error {
		_, err := stdin.ReadString('\n')
		return err
	}

	switch role {
	case "open":
		// Open a (fresh) directory at the parent's signal, racing siblings.
		fmt.Println("ready")
		if err := waitGo(); err != nil {
			return fail("stdin: %v", err)
		}
		s, err := db.openErr(ctx, nil)
		if err != nil {
			return fail("open: %v", err)
		}
		if err := s.Close(); err != nil {
			return fail("close: %v", err)
		}
		fmt.Println("ok")
		return 0

	case "writers":
		// 200 writes from 4 goroutines: 100 Creates of own rows and 100
		// read-modify-write increments of the shared counter row.
		id := os.Getenv("PERSIST_TEST_ID")
		s, err := db.openErr(ctx, nil)
		if err != nil {
			return fail("open: %v", err)
		}
		defer s.Close()
		fmt.Println("ready")
		if err := waitGo(); err != nil {
			return fail("stdin: %v", err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for g := range 4 {
			wg.Go(func() {
				for j := range 50 {
					if j%2 == 0 {
						_, err := s.Create(ctx, testRecord(fmt.Sprintf("p%s_g%d_%d", id, g, j)))
						errs <- err
						continue
					}
					_, err := s.Update(ctx, "shared", func(r *Record) error {
						n, err := strconv.Atoi(r.Spec.Description)
						r.Spec.Description = strconv.Itoa(n + 1)
						return err
					})
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return fail("write: %v", err)
			}
		}
		fmt.Println("done")
		return 0

	case "crash":
		// Perform the deterministic op sequence, acknowledging each write
		// after its commit returned, until the parent kills us.
		seed, _ := strconv.ParseUint(os.Getenv("PERSIST_TEST_SEED"), 10, 64)
		ops := crashOps(seed, os.Getenv("PERSIST_TEST_PREFIX"))
		s, err := db.openErr(ctx, nil)
		if err != nil {
			return fail("open: %v", err)
		}
		fmt.Println("ready")
		for i, op := range ops {
			if err := op.applyStore(ctx, s); err != nil {
				return fail("op %d %+v: %v", i+1, op, err)
			}
			fmt.Printf("ack %d\n", i+1)
		}
		if err := s.Close(); err != nil {
			return fail("close: %v", err)
		}
		fmt.Println("done")
		return 0
	}
	return fail("unknown child role %q", role)
}

// testRecord returns a minimal pending stdio record.
func testRecord(name string) Record {
	return Record{
		Spec:     upstream.Spec{Name: name, Description: "0", Transport: upstream.TransportStdio, Command: "server"},
		Enabled:  true,
		Source:   SourceAdmin,
		Approval: ApprovalPending,
	}
}

// crashOp is one admin write of the crash test.
type crashOp struct {
	Kind byte // 'c'reate, 'u'pdate, 'd'elete
	Name string
	Desc string
}

// crashOpCount is the number of writes the crash child attempts.
const crashOpCount = 500

// crashOps returns a deterministic, always valid mix of Creates, Updates and
// Deletes on 12 names starting with prefix.
func crashOps(seed uint64, prefix string) []crashOp {
	rng := rand.New(rand.NewPCG(seed, 42))
	live := map[string]bool{}
	ops := make([]crashOp, 0, crashOpCount)
	for i := range crashOpCount {
		name := fmt.Sprintf("%s_u%d", prefix, rng.IntN(12))
		op := crashOp{Name: name, Desc: fmt.Sprintf("op%d", i+1)}
		switch {
		case !live[name]:
			op.Kind, live[name] = 'c', true
		case rng.IntN(4) == 0:
			op.Kind, live[name] = 'd', false
		default:
			op.Kind = 'u'
		}
		ops = append(ops, op)
	}
	return ops
}

func (op crashOp) applyModel(m map[string]string) {
	switch op.Kind {
	case 'c', 'u':
		m[op.Name] = op.Desc
	case 'd':
		delete(m, op.Name)
	}
}

func (op crashOp) applyStore(ctx context.Context, s *Store) error {
	switch op.Kind {
	case 'c':
		r := testRecord(op.Name)
		r.Spec.Description = op.Desc
		r.Spec.Env = map[string]string{"TOKEN": op.Desc}
		_, err := s.Create(ctx, r)
		return err
	case 'u':
		_, err := s.Update(ctx, op.Name, func(r *Record) error {
			r.Spec.Description = op.Desc
			r.Spec.Args = append(r.Spec.Args, op.Desc)
			r.Enabled = !r.Enabled
			return nil
		})
		return err
	case 'd':
		return s.Delete(ctx, op.Name)
	}
	return fmt.Errorf("bad op kind %q", op.Kind)
}

// child is a running re-executed test binary.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line; closed at EOF
	stderr bytes.Buffer
}

func startChild(t *testing.T, role string, env ...string) *child {
	t.Helper()
	c := &child{lines: make(chan string, 1024)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(), append([]string{childEnv + "=" + role}, env...)...)
	c.cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			for range c.lines {
			}
			_ = c.cmd.Wait()
		}
	})
	return c
}

// expect waits for the next line and fails unless it is want.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok || line != want {
			t.Fatalf("child said %q (open %v), want %q; stderr:\n%s", line, ok, want, c.waitStderr())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("child did not say %q in time", want)
	}
}

// wait drains stdout, waits for the child to exit and returns the lines
// that were left.
func (c *child) wait() ([]string, error) {
	var rest []string
	for line := range c.lines {
		rest = append(rest, line)
	}
	return rest, c.cmd.Wait()
}

func (c *child) waitStderr() string {
	_ = c.cmd.Process.Kill()
	_, _ = c.wait()
	return c.stderr.String()
}
