package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/codemode"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
)

// Code mode (package codemode) wired into sessions: hub_run_code runs a
// script whose callTool and searchTools are requests of the session, made
// through the very handlers of hub_call_tool and hub_search_tools. An inner
// request is registered like a client's (an id of its own, unguessable),
// and its answer, which respond would write to the client, goes to the
// script instead (call.sink). So every rule of a direct call holds for it:
// filters, pins and quarantine, the tool policy, per-session instances,
// timeouts and maxInFlight, metrics; cancelling the script cancels it.

const (
	codeToolName       = "hub_run_code"
	enableCodeToolName = "hub_enable_code_mode"
)

// CodeMode says whether clients get hub_run_code.
type CodeMode string

// The code modes.
const (
	// CodeModeOff (the default): no client gets hub_run_code, unless the
	// person at a client turns it on for their session
	// (hub_enable_code_mode, with the admin tools on).
	CodeModeOff CodeMode = "off"
	// CodeModeOn: every client gets hub_run_code.
	CodeModeOn CodeMode = "on"
)

// CodeModeOptions configures code mode.
type CodeModeOptions struct {
	Mode CodeMode
	// Limits bound each script. MaxResultChars is set from
	// MaxToolOutputLength.
	Limits codemode.Limits
}

// innerIDPrefix starts the ids of a script's inner requests.
const innerIDPrefix = `"hub-code-`

// scriptRun is one hub_run_code call in progress.
type scriptRun struct {
	outer  []byte // the client's id of the hub_run_code request
	hash   string
	grants toolpolicy.Grants // tools the person allowed for this script

	mu    sync.Mutex // guards following
	ctx   context.Context
	calls []innerRecord
	stop  string // why the script must stop (the person declined a call)
}

func (r *scriptRun) stopWith(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == "" {
		r.stop = msg
	}
}

func (r *scriptRun) stopped() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != "" {
		return &codemode.StopError{Msg: r.stop}
	}
	return nil
}

// innerRecord is one inner call, for the audit log.
type innerRecord struct {
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"`
	MS      int64  `json:"ms"`
}

// maxAuditCalls bounds the inner calls one audit entry lists (the rest are
// counted).
const maxAuditCalls = 1000

func (r *scriptRun) record(server, tool, outcome string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, innerRecord{server, tool, outcome, d.Milliseconds()})
}

// codeOn reports whether this session may run scripts.
func (s *session) codeOn() bool {
	return s.h.opts.CodeMode.Mode == CodeModeOn || s.codeMode.Load()
}

// scriptOf returns the script whose inner request id is, or nil.
func (s *session) scriptOf(id []byte) *scriptRun {
	if !bytes.HasPrefix(id, []byte(innerIDPrefix)) {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.inflight[string(idKey(id))]; c != nil {
		return c.script
	}
	return nil
}

// relatedID returns the client request a forwarded request belongs to: the
// script's hub_run_code request for an inner one, else id itself.
func (s *session) relatedID(id []byte) []byte {
	if run := s.scriptOf(id); run != nil {
		return run.outer
	}
	return id
}

// codeTools returns the catalog items of the code-mode tools the hub lists
// for every session: hub_run_code when code mode is on, else
// hub_enable_code_mode when the admin tools are on.
func (h *Hub) codeTools() []catalog.Item {
	switch {
	case h.opts.CodeMode.Mode == CodeModeOn:
		return []catalog.Item{h.codeToolItem()}
	case h.opts.Admin == AdminOn:
		return []catalog.Item{mustTool(map[string]any{
			"name": enableCodeToolName,
			"description": "Ask the person to turn on code mode for this session: you could then run JavaScript (hub_run_code) that calls many tools of this hub's MCP servers in one go, " +
				"and only what the script returns comes back to you. The person decides in this client; if it cannot ask them, they turn it on in the hub's config file.",
			"inputSchema": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
		})}
	}
	return nil
}

func (h *Hub) codeToolItem() catalog.Item {
	lim := h.code.Limits()
	return mustTool(map[string]any{
		"name": codeToolName,
		"description": fmt.Sprintf("Run JavaScript that calls the tools of this hub's MCP servers, for jobs of many calls (loops, conditions, filtering): only what the script returns reaches you. "+
			"The code is the body of an async function: `input` is the input argument; `callTool(server, tool, args)` returns the tool's result {content, structuredContent, isError} (it throws on a protocol error); "+
			"`searchTools(query, limit)` returns what hub_search_tools finds; `log(...)` adds lines shown beside the result; `sleep(ms)` waits. Nothing else: no require, fetch, timers, files or network. "+
			"Every call obeys the same rules as a direct call. Limits: %s, %d tool calls, %d MiB of memory, %d characters of result. "+
			"Example: const out = []; for (const p of input.paths) { const r = callTool(\"filesystem\", \"read_text_file\", {path: p}); if (!r.isError) out.push({p, lines: r.content[0].text.split(\"\\n\").length}) } return out;",
			lim.Timeout, lim.MaxCalls, lim.MemoryBytes>>20, lim.MaxResultChars),
		"inputSchema": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"code"},
			"properties": map[string]any{
				"code":      map[string]any{"type": "string", "description": "the body of an async JavaScript function; return a JSON value"},
				"input":     map[string]any{"description": "any JSON value the script reads as `input`"},
				"timeoutMs": map[string]any{"type": "integer", "minimum": 1, "maximum": lim.Timeout.Milliseconds(), "description": fmt.Sprintf("wall time of this script, at most %d (the default)", lim.Timeout.Milliseconds())},
			}},
	})
}

func mustTool(t map[string]any) catalog.Item {
	raw, err := json.Marshal(t)
	if err != nil {
		panic(err) // static data
	}
	it, err := catalog.ParseTool(raw)
	if err != nil {
		panic(err)
	}
	return it
}

// codeInstructions tell the model about code mode in initialize.
func codeInstructions(lim codemode.Limits) string {
	return fmt.Sprintf("Code mode is on: for a job of many tool calls, write one hub_run_code script instead of calling tool by tool. "+
		"The script is the body of an async JavaScript function; callTool(server, tool, args) returns a tool's result, searchTools(query, limit) finds tools, log(...) writes lines, and what it returns is all you get back. "+
		"Limits per script: %s, %d tool calls. Example:\n"+
		"  hub_run_code {\"code\": \"let n = 0; for (const f of input.files) { const r = callTool('filesystem', 'read_text_file', {path: f}); if (!r.isError && r.content[0].text.includes('TODO')) n++ } return {withTodo: n}\", \"input\": {\"files\": [\"a.md\", \"b.md\"]}}",
		lim.Timeout, lim.MaxCalls)
}

// withCodeTool returns a tools/list result with hub_run_code added (a
// session that turned code mode on).
func (h *Hub) withCodeTool(result []byte) []byte {
	tools, err := wire.Get(result, "tools")
	if err != nil || tools == nil || tools[0] != '[' {
		return result
	}
	arr := append([]byte{'['}, h.codeToolItem().Raw...)
	if rest := bytes.TrimSpace(tools[1:]); len(rest) > 0 && rest[0] != ']' {
		arr = append(arr, ',')
	}
	arr = append(arr, tools[1:]...)
	out, err := wire.EditObject(result, []wire.Member{{Key: "tools", Value: arr}})
	if err != nil {
		return result
	}
	return out
}

// runCode handles hub_run_code.
func (s *session) runCode(m wire.Message) {
	args, err := toolArgs(m.Params)
	if err != nil {
		s.reply(m.ID, toolResultError(err.Error()))
		return
	}
	var a struct {
		Code      string          `json:"code"`
		Input     json.RawMessage `json:"input"`
		TimeoutMs float64         `json:"timeoutMs"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		s.reply(m.ID, toolResultError("hub_run_code: arguments: "+err.Error()))
		return
	}
	if strings.TrimSpace(a.Code) == "" {
		s.reply(m.ID, toolResultError("hub_run_code: code is required: the body of an async JavaScript function"))
		return
	}
	key := idKey(m.ID)
	ctx, cancel := context.WithCancel(s.ctx)
	s.setCancel(key, cancel)
	run := &scriptRun{outer: m.ID, hash: codemode.Hash(a.Code)}
	s.h.audit(s.actor(), "code-run", "", map[string]any{"sha256": run.hash, "bytes": len(a.Code)})
	go func() {
		defer cancel()
		res, err := s.h.code.Run(ctx, &codeHost{s: s, run: run}, codemode.Script{
			Code: a.Code, Input: a.Input, Timeout: time.Duration(a.TimeoutMs * float64(time.Millisecond)),
		})
		cancelled := s.cancelledByClient(key)
		outcome := scriptOutcome(cancelled, err)
		s.h.metrics.call("hub", codeToolName, outcome, resElapsed(res))
		s.auditDone(run, res, outcome, err)
		if cancelled {
			s.end(key)
			s.settled()
			return
		}
		s.reply(m.ID, codeResult(res, err))
	}()
}

func resElapsed(res *codemode.Result) time.Duration {
	if res == nil {
		return 0
	}
	return res.Elapsed
}

func scriptOutcome(cancelled bool, err error) string {
	var (
		le   *codemode.LimitError
		stop *codemode.StopError
	)
	switch {
	case cancelled || errors.Is(err, context.Canceled):
		return outcomeCancelled
	case errors.As(err, &stop):
		return outcomePolicy
	case errors.As(err, &le) && le.Limit == codemode.LimitTime:
		return outcomeTimeout
	case err != nil:
		return outcomeToolError
	}
	return outcomeOK
}

// auditDone writes the audit entry of a finished script: its hash, outcome
// and each inner call.
func (s *session) auditDone(run *scriptRun, res *codemode.Result, outcome string, err error) {
	run.mu.Lock()
	calls := run.calls
	run.mu.Unlock()
	detail := map[string]any{"sha256": run.hash, "outcome": outcome, "calls": len(calls)}
	if len(calls) > maxAuditCalls {
		detail["callsOmitted"] = len(calls) - maxAuditCalls
		calls = calls[:maxAuditCalls]
	}
	detail["inner"] = calls
	if res != nil {
		detail["ms"] = res.Elapsed.Milliseconds()
	}
	if err != nil {
		detail["error"] = err.Error()
	}
	s.h.audit(s.actor(), "code-done", "", detail)
	s.logger.Info("code-mode script", "sha256", run.hash, "outcome", outcome, "calls", len(run.calls), "ms", resElapsed(res).Milliseconds())
}

// codeResult is hub_run_code's answer: the script's value as structured
// content and as text, its log lines beside it; or a tool error that says
// why it stopped.
func codeResult(res *codemode.Result, err error) []byte {
	var logs []string
	calls := 0
	if res != nil {
		logs, calls = res.Logs, res.Calls
		if res.DroppedLogs > 0 {
			logs = append(logs, fmt.Sprintf("[%d more log lines dropped: the log limit is %d bytes]", res.DroppedLogs, codemode.DefaultMaxLogBytes))
		}
	}
	content := []map[string]string{}
	if err != nil {
		msg := err.Error()
		if errors.Is(err, context.Canceled) {
			msg = "code mode: the script was stopped: its session ended"
		}
		var se *codemode.ScriptError
		if errors.As(err, &se) {
			msg = "code mode: the script failed: " + msg
		}
		content = append(content, map[string]string{"type": "text", "text": msg})
	} else {
		content = append(content, map[string]string{"type": "text", "text": string(res.Value)})
	}
	if len(logs) > 0 {
		content = append(content, map[string]string{"type": "text", "text": "log:\n" + strings.Join(logs, "\n")})
	}
	out := map[string]any{"content": content}
	if err != nil {
		out["isError"] = true
	} else {
		sc := map[string]any{"result": res.Value, "calls": calls}
		if len(logs) > 0 {
			sc["logs"] = logs
		}
		out["structuredContent"] = sc
	}
	b, mErr := json.Marshal(out)
	if mErr != nil {
		return toolResultError("code mode: " + mErr.Error())
	}
	return b
}

// codeHost is a script's way into its session.
type codeHost struct {
	s   *session
	run *scriptRun
}

// CallTool makes the script's call through hub_call_tool's handler.
func (h *codeHost) CallTool(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error) {
	params := innerParams(callToolName, map[string]any{"server": server, "tool": tool, "arguments": args})
	start := time.Now()
	resp, err := h.s.inner(ctx, h.run, params, h.s.callUpstreamTool)
	outcome := outcomeOK
	switch {
	case err != nil:
		outcome = outcomeCancelled
	case resp.Error != nil:
		outcome = outcomeRPCError
	case bytes.Contains(resp.Result, []byte(`"isError":true`)):
		outcome = outcomeToolError
	}
	if stop := h.run.stopped(); stop != nil {
		outcome = outcomePolicy
		err = stop
	}
	h.run.record(server, tool, outcome, time.Since(start))
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, protocolError(resp.Error)
	}
	return json.RawMessage(resp.Result), nil
}

// SearchTools searches through hub_search_tools's handler and returns its
// structured tools.
func (h *codeHost) SearchTools(ctx context.Context, query string, limit int) (json.RawMessage, error) {
	a := map[string]any{"query": query}
	if limit > 0 {
		a["limit"] = limit
	}
	resp, err := h.s.inner(ctx, h.run, innerParams(searchToolName, a), h.s.searchTools)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, protocolError(resp.Error)
	}
	var r struct {
		IsError           bool `json:"isError"`
		Content           []struct{ Text string }
		StructuredContent struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return nil, err
	}
	if r.IsError || r.StructuredContent.Tools == nil {
		msg := "searchTools failed"
		if len(r.Content) > 0 {
			msg = r.Content[0].Text
		}
		return nil, errors.New(msg)
	}
	return r.StructuredContent.Tools, nil
}

func innerParams(tool string, args map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		panic(err) // strings and raw JSON the script's runtime produced
	}
	return b
}

func protocolError(errObj []byte) error {
	var pe codemode.ProtocolError
	if err := json.Unmarshal(errObj, &pe); err != nil {
		return &codemode.ProtocolError{Message: string(errObj)}
	}
	return &pe
}

// inner makes one request of a script: it registers an id as a client
// request would be, runs handle on it, and waits for the answer respond
// hands to the sink, or for ctx (then the request is cancelled as the
// client's notifications/cancelled would cancel it).
func (s *session) inner(ctx context.Context, run *scriptRun, params []byte, handle func(wire.Message)) (wire.Message, error) {
	run.mu.Lock()
	run.ctx = ctx
	run.mu.Unlock()
	id := []byte(innerIDPrefix + rand.Text() + `"`)
	key := idKey(id)
	ch := make(chan []byte, 1)
	if err := s.begin(key, &call{id: id, script: run, sink: func(d []byte) { ch <- d }}, anytime); err != nil {
		return wire.Message{}, err
	}
	handle(wire.Message{ID: id, Method: "tools/call", Params: params})
	select {
	case d := <-ch:
		return wire.Parse(d)
	case <-ctx.Done():
		s.cancelCall(key)
		return wire.Message{}, ctx.Err()
	}
}

// cancelCall cancels the request registered under key, as the client's
// notifications/cancelled does.
func (s *session) cancelCall(key []byte) {
	s.mu.Lock()
	c := s.inflight[string(key)]
	var cancel func()
	if c != nil {
		c.cancelled = true
		cancel = c.cancel
	}
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// enableCodeMode handles hub_enable_code_mode: the person at the client
// decides whether this session gets hub_run_code.
func (s *session) enableCodeMode(m wire.Message) {
	if s.codeOn() {
		s.reply(m.ID, okText("Code mode is already on for this session: use hub_run_code.\n\n"+codeInstructions(s.h.code.Limits())))
		return
	}
	caps := s.clientCaps()
	if caps == nil || caps.Elicitation == nil || s.stateless != nil {
		s.reply(m.ID, toolResultError("Code mode needs a person's approval, and this client cannot ask them (it does not support MCP elicitation). "+
			"A person can turn it on for every client in the hub's config file (codeMode: on)."))
		return
	}
	lim := s.h.code.Limits()
	params, _ := json.Marshal(map[string]any{
		"message": fmt.Sprintf("The AI asks to turn on code mode for this session. It could then run JavaScript in the hub's sandbox that calls the tools of your MCP servers, many calls per script (at most %d calls and %s each); "+
			"every call obeys the same tool policy, pins and approvals as a direct call, and the audit log records each script. Turn it on?", lim.MaxCalls, lim.Timeout),
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
	})
	key := idKey(m.ID)
	fr := &fwdRequest{cancelled: make(chan struct{})}
	s.setCancel(key, func() { fr.once.Do(func() { close(fr.cancelled) }) })
	go func() {
		result, errObj, err := s.ask(fr, "elicitation/create", params, m.ID, policyAskTimeout)
		if s.cancelledByClient(key) {
			s.end(key)
			s.settled()
			return
		}
		if err != nil || errObj != nil {
			why := "the client could not ask"
			if err != nil {
				why = err.Error()
			}
			s.reply(m.ID, toolResultError("Code mode stays off: "+why))
			return
		}
		if ok, _ := toolpolicy.ParseAnswer(result); !ok {
			s.h.audit(s.actor(), "code-mode-declined", "", nil)
			s.reply(m.ID, toolResultError("Code mode stays off: the person declined."))
			return
		}
		s.codeMode.Store(true)
		s.h.audit(s.actor(), "code-mode-on", "", nil)
		s.notify("notifications/tools/list_changed", nil, nil)
		s.reply(m.ID, okText("Code mode is on for this session: hub_run_code is in your tool list (call it by name if your client does not re-list).\n\n"+codeInstructions(lim)))
	}()
}

func okText(text string) []byte {
	b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	return b
}

// actor names the session's client for the audit log.
func (s *session) actor() string {
	name := "unknown client"
	if ss := s.ss.Load(); ss != nil {
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			name = p.ClientInfo.Name
		}
	}
	return "client:" + name + "/" + s.label() + principal(s.token.Load())
}

// audit writes an audit entry when the hub has a store.
func (h *Hub) audit(actor, action, upstream string, detail any) {
	if h.opts.Store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.opts.Store.Audit(ctx, actor, action, upstream, detail); err != nil {
		h.logger.Warn("audit entry not written", "action", action, "err", err)
	}
}
