package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/codemode"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
	"github.com/mcp-hub/mcp-hub/upstream"
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
	calls codemode.CallLog
	stop  string // why the script must stop (the person declined a call)
}

func (r *scriptRun) stopWith(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == "" {
		r.stop = msg
	}
}

// context returns the script's context, as its latest inner call set it.
func (r *scriptRun) context() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ctx
}

func (r *scriptRun) stopped() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != "" {
		return &codemode.StopError{Msg: r.stop}
	}
	return nil
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
		return []catalog.Item{mustTool(codemode.EnableTool(enableCodeToolName, codeToolName))}
	}
	return nil
}

func (h *Hub) codeToolItem() catalog.Item {
	return mustTool(codemode.Tool(codeToolName, h.code.Limits()))
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

// withCodeTool returns a tools/list result with hub_run_code added (a
// session that turned code mode on), in name order as the catalog lists
// every tool (codeMode on puts it there).
func (h *Hub) withCodeTool(result []byte) []byte {
	tools, err := wire.Get(result, "tools")
	if err != nil || tools == nil || tools[0] != '[' {
		return result
	}
	code := h.codeToolItem().Raw
	arr := make([]byte, 0, len(tools)+len(code)+1)
	arr = append(arr, '[')
	placed := false
	add := func(elem []byte) {
		if len(arr) > 1 {
			arr = append(arr, ',')
		}
		arr = append(arr, elem...)
	}
	if err := wire.Elements(tools, func(elem []byte) error {
		if !placed {
			if n, _ := wire.Get(elem, "name"); n != nil {
				if name, _ := wire.String(n); name > codeToolName {
					add(code)
					placed = true
				}
			}
		}
		add(elem)
		return nil
	}); err != nil {
		return result
	}
	if !placed {
		add(code)
	}
	arr = append(arr, ']')
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
	go func() {
		defer cancel()
		// Written here, not on the session's reading goroutine: the store
		// may take its time.
		s.h.audit(s.actor(), "code-run", "", map[string]any{"sha256": run.hash, "bytes": len(a.Code)})
		res, err := s.h.code.Run(ctx, &codeHost{s: s, run: run}, codemode.Script{
			Code: a.Code, Input: a.Input, Timeout: time.Duration(a.TimeoutMs * float64(time.Millisecond)),
		})
		cancelled := s.cancelledByClient(key)
		outcome := scriptOutcome(cancelled, err)
		s.h.metrics.call("hub", codeToolName, outcome, resElapsed(res))
		s.auditDone(run, res, outcome, err)
		if cancelled {
			s.endCancelled(key)
			s.settled()
			return
		}
		// The answer's text (result and log lines) obeys the output limit
		// of any tool's.
		s.reply(m.ID, limitOutput(codemode.Answer(res, err), s.h.opts.MaxToolOutputLength))
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
	s.h.audit(s.actor(), "code-done", "", run.calls.AuditDetail(run.hash, res, outcome, err, s.h.knownNames()))
	s.logger.Info("code-mode script", "sha256", run.hash, "outcome", outcome, "calls", run.calls.Len(), "ms", resElapsed(res).Milliseconds())
}

// knownNames reports whether server is an MCP server of the hub and tool
// a tool of it its filters let through: the names of a script's calls the
// audit log keeps (the others are the script's own data).
func (h *Hub) knownNames() func(server, tool string) (bool, bool) {
	var tools map[[2]string]bool
	return func(server, tool string) (bool, bool) {
		if _, ok := h.mgr.Get(server); !ok {
			return false, false
		}
		if tools == nil {
			tools = map[[2]string]bool{}
			h.upstreamTools(func(u *upstream.Upstream, it catalog.Item, _ string) { tools[[2]string{u.Name(), it.Key}] = true })
		}
		return true, tools[[2]string{server, tool}]
	}
}

// codeHost is a script's way into its session.
type codeHost struct {
	s   *session
	run *scriptRun
}

// CallTool makes the script's call through hub_call_tool's handler.
func (h *codeHost) CallTool(ctx context.Context, server, tool string, args json.RawMessage) (json.RawMessage, error) {
	if stop := h.run.stopped(); stop != nil {
		return nil, stop // the person said no to this script: nothing more goes out
	}
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
	h.run.calls.Add(server, tool, outcome, time.Since(start))
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, codemode.ProtocolErrorOf(resp.Error)
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
		return nil, codemode.ProtocolErrorOf(resp.Error)
	}
	return codemode.SearchHits(resp.Result)
}

func innerParams(tool string, args map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		panic(err) // strings and raw JSON the script's runtime produced
	}
	return b
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
		s.cancelCall(key) // as the client's notifications/cancelled would
		return wire.Message{}, ctx.Err()
	}
}

// enableCodeMode handles hub_enable_code_mode: the person at the client
// decides whether this session gets hub_run_code.
func (s *session) enableCodeMode(m wire.Message) {
	if s.codeOn() {
		s.reply(m.ID, okText("Code mode is already on for this session: use hub_run_code.\n\n"+codemode.Instructions(s.h.code.Limits())))
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
		"message":         codemode.EnableQuestion(lim),
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
	})
	key := idKey(m.ID)
	fr := &fwdRequest{cancelled: make(chan struct{})}
	s.setCancel(key, func() { fr.once.Do(func() { close(fr.cancelled) }) })
	go func() {
		result, errObj, err := s.ask(fr, s.spanOf(m.ID), "elicitation/create", params, m.ID, policyAskTimeout)
		if s.cancelledByClient(key) {
			s.endCancelled(key)
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
		s.reply(m.ID, okText("Code mode is on for this session: hub_run_code is in your tool list (call it by name if your client does not re-list).\n\n"+codemode.Instructions(lim)))
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
