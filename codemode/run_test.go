package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tableHost answers tool calls from a function; blocked calls wait for
// their context.
type tableHost struct {
	calls   atomic.Int64
	inner   sync.WaitGroup
	handler func(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error)
}

func (h *tableHost) CallTool(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.calls.Add(1)
	h.inner.Add(1)
	defer h.inner.Done()
	if h.handler != nil {
		return h.handler(ctx, server, tool, args)
	}
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": server + "/" + tool}},
		"isError": tool == "fails",
	})
	return b, nil
}

func (h *tableHost) SearchTools(ctx context.Context, q string, limit int) (json.RawMessage, error) {
	return json.RawMessage(fmt.Sprintf(`[{"server":"s","tool":%q,"limit":%d}]`, q, limit)), nil
}

func run(t *testing.T, lim Limits, h Host, code string) (*Result, error) {
	t.Helper()
	return NewRunner(lim).Run(context.Background(), h, Script{Code: code, Input: json.RawMessage(`{"n":3}`)})
}

func TestScripts(t *testing.T) {
	tests := []struct {
		name, code, want string
	}{
		{"loop and aggregate", `let out = []; for (let i = 0; i < input.n; i++) { const r = callTool("mem", "t" + i, {i}); out.push(r.content[0].text) } return out`, `["mem/t0","mem/t1","mem/t2"]`},
		{"await works", `const r = await callTool("a", "b"); return r.isError`, `false`},
		{"branch on isError", `const r = callTool("a", "fails", {}); return r.isError ? "recovered" : "no"`, `"recovered"`},
		{"search", `return searchTools("read file", 3)`, `[{"server":"s","tool":"read file","limit":3}]`},
		{"undefined is null", `log("x")`, `null`},
		{"no require, process, fetch, timers, console", `return [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof console, typeof eval, typeof std, typeof os, typeof WebAssembly]`,
			`["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"]`},
		{"globalThis is the sandbox's", `return Object.getOwnPropertyNames(globalThis).filter(k => ["callTool","searchTools","log","sleep","input"].includes(k) || k.startsWith("__")).sort()`,
			`["callTool","input","log","searchTools","sleep"]`},
		{"a protocol error is thrown with its code", `try { callTool("x", "protocol") } catch (e) { return [e.message, e.code] }`, `["callTool(\"x\", \"protocol\"): MCP error -32602: bad params",-32602]`},
		{"host functions cannot be replaced", `callTool = null; globalThis.log = 1; return [typeof callTool, typeof log]`, `["function","function"]`},
	}
	h := &tableHost{}
	h.handler = func(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "protocol" {
			return nil, &ProtocolError{Code: -32602, Message: "bad params"}
		}
		b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": server + "/" + tool}}, "isError": tool == "fails"})
		return b, nil
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, Limits{}, h, tt.code)
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if string(res.Value) != tt.want {
				t.Errorf("result = %s, want %s", res.Value, tt.want)
			}
		})
	}
}

func TestEscapesAndErrors(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"Function('return this')()", `return Function('return this')()`, "eval and the Function constructor are disabled"},
		{"constructor of a function", `return (function(){}).constructor('return process')()`, "eval and the Function constructor are disabled"},
		{"async function constructor", `return (async function(){}).constructor('return 1')()`, "eval and the Function constructor are disabled"},
		{"generator constructor", `return (function*(){}).constructor('yield 1')().next()`, "eval and the Function constructor are disabled"},
		{"eval", `return eval('1')`, "'eval' is not defined"},
		{"indirect eval", `return globalThis['ev' + 'al']('1')`, "not a function"},
		{"require", `return require('fs')`, "'require' is not defined"},
		{"process", `return process.env`, "'process' is not defined"},
		{"fetch", `return fetch('http://127.0.0.1/')`, "'fetch' is not defined"},
		{"import()", `return await import('fs')`, "could not load module"},
		{"Atomics.wait does not block", `return Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100000)`, "cannot block"},
		{"syntax error names the line", "let a = 1\nlet = = 2", "SyntaxError"},
		{"uncaught error names the line", "\n\nnull.x", "line 3"},
		{"a result that is not JSON", `const a = {}; a.a = a; return a`, "not JSON"},
		{"deep recursion", `function f(n) { return f(n + 1) + 1 } return f(0)`, "stack overflow"},
		{"promise that never settles", `await new Promise(() => {})`, "never settled"},
		{"sleep past the limit", `sleep(60000)`, "would pass the script's time limit"},
		{"sleep for ever", `sleep(Infinity)`, "would pass the script's time limit"},
		{"sleep 1e300 ms", `sleep(1e300)`, "would pass the script's time limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, Limits{}, &tableHost{}, tt.code)
			var se *ScriptError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v (%T), want a ScriptError with %q", err, err, tt.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name  string
		lim   Limits
		code  string
		limit Limit
		want  string
	}{
		{"spin forever", Limits{Timeout: 300 * time.Millisecond}, `for (;;) {}`, LimitTime, "codeMode.timeout"},
		{"spin in a catch-all loop", Limits{Timeout: 300 * time.Millisecond}, `for (;;) { try { for (;;) {} } catch (e) {} }`, LimitTime, "time limit of 300ms"},
		{"allocate without bound", Limits{MemoryBytes: 4 << 20}, `const a = []; for (;;) a.push({i: a.length, s: "x" + a.length})`, LimitMemory, "codeMode.memoryLimit"},
		{"grow a string", Limits{MemoryBytes: 4 << 20}, `const a = []; for (;;) a.push("x".repeat(100000) + a.length)`, LimitMemory, "memory limit of 4 MiB"},
		{"too many calls", Limits{MaxCalls: 5}, `for (let i = 0; i < 10; i++) callTool("a", "b")`, LimitCalls, "codeMode.maxCalls"},
		{"too many calls, caught", Limits{MaxCalls: 5}, `try { for (;;) callTool("a", "b") } catch (e) {} throw new Error("other")`, LimitCalls, "5 tool calls"},
		{"result too large", Limits{MaxResultChars: 1000}, `return "x".repeat(2000)`, LimitResult, "security.maxToolOutputLength"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, tt.lim, &tableHost{}, tt.code)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != tt.limit || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want the %s limit with %q", err, tt.limit, tt.want)
			}
		})
	}
}

// TestHundredMegabytes returns 100 MB: the script's memory bound or the
// result limit stops it, whichever comes first, and the process is fine.
func TestHundredMegabytes(t *testing.T) {
	for _, mem := range []int64{0, 512 << 20} {
		_, err := run(t, Limits{MemoryBytes: mem}, &tableHost{}, `let s = "x".repeat(1 << 20); while (s.length < 100e6) s += s; return s`)
		var le *LimitError
		if !errors.As(err, &le) || (le.Limit != LimitMemory && le.Limit != LimitResult) {
			t.Fatalf("memory %d: err = %v", mem, err)
		}
		t.Logf("memory %d: %v", mem, err)
	}
}

func TestTenThousandCalls(t *testing.T) {
	h := &tableHost{}
	res, err := run(t, Limits{MaxCalls: 10000, Timeout: 2 * time.Minute}, h,
		`let n = 0; for (let i = 0; i < 10000; i++) { if (!callTool("a", "b", {i}).isError) n++ } return n`)
	if err != nil || string(res.Value) != "10000" || res.Calls != 10000 || h.calls.Load() != 10000 {
		t.Fatalf("res = %+v, err = %v, host calls %d", res, err, h.calls.Load())
	}
}

// TestCancelMidCall cancels a script while a tool call is in progress: the
// call's context ends, Run returns the context's error, nothing is left.
func TestCancelMidCall(t *testing.T) {
	before := runtime.NumGoroutine()
	started := make(chan struct{})
	h := &tableHost{handler: func(ctx context.Context, _, _ string, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := NewRunner(Limits{}).Run(ctx, h, Script{Code: `try { callTool("a", "slow") } catch (e) {} for (;;) {}`})
		done <- err
	}()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the script did not stop")
	}
	h.inner.Wait()
	waitGoroutines(t, before)
}

func TestConcurrencyLimit(t *testing.T) {
	r := NewRunner(Limits{MaxConcurrent: 1})
	release := make(chan struct{})
	started := make(chan struct{})
	h := &tableHost{handler: func(ctx context.Context, _, _ string, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-release
		return json.RawMessage(`{"content":[]}`), nil
	}}
	done := make(chan error, 1)
	go func() { _, err := r.Run(context.Background(), h, Script{Code: `callTool("a", "b")`}); done <- err }()
	<-started
	_, err := r.Run(context.Background(), &tableHost{}, Script{Code: `return 1`})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitConcurrent {
		t.Fatalf("second script: err = %v, want the concurrency limit", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), &tableHost{}, Script{Code: `return 1`}); err != nil {
		t.Fatalf("after the first finished: %v", err)
	}
}

func TestLogsAreBounded(t *testing.T) {
	res, err := run(t, Limits{MaxLogBytes: 100}, &tableHost{}, `for (let i = 0; i < 50; i++) log("line", i, {i}); return 1`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Logs) == 0 || res.DroppedLogs == 0 || res.Logs[0] != `line 0 {"i":0}` {
		t.Fatalf("logs %q, dropped %d", res.Logs, res.DroppedLogs)
	}
}

func TestTimeoutMsShortens(t *testing.T) {
	start := time.Now()
	_, err := NewRunner(Limits{}).Run(context.Background(), &tableHost{}, Script{Code: `for(;;){}`, Timeout: 200 * time.Millisecond})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitTime || time.Since(start) > 20*time.Second {
		t.Fatalf("err = %v", err)
	}
}

// waitGoroutines waits until the goroutine count is back to n (other
// tests' timers may take a moment).
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPauseStopsTheClock: time the host spends waiting for a person does
// not count against the script.
func TestPauseStopsTheClock(t *testing.T) {
	h := &tableHost{handler: func(ctx context.Context, _, _ string, _ json.RawMessage) (json.RawMessage, error) {
		resume := Pause(ctx)
		defer resume()
		select {
		case <-time.After(600 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return json.RawMessage(`{"content":[]}`), nil
	}}
	res, err := NewRunner(Limits{Timeout: 300 * time.Millisecond}).Run(context.Background(), h, Script{Code: `callTool("a", "asks"); return "done"`})
	if err != nil || string(res.Value) != `"done"` {
		t.Fatalf("res %+v, err %v", res, err)
	}
	// Without a pause the same wait ends the script.
	h.handler = func(ctx context.Context, _, _ string, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	_, err = NewRunner(Limits{Timeout: 300 * time.Millisecond}).Run(context.Background(), h, Script{Code: `callTool("a", "waits"); return "done"`})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitTime {
		t.Fatalf("err = %v, want the time limit", err)
	}
}

// TestStopError: a host that stops the script ends it, whatever it
// catches.
func TestStopError(t *testing.T) {
	h := &tableHost{handler: func(ctx context.Context, _, tool string, _ json.RawMessage) (json.RawMessage, error) {
		return nil, &StopError{Msg: "the person declined"}
	}}
	res, err := run(t, Limits{}, h, `try { callTool("a", "b") } catch (e) { log("caught") } return "went on"`)
	var se *StopError
	if !errors.As(err, &se) || se.Msg != "the person declined" || len(res.Logs) != 0 {
		t.Fatalf("err = %v, logs %q", err, res.Logs)
	}
}

// TestProtocolErrorNamesTheCall: a script that does not catch a protocol
// error fails with a message that names the call (server and tool, cut
// when long) and the error's code, so the model sees which call to fix.
func TestProtocolErrorNamesTheCall(t *testing.T) {
	h := &tableHost{handler: func(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error) {
		return nil, &ProtocolError{Code: -32042, Message: "custom failure"}
	}}
	long := strings.Repeat("s", 100)
	for _, tt := range []struct{ code, want string }{
		{"const ok = 1;\n" + `callTool("fx01", "rpc_error", {})`, `Error: callTool("fx01", "rpc_error"): MCP error -32042: custom failure (line 2, column 9)`},
		{`callTool("` + long + `", "t")`, `Error: callTool("` + long[:64] + `"…, "t"): MCP error -32042: custom failure`},
	} {
		_, err := run(t, Limits{}, h, tt.code)
		var se *ScriptError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, tt.want) {
			t.Errorf("script %q: err = %v, want it to contain %s", tt.code, err, tt.want)
		}
	}
}

// A script with no return statement gets null, as before, and the answer
// says why beside it: a model that wrote `callTool(...); n` (a last
// expression, as in a console) read null and could not tell it had
// returned nothing. structuredContent keeps its shape ({result, calls}).
func TestUndefinedResultIsExplained(t *testing.T) {
	h := &tableHost{handler: func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[]}`), nil
	}}
	tests := []struct {
		code      string
		undefined bool
	}{
		{`callTool("a", "b"); 42`, true},
		{`return`, true},
		{`return () => 1`, true}, // a function has no JSON form
		{`return null`, false},
		{`return 0`, false},
	}
	for _, tt := range tests {
		res, err := run(t, Limits{}, h, tt.code)
		if err != nil {
			t.Fatalf("%s: %v", tt.code, err)
		}
		if res.Undefined != tt.undefined {
			t.Errorf("%s: Undefined = %v, want %v", tt.code, res.Undefined, tt.undefined)
		}
		var ans struct {
			Content           []struct{ Text string }
			StructuredContent map[string]json.RawMessage
		}
		if err := json.Unmarshal(Answer(res, nil), &ans); err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, c := range ans.Content {
			texts = append(texts, c.Text)
		}
		noted := strings.Contains(strings.Join(texts, "\n"), "end it with `return")
		if noted != tt.undefined {
			t.Errorf("%s: content %q: the note is there: %v, want %v", tt.code, texts, noted, tt.undefined)
		}
		if tt.undefined && (string(ans.StructuredContent["result"]) != "null" || len(ans.StructuredContent) != 2 || texts[0] != "null") {
			t.Errorf("%s: structuredContent %s, first text %q: want {result: null, calls} and the null first", tt.code, ans.StructuredContent, texts[0])
		}
	}
}
