package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// sessionSpec is a fixture of scope session whose processes log "start"
// (with their pid) to events.
func sessionSpec(name, events string, args ...string) Spec {
	s := stdioSpec(name, append([]string{"-events", events}, args...)...)
	s.Scope = ScopeSession
	return s
}

// startedPIDs returns the pids of the fixtures that logged start to events.
func startedPIDs(t *testing.T, events string) []int {
	t.Helper()
	var pids []int
	for _, e := range readEvents(t, events) {
		if e.kind == "start" {
			pids = append(pids, e.pid)
		}
	}
	return pids
}

// TestInstances: a registered upstream of scope session lists, then stops
// (its own process is gone) and refuses calls; each instance is a process
// of its own with its own state; the per-upstream and the total caps
// refuse more; an admin disconnect (or disable) stops the instances and
// no new one starts, from the moment it returns, until the upstream is
// connected (enabled) again; stopping an instance, or
// removing its upstream, kills and reaps its process tree; Close reaps
// the rest.
func TestInstances(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events")
	opts := fastOptions(t)
	opts.MaxInstances, opts.MaxTotalInstances = 2, 3
	m := newManager(t, opts)
	a, err := m.Add(sessionSpec("a", events, "-only", "counter,pid"), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := waitState(t, a, 10*time.Second, StateDisconnected)
	if !st.Idle || st.Tools != 2 || st.PID != 0 {
		t.Errorf("listed session-scoped upstream: %+v, want idle, 2 tools, no pid", st)
	}
	if alive := testbin.WaitGone(10*time.Second, startedPIDs(t, events)...); len(alive) > 0 {
		t.Errorf("the listing process %v still runs", alive)
	}
	if _, err := a.Call(context.Background(), "tools/call", []byte(`{"name":"pid"}`)); err == nil || !strings.Contains(err.Error(), "one instance per client session") {
		t.Errorf("call to the registered upstream: %v, want a refusal", err)
	}

	one, err := m.StartInstance("a", "owner 1", "s1")
	if err != nil {
		t.Fatal(err)
	}
	two, err := m.StartInstance("a", "owner 2", "s2")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		for _, u := range []*Upstream{one, two} {
			if got := callText(t, u, "counter", "{}"); !strings.Contains(got, `"text":"`+string(rune('0'+i))+`"`) {
				t.Errorf("instance %s, call %d: %s", u.Label(), i, got)
			}
		}
	}
	if one.Owner() != "owner 1" || one.Parent() != a || len(a.Instances()) != 2 || a.Status().State != StateDisconnected {
		t.Errorf("instance bookkeeping: owner %v, parent %v, %d instances", one.Owner(), one.Parent(), len(a.Instances()))
	}
	p1, p2 := waitState(t, one, time.Second, StateConnected).PID, waitState(t, two, time.Second, StateConnected).PID
	if p1 == p2 || p1 == 0 {
		t.Errorf("instance pids %d and %d, want two processes", p1, p2)
	}
	var limit *InstanceLimitError
	if _, err := m.StartInstance("a", "owner 3", "s3"); !errors.As(err, &limit) || limit.Total || limit.Limit != 2 {
		t.Errorf("a third instance of a: %v, want the per-upstream cap", err)
	}
	b, _ := m.Add(sessionSpec("b", events, "-only", "counter", "-grandchild", filepath.Join(dir, "gc.pid")), AddOptions{})
	waitState(t, b, 10*time.Second, StateDisconnected)
	bi, err := m.StartInstance("b", "owner 1", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.StartInstance("b", "owner 2", "s2"); !errors.As(err, &limit) || !limit.Total || limit.Limit != 3 {
		t.Errorf("a fourth instance in all: %v, want the total cap", err)
	}

	// Stopping an instance kills and reaps its process.
	<-m.StopInstance(one)
	if alive := testbin.WaitGone(10*time.Second, p1); len(alive) > 0 {
		t.Errorf("stopped instance's process %d still exists", p1)
	}
	if _, err := m.StartInstance("a", "owner 3", "s3"); err != nil {
		t.Errorf("an instance in the place freed: %v", err)
	}

	// An admin disconnect stops every instance and keeps new ones out
	// from the moment it returns, before a's supervisor applied it (a's
	// state, DISCONNECTED once listed, does not show it until then).
	if err := m.Disconnect("a"); err != nil {
		t.Fatal(err)
	}
	var nr *NotReadyError
	if _, err := m.StartInstance("a", "owner 4", "s4"); !errors.As(err, &nr) || nr.State != StateDisconnected {
		t.Errorf("an instance of an upstream just disconnected: %v, want not ready", err)
	}
	eventually(t, 10*time.Second, "a's disconnect applied, its instances stopped", func() bool {
		return a.Status().Manual && len(a.Instances()) == 0 && !testbin.Alive(p2)
	})
	if _, err := m.StartInstance("a", "owner 4", "s4"); !errors.As(err, &nr) {
		t.Errorf("an instance of a disconnected upstream: %v, want not ready", err)
	}
	if err := m.Connect("a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "a listed again", func() bool { st := a.Status(); return st.Idle && !st.Manual })
	if _, err := m.StartInstance("a", "owner 4", "s4"); err != nil {
		t.Errorf("an instance once connected again: %v", err)
	}

	// A disable likewise; an enable lets them in again.
	if err := m.SetEnabled("a", false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.StartInstance("a", "owner 5", "s5"); !errors.As(err, &nr) || nr.State != StateDisabled {
		t.Errorf("an instance of an upstream just disabled: %v, want not ready", err)
	}
	eventually(t, 10*time.Second, "a disabled, its instances stopped", func() bool {
		return a.Status().State == StateDisabled && len(a.Instances()) == 0
	})
	if err := m.SetEnabled("a", true); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "a listed again", func() bool { st := a.Status(); return st.Idle && st.State == StateDisconnected })
	if _, err := m.StartInstance("a", "owner 5", "s5"); err != nil {
		t.Errorf("an instance once enabled again: %v", err)
	}

	// Removing the upstream stops its instances, process trees included.
	gc, err := testbin.ReadPID(filepath.Join(dir, "gc.pid"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bpid := waitState(t, bi, 10*time.Second, StateConnected).PID
	removeWithin(t, m, "b", 10*time.Second)
	if alive := testbin.WaitGone(10*time.Second, bpid, gc); len(alive) > 0 {
		t.Errorf("processes %v of b's instance alive after remove", alive)
	}
	if !bi.Stopping() {
		t.Error("b's instance not stopped")
	}

	// Close reaps what is left.
	m.Close()
	for _, pid := range startedPIDs(t, events) {
		if testbin.Exists(pid) {
			t.Errorf("process %d exists after Close", pid)
		}
	}
}

// TestInstanceListings: the catalog's source is the registered upstream's
// listing. One that never listed (lazy, nothing cached) takes its first
// instance's; an instance that later lists other tools is logged once, and
// the shared listing stays.
func TestInstanceListings(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	logs := &lockedBuffer{}
	opts := fastOptions(t)
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	m := newManager(t, opts)
	spec := sessionSpec("a", events, "-only", "echo,add_tool")
	spec.Start = StartLazy
	a, _ := m.Add(spec, AddOptions{})
	if inv := a.Inventory(); inv.Version != 0 {
		t.Fatalf("a lazy upstream listed: %+v", inv)
	}
	i, err := m.StartInstance("a", "o", "s")
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, i, 10*time.Second, StateConnected)
	eventually(t, 5*time.Second, "the instance's listing shared", func() bool { inv := a.Inventory(); return len(inv.Tools) == 2 && !inv.Stale })
	if n := len(startedPIDs(t, events)); n != 1 {
		t.Errorf("%d processes started, want the instance's only", n)
	}
	for _, name := range []string{"x1", "x2"} {
		callText(t, i, "add_tool", `{"name":"`+name+`"}`)
	}
	eventually(t, 5*time.Second, "the instance re-listed", func() bool { return len(i.Inventory().Tools) == 4 })
	const msg = "an instance lists other tools than the shared listing"
	if n := strings.Count(logs.String(), msg); n != 1 {
		t.Errorf("%q logged %d times, want once:\n%s", msg, n, logs.String())
	}
	if n := len(a.Inventory().Tools); n != 2 {
		t.Errorf("the shared listing has %d tools, want its 2", n)
	}
}

// TestInstancesShareSpawnCap: per-session instances take the manager's
// spawn slots like any upstream. With one slot, instances asked for at
// once start one after another: no fixture starts before the one before
// it is ready (the events file is in the order the processes wrote it).
func TestInstancesShareSpawnCap(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	opts := fastOptions(t)
	opts.MaxConcurrentSpawns = 1
	m := newManager(t, opts)
	a, err := m.Add(sessionSpec("a", events, "-only", "pid", "-slow-start", "200ms"), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, a, 10*time.Second, StateDisconnected)
	const n = 3
	var insts []*Upstream
	for i := range n {
		u, err := m.StartInstance("a", i, fmt.Sprint("s", i))
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, u)
	}
	for _, u := range insts {
		waitState(t, u, 20*time.Second, StateConnected)
	}
	starting, most := map[int]bool{}, 0
	for _, e := range readEvents(t, events) {
		switch e.kind {
		case "start":
			starting[e.pid] = true
		case "ready":
			delete(starting, e.pid)
		}
		most = max(most, len(starting))
	}
	if n := len(startedPIDs(t, events)); n != 1+len(insts) {
		t.Fatalf("%d processes started, want the listing's and one per instance", n)
	}
	if most != 1 {
		t.Errorf("%d fixtures were starting at once, want 1 (limits.maxConcurrentSpawns)", most)
	}
}

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInstanceWithholds: what Options.VetInstance says of an instance's
// listing is in force before any request reaches the instance after that
// listing, including its first call (made before it connected) and after a
// re-list; a withheld tool's call fails with a WithheldError without
// reaching the process, others pass, and Withhold lifts it. Adopt puts an
// instance's definitions into the registered upstream's listing.
func TestInstanceWithholds(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	opts := fastOptions(t)
	var mu sync.Mutex
	var vetted []int // the number of tools of each listing vetted
	opts.VetInstance = func(i *Upstream, inv Inventory) Withheld {
		mu.Lock()
		vetted = append(vetted, len(inv.Tools))
		mu.Unlock()
		return Withheld{"tools/call": {"counter": "counter withheld", "x1": "x1 withheld"}}
	}
	m := newManager(t, opts)
	a, err := m.Add(sessionSpec("a", events, "-only", "echo,counter,add_tool"), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, a, 10*time.Second, StateDisconnected)
	i, err := m.StartInstance("a", "o", "s")
	if err != nil {
		t.Fatal(err)
	}
	var wh *WithheldError
	_, err = i.Call(context.Background(), "tools/call", []byte(`{"name":"counter","arguments":{}}`))
	if !errors.As(err, &wh) || wh.Message != "counter withheld" || wh.Item != "counter" {
		t.Errorf("first call of a withheld tool: %v", err)
	}
	if got := callText(t, i, "echo", `{"message":"hi"}`); !strings.Contains(got, "hi") {
		t.Errorf("echo: %s", got)
	}
	if cancel, ok := i.TryStart("tools/call", []byte(`{"name":"counter"}`), func(Reply, error) {}); ok {
		cancel()
		t.Error("TryStart took the fast path on an instance that withholds")
	}
	callText(t, i, "add_tool", `{"name":"x1"}`)
	eventually(t, 5*time.Second, "the re-list vetted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(vetted) == 2 && vetted[1] == 4
	})
	if _, err := i.Call(context.Background(), "tools/call", []byte(`{"name":"x1"}`)); !errors.As(err, &wh) || wh.Message != "x1 withheld" {
		t.Errorf("call of a withheld tool the re-list added: %v", err)
	}
	i.Withhold(nil)
	if got := callText(t, i, "counter", "{}"); !strings.Contains(got, `"text":"1"`) {
		t.Errorf("counter once no longer withheld: %s, want 1 (the refused call never reached it)", got)
	}
	if mu.Lock(); vetted[0] != 3 {
		t.Errorf("vetted listings %v, want the instance's first (3 tools) first", vetted)
	}
	mu.Unlock()

	before := a.Inventory()
	echo := `{"name":"echo","description":"Echoes, version 2.","inputSchema":{"type":"object"}}`
	fresh := `{"name":"fresh","inputSchema":{"type":"object"}}`
	a.Adopt(Inventory{Tools: []json.RawMessage{json.RawMessage(echo), json.RawMessage(fresh)}})
	after := a.Inventory()
	if after.Version != before.Version+1 || len(after.Tools) != len(before.Tools)+1 {
		t.Fatalf("adopted: version %d → %d, %d → %d tools", before.Version, after.Version, len(before.Tools), len(after.Tools))
	}
	got := map[string]string{}
	for _, raw := range after.Tools {
		n, _ := itemName(raw, "name")
		got[n] = string(raw)
	}
	if got["echo"] != echo || got["fresh"] != fresh || got["counter"] == "" {
		t.Errorf("adopted tools: %v", got)
	}
	a.Adopt(Inventory{Tools: []json.RawMessage{json.RawMessage(echo)}})
	if v := a.Inventory().Version; v != after.Version {
		t.Errorf("adopting what is listed already changed the version: %d → %d", after.Version, v)
	}
}
