package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tests here are a hostile model's scripts: each would fail if the
// hole it probes were open.

// runBounded runs code and fails the test, instead of hanging it, when
// the script outlives its limits by far: a script that escaped its
// interrupt spins for ever.
func runBounded(t *testing.T, ctx context.Context, lim Limits, h Host, code string) (*Result, error) {
	t.Helper()
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := NewRunner(lim).Run(ctx, h, Script{Code: code})
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(30 * time.Second):
		t.Fatalf("the script still runs 30s later, far past its limits: %s", code)
		return nil, nil
	}
}

// escapes are scripts that try to outlive the interrupt that ends them:
// an async function turns the interrupt into a rejection its caller
// survives, and each entry of Go into the engine forgets a pending one.
var escapes = []struct{ name, code string }{
	{"spin after an interrupted async function", `(async () => { for (;;) {} })(); await null; for (;;) {}`},
	{"spin in a rejection handler", `(async () => { for (;;) {} })().catch(() => { for (;;) {} }); return 1`},
	{"await the interrupted function in a catch-all loop", `for (;;) { try { await (async () => { for (;;) {} })() } catch (e) {} }`},
	{"finally that loops", `for (;;) { try { for (;;) {} } finally { continue } }`},
	{"rethrow from a then chain", `let p = Promise.resolve(); for (;;) { p = p.then(() => { for (;;) {} }).catch(() => {}); await null }`},
	{"microtasks feeding themselves", `const spin = () => { for (let i = 0; i < 1e5; i++) {} Promise.resolve().then(spin) }; spin(); await new Promise(() => {})`},
	{"sleep in a catch-all loop", `for (;;) { try { sleep(10) } catch (e) {} }`},
	{"call in a catch-all loop", `for (;;) { try { callTool("a", "b") } catch (e) {} }`},
}

// TestInterruptCannotBeOutlived: whatever a script does with async
// functions, promise handlers, finally and catch, its time limit stops it.
func TestInterruptCannotBeOutlived(t *testing.T) {
	for _, tt := range escapes {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runBounded(t, context.Background(), Limits{Timeout: 200 * time.Millisecond, MaxCalls: 1 << 30}, &tableHost{}, tt.code)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != LimitTime || !strings.Contains(err.Error(), "codeMode.timeout") {
				t.Fatalf("err = %v, want the time limit", err)
			}
		})
	}
}

// TestCancelCannotBeOutlived: the same scripts, cancelled from outside
// (the client cancelled hub_run_code, or its session ended), stop.
func TestCancelCannotBeOutlived(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, tt := range escapes {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := runBounded(t, ctx, Limits{MaxCalls: 1 << 30}, &tableHost{}, tt.code)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the context's error", err)
			}
		})
	}
	waitGoroutines(t, before)
}

// TestNoCallAfterTheEnd: once its time is up, a script that catches the
// errors gets no call, search or sleep through to the host.
func TestNoCallAfterTheEnd(t *testing.T) {
	var late atomic.Int32
	h := &tableHost{handler: func(ctx context.Context, _, tool string, _ json.RawMessage) (json.RawMessage, error) {
		if tool == "slow" {
			<-ctx.Done() // the time runs out during this call
			return nil, ctx.Err()
		}
		if ctx.Err() != nil {
			late.Add(1)
		}
		return json.RawMessage(`{"content":[]}`), nil
	}}
	_, err := runBounded(t, context.Background(), Limits{Timeout: 200 * time.Millisecond}, h,
		`(async () => { try { callTool("a", "slow") } catch (e) {} for (;;) {} })(); await null; for (let i = 0; i < 50; i++) { try { callTool("a", "late") } catch (e) {} }`)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitTime {
		t.Fatalf("err = %v, want the time limit", err)
	}
	if n := late.Load(); n != 0 {
		t.Errorf("%d calls reached the host after the script's time was up", n)
	}
}

// TestNoCallAfterTheResult: promise jobs a script leaves behind run in the
// drain that settles its result; once it is settled, they send nothing.
func TestNoCallAfterTheResult(t *testing.T) {
	h := &recordHost{}
	res, err := runBounded(t, context.Background(), Limits{}, h,
		`callTool("a", "before"); Promise.resolve().then(() => Promise.resolve()).then(() => Promise.resolve()).then(() => { callTool("a", "after") }); return 1`)
	if err != nil || string(res.Value) != "1" {
		t.Fatalf("res %v, err %v", res, err)
	}
	if len(h.seen) != 1 || h.seen[0] != "a|before|{}" {
		t.Errorf("the host saw %q", h.seen)
	}
}

// TestStopCannotBeOutlived: when the host stops the script (the person
// declined one of its calls), no later call reaches the host, however the
// script hides from the interrupt.
func TestStopCannotBeOutlived(t *testing.T) {
	h := &recordHost{}
	stopping := &tableHost{handler: func(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "declined" {
			return nil, &StopError{Msg: "the person declined"}
		}
		return h.CallTool(ctx, server, tool, args)
	}}
	for _, code := range []string{
		`(async () => { try { callTool("a", "declined") } catch (e) {} for (;;) {} })(); await null; callTool("a", "after"); return "went on"`,
		`(async () => { try { callTool("a", "declined") } catch (e) {} for (;;) {} })().catch(() => { callTool("a", "after") }); return "went on"`,
	} {
		_, err := runBounded(t, context.Background(), Limits{}, stopping, code)
		var se *StopError
		if !errors.As(err, &se) {
			t.Errorf("err = %v, want the host's stop", err)
		}
	}
	if len(h.seen) != 0 {
		t.Errorf("calls after the stop reached the host: %q", h.seen)
	}
}

// TestNoCompilerSurvives: the engine's function constructor pastes the
// script into a source text, so a script that closes the function body
// early runs code at compile time. That code must find no eval or
// Function constructor to keep for later: a tool's answer stays data.
func TestNoCompilerSurvives(t *testing.T) {
	code := "return 1\n}); try { globalThis.F = Function } catch (e) {} try { globalThis.E = eval } catch (e) {}\n" +
		"try { globalThis.G = Object.getPrototypeOf(async function () {}).constructor } catch (e) {}\n" +
		"(async function (input) { const out = []; for (const f of [globalThis.F, globalThis.E, globalThis.G]) { try { out.push(String(await f('return 6 * 7')())) } catch (e) { out.push(e.name) } } return out"
	res, err := runBounded(t, context.Background(), Limits{}, &tableHost{}, code)
	if err == nil && strings.Contains(string(res.Value), "42") {
		t.Fatalf("a compiler survived the lockdown: %s", res.Value)
	}
	t.Logf("result %v, err %v", res, err)
}

// TestNothingReachesTheHostFunctions walks every object a script can
// reach from the global object and the intrinsics' prototypes (own
// properties, symbols, accessors' functions, prototypes) and looks for the
// host functions the prelude hid, and for any function that still compiles
// source text.
func TestNothingReachesTheHostFunctions(t *testing.T) {
	code := `
const api = new Set([callTool, searchTools, log, sleep]);
const roots = [globalThis, function () {}, async function () {}, function* () {}, async function* () {}, class {}, () => 1,
  (function () { return arguments })(1), (function* () {})(), (async function* () {})(), [].values(), new Map().entries(),
  "x"[Symbol.iterator](), /x/g[Symbol.matchAll]("x"), Promise.resolve(), new Error("e"), Proxy.revocable({}, {}), new WeakRef({}),
  new FinalizationRegistry(() => {}), new SharedArrayBuffer(8), Iterator.prototype];
const seen = new Set(), queue = [...roots], found = [];
const visit = (v) => { if ((typeof v === "object" || typeof v === "function") && v !== null && !seen.has(v)) queue.push(v) };
while (queue.length > 0 && seen.size < 20000) {
  const o = queue.pop();
  if (seen.has(o)) continue;
  seen.add(o);
  visit(Object.getPrototypeOf(o));
  for (const k of Reflect.ownKeys(o)) {
    if (String(k).includes("__hub")) found.push("key " + String(k));
    const d = Object.getOwnPropertyDescriptor(o, k);
    if (d === undefined) continue;
    visit(d.value); visit(d.get); visit(d.set);
  }
}
for (const f of seen) {
  if (typeof f !== "function" || api.has(f)) continue;
  if (/__hub/.test(f.name)) found.push("function " + f.name);
  for (const src of ["return 42", "yield 42"]) {
    let made;
    try { made = new f(src) } catch (e) { try { made = f(src) } catch (e) { continue } }
    if (typeof made === "function") found.push("compiler " + (f.name || "anonymous"));
  }
}
return {objects: seen.size, found};`
	res, err := runBounded(t, context.Background(), Limits{Timeout: 20 * time.Second}, &tableHost{}, code)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Objects int
		Found   []string
	}
	if err := json.Unmarshal(res.Value, &out); err != nil {
		t.Fatal(err)
	}
	if out.Objects < 500 || len(out.Found) > 0 {
		t.Fatalf("walked %d objects, found %q", out.Objects, out.Found)
	}
	t.Logf("walked %d objects", out.Objects)
}

// recordHost records what each call brought to the host.
type recordHost struct {
	tableHost
	mu   sync.Mutex
	seen []string
}

func (h *recordHost) CallTool(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.mu.Lock()
	h.seen = append(h.seen, server+"|"+tool+"|"+string(args))
	h.mu.Unlock()
	return json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`), nil
}

// TestPollutionDoesNotReachTheHost: a script that replaces the built-ins
// the prelude uses (JSON, Array and Promise methods, Function.prototype's
// call and apply, Object.prototype members named as the host's answers)
// still calls the host with exactly its server, tool and arguments, gets
// its answer, and cannot make an oversized result pass.
func TestPollutionDoesNotReachTheHost(t *testing.T) {
	pollute := `
JSON.parse = () => ({ok: "forged"}); JSON.stringify = () => '{"forged":true}';
Object.prototype.error = undefined; Object.defineProperty(Object.prototype, "ok", {get() { return "forged" }, configurable: true});
Array.prototype.map = function () { return ["forged"] }; Array.prototype.join = () => "forged";
Promise.prototype.then = function () { return "forged" };
Function.prototype.call = () => "forged"; Function.prototype.apply = () => "forged";
Object.defineProperty = () => {}; Object.freeze = (o) => o; String.prototype.slice = () => "";
`
	h := &recordHost{}
	res, err := runBounded(t, context.Background(), Limits{}, h, pollute+`const r = callTool("a", "b", {x: 1}); log("line", 2); return r.content[0].text`)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.seen) != 1 || h.seen[0] != `a|b|{"x":1}` {
		t.Errorf("the host saw %q", h.seen)
	}
	if string(res.Value) != `"ok"` {
		t.Errorf("result %s", res.Value)
	}
	_, err = runBounded(t, context.Background(), Limits{MaxResultChars: 100}, h, pollute+`return "x".repeat(1000)`)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitResult {
		t.Errorf("an oversized result after pollution: err = %v", err)
	}
}

// TestHostSeesOnlyStrings: arguments with getters, proxies and valueOf
// hooks run in the script, before the host is called; what reaches the
// host is the JSON text they produced, and a hook that calls back into
// callTool is just another call of the script, counted.
func TestHostSeesOnlyStrings(t *testing.T) {
	h := &recordHost{}
	res, err := runBounded(t, context.Background(), Limits{MaxCalls: 3}, h, `
const args = new Proxy({}, {ownKeys() { callTool("a", "from-a-hook"); return ["k"] }, getOwnPropertyDescriptor() { return {value: 1, enumerable: true, configurable: true} }, get() { return 1 }});
callTool("a", "b", args);
sleep({valueOf() { callTool("a", "from-valueOf"); return 1 }});
try { callTool("a", "one-too-many") } catch (e) { return e.message }`)
	if err != nil || !strings.Contains(string(res.Value), "codeMode.maxCalls") {
		t.Fatalf("the fourth call: %v %v", res, err)
	}
	want := []string{`a|from-a-hook|{}`, `a|b|{"k":1}`, `a|from-valueOf|{}`}
	if strings.Join(h.seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("the host saw %q, want %q", h.seen, want)
	}
}

// TestHugeArguments: a script cannot send a tool more than a client could
// (the largest message the hub reads, maxMessageBytes): the call fails
// with an error naming the limit, before anything reaches the host.
func TestHugeArguments(t *testing.T) {
	h := &recordHost{}
	res, err := runBounded(t, context.Background(), Limits{MaxArgBytes: 1 << 20}, h,
		`try { callTool("a", "b", {s: "x".repeat(2 << 20)}) } catch (e) { return e.message }`)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.seen) != 0 || !strings.Contains(string(res.Value), "maxMessageBytes") {
		t.Fatalf("result %.300s; the host saw %d calls", res.Value, len(h.seen))
	}
	// Fewer UTF-16 units than the limit, more bytes: the host counts.
	res, err = runBounded(t, context.Background(), Limits{MaxArgBytes: 1 << 20}, h,
		`try { callTool("a", "b", {s: "\u00e9".repeat(600000)}) } catch (e) { return e.message }`)
	if err != nil || len(h.seen) != 0 || !strings.Contains(string(res.Value), "bytes of JSON, over the 1048576") {
		t.Fatalf("result %.300s, err %v; the host saw %d calls", res.Value, err, len(h.seen))
	}
}

// TestArgumentsThatAreNoObject: a toJSON of the script's can turn the
// arguments into anything; what is not a JSON object is refused in the
// sandbox, and a log line past what the log keeps crosses only in part.
func TestArgumentsThatAreNoObject(t *testing.T) {
	h := &recordHost{}
	res, err := runBounded(t, context.Background(), Limits{MaxLogBytes: 100}, h, `
const out = [];
for (const v of [undefined, 5, "s", [1]]) { try { callTool("a", "b", {toJSON() { return v }}) } catch (e) { out.push(e.name) } }
log("x".repeat(1 << 20)); log("kept");
return out`)
	if err != nil || string(res.Value) != `["TypeError","TypeError","TypeError","TypeError"]` || len(h.seen) != 0 {
		t.Fatalf("res %v, err %v, host saw %q", res, err, h.seen)
	}
	if res.DroppedLogs != 1 || len(res.Logs) != 1 || res.Logs[0] != "kept" {
		t.Errorf("logs %q, dropped %d", res.Logs, res.DroppedLogs)
	}
}

// TestSurrogatesCrossAsData: strings with lone UTF-16 surrogates cross to
// the host as valid UTF-8 (U+FFFD), in names, arguments, logs and results.
func TestSurrogatesCrossAsData(t *testing.T) {
	h := &recordHost{}
	res, err := runBounded(t, context.Background(), Limits{}, h,
		`log("\ud800"); callTool("a\udc00", "b\ud800", {k: "\udfff", "\ud83d": 1}); return ["\ud800", "a\udc00b"]`)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(res.Value) || !json.Valid([]byte(strings.SplitN(h.seen[0], "|", 3)[2])) {
		t.Errorf("invalid JSON crossed: result %q, call %q", res.Value, h.seen)
	}
	for _, s := range append(res.Logs, h.seen...) {
		if !strings.Contains(s, "\uFFFD") && !strings.Contains(s, `\ud`) {
			t.Errorf("%q: the surrogate vanished", s)
		}
	}
}

// TestRegexBacktrackingIsInterrupted: a catastrophic regular expression is
// stopped by the wall clock like any loop.
func TestRegexBacktrackingIsInterrupted(t *testing.T) {
	_, err := runBounded(t, context.Background(), Limits{Timeout: 300 * time.Millisecond}, &tableHost{}, `return /(a+)+$/.test("a".repeat(40) + "b")`)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitTime {
		t.Fatalf("err = %v, want the time limit", err)
	}
}

// TestDeepNesting: structures nested far too deep to stringify, parse or
// print stop with an error of the script's, not a crash of the process
// (the engine's C is Go here: a recursion it did not bound would overflow
// the goroutine's stack, which no recover catches). Under -race the
// stringify case takes some 15 s: the engine's recursion is slow there.
func TestDeepNesting(t *testing.T) {
	for _, code := range []string{
		`let a = {}; for (let i = 0; i < 2e4; i++) a = {a}; return callTool("a", "b", a)`,
		`return JSON.parse("[".repeat(2e4) + "]".repeat(2e4))`,
		`let a = []; for (let i = 0; i < 2e4; i++) a = [a]; return String(a)`,
		`let p = {}; for (let i = 0; i < 2e4; i++) p = new Proxy(p, {}); return Object.keys(p)`,
	} {
		_, err := runBounded(t, context.Background(), Limits{MemoryBytes: 16 << 20}, &tableHost{}, code)
		var se *ScriptError
		var le *LimitError
		if !errors.As(err, &se) && !errors.As(err, &le) {
			t.Errorf("%s: err = %v", code, err)
		}
	}
	// A host answer nested deeper than the engine parses is an error the
	// script can catch.
	deep := strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	h := &tableHost{handler: func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[],"structuredContent":` + deep + `}`), nil
	}}
	res, err := runBounded(t, context.Background(), Limits{}, h, `try { callTool("a", "b") } catch (e) { return e.name }`)
	if err != nil || string(res.Value) != `"SyntaxError"` && string(res.Value) != `"InternalError"` {
		t.Errorf("a deep answer: %v %v", res, err)
	}
}

// rss returns the process's resident memory in bytes (Linux).
func rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestMemoryLimitLeaksNothing: 200 scripts that each fill their heap to
// the memory limit leave neither Go heap nor engine memory behind (the
// engine allocates outside the Go heap: the process's resident memory
// shows a leak of it).
func TestMemoryLimitLeaksNothing(t *testing.T) {
	const n, limit = 200, 1 << 20
	r := NewRunner(Limits{MemoryBytes: limit})
	oom := func() {
		_, err := r.Run(context.Background(), &tableHost{}, Script{Code: `const a = [], s = "y".repeat(1000); for (;;) a.push(s + a.length)`})
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != LimitMemory {
			t.Fatalf("err = %v, want the memory limit", err)
		}
	}
	for range 10 { // warm up: allocator arenas, pools
		oom()
	}
	goroutines, heap0, rss0 := runtime.NumGoroutine(), heapInuse(), rss(t)
	for range n {
		oom()
	}
	heap1, rss1 := heapInuse(), rss(t)
	t.Logf("after %d scripts at the %d KiB limit: Go heap %+d KiB, resident %+d KiB", n, limit>>10, (int64(heap1)-int64(heap0))>>10, (rss1-rss0)>>10)
	// A leak of the engine's memory shows as 45 MiB and more.
	if d := int64(heap1) - int64(heap0); d > 16<<20 {
		t.Errorf("the Go heap grew by %d MiB", d>>20)
	}
	if d := rss1 - rss0; d > 24<<20 {
		t.Errorf("resident memory grew by %d MiB", d>>20)
	}
	waitGoroutines(t, goroutines)
}
