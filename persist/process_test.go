package persist

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Several processes opening the same fresh directory at once must all
// succeed: a second run of migration 1 (plain CREATE TABLE) would fail.
func TestOpenRaceProcesses(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		for round := range 3 {
			db := newTestDB(t, d)
			if d == dialectSQLite {
				db.loc = filepath.Join(db.loc, "fresh", "data")
			}
			var kids []*child
			for range 3 {
				kids = append(kids, startChild(t, "open", db.childEnv()...))
			}
			for _, c := range kids {
				c.expect(t, "ready")
			}
			for _, c := range kids {
				fmt.Fprintln(c.stdin, "go")
			}
			for i, c := range kids {
				rest, err := c.wait()
				if err != nil || len(rest) != 1 || rest[0] != "ok" {
					t.Fatalf("round %d child %d: %v %q; stderr:\n%s", round, i, err, rest, c.stderr.String())
				}
			}
			s := db.open(t, nil)
			if v := schemaVersion(t, s); v != latestVersion(t) {
				t.Fatalf("schema version = %d, want %d", v, latestVersion(t))
			}
		}
	})
}

// Two processes, each with four goroutines, write the same database at once:
// no write may fail (no SQLITE_BUSY, no serialization failure) and no
// read-modify-write may be lost.
func TestConcurrentWriterProcesses(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		db := newTestDB(t, d)
		s := db.open(t, nil)
		if _, err := s.Create(t.Context(), testRecord("shared")); err != nil {
			t.Fatal(err)
		}
		var kids []*child
		for id := range 2 {
			kids = append(kids, startChild(t, "writers", append(db.childEnv(), "PERSIST_TEST_ID="+strconv.Itoa(id))...))
		}
		for _, c := range kids {
			c.expect(t, "ready")
		}
		start := time.Now()
		for _, c := range kids {
			fmt.Fprintln(c.stdin, "go")
		}
		for i, c := range kids {
			rest, err := c.wait()
			if err != nil || len(rest) != 1 || rest[0] != "done" {
				t.Fatalf("child %d: %v %q; stderr:\n%s", i, err, rest, c.stderr.String())
			}
		}
		t.Logf("2 processes x 200 writes in %v", time.Since(start))

		recs, err := s.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1+2*100 {
			t.Errorf("%d rows, want %d", len(recs), 1+2*100)
		}
		r, err := s.Get(t.Context(), "shared")
		if err != nil {
			t.Fatal(err)
		}
		if r.Spec.Description != "200" {
			t.Errorf("shared counter = %s, want 200 (lost updates)", r.Spec.Description)
		}
	})
}

// A child performing admin writes is SIGKILLed at random moments. After
// each kill the database must pass integrity_check and hold every
// acknowledged write; the only write it may hold beyond them is the one in
// flight.
func TestCrashSafety(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		db := newTestDB(t, d)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		settled := map[string]string{} // state of earlier rounds, which must not change
		for round := range 6 {
			seed := rng.Uint64()
			prefix := fmt.Sprintf("r%d", round)
			ops := crashOps(seed, prefix)
			killAfter := time.Duration(5+rng.IntN(296)) * time.Millisecond

			c := startChild(t, "crash", append(db.childEnv(), "PERSIST_TEST_PREFIX="+prefix,
				"PERSIST_TEST_SEED="+strconv.FormatUint(seed, 10))...)
			// Round 0 counts from process start, so the kill may land in Open
			// (migrations); later rounds count from when the child is ready to
			// write.
			timer := time.NewTimer(killAfter)
			if round > 0 {
				c.expect(t, "ready")
				timer.Reset(killAfter)
			}
			acked, done, killed := 0, false, false
		read:
			for {
				select {
				case line, ok := <-c.lines:
					if !ok {
						break read
					}
					switch {
					case strings.HasPrefix(line, "ack "):
						n, err := strconv.Atoi(strings.TrimPrefix(line, "ack "))
						if err != nil || n != acked+1 {
							t.Fatalf("round %d: bad ack %q after %d", round, line, acked)
						}
						acked = n
					case line == "done":
						done = true
					case line == "ready":
					default:
						t.Fatalf("round %d: child said %q; stderr:\n%s", round, line, c.waitStderr())
					}
				case <-timer.C:
					_ = c.cmd.Process.Kill() // SIGKILL; keep reading what it wrote before
					killed = true
				}
			}
			if err := c.cmd.Wait(); !killed && err != nil {
				t.Fatalf("round %d: child failed: %v; stderr:\n%s", round, err, c.stderr.String())
			}
			t.Logf("round %d: kill after %v (sent: %v): %d/%d writes acknowledged, finished: %v", round, killAfter, killed, acked, len(ops), done)

			s, err := db.openErr(t.Context(), nil)
			if err != nil {
				t.Fatalf("round %d: reopen after kill: %v", round, err)
			}
			if d == dialectSQLite {
				var check []string
				if err := s.db.SelectContext(t.Context(), &check, "PRAGMA integrity_check"); err != nil {
					t.Fatal(err)
				}
				if len(check) != 1 || check[0] != "ok" {
					t.Fatalf("round %d: integrity_check: %q", round, check)
				}
			}
			recs, err := s.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range recs {
				got[r.Spec.Name] = r.Spec.Description
			}

			want := maps.Clone(settled)
			for _, op := range ops[:acked] {
				op.applyModel(want)
			}
			if !maps.Equal(got, want) {
				if acked == len(ops) {
					t.Fatalf("round %d: state after all writes differs (-want +got):\n%s", round, cmp.Diff(want, got))
				}
				// The write in flight may have committed before the kill.
				ops[acked].applyModel(want)
				if !maps.Equal(got, want) {
					t.Fatalf("round %d: state after %d acked writes differs (-want +got):\n%s", round, acked, cmp.Diff(want, got))
				}
			}
			settled = got
		}
	})
}
