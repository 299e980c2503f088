package hub

import (
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/codemode"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
)

// The per-tool call policy (package toolpolicy) applies to every tools/call
// the hub forwards: a client's direct call, hub_call_tool, and each call a
// code-mode script makes (they all pass here before forward). Deny answers
// with a tool error; ask puts the question to the person at the calling
// client (elicitation) and forwards only on their yes.

// policyAskTimeout bounds how long a call waits for the person's answer.
const policyAskTimeout = 5 * time.Minute

// outcomePolicy labels a call the tool policy refused, or the person
// declined, in the metrics.
const outcomePolicy = "policy_refused"

// policyThen runs next when the tool policy lets the call m of tool at
// server go ahead, and otherwise answers m with a tool error.
// args returns the call's arguments (shown to the person when asked).
func (s *session) policyThen(m wire.Message, server, tool string, args func() []byte, next func()) {
	action, pattern := s.h.opts.ToolPolicy.Decide(server, tool)
	switch action {
	case toolpolicy.Allow:
		next()
		return
	case toolpolicy.Deny:
		s.h.metrics.call(server, tool, outcomePolicy, 0)
		s.reply(m.ID, toolResultError(toolpolicy.DenyMessage(server, tool, pattern)))
		return
	}
	run := s.scriptOf(m.ID)
	if s.grants.Has(server, tool) || run != nil && run.grants.Has(server, tool) {
		next()
		return
	}
	caps := s.clientCaps()
	if caps == nil || caps.Elicitation == nil {
		s.h.metrics.call(server, tool, outcomePolicy, 0)
		s.reply(m.ID, toolResultError(toolpolicy.CannotAskMessage(server, tool, pattern)))
		return
	}
	related := m.ID
	req := toolpolicy.Request{Server: server, Tool: tool, Args: args(), Pattern: pattern, Redact: redact.Text}
	if run != nil {
		related, req.Script = run.outer, run.hash
	}
	key := idKey(m.ID)
	fr := &fwdRequest{cancelled: make(chan struct{})}
	s.setCancel(key, func() { fr.once.Do(func() { close(fr.cancelled) }) })
	go func() {
		var resume func()
		if run != nil {
			// The person's time is not the script's.
			resume = codemode.Pause(run.context())
		}
		result, errObj, err := s.ask(fr, s.spanOf(related), "elicitation/create", toolpolicy.ElicitParams(req), related, policyAskTimeout)
		if resume != nil {
			resume()
		}
		if s.cancelledByClient(key) {
			s.endCancelled(key)
			s.settled()
			return
		}
		ok, scope := false, toolpolicy.Once
		switch {
		case err != nil:
			err = fmt.Errorf("the person could not be asked: %w", err)
		case errObj != nil:
			err = fmt.Errorf("the client could not ask the person: %s", errMessage(errObj))
		default:
			ok, scope = toolpolicy.ParseAnswer(result)
		}
		if !ok {
			s.h.metrics.call(server, tool, outcomePolicy, 0)
			why := "the person declined it"
			if err != nil {
				why = err.Error()
			}
			msg := toolpolicy.NotAllowedMessage(server, tool, pattern, why)
			if run != nil {
				// A script the person said no to stops there.
				run.stopWith("code mode: the script was stopped: " + msg)
			}
			s.reply(m.ID, toolResultError(msg))
			return
		}
		switch {
		case scope == toolpolicy.Session:
			s.grants.Add(server, tool)
		case run != nil:
			run.grants.Add(server, tool)
		}
		next()
	}()
}

// errMessage returns the message of a JSON-RPC error object.
func errMessage(errObj []byte) string {
	if v, err := wire.Get(errObj, "message"); err == nil && v != nil {
		if s, err := wire.String(v); err == nil {
			return s
		}
	}
	return string(errObj)
}
