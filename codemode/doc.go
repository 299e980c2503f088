// Package codemode runs a script a model wrote, in a sandboxed JavaScript
// runtime, against a [Host] that reaches the hub's tools: the engine of
// hub_run_code.
//
// The script is the body of an async function. It sees `input`,
// `callTool(server, tool, args)` (the tool's result; it throws on a
// protocol error), `searchTools(query, limit)`, `log(...)` and a bounded
// `sleep(ms)`, and nothing else: no require, process, fetch, timers,
// modules (import() fails), no eval and no Function constructor of any
// kind (code a tool returned stays data; they are disabled before the
// script is compiled, as the engine runs a body that closes its function
// early as global code), Atomics.wait does not block.
// What it returns, as JSON, is the result. The host functions are taken
// off the global object into a closure before the script is compiled, so a
// script cannot reach or replace them.
//
// # Limits
//
// Each names its config key in its error ([LimitError]): wall time
// (codeMode.timeout, 30 s; time the host spends waiting for a person, see
// [Pause], is not counted), CPU-bound loops (the same clock interrupts the
// engine, uncatchably, and again every few milliseconds until the script
// has stopped: an async function turns one interrupt into a rejection its
// caller outlives), memory (codeMode.memoryLimit, 64 MiB: the engine's
// own allocator refuses past it, the script gets an out-of-memory error and
// stops, the process is untouched), inner calls (codeMode.maxCalls, 100;
// searches have a budget of the same size), a call's arguments (the hub's
// maxMessageBytes, checked before they leave the sandbox), the result's
// size (the hub's security.maxToolOutputLength, checked in the runtime
// before the result is copied out), log lines (64 KiB kept) and scripts at
// once (codeMode.maxConcurrent, 4).
//
// # The runtime, chosen on measurement
//
// Candidates: github.com/dop251/goja (pure Go, interruptible, no memory
// bound of its own) and QuickJS. QuickJS on wazero
// (github.com/fastschema/qjs) is not served by the module proxy this
// project builds from (403), and the npm QuickJS builds are emscripten
// modules that need a JavaScript host, not WASI; modernc.org/quickjs is
// QuickJS itself translated to pure Go (no cgo), with its memory limit
// (JS_SetMemoryLimit) and interrupt handler. Measured on this project's
// 2-core CI machine (AMD EPYC, Go 1.26, other builds running: timings are
// noisy, the ratios and bytes less so), one program, the same JavaScript:
//
//	                                    goja          modernc.org/quickjs
//	new VM + 3 host funcs + eval + close 25 µs, 20 KB   133 µs, 3 KB Go heap
//	per host call (JSON in and out)      4.6 µs, 5.1 KB 4.6 µs, 0.4 KB
//	5e6 loop iterations                  659 ms         244 ms
//	build + stringify 20k objects        45 ms          62 ms
//	interrupt of for(;;){}, latency      15 µs          40 µs
//	memory bound                         none           hard, per VM
//	  64 MiB limit, array of arrays      —              "out of memory" in 176 ms
//	  64 MiB limit, new Array(1e9)       —              "out of memory" in 158 ms
//	binary size added                    +11.2 MB       +5.0 MB
//	under -race: per host call           39 µs          318 µs
//
// goja's only way to bound memory would be polling the process's Go heap,
// which cannot tell one script's allocations from another's or from the
// hub's: a runaway array in one script could only be stopped by guessing.
// QuickJS bounds each script's heap exactly, so "a runaway array stops the
// script, not the hub" holds by construction; its higher start cost (a
// fraction of a millisecond, once per script) is small beside one tool
// call, and per call the two are even. QuickJS it is. Under -race its
// translated C is slow (the tests use small memory limits); production
// builds do not run with -race.
//
// In the hub (make bench, suite code): a script's start (runtime, prelude,
// answer, two audit entries) costs about 6 direct calls; each inner call
// costs less than a direct call from the client (0.64×: no client round
// trip); a 25-call job over the memory and filesystem servers takes 1
// request instead of 25 and returns 1 % of the bytes (650 against 64,122).
package codemode
