package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// teamUp starts PostgreSQL, three replicas (hub1, hub2, hub3 behind
// HAProxy, in that order) and HAProxy, and returns them with the load
// balancer's URL.
func teamUp(t *testing.T) (*postgres, []*replica, string) {
	t.Helper()
	requireTeam(t)
	_, fixture := bins(t)
	pg := startPostgres(t)
	config := teamConfig(t, fixture)
	reps := make([]*replica, 3)
	var wg sync.WaitGroup
	for i := range reps {
		// Together: they seed the config file's server at once.
		wg.Go(func() { reps[i] = startReplica(t, fmt.Sprintf("hub%d", i+1), pg.dsn, config) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return pg, reps, startHAProxy(t, reps...)
}

// registerAt registers a pending upstream at a hub (or the LB) over REST.
func registerAt(url, name, fixture string) (int, string) {
	body, _ := json.Marshal(map[string]any{"name": name, "command": fixture, "args": []string{"-only", "pid"}})
	return httpDo("POST", url+"/api/servers", teamToken, string(body))
}

// worker is a client session through the load balancer calling echo in a
// loop.
type worker struct {
	id       int
	home     string // the replica its session lives on
	calls    atomic.Int64
	after    atomic.Int64 // successful calls after a failover
	failover []string     // errors that ended its session on the killed replica
	bad      []string     // any other error
}

// run calls until ctx ends. A session on the replica named dead (once
// killed says so) may fail: it initializes again through lb and goes on.
func (w *worker) run(ctx context.Context, lb string, s *session, dead string, killed *atomic.Bool, pause time.Duration) {
	defer func() { s.cs.Close() }()
	failedOver := false
	for i := 0; ctx.Err() == nil; i++ {
		err := s.echo(ctx, fmt.Sprintf("w%d-%d", w.id, i))
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
			w.calls.Add(1)
			if failedOver {
				w.after.Add(1)
			}
		case w.home == dead && killed.Load():
			w.failover = append(w.failover, err.Error())
			s.cs.Close()
			for ctx.Err() == nil {
				ns, cerr := connect(ctx, lb)
				if cerr == nil {
					s, w.home, failedOver = ns, ns.via.replica(), true
					break
				}
				w.failover = append(w.failover, "re-initialize: "+cerr.Error())
				time.Sleep(100 * time.Millisecond)
			}
		default:
			w.bad = append(w.bad, fmt.Sprintf("session on %s: %v", w.home, err))
			if len(w.bad) > 20 {
				return
			}
		}
		time.Sleep(pause)
	}
}

// Issue 18: 3 replicas + HAProxy + PostgreSQL. 50 streamable sessions and
// 20 stateless 2026-07-28 clients call tools through the LB; a server
// registered and approved on replica A is callable through B and C within a
// second; B is killed -9 mid-run: its sessions get 404 or a connection
// error, initialize again through the LB and go on, and no session on A or
// C sees an error; stateless clients are answered by every replica and see
// no error but for calls in flight on B when it is killed; every
// registration the LB acknowledged is stored.
func TestTeamFailover(t *testing.T) {
	pg, reps, lb := teamUp(t)
	_, fixture := bins(t)
	a, b, c := reps[0], reps[1], reps[2]

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var killed atomic.Bool
	workers := make([]*worker, 50)
	var wg sync.WaitGroup
	for i := range workers {
		s := mustConnect(t, lb)
		w := &worker{id: i, home: s.via.replica()}
		workers[i] = w
		wg.Go(func() { w.run(ctx, lb, s, b.name, &killed, 20*time.Millisecond) })
	}
	homes := map[string]int{}
	for _, w := range workers {
		homes[w.home]++
	}
	t.Logf("50 sessions through HAProxy: %v", homes)
	if len(homes) != 3 {
		t.Errorf("sessions landed on %v, want all three replicas", homes)
	}
	// 20 stateless 2026-07-28 clients (no initialize, no Mcp-Session-Id)
	// call through lb alongside: each request may go to any replica, and
	// none may fail but the ones in flight on B when it is killed.
	var kill killWindow
	stateless := make([]*statelessWorker, 20)
	for i := range stateless {
		s, err := connectStateless(context.Background(), lb)
		if err != nil {
			t.Fatal(err)
		}
		w := &statelessWorker{id: i, s: s}
		stateless[i] = w
		wg.Go(func() { w.run(ctx, lb, &kill, 20*time.Millisecond) })
	}

	// Registrations through the LB all along, across the kill.
	var acked []string
	attempted := 0
	regDone := make(chan struct{})
	go func() {
		defer close(regDone)
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-time.After(700 * time.Millisecond):
			}
			name := fmt.Sprintf("lbreg%d", i)
			attempted++
			if code, _ := registerAt(lb, name, fixture); code == 201 {
				acked = append(acked, name)
			}
		}
	}()

	// Propagation: registered and approved on A, callable through B and C.
	sb, sc := mustConnect(t, b.url()), mustConnect(t, c.url())
	var delays, applied, lag []time.Duration
	for i := range 3 {
		name := fmt.Sprintf("dyn%d", i)
		if code, body := registerAt(a.url(), name, fixture); code != 201 {
			t.Fatalf("register %s on A: %d %s", name, code, body)
		}
		review := reviewedAt(t, a.url(), name) // approval binds to what GET showed
		start := time.Now()
		approved := make(chan string, 1)
		go func() {
			code, body := httpDo("POST", a.url()+"/api/servers/"+name+"/approve", teamToken, review)
			if code != 200 {
				approved <- fmt.Sprintf("approve %s on A: %d %s", name, code, body)
			}
			close(approved)
		}()
		for _, s := range []*session{sb, sc} {
			waitFor(t, 20*time.Second, name+" callable through "+s.via.replica(), func() bool {
				return s.callVia(ctx, name, "pid", nil) == nil
			})
			delays = append(delays, time.Since(start))
		}
		if msg := <-approved; msg != "" {
			t.Fatal(msg)
		}
		// Applied: when each replica began to connect the upstream, from
		// its log (written as it happens; polling a replica for it would
		// add the poll's own latency under load).
		atA, ok := connectingAt(a, name)
		if !ok {
			t.Fatalf("%s never logged connecting %s", a.name, name)
		}
		for _, r := range []*replica{b, c} {
			at, ok := connectingAt(r, name)
			if !ok {
				t.Fatalf("%s never logged connecting %s", r.name, name)
			}
			applied, lag = append(applied, at.Sub(start)), append(lag, at.Sub(atA))
		}
	}
	median := spread(t, "propagation (approve request to A → B and C start the upstream, from their logs)", applied)
	spread(t, "B and C start the upstream relative to A, which commits the approval and then starts it (negative: before A)", lag)
	spread(t, "propagation (approve request to A → callable through B and C: applied, its process started, its tools listed)", delays)
	// The 1 s is reported (above), not asserted: a wall-clock
	// bound flakes on a loaded machine. The replicas also re-read the
	// store every second (the safety net), so this bound only catches a
	// registry that does not propagate at all; that notification alone
	// carries a change across is TestReplicasShareRegistry's (hub/), whose
	// replicas poll once a minute.
	if median > 10*time.Second {
		t.Errorf("median propagation %v, want well under 10 s", median)
	}

	// Kill B mid-run.
	time.Sleep(2 * time.Second)
	killed.Store(true)
	killedAt := time.Now()
	kill.begun.Store(true)
	b.kill()
	// Reaped: B answers nothing from now on. A request sent before this
	// may have reached B while the signal was taking effect (the kernel
	// accepts connections on its socket until the process is gone), so it
	// may fail; one sent later may not (HAProxy retries elsewhere).
	died := time.Now()
	kill.dead.Store(&died)
	t.Logf("kill -9 of %s: reaped %v after the signal", b.name, died.Sub(killedAt).Round(time.Millisecond))
	time.Sleep(6 * time.Second)
	stop()
	wg.Wait()
	<-regDone

	var onB, recovered, total int64
	for _, w := range workers {
		total += w.calls.Load()
		if len(w.failover) > 0 {
			onB++
			if w.after.Load() > 0 {
				recovered++
			}
		}
		for _, e := range w.bad {
			t.Errorf("worker %d: %s", w.id, e)
		}
	}
	t.Logf("kill -9 of %s: %d of its %d sessions failed over (404 or a connection error), initialized again through HAProxy and made %d calls in the %v after the kill; %d calls in all, none failed on %s or %s",
		b.name, recovered, homes[b.name], afterKill(workers), time.Since(killedAt).Round(time.Second), total, a.name, c.name)
	if onB != int64(homes[b.name]) || recovered != onB {
		t.Errorf("sessions on %s: %d, %d saw the failover, %d called on after it", b.name, homes[b.name], onB, recovered)
	}
	for _, w := range workers {
		if len(w.failover) > 0 {
			t.Logf("e.g. a session on %s saw: %s", b.name, w.failover[0])
			break
		}
	}
	var slCalls, slInFlight int64
	slServed := map[string]int{}
	for _, w := range stateless {
		slCalls += w.calls.Load()
		slInFlight += int64(len(w.inFlight))
		for _, e := range w.bad {
			t.Errorf("stateless client %d: %s", w.id, e)
		}
		for rep, n := range w.served {
			slServed[rep] += n
		}
		if n := w.sids.Load(); n != 0 {
			t.Errorf("stateless client %d: %d exchanges carried an Mcp-Session-Id", w.id, n)
		}
	}
	t.Logf("20 stateless clients: %d calls, answered by %v; %d failed, all in flight on %s when it was killed", slCalls, slServed, slInFlight, b.name)
	if len(slServed) != 3 {
		t.Errorf("stateless requests were answered by %v, want all three replicas", slServed)
	}

	// Every acknowledged registration is stored.
	code, body := httpGet(a.url()+"/api/servers", teamToken)
	if code != 200 {
		t.Fatalf("list on A: %d %s", code, body)
	}
	for _, name := range acked {
		if !strings.Contains(body, `"name":"`+name+`"`) {
			t.Errorf("acknowledged registration %s is missing", name)
		}
	}
	t.Logf("%d of %d registrations through the LB acknowledged (the others refused: the killed replica, or its rate limit), all of them stored", len(acked), attempted)
	if len(acked) < 5 {
		t.Errorf("only %d registrations acknowledged", len(acked))
	}
	checkNoSecret(t, pg, reps)
}

// statelessWorker is a stateless 2026-07-28 client calling echo through the
// load balancer in a loop: any replica may answer any call.
type statelessWorker struct {
	id       int
	s        *session
	calls    atomic.Int64
	inFlight []string       // errors of calls that started before the kill
	bad      []string       // any other error
	served   map[string]int // responses per replica, of every client it used
	sids     atomic.Int32   // exchanges that carried an Mcp-Session-Id
}

// killWindow is when B may have had calls in flight as it died: from the
// kill until B was reaped.
type killWindow struct {
	begun atomic.Bool
	dead  atomic.Pointer[time.Time] // when B was reaped
}

// inFlight says whether a call started at start that failed may have been
// in flight on B as it died, and if not, when it started relative to B's
// death.
func (k *killWindow) inFlight(start time.Time) (bool, string) {
	if !k.begun.Load() {
		return false, "before the kill"
	}
	d := k.dead.Load()
	if d == nil || start.Before(*d) {
		return true, ""
	}
	return false, fmt.Sprintf("started %v after the killed replica was reaped", start.Sub(*d).Round(time.Millisecond))
}

// run calls until ctx ends. A call in flight when B is killed may fail; the
// client then connects again (server/discover, through the LB) and goes on.
func (w *statelessWorker) run(ctx context.Context, lb string, kill *killWindow, pause time.Duration) {
	w.served = map[string]int{}
	done := func(s *session) {
		s.cs.Close()
		for rep, n := range s.via.served() {
			w.served[rep] += n
		}
		w.sids.Add(s.via.sids.Load())
	}
	defer func() {
		if w.s != nil {
			done(w.s)
		}
	}()
	for i := 0; ctx.Err() == nil; i++ {
		start := time.Now()
		err := w.s.echo(ctx, fmt.Sprintf("s%d-%d", w.id, i))
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			w.calls.Add(1)
			time.Sleep(pause)
			continue
		}
		inFlight, when := kill.inFlight(start)
		if inFlight {
			w.inFlight = append(w.inFlight, err.Error())
			done(w.s)
			w.s = nil
			for ctx.Err() == nil {
				s, cerr := connectStateless(ctx, lb)
				if cerr == nil {
					w.s = s
					break
				}
				w.bad = append(w.bad, "connect again: "+cerr.Error())
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		w.bad = append(w.bad, fmt.Sprintf("%v (%s)", err, when))
		if len(w.bad) > 20 {
			return
		}
	}
}

// connectingAt returns when replica r logged that it began to connect
// upstream name (the hub's text log at info level, millisecond times).
func connectingAt(r *replica, name string) (time.Time, bool) {
	for _, line := range strings.Split(r.logs.String(), "\n") {
		if !strings.Contains(line, `msg="upstream state" upstream=`+name+` state=CONNECTING`) {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		if at, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			return at, true
		}
	}
	return time.Time{}, false
}

// spread logs the min, median and max of samples and returns the median.
func spread(t *testing.T, what string, samples []time.Duration) time.Duration {
	t.Helper()
	slices.Sort(samples)
	median := samples[len(samples)/2]
	t.Logf("%s, %d samples: min %v, median %v, max %v", what, len(samples),
		samples[0].Round(time.Millisecond), median.Round(time.Millisecond), samples[len(samples)-1].Round(time.Millisecond))
	return median
}

func afterKill(ws []*worker) int64 {
	var n int64
	for _, w := range ws {
		n += w.after.Load()
	}
	return n
}

// checkNoSecret: the store URL's password is in no replica's log.
func checkNoSecret(t *testing.T, pg *postgres, reps []*replica) {
	t.Helper()
	if !strings.Contains(pg.dsn, pgPassword) {
		t.Fatal("the store URL has no password to look for")
	}
	for _, r := range reps {
		if strings.Contains(r.logs.String(), pgPassword) {
			t.Errorf("replica %s logged the store's password", r.name)
		}
	}
}

// Issue 18: PostgreSQL stops for 10 s under load: the replicas keep
// serving calls and the catalog they have (new sessions too), admin writes
// fail with a clear error and store nothing, /readyz says not ready;
// everything resumes when it is back.
func TestTeamStoreOutage(t *testing.T) {
	pg, reps, lb := teamUp(t)
	_, fixture := bins(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var never atomic.Bool
	workers := make([]*worker, 12)
	var wg sync.WaitGroup
	for i := range workers {
		s := mustConnect(t, lb)
		w := &worker{id: i, home: s.via.replica()}
		workers[i] = w
		wg.Go(func() { w.run(ctx, lb, s, "", &never, 20*time.Millisecond) })
	}

	pg.stop()
	down := time.Now()
	for _, r := range reps {
		waitFor(t, 10*time.Second, r.name+" not ready", func() bool {
			code, _ := httpGet(r.url()+"/readyz", "")
			return code == 503
		})
	}
	code, body := registerAt(lb, "during", fixture)
	if code != 503 || !strings.Contains(body, "STORE_UNAVAILABLE") || !strings.Contains(body, "cannot be reached") {
		t.Errorf("register through the LB while the store is down: %d %s", code, body)
	}
	if strings.Contains(body, pgPassword) {
		t.Error("the error shows the store's password")
	}
	// A client that comes now gets a session and the catalog.
	time.Sleep(3 * time.Second) // HAProxy has taken every replica out of the ready set
	s := mustConnect(t, lb)
	if err := s.echo(ctx, "new while down"); err != nil {
		t.Errorf("a new session while the store is down: %v", err)
	}
	if res, err := s.cs.ListTools(ctx, nil); err != nil || !slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "echo" }) {
		t.Errorf("tools/list while the store is down: %v", err)
	}
	for _, r := range reps {
		if code, body := httpGet(r.url()+"/readyz", ""); code != 503 || strings.TrimSpace(body) != `{"ready":false}` {
			t.Errorf("%s /readyz while the store is down: %d %s", r.name, code, body)
		}
	}
	time.Sleep(time.Until(down.Add(10 * time.Second)))
	pg.start()
	up := time.Now()
	for _, r := range reps {
		waitFor(t, 20*time.Second, r.name+" ready again", func() bool {
			code, _ := httpGet(r.url()+"/readyz", "")
			return code == 200
		})
	}
	t.Logf("PostgreSQL down for %v; all replicas ready %v after it came back", up.Sub(down).Round(100*time.Millisecond), time.Since(up).Round(100*time.Millisecond))
	if code, body := registerAt(lb, "after", fixture); code != 201 {
		t.Errorf("register through the LB once the store is back: %d %s", code, body)
	}
	for _, r := range reps {
		waitFor(t, 5*time.Second, "the registration on "+r.name, func() bool {
			code, _ := httpGet(r.url()+"/api/servers/after", teamToken)
			return code == 200
		})
		if code, _ := httpGet(r.url()+"/api/servers/during", teamToken); code != 404 {
			t.Errorf("%s: the refused registration is stored (%d)", r.name, code)
		}
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	var total int64
	for _, w := range workers {
		total += w.calls.Load()
		for _, e := range w.bad {
			t.Errorf("worker %d: %s", w.id, e)
		}
	}
	t.Logf("%d sessions made %d calls through the outage without an error", len(workers), total)
	checkNoSecret(t, pg, reps)
}

// Throughput of echo through HAProxy with 1 and with 3 replicas (a short
// bench: the numbers are logged, not asserted). The rounds alternate, so
// that a change in the machine's load hits both.
func TestTeamThroughput(t *testing.T) {
	_, reps, lb3 := teamUp(t)
	lb1 := startHAProxy(t, reps[0])
	const sessions, d = 24, 4 * time.Second
	rates := map[string][]string{}
	for round := range 4 {
		name, lb := "1 replica", lb1
		if round%2 == 1 {
			name, lb = "3 replicas", lb3
		}
		ss := make([]*session, sessions)
		for i := range ss {
			ss[i] = mustConnect(t, lb)
		}
		ctx, cancel := context.WithTimeout(context.Background(), d)
		var n, errs atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for i, s := range ss {
			wg.Go(func() {
				for j := 0; ctx.Err() == nil; j++ {
					if err := s.echo(ctx, fmt.Sprintf("%d-%d", i, j)); err == nil {
						n.Add(1)
					} else if ctx.Err() == nil {
						errs.Add(1)
					}
				}
			})
		}
		wg.Wait()
		cancel()
		for _, s := range ss {
			s.cs.Close()
		}
		rates[name] = append(rates[name], fmt.Sprintf("%.0f", float64(n.Load())/time.Since(start).Seconds()))
		if errs.Load() > 0 {
			t.Errorf("%s: %d errors", name, errs.Load())
		}
	}
	t.Logf("throughput of echo through HAProxy, %d sessions calling back to back, calls/s per %v round: 1 replica %s; 3 replicas %s",
		sessions, d, strings.Join(rates["1 replica"], ", "), strings.Join(rates["3 replicas"], ", "))
}
