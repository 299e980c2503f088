package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AdminMode selects which hub_* admin tools clients get.
type AdminMode string

// The admin modes.
const (
	AdminOn       AdminMode = "on"        // every admin tool (the default)
	AdminReadOnly AdminMode = "read-only" // hub_list_servers and hub_get_server
	AdminOff      AdminMode = "off"       // no admin tools
)

// ApprovalMode says how a registration from a client gets approved.
type ApprovalMode string

// The approval modes.
const (
	// ApprovalAsk (the default): nothing a client registers runs before a
	// person approved its exact launch spec, in the client (elicitation) or
	// with `mcp-hub approve`.
	ApprovalAsk ApprovalMode = "ask"
	// ApprovalAuto approves every registration at once. Dangerous: a
	// prompt-injected model can then run any command. For automation only.
	ApprovalAuto ApprovalMode = "auto"
)

// adminError is an admin operation's failure: an HTTP status and a code for
// the REST API, and a message (naming the field when it is about one) for
// people and models.
type adminError struct {
	status int
	code   string
	msg    string
}

func (e *adminError) Error() string { return e.msg }

func errInvalid(format string, a ...any) error {
	return &adminError{http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf(format, a...)}
}
func errNotFound(name string) error {
	return &adminError{http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("name: no MCP server named %q is registered", name)}
}
func errInternal(what string, err error) error {
	if errors.Is(err, upstream.ErrStoreUnavailable) {
		return &adminError{http.StatusServiceUnavailable, "STORE_UNAVAILABLE", what + ": " + err.Error() +
			"; the hub keeps serving the MCP servers it runs, but registrations cannot change until the store is back: try again then"}
	}
	return &adminError{http.StatusInternalServerError, "INTERNAL", what + ": " + err.Error()}
}

var (
	errRateLimited = &adminError{http.StatusTooManyRequests, "RATE_LIMITED",
		"too many changes: admin changes are limited to 10 at once, then one every 2 seconds; try again shortly"}
	errNoStore = &adminError{http.StatusNotImplemented, "NO_STORE",
		"this hub has no registration store; upstreams are configured in code"}
)

// adminResult is what an admin operation reports: text for people and
// models, data as structured content (and REST body).
type adminResult struct {
	text string
	data map[string]any
}

// approver asks for approval of a launch spec.
type approver func(ctx context.Context, spec upstream.Spec, what string) (decision, error)

// noApprover is the approver of callers that cannot ask a person (the REST
// API): registrations wait for mcp-hub approve or POST …/approve.
func (h *Hub) noApprover(context.Context, upstream.Spec, string) (decision, error) {
	if h.opts.Approval == ApprovalAuto {
		return approved, nil
	}
	return pending, nil
}

// adminTool is one hub_* tool.
type adminTool struct {
	tool     *mcp.Tool
	readOnly bool
	handle   func(ctx context.Context, req *mcp.CallToolRequest, args map[string]json.RawMessage) (adminResult, error)
}

// nameField is the schema of an upstream name argument.
var nameField = map[string]any{
	"type": "string", "pattern": upstream.NamePattern,
	"not":         map[string]any{"pattern": reservedNamePattern}, // hub and hub_* (ValidName says so)
	"description": "the upstream's name",
}

// specFields are the registration fields hub_add_server and
// hub_update_server accept.
var specFields = map[string]any{
	"command": map[string]any{"type": "string", "description": "stdio: the program to run (never through a shell), e.g. npx"},
	"args":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "stdio: its arguments"},
	"env":     map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}, "description": "stdio: environment variables; values may be ${VAR} (from the hub's environment) or file:<path>"},
	"cwd":     map[string]any{"type": "string", "description": "stdio: working directory"},
	"url":     map[string]any{"type": "string", "description": "sse/http: the endpoint URL"},
	"headers": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}, "description": "sse/http: headers sent with every request; values as for env"},
	"oauth": map[string]any{"type": "object", "additionalProperties": false, "description": "sse/http: how to log in with OAuth (all optional: by default the hub discovers everything and registers itself)",
		"properties": map[string]any{
			"clientId":          map[string]any{"type": "string", "description": "a client id registered with the authorization server"},
			"clientSecret":      map[string]any{"type": "string", "description": "its secret: ${VAR} or file:PATH, never the secret itself"},
			"scopes":            map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "scopes to request on top of what the server asks for"},
			"clientMetadataUrl": map[string]any{"type": "string", "description": "https URL of the hub's client id metadata document"},
			"redirectPort":      map[string]any{"type": "integer", "minimum": 0, "maximum": 65535, "description": "port of the loopback redirect (0: any free one)"},
		}},
	"transport":   map[string]any{"type": "string", "enum": []string{"stdio", "sse", "http"}, "description": "inferred when absent: command means stdio, a URL ending in /sse means sse, another URL http"},
	"description": map[string]any{"type": "string", "description": "free text"},
	"autoConnect": map[string]any{"type": "boolean", "description": "connect when the hub starts (default true)"},
	"enabled":     map[string]any{"type": "boolean", "description": "false registers it without ever connecting (default true)"},
	"trust": map[string]any{"type": "string", "enum": []string{"pin", "warn", "off"},
		"description": "what happens when one of its tools changes after approval, or a new one appears: pin (default) quarantines it until a person approves it, warn serves it flagged, off checks nothing; a change needs a person's approval"},
	"scope": map[string]any{"type": "string", "enum": []string{"shared", "session", "auto"},
		"description": "shared: one instance serves every client session; session: each client session gets its own (for servers that keep per-user state: a browser, a shell, a database session); auto (the default for a new server): shared until the server asks a client something while several sessions wait on it (the hub cannot tell which it is for), then one per session for sessions that start after that"},
}

func objectSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// adminTools returns the admin tools allowed in the hub's admin mode.
func (h *Hub) adminTools() []adminTool {
	if h.opts.Admin == AdminOff {
		return nil
	}
	nameOnly := objectSchema(map[string]any{"name": nameField}, "name")
	withSpec := map[string]any{"name": nameField}
	for k, v := range specFields {
		withSpec[k] = v
	}
	all := []adminTool{
		{readOnly: true, tool: &mcp.Tool{Name: "hub_list_servers",
			Description: "List the MCP servers behind this hub: name, transport, state, tool count, last error, who registered it, approval, and tools it lost to name collisions.",
			InputSchema: objectSchema(map[string]any{})},
			handle: func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]json.RawMessage) (adminResult, error) {
				return h.opList(ctx)
			}},
		{readOnly: true, tool: &mcp.Tool{Name: "hub_get_server",
			Description: "Show one MCP server behind this hub: its configuration (secret values masked), state, tools and the last lines it wrote to stderr.",
			InputSchema: nameOnly},
			handle: func(ctx context.Context, _ *mcp.CallToolRequest, args map[string]json.RawMessage) (adminResult, error) {
				return h.opGet(ctx, argString(args, "name"))
			}},
		{tool: &mcp.Tool{Name: "hub_add_server",
			Description: "Register an MCP server with this hub (a command to run, or a URL). A person must approve exactly what it runs before it starts: in this client if it supports that, otherwise with `mcp-hub approve <name>` in a terminal. It then survives restarts.",
			InputSchema: objectSchema(withSpec, "name")},
			handle: func(ctx context.Context, req *mcp.CallToolRequest, args map[string]json.RawMessage) (adminResult, error) {
				return h.opAdd(ctx, actor(req), args, h.elicitApprover(req))
			}},
		{tool: &mcp.Tool{Name: "hub_update_server",
			Description: "Change a registered MCP server. Only the fields given change. A change to what it runs or sends (command, args, cwd, env names and values, URL with its query, headers and their values) needs a person's approval again.",
			InputSchema: objectSchema(withSpec, "name")},
			handle: func(ctx context.Context, req *mcp.CallToolRequest, args map[string]json.RawMessage) (adminResult, error) {
				return h.opUpdate(ctx, actor(req), args, h.elicitApprover(req))
			}},
		{tool: &mcp.Tool{Name: "hub_remove_server",
			Description: "Disconnect an MCP server and remove its registration. Servers defined in the hub's config file must be removed there.",
			InputSchema: nameOnly},
			handle: func(ctx context.Context, req *mcp.CallToolRequest, args map[string]json.RawMessage) (adminResult, error) {
				return h.opRemove(ctx, actor(req), argString(args, "name"))
			}},
		{tool: &mcp.Tool{Name: "hub_connect_server", Description: "Connect (or start) a registered MCP server now.",
			InputSchema: nameOnly}, handle: h.lifecycleTool("connect")},
		{tool: &mcp.Tool{Name: "hub_disconnect_server", Description: "Disconnect (or stop) an MCP server and keep it down until it is connected again; its tools leave the catalog.",
			InputSchema: nameOnly}, handle: h.lifecycleTool("disconnect")},
		{tool: &mcp.Tool{Name: "hub_restart_server", Description: "Restart an MCP server now.",
			InputSchema: nameOnly}, handle: h.lifecycleTool("restart")},
		{tool: &mcp.Tool{Name: "hub_approve_tool_changes",
			Description: "Ask the person to approve what changed in an MCP server's tools, prompts or instructions since they were approved (hub_list_servers shows them as quarantined or changed). They see every change in this client if it supports that, and decide; otherwise they run `mcp-hub approve <name>` in a terminal. You cannot approve the changes yourself.",
			InputSchema: nameOnly},
			handle: func(ctx context.Context, req *mcp.CallToolRequest, args map[string]json.RawMessage) (adminResult, error) {
				return h.opApproveChanges(ctx, actor(req), argString(args, "name"), h.elicitChangeApprover(req))
			}},
	}
	if h.opts.Admin == AdminReadOnly {
		return slices.DeleteFunc(all, func(t adminTool) bool { return !t.readOnly })
	}
	return all
}

// registerAdminTools adds the admin tools to go-sdk's server and returns them
// as catalog items.
func (h *Hub) registerAdminTools() []catalog.Item {
	var items []catalog.Item
	for _, t := range h.adminTools() {
		t := t
		h.server.AddTool(t.tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if !t.readOnly {
				if msg := adminRefusal(req, t.tool.Name); msg != "" {
					return errResult(msg), nil
				}
			}
			args, err := decodeArgs(req.Params.Arguments, t.tool.InputSchema.(map[string]any))
			if err != nil {
				return errResult(redact.Text(err.Error())), nil
			}
			res, err := t.handle(ctx, req, args)
			if err != nil {
				return errResult(redact.Text(err.Error())), nil
			}
			return okResult(redact.Text(res.text), res.data), nil
		})
		raw, err := json.Marshal(t.tool)
		if err != nil {
			panic(err) // static data
		}
		it, err := catalog.ParseTool(raw)
		if err != nil {
			panic(err)
		}
		items = append(items, it)
	}
	return items
}

func (h *Hub) lifecycleTool(verb string) func(context.Context, *mcp.CallToolRequest, map[string]json.RawMessage) (adminResult, error) {
	return func(ctx context.Context, req *mcp.CallToolRequest, args map[string]json.RawMessage) (adminResult, error) {
		if verb == "connect" {
			if res, ok, err := h.loginOnConnect(ctx, req, argString(args, "name")); ok {
				return res, err
			}
		}
		return h.opLifecycle(ctx, actor(req), argString(args, "name"), verb)
	}
}

// errResult is an admin tool's error; its text is bounded (redact.Bound),
// as every error the hub shows.
func errResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: redact.Bound(msg)}}}
}

func okResult(text string, structured any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}
}

func argString(args map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(args[k], &s)
	return s
}

// actor names the client behind a request for the audit log.
func actor(req *mcp.CallToolRequest) string {
	name := "unknown client"
	if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
		name = p.ClientInfo.Name
	}
	who := "admin:" + name
	if id := req.Session.ID(); id != "" {
		who += "/" + id
	}
	return printable(who + principal(requestToken(req)))
}

// printable is who as the audit log records it: a client names itself
// (clientInfo.name) and a token its subject, so control characters (NUL,
// which PostgreSQL does not store in text, among them) become '?' and the
// whole is bounded, on every store alike.
func printable(who string) string {
	const max = 256
	who = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, who)
	if len(who) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(who[cut]) {
			cut--
		}
		who = who[:cut] + "…"
	}
	return who
}
