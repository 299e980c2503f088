package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

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

func errResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
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
	return who + principal(requestToken(req))
}

// serverView is what the admin tools report about one upstream.
type serverView struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	LastError string `json:"lastError,omitempty"`
	Source    string `json:"source,omitempty"`
	Approval  string `json:"approval,omitempty"`
	// ApprovalNote says why the hub took an approval back.
	ApprovalNote string   `json:"approvalNote,omitempty"`
	Description  string   `json:"description,omitempty"`
	Shadowed     []string `json:"shadowed,omitempty"` // tools lost to collisions
	// Quarantined are its tools, prompts and resource templates that
	// changed since they were pinned, or are new, held back until a person
	// approves them (trust pin); Flagged are such changes served (trust
	// warn) or never forwarded (instructions).
	Quarantined []string `json:"quarantined,omitempty"`
	Flagged     []string `json:"flagged,omitempty"`
	// Scope (omitted when shared), whether a scope auto upstream switched
	// to per-session instances, and the instances running, by session.
	Scope      string         `json:"scope,omitempty"`
	PerSession bool           `json:"perSession,omitempty"`
	Instances  []instanceInfo `json:"instances,omitempty"`
	// Login is the OAuth login state in words (sse and http upstreams that
	// use OAuth): logged in, expires in, scopes, needs login, the last
	// OAuth error. Never a token.
	Login string `json:"login,omitempty"`
}

// views returns every registered upstream (the store's, or the manager's
// without a store), sorted by name.
func (h *Hub) views(ctx context.Context) ([]serverView, error) {
	shadowed := map[string][]string{}
	for _, s := range h.Catalog().Shadowed() {
		if s.Kind == catalog.KindTool {
			shadowed[s.Server] = append(shadowed[s.Server], fmt.Sprintf("%s (%s, to %s)", s.Original, s.Reason, s.Winner))
		}
	}
	var out []serverView
	add := func(spec upstream.Spec, source, approval, note string) {
		v := serverView{Name: spec.Name, Transport: string(spec.InferTransport()), Source: source, Approval: approval,
			ApprovalNote: note, Description: spec.Description, Shadowed: shadowed[spec.Name], State: string(upstream.StatePending)}
		u, ok := h.mgr.Get(spec.Name)
		if ok {
			st := u.Status()
			v.State, v.Tools, v.LastError = string(st.State), st.Tools, st.LastError
			v.Quarantined, v.Flagged = h.quarantineOf(spec.Name)
			v.Login, _ = h.loginView(spec.Name)
		} else if approval == string(upstream.ApprovalPending) {
			v.LastError = "awaiting approval: run `mcp-hub approve " + spec.Name + "`"
		}
		h.instanceView(&v, spec, u)
		out = append(out, v)
	}
	if h.opts.Store == nil {
		for _, u := range h.mgr.List() {
			add(u.Spec(), "", "", "")
		}
		return out, nil
	}
	regs, err := h.opts.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range regs {
		add(r.Spec, string(r.Source), string(r.Approval), r.ApprovalNote)
	}
	return h.withBroken(ctx, out)
}

func (h *Hub) opList(ctx context.Context) (adminResult, error) {
	vs, err := h.views(ctx)
	if err != nil {
		return adminResult{}, errInternal("cannot read the registrations", err)
	}
	var b strings.Builder
	if len(vs) == 0 {
		b.WriteString("No MCP servers are registered. Add one with hub_add_server.")
	}
	for _, v := range vs {
		fmt.Fprintf(&b, "%s (%s): %s, %d tools", v.Name, v.Transport, v.State, v.Tools)
		if v.Source != "" {
			fmt.Fprintf(&b, ", source %s", v.Source)
		}
		if v.Approval != "" {
			fmt.Fprintf(&b, ", %s", v.Approval)
			if v.ApprovalNote != "" {
				fmt.Fprintf(&b, " (%s)", v.ApprovalNote)
			}
		}
		if v.Login != "" {
			fmt.Fprintf(&b, "; %s", v.Login)
		}
		if v.LastError != "" {
			fmt.Fprintf(&b, "; last error: %s", v.LastError)
		}
		if t := scopeText(v); t != "" {
			fmt.Fprintf(&b, "; %s", t)
		}
		if len(v.Shadowed) > 0 {
			fmt.Fprintf(&b, "; tools lost to name collisions: %s", strings.Join(v.Shadowed, ", "))
		}
		if len(v.Quarantined) > 0 {
			fmt.Fprintf(&b, "; quarantined until a person approves them (mcp-hub approve %s): %s", v.Name, strings.Join(v.Quarantined, ", "))
		}
		if len(v.Flagged) > 0 {
			fmt.Fprintf(&b, "; changed since approved, not yet reviewed (mcp-hub approve %s): %s", v.Name, strings.Join(v.Flagged, ", "))
		}
		b.WriteByte('\n')
	}
	return adminResult{strings.TrimRight(b.String(), "\n"), map[string]any{"servers": orEmptySlice(vs)}}, nil
}

func orEmptySlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (h *Hub) opGet(ctx context.Context, name string) (adminResult, error) {
	vs, err := h.views(ctx)
	if err != nil {
		return adminResult{}, errInternal("cannot read the registrations", err)
	}
	i := slices.IndexFunc(vs, func(v serverView) bool { return v.Name == name })
	if i < 0 {
		return adminResult{}, errNotFound(name)
	}
	view := vs[i]
	var spec upstream.Spec
	var tail []string
	// review is what approving it would cover, for a registration that
	// waits for a person: the approval prompt's text.
	var review string
	if h.opts.Store != nil {
		if r, err := h.opts.Store.Get(ctx, name); err == nil {
			spec = r.Spec
			if !r.Approved() {
				review = r.Spec.Review()
			}
		} else if errors.Is(err, upstream.ErrBroken) {
			return adminResult{fmt.Sprintf("%s: %s\nlast error: %s", view.Name, view.State, view.LastError),
				map[string]any{"server": view, "tools": []string{}, "stderrTail": []string{}}}, nil
		}
	}
	if u, ok := h.mgr.Get(name); ok {
		spec, tail = u.Spec(), u.StderrTail()
	}
	tools := h.toolsOf(name)
	red := spec.Redacted()
	cfg, _ := json.MarshalIndent(red, "", "  ")
	text := fmt.Sprintf("%s: %s, %d tools\nconfiguration (secret values masked):\n%s\nlaunch spec: %s\ntools: %s",
		view.Name, view.State, view.Tools, cfg, red.Launch(), strings.Join(tools, ", "))
	if view.Approval != "" {
		text += "\napproval: " + view.Approval
		if view.ApprovalNote != "" {
			text += " (" + view.ApprovalNote + ")"
		}
	}
	data := map[string]any{"server": view, "config": red, "tools": orEmptySlice(tools), "stderrTail": orEmptySlice(tail)}
	if review != "" {
		text += "\napproving it lets it:\n" + indentLines(review)
		data["review"] = review
	}
	if t := scopeText(view); t != "" {
		text += "\nclient sessions: " + t
	}
	if login, st := h.loginView(name); st != nil {
		text += "\nlogin: " + login
		if st.NeedsLogin {
			text += "\nto log in: " + upstream.LoginHint(name)
		}
		data["auth"] = st
	}
	if view.LastError != "" {
		text += "\nlast error: " + view.LastError
	}
	if policy, findings, ok := h.liveChanges(name); ok && len(findings) > 0 {
		c := ToolChanges{Name: name, Trust: policy, Findings: findings}
		text += "\nchanges since its tools were approved (a person approves them with `mcp-hub approve " + name + "`):\n" + indentLines(c.Review())
		data["toolChanges"] = c.Review()
	}
	if len(tail) > 0 {
		text += "\nlast stderr lines:\n  " + strings.Join(tail, "\n  ")
	}
	return adminResult{text, data}, nil
}

// indentLines indents every line of s but the empty ones by four spaces.
func indentLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}

// specFromArgs applies registration arguments to base.
func specFromArgs(base upstream.Spec, args map[string]json.RawMessage) upstream.Spec {
	s := base
	for k, v := range args {
		switch k {
		case "command":
			_ = json.Unmarshal(v, &s.Command)
		case "args":
			s.Args = nil
			_ = json.Unmarshal(v, &s.Args)
		case "env":
			s.Env = nil
			_ = json.Unmarshal(v, &s.Env)
		case "cwd":
			_ = json.Unmarshal(v, &s.Cwd)
		case "url":
			_ = json.Unmarshal(v, &s.URL)
		case "headers":
			s.Headers = nil
			_ = json.Unmarshal(v, &s.Headers)
		case "oauth":
			s.OAuth = nil
			_ = json.Unmarshal(v, &s.OAuth)
		case "transport":
			var t string
			_ = json.Unmarshal(v, &t)
			s.Transport = upstream.Transport(t)
		case "description":
			_ = json.Unmarshal(v, &s.Description)
		case "trust":
			var t string
			_ = json.Unmarshal(v, &t)
			s.Trust = upstream.Trust(t)
		case "scope":
			var sc string
			_ = json.Unmarshal(v, &sc)
			s.Scope = upstream.Scope(sc) // Validate reads it ("shared" is stored as "")
		}
	}
	return s
}

func boolArg(args map[string]json.RawMessage, k string, def bool) bool {
	v, ok := args[k]
	if !ok {
		return def
	}
	var b bool
	_ = json.Unmarshal(v, &b)
	return b
}

// writable checks what every change needs: a store and a free slot.
func (h *Hub) writable() error {
	if h.opts.Store == nil {
		return errNoStore
	}
	if !h.adminWrites.allow() {
		return errRateLimited
	}
	return nil
}

func validateSpec(spec *upstream.Spec) error {
	if err := spec.Validate(); err != nil {
		return errInvalid("%s", err.Error())
	}
	return nil
}

func (h *Hub) opAdd(ctx context.Context, who string, args map[string]json.RawMessage, ask approver) (adminResult, error) {
	if err := h.writable(); err != nil {
		return adminResult{}, err
	}
	spec := specFromArgs(upstream.Spec{Name: argString(args, "name"), Scope: upstream.DefaultScope}, args)
	if err := validateSpec(&spec); err != nil {
		return adminResult{}, err
	}
	if err := h.allowed(spec.Name); err != nil {
		return adminResult{}, &adminError{http.StatusForbidden, "PERMISSION_DENIED", "name: " + err.Error() + "; the hub's operator sets security.allowedServerNames"}
	}
	if h.isLocal(spec.Name) {
		return adminResult{}, &adminError{http.StatusConflict, "ALREADY_EXISTS", fmt.Sprintf(
			"name: %q is taken by an MCP server the program embedding the hub added", spec.Name)}
	}
	if existing, err := h.opts.Store.Get(ctx, spec.Name); err == nil {
		return adminResult{}, &adminError{http.StatusConflict, "ALREADY_EXISTS", fmt.Sprintf(
			"name: an MCP server named %q is already registered (source %s); use hub_update_server to change it", spec.Name, existing.Source)}
	} else if errors.Is(err, upstream.ErrBroken) {
		return adminResult{}, &adminError{http.StatusConflict, "ALREADY_EXISTS", fmt.Sprintf("name: %v", err)}
	} else if errors.Is(err, upstream.ErrStoreUnavailable) {
		return adminResult{}, errInternal("cannot read the registrations", err)
	}
	reg := upstream.Registration{
		Spec: spec, Enabled: boolArg(args, "enabled", true), AutoConnect: boolArg(args, "autoConnect", true),
		Source: upstream.SourceAdmin, Approval: upstream.ApprovalPending,
	}
	d, err := ask(ctx, spec, "register")
	if err != nil {
		return adminResult{}, errInternal("approval", err)
	}
	switch d {
	case declined:
		_ = h.opts.Store.Audit(ctx, who, "add-declined", spec.Name, auditDetail(spec))
		return adminResult{fmt.Sprintf("The person declined to run %q. Nothing was registered.", spec.Name),
			map[string]any{"name": spec.Name, "approval": "declined", "stored": false}}, nil
	case approved:
		reg.Approve()
	}
	if _, err := h.opts.Store.Create(ctx, reg); err != nil {
		return adminResult{}, errInternal("cannot store the registration", err)
	}
	_ = h.opts.Store.Audit(ctx, who, "add", spec.Name, auditDetail(spec))
	if reg.Approval != upstream.ApprovalApproved {
		return adminResult{pendingText(spec, "registered"),
			map[string]any{"name": spec.Name, "state": "PENDING", "approval": "pending", "tools": []string{}, "review": spec.Review()}}, nil
	}
	return h.started(ctx, spec.Name, "Registered and approved", fullWait)
}

// pendingText tells the model (or the REST caller) that a person must
// approve, and shows what the approval would cover.
func pendingText(spec upstream.Spec, what string) string {
	return fmt.Sprintf("%q is %s but will not run until a person approves exactly what it runs. Ask the user to run this in a terminal:\n\n    mcp-hub approve %s\n\nApproving lets it:\n\n%s", spec.Name, what, spec.Name, indentLines(spec.Review()))
}

// adminWait bounds how long hub_update_server, hub_restart_server and
// hub_connect_server (and their REST forms) wait for the upstream's
// connection attempt before they answer: an upstream that is slow or never
// answers must not hold the admin call (issue 12). Its tools join the
// catalog when it is ready; clients hear tools/list_changed.
const adminWait = 800 * time.Millisecond

// fullWait is the wait for a first start (add, approve): the whole attempt,
// so the answer can list the tools.
const fullWait time.Duration = -1

// started applies the store to the running upstreams, waits (at most wait,
// or the whole attempt with fullWait) for the named one to settle, and
// reports it.
func (h *Hub) started(ctx context.Context, name, what string, wait time.Duration) (adminResult, error) {
	if err := h.reconcile(ctx); err != nil {
		return adminResult{}, errInternal("apply the change", err)
	}
	h.upstreamChanged(name)
	if wait == fullWait {
		wait = h.mgrOpts.InitTimeout + h.mgrOpts.ListTimeout
	}
	st := h.waitAttempt(ctx, name, wait)
	tools := h.toolsOf(name)
	text := fmt.Sprintf("%s %q: %s, %d tools", what, name, st.State, len(tools))
	text += h.scopeNote(name)
	if st.State == upstream.StateConnecting {
		text += "; still starting: its tools join the catalog when it is ready (clients get notifications/tools/list_changed); hub_get_server shows its state"
	}
	if st.LastError != "" {
		text += "; last error: " + st.LastError
	}
	if len(tools) > 0 {
		text += "\ntools: " + strings.Join(tools, ", ")
	}
	return adminResult{text, map[string]any{"name": name, "state": st.State, "approval": "approved", "tools": orEmptySlice(tools)}}, nil
}

// waitAttempt waits until the upstream's current connection attempt is over
// (or wait passes) and the catalog reflects it.
func (h *Hub) waitAttempt(ctx context.Context, name string, wait time.Duration) upstream.Status {
	u, ok := h.mgr.Get(name)
	if !ok {
		return upstream.Status{Name: name, State: upstream.StatePending}
	}
	sent := u.CommandsSent() // the command this waits on was sent before
	deadline := time.Now().Add(wait)
	for {
		st := u.Status()
		busy := st.Applied < sent || st.State == upstream.StateConnecting ||
			(st.State == upstream.StatePending && st.Attempts == 0 && !st.Settled)
		if (!busy && h.catalogCurrent()) || time.Now().After(deadline) || ctx.Err() != nil {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *Hub) catalogCurrent() bool { return h.doneGen.Load() == h.mgr.Generation() }

func (h *Hub) toolsOf(name string) []string {
	var tools []string
	for _, e := range h.Catalog().ServerEntries(name) {
		if e.Kind == catalog.KindTool {
			tools = append(tools, e.Name)
		}
	}
	return tools
}

func (h *Hub) configManaged(name string) error {
	return &adminError{http.StatusConflict, "CONFIG_MANAGED", fmt.Sprintf("%q is defined in %s; edit it there", name, h.configFileName())}
}

func (h *Hub) opUpdate(ctx context.Context, who string, args map[string]json.RawMessage, ask approver) (adminResult, error) {
	if err := h.writable(); err != nil {
		return adminResult{}, err
	}
	name := argString(args, "name")
	cur, err := h.opts.Store.Get(ctx, name)
	if err != nil {
		return adminResult{}, storeGetErr(name, err)
	}
	if cur.Source == upstream.SourceConfig {
		return adminResult{}, h.configManaged(name)
	}
	// Switching between a command and a URL drops the other kind's fields;
	// the transport is inferred again unless given.
	spec := cur.Spec
	_, newCommand := args["command"]
	_, newURL := args["url"]
	if newCommand && !newURL {
		spec.URL, spec.Headers, spec.Transport = "", nil, ""
	}
	if newURL && !newCommand {
		spec.Command, spec.Args, spec.Env, spec.Cwd, spec.Transport = "", nil, nil, "", ""
	}
	spec = specFromArgs(spec, args)
	if err := validateSpec(&spec); err != nil {
		return adminResult{}, err
	}
	relaunch := spec.Fingerprint() != cur.Spec.Fingerprint()
	approval, hash := cur.Approval, cur.ApprovedHash
	if relaunch {
		d, err := ask(ctx, spec, "change")
		if err != nil {
			return adminResult{}, errInternal("approval", err)
		}
		switch d {
		case declined:
			_ = h.opts.Store.Audit(ctx, who, "update-declined", name, auditDetail(spec))
			return adminResult{fmt.Sprintf("The person declined the change to %q. Nothing changed.", name),
				map[string]any{"name": name, "approval": string(cur.Approval), "changed": false}}, nil
		case approved:
			approval, hash = upstream.ApprovalApproved, spec.Fingerprint()
		default:
			approval, hash = upstream.ApprovalPending, ""
		}
	}
	_, err = h.opts.Store.Update(ctx, name, func(r *upstream.Registration) error {
		r.Spec = spec
		r.Approval, r.ApprovedHash = approval, hash
		if relaunch {
			r.ApprovalNote = "" // a new change, awaiting its own approval
		}
		r.Enabled = boolArg(args, "enabled", r.Enabled)
		r.AutoConnect = boolArg(args, "autoConnect", r.AutoConnect)
		return nil
	})
	if err != nil {
		return adminResult{}, errInternal("cannot store the change", err)
	}
	_ = h.opts.Store.Audit(ctx, who, "update", name, auditDetail(spec))
	if approval != upstream.ApprovalApproved {
		if err := h.reconcile(ctx); err != nil { // stops the old launch spec
			return adminResult{}, errInternal("apply the change", err)
		}
		return adminResult{pendingText(spec, "changed"),
			map[string]any{"name": name, "state": "PENDING", "approval": "pending", "tools": []string{}, "review": spec.Review()}}, nil
	}
	return h.started(ctx, name, "Updated", adminWait)
}

func (h *Hub) configFileName() string {
	if h.opts.ConfigFile != "" {
		return h.opts.ConfigFile
	}
	return "the hub's config file"
}

func (h *Hub) opRemove(ctx context.Context, who, name string) (adminResult, error) {
	if err := h.writable(); err != nil {
		return adminResult{}, err
	}
	cur, err := h.opts.Store.Get(ctx, name)
	if b := (upstream.BrokenRegistration{}); errors.As(err, &b) {
		return h.removeBroken(ctx, who, b)
	}
	if err != nil {
		return adminResult{}, storeGetErr(name, err)
	}
	if cur.Source == upstream.SourceConfig {
		return adminResult{}, h.configManaged(name)
	}
	if err := h.opts.Store.Delete(ctx, name); err != nil && !errors.Is(err, upstream.ErrNotFound) {
		return adminResult{}, errInternal("cannot remove the registration", err)
	}
	_ = h.opts.Store.Audit(ctx, who, "remove", name, auditDetail(cur.Spec))
	if err := h.reconcile(ctx); err != nil { // stops it, process tree included
		return adminResult{}, errInternal("apply the change", err)
	}
	h.upstreamChanged(name)
	return adminResult{fmt.Sprintf("Removed %q: disconnected and forgotten.", name), map[string]any{"name": name, "removed": true}}, nil
}

// opLifecycle connects, disconnects or restarts an upstream.
func (h *Hub) opLifecycle(ctx context.Context, who, name, verb string) (adminResult, error) {
	if _, ok := h.mgr.Get(name); !ok {
		if h.opts.Store != nil {
			if r, err := h.opts.Store.Get(ctx, name); err == nil && !r.Approved() {
				return adminResult{}, &adminError{http.StatusConflict, "NOT_APPROVED",
					fmt.Sprintf("%q is %s: %s", name, r.Approval, pendingText(r.Spec, "registered"))}
			} else if errors.Is(err, upstream.ErrBroken) {
				return adminResult{}, storeGetErr(name, err)
			}
		}
		return adminResult{}, errNotFound(name)
	}
	var err error
	switch verb {
	case "connect":
		err = h.mgr.Connect(name)
	case "disconnect":
		err = h.mgr.Disconnect(name)
	case "restart":
		err = h.mgr.Restart(name)
	}
	if err != nil {
		return adminResult{}, errInternal(verb, err)
	}
	if h.opts.Store != nil {
		_ = h.opts.Store.Audit(ctx, who, verb, name, nil)
	}
	if verb == "disconnect" {
		u, _ := h.mgr.Get(name)
		deadline := time.Now().Add(10 * time.Second)
		for u.Status().State != upstream.StateDisconnected && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		st := u.Status()
		h.upstreamChanged(name)
		return adminResult{fmt.Sprintf("Disconnected %q: %s. Its tools left the catalog until it is connected again.", name, st.State),
			map[string]any{"name": name, "state": st.State}}, nil
	}
	return h.started(ctx, name, strings.ToUpper(verb[:1])+verb[1:]+"ed", adminWait)
}

// opApprove approves a registration's current launch spec. It is offered to
// authenticated operators (the REST API), never as an MCP tool: a model
// must not approve what it registered.
func (h *Hub) opApprove(ctx context.Context, who, name string) (adminResult, error) {
	if err := h.writable(); err != nil {
		return adminResult{}, err
	}
	cur, err := h.opts.Store.Get(ctx, name)
	if err != nil {
		return adminResult{}, storeGetErr(name, err)
	}
	// The tool changes pending now (what GET showed), approved below with
	// the launch spec; later ones stay held until approved.
	changes, err := h.changesOf(ctx, name)
	if err != nil {
		return adminResult{}, errInternal("cannot read the tool pins", err)
	}
	if !cur.Approved() {
		if err := ApproveRegistration(ctx, h.opts.Store, who, cur); errors.Is(err, ErrReviewChanged) {
			return adminResult{}, &adminError{http.StatusConflict, "CHANGED", fmt.Sprintf("%q changed while it was being approved; review it again", name)}
		} else if err != nil {
			return adminResult{}, errInternal("cannot store the approval", err)
		}
	}
	if len(changes.Findings) > 0 {
		if err := h.approveChanges(ctx, who, changes); errors.Is(err, upstream.ErrPinsChanged) {
			return adminResult{}, &adminError{http.StatusConflict, "CHANGED", fmt.Sprintf("the tool pins of %q changed while they were being approved; review them again", name)}
		} else if err != nil {
			return adminResult{}, errInternal("cannot store the approval of the tool changes", err)
		}
	}
	res, err := h.started(ctx, name, "Approved", fullWait)
	if err == nil {
		review := cur.Spec.Review()
		res.text += "\nIt was approved to:\n" + indentLines(review)
		res.data["review"] = review
		if len(changes.Findings) > 0 {
			res.text += "\nand these changes to what it lists were approved:\n" + indentLines(changes.Review())
			res.data["toolChanges"] = changes.Review()
		}
	}
	return res, err
}

// decision is the outcome of asking for approval.
type decision int

const (
	pending decision = iota
	approved
	declined
)

// elicitApprover asks the person at the calling client, through
// elicitation, when the client supports it; otherwise the registration
// waits (pending) for mcp-hub approve. With auto approval nobody is asked.
func (h *Hub) elicitApprover(req *mcp.CallToolRequest) approver {
	return func(ctx context.Context, spec upstream.Spec, what string) (decision, error) {
		if h.opts.Approval == ApprovalAuto {
			return approved, nil
		}
		p := req.Session.InitializeParams()
		if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
			return pending, nil
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message:         approvalMessage(spec, what),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		})
		if err != nil {
			// The client claimed elicitation but could not do it: fall back
			// to the terminal.
			h.logger.Warn("approval by elicitation failed; waiting for mcp-hub approve", "upstream", spec.Name, "err", err)
			return pending, nil
		}
		if res.Action == "accept" {
			return approved, nil
		}
		return declined, nil
	}
}

// approvalMessage shows a person exactly what would run, never truncated,
// with warnings for what deserves a second look.
func approvalMessage(spec upstream.Spec, what string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "An AI client asks mcp-hub to %s the MCP server %q. Approve only if you asked for this. Approving lets it:\n\n%s", what, spec.Name, spec.Review())
	return b.String()
}
