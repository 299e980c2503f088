package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The admin operations that change registrations and running upstreams:
// add, update, remove, connect/disconnect/restart, and the waits that let
// their answers report the outcome.

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
		return h.pendingResult(ctx, spec, "registered"), nil
	}
	return h.started(ctx, spec.Name, "Registered and approved", fullWait)
}

// pendingText tells the model (or the REST caller) that a person must
// approve, and shows what the approval would cover.
func (h *Hub) pendingText(spec upstream.Spec, what string) string {
	return fmt.Sprintf("%q is %s but will not run until a person approves exactly what it runs. Ask the user to run this in a terminal:\n\n    %s\n\nApproving lets it:\n\n%s", spec.Name, what, h.approveCmd(spec.Name), indentLines(spec.Review()))
}

// pendingResult is the answer to a registration or change that waits for
// a person (hub_add_server, hub_update_server, POST and PUT
// /api/servers): pendingText, and the tool names approving it would take
// over (TakeoverNote), as every approval prompt says them.
func (h *Hub) pendingResult(ctx context.Context, spec upstream.Spec, what string) adminResult {
	res := adminResult{h.pendingText(spec, what),
		map[string]any{"name": spec.Name, "state": "PENDING", "approval": "pending", "tools": []string{}, "review": spec.Review()}}
	if n := h.TakeoverNote(ctx, upstream.Registration{Spec: spec}); n != "" {
		res.text += "\n\n" + n
		res.data["takeover"] = n
	}
	return res
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
		if (!attemptBusy(st, sent) && h.catalogCurrent()) || time.Now().After(deadline) || ctx.Err() != nil {
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
		return h.pendingResult(ctx, spec, "changed"), nil
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
					fmt.Sprintf("%q is %s: %s", name, r.Approval, h.pendingText(r.Spec, "registered"))}
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
