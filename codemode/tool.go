package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// What clients see of code mode: the tool definitions, the initialize
// instructions, the question that turns it on, and a script's answer.

// example is a short script the descriptions show.
const example = `const out = []; for (const p of input.paths) { const r = callTool("filesystem", "read_text_file", {path: p}); if (!r.isError) out.push({p, lines: r.content[0].text.split("\n").length}) } return out;`

// Tool returns the definition of the tool that runs scripts (a tools/list
// entry), named name, describing lim.
func Tool(name string, lim Limits) map[string]any {
	lim = lim.withDefaults()
	return map[string]any{
		"name": name,
		"description": fmt.Sprintf("Run JavaScript that calls the tools of this hub's MCP servers, for jobs of many calls (loops, conditions, filtering): only what the script returns reaches you. "+
			"The code is the body of an async function: `input` is the input argument; `callTool(server, tool, args)` returns the tool's result {content, structuredContent, isError} (it throws on a protocol error); "+
			"`searchTools(query, limit)` returns what hub_search_tools finds; `log(...)` adds lines shown beside the result; `sleep(ms)` waits. Nothing else: no require, fetch, timers, files or network. "+
			"Every call obeys the same rules as a direct call. Limits: %s, %d tool calls, %d MiB of memory, %d characters of result. Example: %s",
			lim.Timeout, lim.MaxCalls, lim.MemoryBytes>>20, lim.MaxResultChars, example),
		"inputSchema": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"code"},
			"properties": map[string]any{
				"code":      map[string]any{"type": "string", "description": "the body of an async JavaScript function; return a JSON value"},
				"input":     map[string]any{"description": "any JSON value the script reads as `input`"},
				"timeoutMs": map[string]any{"type": "integer", "minimum": 1, "maximum": lim.Timeout.Milliseconds(), "description": fmt.Sprintf("wall time of this script, at most %d (the default)", lim.Timeout.Milliseconds())},
			}},
	}
}

// EnableTool returns the definition of the tool that asks the person to
// turn code mode on for a session, named name; runTool names the tool it
// unlocks.
func EnableTool(name, runTool string) map[string]any {
	return map[string]any{
		"name": name,
		"description": "Ask the person to turn on code mode for this session: you could then run JavaScript (" + runTool + ") that calls many tools of this hub's MCP servers in one go, " +
			"and only what the script returns comes back to you. The person decides in this client; if it cannot ask them, they turn it on in the hub's config file.",
		"inputSchema": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
	}
}

// EnableQuestion is what the person is asked before code mode is turned on
// for their session.
func EnableQuestion(lim Limits) string {
	lim = lim.withDefaults()
	return fmt.Sprintf("The AI asks to turn on code mode for this session. It could then run JavaScript in the hub's sandbox that calls the tools of your MCP servers, many calls per script (at most %d calls and %s each); "+
		"every call obeys the same tool policy, pins and approvals as a direct call, and the audit log records each script. Turn it on?", lim.MaxCalls, lim.Timeout)
}

// Instructions tell the model about code mode (initialize instructions),
// with a short example.
func Instructions(lim Limits) string {
	lim = lim.withDefaults()
	return fmt.Sprintf("Code mode is on: for a job of many tool calls, write one hub_run_code script instead of calling tool by tool. "+
		"The script is the body of an async JavaScript function; callTool(server, tool, args) returns a tool's result, searchTools(query, limit) finds tools, log(...) writes lines, and what it returns is all you get back. "+
		"Limits per script: %s, %d tool calls. Example:\n"+
		"  hub_run_code {\"code\": \"let n = 0; for (const f of input.files) { const r = callTool('filesystem', 'read_text_file', {path: f}); if (!r.isError && r.content[0].text.includes('TODO')) n++ } return {withTodo: n}\", \"input\": {\"files\": [\"a.md\", \"b.md\"]}}",
		lim.Timeout, lim.MaxCalls)
}

// undefinedNote stands beside the null result of a script that returned
// nothing: the code is a function body, and only what it returns comes
// back (a last expression is not a result, as it is in a console).
const undefinedNote = "note: the script returned nothing (undefined), so the result is null: the code is the body of a function; end it with `return …` (e.g. `return {count: n}`) to get a value back"

// Answer is the tools/call result for a script: its value as structured
// content ({result, calls, logs}) and as text, its log lines beside it; or
// a tool error that says why it stopped.
func Answer(res *Result, err error) []byte {
	var logs []string
	calls := 0
	if res != nil {
		logs, calls = res.Logs, res.Calls
		if res.DroppedLogs > 0 {
			logs = append(logs, fmt.Sprintf("[%d more log lines dropped: the log keeps %d bytes]", res.DroppedLogs, DefaultMaxLogBytes))
		}
	}
	content := []map[string]string{}
	if err != nil {
		msg := err.Error()
		var se *ScriptError
		switch {
		case errors.Is(err, context.Canceled):
			msg = "code mode: the script was stopped: its session ended"
		case errors.As(err, &se):
			msg = "code mode: the script failed: " + msg
		}
		content = append(content, map[string]string{"type": "text", "text": msg})
	} else {
		content = append(content, map[string]string{"type": "text", "text": string(res.Value)})
		if res.Undefined {
			content = append(content, map[string]string{"type": "text", "text": undefinedNote})
		}
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
		b, _ = json.Marshal(map[string]any{"isError": true, "content": []map[string]string{{"type": "text", "text": "code mode: " + mErr.Error()}}})
	}
	return b
}
