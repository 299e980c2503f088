package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// What the admin tools (and the REST API) report about upstreams: one view
// per server, the list, and one server in detail.

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
			v.LastError = "awaiting approval: run `" + h.approveCmd(spec.Name) + "`"
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
			fmt.Fprintf(&b, "; quarantined until a person approves them (%s): %s", h.approveCmd(v.Name), strings.Join(v.Quarantined, ", "))
		}
		if len(v.Flagged) > 0 {
			fmt.Fprintf(&b, "; changed since approved, not yet reviewed (%s): %s", h.approveCmd(v.Name), strings.Join(v.Flagged, ", "))
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
		if n := h.TakeoverNote(ctx, upstream.Registration{Spec: spec}); n != "" {
			text += "\n" + n
			data["takeover"] = n
		}
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
		text += "\nchanges since its tools were approved (a person approves them with `" + h.approveCmd(name) + "`):\n" + indentLines(c.Review())
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
