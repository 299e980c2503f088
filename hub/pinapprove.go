package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/hub/pin"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// ToolChanges is what an upstream lists that its pins do not cover: tools,
// prompts and resource templates that changed or are new, and changed
// instructions.
type ToolChanges struct {
	Name  string
	Trust upstream.Trust
	// Findings are in listing order.
	Findings []pin.Finding
}

// Quarantined reports whether the hub holds any of them back (trust pin).
func (c ToolChanges) Quarantined() bool {
	for _, f := range c.Findings {
		if held(c.Trust, f) {
			return true
		}
	}
	return false
}

// Summary names every change on one line: `tool "echo" (changed), …`.
func (c ToolChanges) Summary() string {
	parts := make([]string, len(c.Findings))
	for i, f := range c.Findings {
		parts[i] = f.Key().String() + " (" + f.What() + ")"
	}
	return strings.Join(parts, ", ")
}

// Review renders every change in full for a person about to approve them:
// what the trust policy does with them meanwhile, then each change's diff
// and heuristic warnings. Invisible characters are shown (pin.Visible), and
// what looks secret is masked (redact.Text), as in every output.
func (c ToolChanges) Review() string {
	return redact.Text(c.review())
}

func (c ToolChanges) review() string {
	var b strings.Builder
	switch {
	case c.Quarantined():
		fmt.Fprintf(&b, "%q lists what differs from what was approved. Until you approve it, what changed or is new is quarantined: it is not served, and calls to it are refused.", c.Name)
	default:
		fmt.Fprintf(&b, "%q lists what differs from what was approved. It is served (trust %s) but flagged until you approve it.", c.Name, c.Trust)
	}
	for _, f := range c.Findings {
		b.WriteString("\n\n")
		b.WriteString(f.Render())
	}
	return b.String()
}

// StoredToolChanges returns, by upstream name, what the store knows of the
// changes of every registered upstream (only the named one unless name is
// ""): the last listing the running hub cached, and what its per-session
// instances listed besides (Inventory.Variants), against the pins. This is
// what the command line shows and approves; a running hub sees the same.
// Upstreams whose trust is off, and ones never pinned, have none.
func StoredToolChanges(ctx context.Context, st Store, name string) (map[string]ToolChanges, error) {
	regs, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	pins, err := st.Pins(ctx)
	if err != nil {
		return nil, err
	}
	invs, err := st.Inventories(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]ToolChanges{}
	for _, r := range regs {
		if name != "" && r.Spec.Name != name {
			continue
		}
		policy := r.TrustPolicy()
		inv, listed := invs[r.Spec.Name]
		if policy == upstream.TrustOff || !listed {
			continue
		}
		findings, _ := pin.Check(pins[r.Spec.Name], pin.Items(inv))
		findings = addFindings(findings, variantFindings(pins[r.Spec.Name], inv.Variants))
		if len(findings) > 0 {
			out[r.Spec.Name] = ToolChanges{Name: r.Spec.Name, Trust: policy, Findings: findings}
		}
	}
	return out, nil
}

// ApproveToolChanges pins the new definitions of c's findings, by who, with
// their history and an audit entry, in one transaction. It fails with an
// error wrapping [upstream.ErrPinsChanged] when a pin changed after c was
// read: review again.
func ApproveToolChanges(ctx context.Context, st Store, who string, c ToolChanges) error {
	changes := pin.Accept(c.Findings, who, time.Now().UTC())
	return st.RecordPins(ctx, c.Name, upstream.PinRecord{Actor: who, Action: "approve-pins", Changes: changes,
		Detail: pinDetail("a person approved the changes", changes, c.Findings)})
}

// changesOf returns an upstream's changes as the hub sees them: the live
// listing's when it runs, else the store's.
func (h *Hub) changesOf(ctx context.Context, name string) (ToolChanges, error) {
	if policy, findings, ok := h.liveChanges(name); ok {
		return ToolChanges{Name: name, Trust: policy, Findings: findings}, nil
	}
	all, err := StoredToolChanges(ctx, h.opts.Store, name)
	if err != nil {
		return ToolChanges{}, err
	}
	return all[name], nil
}

// approveChanges records c as approved by who and applies the new pins.
func (h *Hub) approveChanges(ctx context.Context, who string, c ToolChanges) error {
	if err := ApproveToolChanges(ctx, h.opts.Store, who, c); err != nil {
		return err
	}
	if err := h.loadPins(ctx); err != nil {
		return err
	}
	if u, ok := h.mgr.Get(c.Name); ok {
		h.revetInstances(u) // its instances serve what was approved at once
	}
	h.upstreamChanged(c.Name)
	return nil
}

// changeApprover asks a person to approve an upstream's tool changes.
type changeApprover func(ctx context.Context, c ToolChanges) (decision, error)

// opApproveChanges asks for approval of an upstream's tool changes (the
// hub_approve_tool_changes tool) and records it.
func (h *Hub) opApproveChanges(ctx context.Context, who, name string, ask changeApprover) (adminResult, error) {
	if err := h.writable(); err != nil {
		return adminResult{}, err
	}
	if _, err := h.opts.Store.Get(ctx, name); err != nil {
		return adminResult{}, storeGetErr(name, err)
	}
	c, err := h.changesOf(ctx, name)
	if err != nil {
		return adminResult{}, errInternal("cannot read the tool pins", err)
	}
	if len(c.Findings) == 0 {
		return adminResult{fmt.Sprintf("Nothing to approve: what %q lists is what was approved.", name),
			map[string]any{"name": name, "approved": false, "changes": []string{}}}, nil
	}
	review := c.Review()
	d, err := ask(ctx, c)
	if err != nil {
		return adminResult{}, errInternal("approval", err)
	}
	data := map[string]any{"name": name, "changes": c.Summary(), "review": review}
	switch d {
	case declined:
		_ = h.opts.Store.Audit(ctx, who, "approve-pins-declined", name, pinDetail("the person declined", pin.Accept(c.Findings, who, time.Now()), c.Findings))
		data["approved"] = false
		return adminResult{fmt.Sprintf("The person declined the changes to %q: what changed stays as it is (%s).", name, c.Summary()), data}, nil
	case pending:
		data["approved"] = false
		return adminResult{fmt.Sprintf("A person must approve the changes to %q. Ask the user to run this in a terminal:\n\n    %s\n\nIt shows them:\n\n%s", name, h.approveCmd(name), indentLines(review)), data}, nil
	}
	if err := h.approveChanges(ctx, who, c); errors.Is(err, upstream.ErrPinsChanged) {
		return adminResult{}, &adminError{http.StatusConflict, "CHANGED", fmt.Sprintf("the pins of %q changed while the changes were being approved; review them again", name)}
	} else if err != nil {
		return adminResult{}, errInternal("cannot store the approval", err)
	}
	data["approved"] = true
	return adminResult{fmt.Sprintf("Approved the changes to %q: %s.", name, c.Summary()), data}, nil
}

// elicitChangeApprover asks the person at the calling client, through
// elicitation, when the client supports it; otherwise the changes wait
// for mcp-hub approve. With auto approval nobody is asked.
func (h *Hub) elicitChangeApprover(req *mcp.CallToolRequest) changeApprover {
	return func(ctx context.Context, c ToolChanges) (decision, error) {
		if h.opts.Approval == ApprovalAuto {
			return approved, nil
		}
		p := req.Session.InitializeParams()
		if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
			return pending, nil
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message:         fmt.Sprintf("An AI client asks you to approve changes to the MCP server %q. Approve only if you expect them.\n\n%s", c.Name, c.Review()),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		})
		if err != nil {
			h.logger.Warn("approval of tool changes by elicitation failed; waiting for mcp-hub approve", "upstream", c.Name, "err", err)
			return pending, nil
		}
		if res.Action == "accept" {
			return approved, nil
		}
		return declined, nil
	}
}
