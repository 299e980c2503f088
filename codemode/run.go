package codemode

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"modernc.org/quickjs"
)

// Host is what a script reaches beyond its own computation. The hub
// implements it for one client session and one hub_run_code call: every
// method goes through the path a direct request of that session takes.
type Host interface {
	// CallTool calls tool of server with args (a JSON object) and returns
	// the tool's result object (content, structuredContent, isError, …). A
	// refusal the client would get as a tool result (an unknown or
	// quarantined tool, a policy that denies it) is a result with isError.
	// A JSON-RPC error is returned as a *ProtocolError.
	CallTool(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error)
	// SearchTools returns what hub_search_tools returns for query and limit
	// (its structuredContent's tools, a JSON array).
	SearchTools(ctx context.Context, query string, limit int) (json.RawMessage, error)
}

// ProtocolError is a JSON-RPC error answer to an inner call. The script
// gets it thrown, as an Error with code and data.
type ProtocolError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ProtocolError) Error() string { return e.Message }

// StopError, returned by a Host method, stops the script at once: the
// script cannot catch it, and Run returns it. The hub stops a script this
// way when the person declines one of its calls.
type StopError struct{ Msg string }

func (e *StopError) Error() string { return e.Msg }

// Limits bound one script. A zero field selects the default in its comment.
type Limits struct {
	// Timeout is the wall time a script may run, inner calls and sleeps
	// included (30s).
	Timeout time.Duration
	// MemoryBytes caps the memory of the script's JavaScript heap (64 MiB).
	MemoryBytes int64
	// MaxCalls caps the tool calls of one script; searchTools calls have
	// a budget of the same size (100).
	MaxCalls int
	// MaxResultChars caps the characters of the result's JSON (50,000;
	// the hub passes its security.maxToolOutputLength).
	MaxResultChars int
	// MaxArgBytes caps the JSON of one call's arguments (16 MiB; the hub
	// passes its maxMessageBytes: a script sends no tool more than a
	// client could).
	MaxArgBytes int
	// MaxLogBytes caps what log() keeps (64 KiB); later lines are counted,
	// not kept.
	MaxLogBytes int
	// MaxConcurrent caps the scripts a Runner runs at once (4).
	MaxConcurrent int
}

// Defaults of Limits.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMemoryBytes    = 64 << 20
	DefaultMaxCalls       = 100
	DefaultMaxResultChars = 50000
	DefaultMaxArgBytes    = 16 << 20
	DefaultMaxLogBytes    = 64 << 10
	DefaultMaxConcurrent  = 4
)

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxCalls
	}
	if l.MaxResultChars <= 0 {
		l.MaxResultChars = DefaultMaxResultChars
	}
	if l.MaxArgBytes <= 0 {
		l.MaxArgBytes = DefaultMaxArgBytes
	}
	if l.MaxLogBytes <= 0 {
		l.MaxLogBytes = DefaultMaxLogBytes
	}
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = DefaultMaxConcurrent
	}
	return l
}

// Script is one hub_run_code request.
type Script struct {
	// Code is the body of an async function of input: what it returns
	// (JSON) is the result.
	Code string
	// Input is the JSON value the script sees as input (null when empty).
	Input json.RawMessage
	// Timeout, when positive and shorter than the limit, is the script's
	// own wall time (hub_run_code's timeoutMs).
	Timeout time.Duration
}

// Hash returns the hex SHA-256 of a script's code: how the audit log names
// it.
func Hash(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// Result is what a script produced.
type Result struct {
	// Value is the JSON of what the script returned (null for undefined).
	Value json.RawMessage
	// Undefined is set when the script returned undefined (no return
	// statement, or a value JSON cannot hold, such as a function): Value
	// is null, and the answer says how to return something.
	Undefined bool
	// Logs are the lines log() wrote, as kept under MaxLogBytes.
	Logs []string
	// DroppedLogs counts the lines past MaxLogBytes.
	DroppedLogs int
	// Calls and Searches count the inner calls made.
	Calls, Searches int
	// Elapsed is the script's wall time.
	Elapsed time.Duration
}

// Limit names the limit a *LimitError is about.
type Limit string

// The limits.
const (
	LimitTime       Limit = "time"
	LimitMemory     Limit = "memory"
	LimitCalls      Limit = "calls"
	LimitResult     Limit = "result"
	LimitConcurrent Limit = "concurrent"
)

// LimitError stops a script that reached one of its limits.
type LimitError struct {
	Limit Limit
	Msg   string
}

func (e *LimitError) Error() string { return e.Msg }

// ScriptError is a script that failed by itself: a syntax error, an
// exception it did not catch, a result that is not JSON.
type ScriptError struct{ Msg string }

func (e *ScriptError) Error() string { return e.Msg }

// Runner runs scripts under one set of limits. It is safe for concurrent
// use.
type Runner struct {
	lim     Limits
	running atomic.Int32
}

// NewRunner returns a Runner with lim (zero fields: defaults).
func NewRunner(lim Limits) *Runner { return &Runner{lim: lim.withDefaults()} }

// Limits returns the runner's limits, defaults filled in.
func (r *Runner) Limits() Limits { return r.lim }

//go:embed prelude.js
var prelude string

// Run runs s with host until it returns, fails, reaches a limit or ctx
// ends (then ctx's error is returned). Every inner call it started has
// returned when Run does.
func (r *Runner) Run(ctx context.Context, host Host, s Script) (*Result, error) {
	lim := r.lim
	if n := r.running.Add(1); int(n) > lim.MaxConcurrent {
		r.running.Add(-1)
		return nil, &LimitError{LimitConcurrent, fmt.Sprintf("code mode: %d scripts are already running, the most this hub runs at once (codeMode.maxConcurrent); try again when one has finished", lim.MaxConcurrent)}
	}
	defer r.running.Add(-1)
	timeout := lim.Timeout
	if s.Timeout > 0 && s.Timeout < timeout {
		timeout = s.Timeout
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := startClock(ctx, timeout)
	defer cancel()
	input := s.Input
	if len(input) == 0 {
		input = json.RawMessage("null")
	} else if !json.Valid(input) {
		return nil, &ScriptError{"input is not valid JSON"}
	}

	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("code mode: start the JavaScript runtime: %w", err)
	}
	defer vm.Close()
	vm.SetMemoryLimit(uintptr(lim.MemoryBytes))
	vm.SetCanBlock(false) // Atomics.wait throws instead of blocking

	st := &state{ctx: ctx, host: host, lim: lim, start: time.Now(), end: func() {
		cancel()
		vm.Interrupt() // now, not at the watchdog's first tick
	}}
	for name, fn := range map[string]quickjs.HostFunc{
		"__hub_call":   st.call,
		"__hub_search": st.search,
		"__hub_log":    st.log,
		"__hub_sleep":  st.sleep,
		"__hub_done":   st.done,
	} {
		if err := vm.RegisterHostFunc(name, guard(name, fn)); err != nil {
			return nil, fmt.Errorf("code mode: %w", err)
		}
	}
	defer watch(ctx, vm.Interrupt)()

	boot := "(" + prelude + ")(globalThis, " + jsString(s.Code) + ", " + jsString(string(input)) + ", " + strconv.Itoa(lim.MaxResultChars) + ", " + strconv.Itoa(lim.MaxArgBytes) + ", " + strconv.Itoa(lim.MaxLogBytes) + ")"
	_, err = vm.Eval(boot, quickjs.EvalGlobal)
	for err == nil && !st.finished && ctx.Err() == nil {
		var n int
		n, err = vm.ExecutePendingJobs()
		if n == 0 && err == nil && !st.finished {
			err = &ScriptError{"the script's promise never settled: it awaited something that never happens (there are no timers or events in code mode)"}
		}
	}
	res := &Result{Logs: st.logs, DroppedLogs: st.dropped, Calls: st.calls, Searches: st.searches, Elapsed: time.Since(st.start)}
	if st.stop != nil {
		return res, st.stop
	}
	if err != nil || !st.finished || ctx.Err() != nil {
		// An interrupt reaches the script as a rejection too: the
		// context says why it came.
		return res, st.failure(ctx, err, timeout)
	}
	switch st.status {
	case 1:
		if n := utf8.RuneCountInString(st.text); n > lim.MaxResultChars {
			return res, resultTooLarge(n, lim.MaxResultChars)
		}
		res.Value = json.RawMessage(st.text)
		return res, nil
	case 4:
		res.Value, res.Undefined = json.RawMessage("null"), true
		return res, nil
	case 2:
		n, _ := strconv.Atoi(st.text)
		return res, resultTooLarge(n, lim.MaxResultChars)
	}
	if st.limit != nil {
		// The script caught the limit's error and failed otherwise: the
		// limit is the cause.
		return res, st.limit
	}
	switch {
	case strings.Contains(st.text, "out of memory"):
		return res, st.memoryError("")
	case st.status == 3:
		return res, st.memoryError(" (or it threw null itself: the engine throws null when the limit leaves no room for an error)")
	}
	return res, &ScriptError{st.text}
}

func (st *state) memoryError(note string) error {
	return &LimitError{LimitMemory, fmt.Sprintf("code mode: the script used more than its memory limit of %d MiB (codeMode.memoryLimit) and was stopped%s", st.lim.MemoryBytes>>20, note)}
}

func resultTooLarge(n, max int) error {
	return &LimitError{LimitResult, fmt.Sprintf("code mode: the script's result is %d characters of JSON, over the output limit of %d (security.maxToolOutputLength); return less: filter, count or summarise in the script", n, max)}
}

// failure explains why the script stopped without a result.
func (st *state) failure(ctx context.Context, err error, timeout time.Duration) error {
	switch {
	case context.Cause(ctx) == errTimeLimit:
		return &LimitError{LimitTime, fmt.Sprintf("code mode: the script ran past its time limit of %s (codeMode.timeout, or a shorter timeoutMs) and was stopped after %d tool calls", timeout, st.calls)}
	case ctx.Err() != nil:
		return ctx.Err()
	case st.limit != nil:
		return st.limit
	}
	var qe *quickjs.Error
	if err == nil && st.finished {
		err = &ScriptError{st.text}
	}
	if err != nil && strings.Contains(err.Error(), "out of memory") {
		return st.memoryError("")
	}
	if errors.As(err, &qe) {
		msg := qe.Name + ": " + qe.Message
		if qe.Name == "" {
			msg = qe.Error()
		}
		return &ScriptError{msg}
	}
	return &ScriptError{err.Error()}
}

// interruptEvery is how often the watchdog repeats an interrupt.
const interruptEvery = 5 * time.Millisecond

// watch interrupts the engine once ctx ends, and again every
// interruptEvery until the returned stop is called (it returns when the
// watchdog has). One interrupt is not enough: the engine forgets a pending
// interrupt each time Go enters it (every ExecutePendingJobs), and an async
// function turns the interrupt into a rejection of its promise, so a
// script can outlive one — `(async () => { for (;;) {} })(); await null;
// for (;;) {}` spins in a job that the one interrupt, spent on the first
// loop, never reaches.
func watch(ctx context.Context, interrupt func()) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		t := time.NewTicker(interruptEvery)
		defer t.Stop()
		for {
			interrupt()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// state is one run's side of the host functions. They all run on the
// goroutine that runs the VM.
type state struct {
	ctx      context.Context
	host     Host
	lim      Limits
	start    time.Time
	calls    int
	searches int
	logs     []string
	logBytes int
	dropped  int
	limit    *LimitError // a limit the script reached, if any
	stop     *StopError  // why the host stopped the script, if it did
	// end ends the script's context: the watchdog interrupts the engine
	// until the script has stopped, and no host function serves it.
	end      func()
	finished bool
	status   int
	text     string
}

// guard turns a panic of a host function into an error the script gets,
// so the engine never unwinds through a Go panic.
func guard(name string, fn quickjs.HostFunc) quickjs.HostFunc {
	return func(args []any) (v any, err error) {
		defer func() {
			if p := recover(); p != nil {
				v, err = nil, fmt.Errorf("%s: internal error: %v", name, p)
			}
		}()
		return fn(args)
	}
}

// answer encodes a host answer for the prelude's unwrap.
func answer(ok json.RawMessage) string {
	b := make([]byte, 0, len(ok)+8)
	b = append(b, `{"ok":`...)
	b = append(b, ok...)
	return string(append(b, '}'))
}

func answerError(code int64, msg string, data json.RawMessage) string {
	b, _ := json.Marshal(map[string]any{"error": ProtocolError{Code: code, Message: msg, Data: data}})
	return string(b)
}

func (st *state) reach(l *LimitError) string {
	st.limit = l
	return answerError(0, l.Msg, nil)
}

func (st *state) call(args []any) (any, error) {
	server, tool, raw := argString(args, 0), argString(args, 1), argString(args, 2)
	if msg := st.ended(); msg != "" {
		return msg, nil
	}
	if raw == "" || raw[0] != '{' {
		return answerError(0, "callTool(server, tool, args): args must be an object", nil), nil
	}
	if len(raw) > st.lim.MaxArgBytes {
		return answerError(0, fmt.Sprintf("code mode: the arguments of this call are %d bytes of JSON, over the %d one message may carry (maxMessageBytes); nothing was sent", len(raw), st.lim.MaxArgBytes), nil), nil
	}
	if st.calls >= st.lim.MaxCalls {
		return st.reach(&LimitError{LimitCalls, fmt.Sprintf("code mode: the script made %d tool calls, the most one script may make (codeMode.maxCalls); do the rest in another script or call by call", st.lim.MaxCalls)}), nil
	}
	st.calls++
	res, err := st.host.CallTool(st.ctx, server, tool, json.RawMessage(raw))
	var (
		pe   *ProtocolError
		stop *StopError
	)
	switch {
	case errors.As(err, &stop):
		st.stop = stop
		st.end()
		return answerError(0, stop.Msg, nil), nil
	case errors.As(err, &pe):
		// The message names the call and the code, as a script that does
		// not catch it fails with this message alone: the model that wrote
		// it sees which of its calls failed, and how.
		msg := fmt.Sprintf("callTool(%s, %s): MCP error %d: %s", quoteShort(server), quoteShort(tool), pe.Code, pe.Message)
		return answerError(pe.Code, msg, pe.Data), nil
	case err != nil:
		return answerError(0, err.Error(), nil), nil
	}
	return answer(res), nil
}

func (st *state) search(args []any) (any, error) {
	query := argString(args, 0)
	limit := int(argNumber(args, 1))
	if msg := st.ended(); msg != "" {
		return msg, nil
	}
	if st.searches >= st.lim.MaxCalls {
		return st.reach(&LimitError{LimitCalls, fmt.Sprintf("code mode: the script made %d searches, the most one script may make (codeMode.maxCalls)", st.lim.MaxCalls)}), nil
	}
	st.searches++
	res, err := st.host.SearchTools(st.ctx, query, limit)
	if err != nil {
		return answerError(0, err.Error(), nil), nil
	}
	return answer(res), nil
}

// ended answers a host function called after the script's time ran out
// or it was cancelled (the interrupt is on its way), or after it settled
// its result (a promise job it left behind runs in the same drain): nothing
// more leaves the sandbox then. It returns "" while the script runs.
func (st *state) ended() string {
	switch {
	case st.finished:
		return answerError(0, "code mode: the script has settled its result: nothing more is sent", nil)
	case st.ctx.Err() != nil:
		return answerError(0, "code mode: the script was stopped", nil)
	}
	return ""
}

func (st *state) log(args []any) (any, error) {
	line := argString(args, 0)
	if st.logBytes+len(line) > st.lim.MaxLogBytes {
		st.dropped++
		return nil, nil
	}
	st.logBytes += len(line)
	st.logs = append(st.logs, line)
	return nil, nil
}

// sleep blocks for the milliseconds asked, bounded by what is left of the
// script's time (a sleep past it fails at once).
func (st *state) sleep(args []any) (any, error) {
	ms := argNumber(args, 0)
	if math.IsNaN(ms) || ms < 0 {
		return answerError(0, "sleep(ms): ms must be a number of milliseconds, 0 or more", nil), nil
	}
	if msg := st.ended(); msg != "" {
		return msg, nil
	}
	if c, _ := st.ctx.Value(clockKey{}).(*clock); c != nil && ms*float64(time.Millisecond) > float64(c.remaining()) {
		// Compared as floats: sleep(1e300) or sleep(Infinity) would
		// overflow a Duration into a negative one, no wait at all.
		return answerError(0, fmt.Sprintf("sleep(%v) would pass the script's time limit (%s left)", ms, c.remaining().Round(time.Millisecond)), nil), nil
	}
	d := time.Duration(ms * float64(time.Millisecond))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return answer(json.RawMessage("null")), nil
	case <-st.ctx.Done():
		return answerError(0, "sleep: the script was stopped", nil), nil
	}
}

func (st *state) done(args []any) (any, error) {
	if st.finished {
		return nil, nil
	}
	st.finished = true
	st.status = int(argNumber(args, 0))
	st.text = argString(args, 1)
	return nil, nil
}

func argString(args []any, i int) string {
	if i < len(args) {
		if s, ok := args[i].(string); ok {
			return s
		}
	}
	return ""
}

func argNumber(args []any, i int) float64 {
	if i < len(args) {
		switch v := args[i].(type) {
		case int:
			return float64(v)
		case int64:
			return float64(v)
		case float64:
			return v
		}
	}
	return math.NaN()
}

// jsString returns s as a JavaScript string literal (JSON's escapes, which
// include U+2028 and U+2029).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// quoteShort quotes a name a script passed, cut to 64 bytes: a message
// quotes it, and a script may pass anything.
func quoteShort(s string) string {
	if len(s) <= 64 {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.ToValidUTF8(s[:64], "")) + "…"
}
