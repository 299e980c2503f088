package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/persist"
)

// The startup suite times a client spawning mcp-hub (stdio) until its
// first tools/list that holds every upstream's tools: cold (empty data
// directory), warm (the next start on the same data directory, served from
// the capability cache), and a cold start of 20 slow upstreams, which the
// hub's cap on concurrent spawns starts in waves.

var (
	starts    = flag.Int("starts", 10, "startup suite: starts of each case (medians over them)")
	slowStart = flag.Duration("slow-start", 300*time.Millisecond, "startup suite: the fixtures' -slow-start in the slow cases")
)

const (
	// spawnCap is the hub's default limits.maxConcurrentSpawns.
	spawnCap = 4
	// warmSlowStart is the -slow-start of the upstreams in the warm case
	// whose upstreams are slow: longer than the whole start, so the list can
	// only come from the cache.
	warmSlowStart = time.Second
)

// startupTools are the tools each upstream exposes; with the prefix policy
// the hub lists them as <upstream>__<tool>.
var startupTools = []string{"echo", "add", "sleep_ms", "big"}

// startCase is one way to start the hub.
type startCase struct {
	label  string
	direct bool          // the fixture alone, no hub
	n      int           // stdio upstreams
	slow   time.Duration // their -slow-start
	warm   bool          // on the data directory the case before used
	spawns int           // limits.maxConcurrentSpawns when not 0
	target string        // from the research notes
	peers  string        // Go peers in the research notes
}

// startRun is one start of the hub.
type startRun struct {
	initialized time.Duration // spawn → initialize answered
	listed      time.Duration // spawn → first complete tools/list
	lists       int           // tools/list requests until one was complete
	tools       int           // tools in it
	firstSpawn  time.Duration // spawn → first fixture start; -1 when none started before the stop
	starting    int           // most fixtures between start and ready at once
}

func startupSuite(dir, hubBin, fixture string) {
	cases := []startCase{
		{label: "direct: the fixture alone, no hub", direct: true, n: 1},
		{label: "cold, no upstreams", n: 0},
		{label: "warm, no upstreams", n: 0, warm: true},
		{label: "cold", n: 1, target: "≤ 20 ms", peers: "15–17 ms"},
		{label: "warm", n: 1, warm: true, target: "≤ 20 ms"},
		{label: "cold", n: 10, target: "≤ 60 ms", peers: "49–57 ms"},
		{label: "warm", n: 10, warm: true, target: "≤ 60 ms"},
		{label: "cold, spawn cap raised to 10", n: 10, spawns: 10},
		{label: fmt.Sprintf("warm, every upstream -slow-start %s", warmSlowStart), n: 10, slow: warmSlowStart, warm: true, target: "≤ 60 ms (served from the cache)"},
		{label: "cold", n: 20},
		{label: fmt.Sprintf("cold, -slow-start %s", *slowStart), n: 1, slow: *slowStart},
		{label: fmt.Sprintf("cold, every upstream -slow-start %s", *slowStart), n: 20, slow: *slowStart,
			target: fmt.Sprintf("≈ %d × the single slow one (cap %d)", (20+spawnCap-1)/spawnCap, spawnCap)},
	}
	res := make([][]startRun, len(cases))
	for r := range *starts {
		fmt.Fprintf(os.Stderr, "startup: repetition %d/%d\n", r+1, *starts)
		var data string
		for i, c := range cases {
			if !c.warm {
				data = filepath.Join(dir, fmt.Sprintf("startup-%d-%d", r, i))
			}
			// A cold start followed by a warm one waits until the hub has
			// stored every upstream's inventory.
			cache := i+1 < len(cases) && cases[i+1].warm && !c.warm
			run, err := startOnce(dir, hubBin, fixture, data, c, cache)
			if err != nil {
				check(fmt.Errorf("case %q, %d upstreams: %w", c.label, c.n, err))
			}
			res[i] = append(res[i], run)
		}
	}

	fmt.Printf("## startup: spawn of mcp-hub (stdio) → first complete tools/list\n\n")
	fmt.Printf("%d starts per case; medians [min–max]. Each upstream is the fixture with %d tools (-only %s), listed with the prefix policy; a list is complete when it holds every upstream's tools (the hub's own hub_* tools come on top). Cold: empty data directory. Warm: the next start on the data directory of the start before, whose capability cache holds every upstream's tools. The client is go-sdk over mcp.CommandTransport; the time includes go-sdk's own work.\n\n",
		*starts, len(startupTools), strings.Join(startupTools, ","))
	fmt.Printf("| case | upstreams | tools listed | → first fixture start ms | → initialized ms | → first complete tools/list ms | tools/list requests | target | Go peers |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, c := range cases {
		rs := res[i]
		field := func(f func(startRun) time.Duration) []float64 {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, float64(f(r)))
			}
			return xs
		}
		listed := field(func(r startRun) time.Duration { return r.listed })
		spawned := "–"
		var spawns []float64
		for _, r := range rs {
			if r.firstSpawn >= 0 {
				spawns = append(spawns, float64(r.firstSpawn))
			}
		}
		if c.n > 0 && len(spawns) > 0 {
			spawned = fmt.Sprintf("%.1f", median(spawns)/1e6)
			if len(spawns) < len(rs) {
				spawned += fmt.Sprintf(" (%d of %d starts; the others were done before any)", len(spawns), len(rs))
			}
		}
		fmt.Printf("| %s | %d | %d | %s | %.1f | %s | %s | %s | %s |\n", c.label, c.n, rs[0].tools, spawned,
			median(field(func(r startRun) time.Duration { return r.initialized }))/1e6, msSpread(listed),
			intSpread(rs, func(r startRun) int { return r.lists }), c.target, c.peers)
	}
	slow1, slow20 := res[len(cases)-2], res[len(cases)-1]
	var ratios []float64
	for i := range slow20 {
		ratios = append(ratios, float64(slow20[i].listed)/float64(slow1[i].listed))
	}
	waves := (20 + spawnCap - 1) / spawnCap
	single := median(listedOf(slow1))
	fmt.Printf("\n20 upstreams that each take %s to start: the first complete list came after %.0f ms, %.2f× (median of the per-repetition ratios) the %.0f ms of a single one. With the spawn cap of %d, ceil(20/%d) = %d waves are expected, so about %d × %.0f = %.0f ms. Most fixtures between their start and ready events at once (from the fixtures' -events timestamps): %s.\n\n",
		*slowStart, median(listedOf(slow20))/1e6, median(ratios), single/1e6, spawnCap, spawnCap, waves, waves, single/1e6, float64(waves)*single/1e6,
		intSpread(slow20, func(r startRun) int { return r.starting }))
}

func listedOf(rs []startRun) []float64 {
	var xs []float64
	for _, r := range rs {
		xs = append(xs, float64(r.listed))
	}
	return xs
}

// msSpread formats durations (ns) as "median [min–max]" in ms.
func msSpread(xs []float64) string {
	return fmt.Sprintf("%.1f [%.1f–%.1f]", median(xs)/1e6, slices.Min(xs)/1e6, slices.Max(xs)/1e6)
}

// intSpread formats f over rs as "median", or "median [min–max]" when they differ.
func intSpread(rs []startRun, f func(startRun) int) string {
	var xs []float64
	for _, r := range rs {
		xs = append(xs, float64(f(r)))
	}
	if lo, hi := slices.Min(xs), slices.Max(xs); lo != hi {
		return fmt.Sprintf("%.0f [%.0f–%.0f]", median(xs), lo, hi)
	}
	return fmt.Sprintf("%.0f", xs[0])
}

// startOnce spawns the hub with c's upstreams on data and times it until
// its first complete tools/list. With cache it then waits until the hub
// has stored every upstream's inventory, for the warm start that follows.
func startOnce(dir, hubBin, fixture, data string, c startCase, cache bool) (startRun, error) {
	cfg := filepath.Join(dir, fmt.Sprintf("startup-%d-%s-%d.yaml", c.n, c.slow, c.spawns))
	events := filepath.Join(dir, "startup-events")
	args := []string{"-only", strings.Join(startupTools, ","), "-events", events}
	if c.slow > 0 {
		args = append(args, "-slow-start", c.slow.String())
	}
	if err := os.Remove(events); err != nil && !errors.Is(err, os.ErrNotExist) {
		return startRun{}, err
	}
	head := "logLevel: warn\ncatalog:\n  policy: prefix\ntimeouts:\n  shutdownGrace: 500ms\n"
	if c.spawns > 0 {
		head += fmt.Sprintf("limits:\n  maxConcurrentSpawns: %d\n", c.spawns)
	}
	if err := writeHubConfig(cfg, head, fixture, c.n, args...); err != nil {
		return startRun{}, err
	}
	want := map[string]bool{}
	for i := range c.n {
		for _, t := range startupTools {
			if c.direct {
				want[t] = true
			} else {
				want[upstreamName(i, c.n)+"__"+t] = true
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := target{name: "hub", start: func() (*exec.Cmd, error) {
		if c.direct {
			return own(exec.Command(fixture, args...)), nil
		}
		return own(exec.Command(hubBin, "--config", cfg, "--data-dir", data)), nil
	}}
	var r startRun
	t0 := time.Now()
	s, err := dial(ctx, start)
	if err != nil {
		return r, err
	}
	r.initialized = time.Since(t0)
	err = func() error {
		for {
			r.lists++
			res, err := s.cs.ListTools(ctx, nil)
			if err != nil {
				return err
			}
			found := 0
			for _, t := range res.Tools {
				if want[t.Name] {
					found++
				}
			}
			if found == len(want) {
				r.listed, r.tools = time.Since(t0), len(res.Tools)
				return nil
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if err == nil && cache {
		err = awaitCache(ctx, data, c.n)
	}
	err = errors.Join(err, s.stop())
	if err != nil || c.n == 0 {
		return r, err
	}
	r.starting, r.firstSpawn, err = fixtureStarts(events, t0)
	return r, err
}

// awaitCache waits until the store in data holds n inventories.
func awaitCache(ctx context.Context, data string, n int) error {
	st, err := persist.Open(ctx, data, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	for {
		inv, err := st.Inventories(ctx)
		if err != nil {
			return err
		}
		if len(inv) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("capability cache: %d of %d inventories stored: %w", len(inv), n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// fixtureStarts reads the fixtures' -events file: it returns the most
// fixtures that were between their "start" and "ready" events at once, and
// the time from t0 to the first start.
func fixtureStarts(path string, t0 time.Time) (most int, first time.Duration, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		// A warm start can serve its list from the cache and be stopped
		// before any fixture started.
		return 0, -1, nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	firstAt := int64(math.MaxInt64)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			continue
		}
		at, err := strconv.ParseInt(fs[2], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
		}
		switch fs[0] {
		case "start":
			edges = append(edges, edge{at, 1})
			firstAt = min(firstAt, at)
		case "ready":
			edges = append(edges, edge{at, -1})
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	// At equal times a ready ends one interval before a start opens another.
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta))
	})
	cur := 0
	for _, e := range edges {
		cur += e.delta
		most = max(most, cur)
	}
	if firstAt == math.MaxInt64 {
		return most, -1, nil // stopped before any start was written down
	}
	return most, time.Duration(firstAt - t0.UnixNano()), nil
}
