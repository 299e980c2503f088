package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Approval of what a registration runs: by an operator (REST, CLI), or by
// the person at the calling client through elicitation.

// opApprove approves a registration's launch spec and its tool changes as
// the person reviewed them: digest is the one GET /api/servers/{name}
// returned with them (approvalDigestOf). It is offered to authenticated
// operators (the REST API), never as an MCP tool: a model must not
// approve what it registered.
func (h *Hub) opApprove(ctx context.Context, who, name, digest string) (adminResult, error) {
	if err := h.writable(); err != nil {
		return adminResult{}, err
	}
	cur, err := h.opts.Store.Get(ctx, name)
	if err != nil {
		return adminResult{}, storeGetErr(name, err)
	}
	// The tool changes pending now, approved below with the launch spec
	// when they are what GET showed; later ones stay held until approved.
	changes, err := h.changesOf(ctx, name)
	if err != nil {
		return adminResult{}, errInternal("cannot read the tool pins", err)
	}
	if digest == "" {
		return adminResult{}, errInvalid("digest: required: approving binds to what you reviewed; send {\"digest\": …} with the digest GET /api/servers/%s returned", name)
	}
	if want, err := h.approvalDigestOf(ctx, cur, changes); err != nil {
		return adminResult{}, errInternal("cannot compute the approval digest", err)
	} else if !SameDigest(digest, want) {
		return adminResult{}, &adminError{http.StatusConflict, "CHANGED", fmt.Sprintf(
			"what %q runs or lists is not what that digest was given for: it changed since (or the digest is not this hub's); nothing was approved. GET /api/servers/%s again, review it, and approve with its digest", name, name)}
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

// approvalDigestOf is the digest of what approving r would cover now: its
// launch spec unless approved, and its tool changes.
func (h *Hub) approvalDigestOf(ctx context.Context, r upstream.Registration, changes ToolChanges) (string, error) {
	var pending *upstream.Registration
	if !r.Approved() {
		pending = &r
	}
	return h.ApprovalDigest(ctx, r.Spec.Name, pending, changes)
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
		var sp *telemetry.Span // the wait for the person, under the tool call's span
		if req.Extra != nil {
			sp = h.tracer.Under(req.Extra.Header, "approval wait", spec.Name)
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Meta:            sp.MetaMap(),
			Message:         approvalMessage(spec, what, h.TakeoverNote(ctx, upstream.Registration{Spec: spec})),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		})
		if sp != nil {
			if err == nil && (res.Action == "accept" || res.Action == "decline" || res.Action == "cancel") {
				sp.SetString("mcp_hub.approval.action", res.Action)
			}
			sp.Finish(err)
		}
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
func approvalMessage(spec upstream.Spec, what, takeover string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "An AI client asks mcp-hub to %s the MCP server %q. Approve only if you asked for this. Approving lets it:\n\n%s", what, spec.Name, spec.Review())
	if takeover != "" {
		b.WriteString("\n\n" + takeover)
	}
	return b.String()
}
