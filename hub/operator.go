package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-hub/mcp-hub/hub/pin"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The operations of a person at a surface the hub trusts with approvals:
// the command line (package cli, on the store) and the web console
// (package console, on a running hub). They are the functions the REST
// API and the hub_* tools run, exported; who is recorded in the audit log
// ("cli", "console").

// ServerView is what the hub reports about one upstream: hub_list_servers'
// servers, GET /api/servers, the console's servers page.
type ServerView = serverView

// Servers returns every registered upstream (the store's, or the
// manager's without a store), sorted by name, as hub_list_servers does.
func (h *Hub) Servers(ctx context.Context) ([]ServerView, error) {
	return h.views(ctx)
}

// Store returns the hub's registration store (nil when it has none).
func (h *Hub) Store() Store { return h.opts.Store }

// ConfigFile names the hub's config file as messages do.
func (h *Hub) ConfigFile() string { return h.configFileName() }

// Lifecycle connects, disconnects or restarts (verb) the named upstream, as
// hub_connect_server and POST /api/servers/{name}/connect do, and says
// what happened. Its errors are for people, secret values masked.
func (h *Hub) Lifecycle(ctx context.Context, who, name, verb string) (string, error) {
	switch verb {
	case "connect", "disconnect", "restart":
	default:
		return "", errInvalid("unknown operation %q: connect, disconnect or restart", verb)
	}
	res, err := h.opLifecycle(ctx, who, name, verb)
	return redact.Text(res.text), maskErr(err)
}

// Remove disconnects an upstream and forgets its registration, as
// hub_remove_server and DELETE /api/servers/{name} do.
func (h *Hub) Remove(ctx context.Context, who, name string) (string, error) {
	res, err := h.opRemove(ctx, who, name)
	return redact.Text(res.text), maskErr(err)
}

// maskErr masks what looks secret in an operation's error.
func maskErr(err error) error {
	if err == nil {
		return nil
	}
	var ae *adminError
	if errors.As(err, &ae) {
		return &adminError{ae.status, ae.code, redact.Error(ae.msg)}
	}
	return errors.New(redact.Error(err.Error()))
}

// ErrorStatus returns the HTTP status the REST API answers an operation's
// error with (500 for an error that is not an operation's).
func ErrorStatus(err error) int {
	var ae *adminError
	if errors.As(err, &ae) {
		return ae.status
	}
	return http.StatusInternalServerError
}

// Apply applies the store's registrations to the running upstreams now,
// rather than at the next poll of the store: what the command line
// changed in the store, a running hub applies within its StorePoll.
func (h *Hub) Apply(ctx context.Context) error {
	if h.opts.Store == nil {
		return errNoStore
	}
	if err := h.reconcile(ctx); err != nil {
		return err
	}
	h.upstreamChanged("")
	return nil
}

// Changed returns a channel that is closed when the hub next rebuilds its
// catalog: after any upstream's state or inventory changed.
func (h *Hub) Changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// ApprovalPrompt is what a person reads before approving a registration:
// who registered it, why it waits (when the hub took an approval back),
// what approving lets it do ([upstream.Spec.Review]), and notes (the
// tool names it takes over: [StoredTakeoverNote]). mcp-hub approve and the
// web console show this text.
func ApprovalPrompt(r upstream.Registration, notes ...string) string {
	why := ""
	if r.ApprovalNote != "" {
		why = " (" + r.ApprovalNote + ")"
	}
	s := fmt.Sprintf("%q was registered by %s%s. Approving lets it:\n\n%s", r.Spec.Name, r.Source, why, indentLines(r.Spec.Review()))
	for _, n := range notes {
		if n != "" {
			s += "\n\n" + n
		}
	}
	return s
}

// ErrReviewChanged is returned when what a registration runs changed after
// the person reviewed it: they review it again.
var ErrReviewChanged = errors.New("what it runs changed while it was being reviewed")

// ApproveRegistration approves the launch spec of reviewed, the
// registration as the person reviewed it, by who, with an audit entry. It
// fails with [ErrReviewChanged] when the stored spec is no longer the
// reviewed one. mcp-hub approve, POST /api/servers/{name}/approve and the
// web console approve through it.
func ApproveRegistration(ctx context.Context, st Store, who string, reviewed upstream.Registration) error {
	fp := reviewed.Spec.Fingerprint()
	if _, err := st.Update(ctx, reviewed.Spec.Name, func(cur *upstream.Registration) error {
		if cur.Spec.Fingerprint() != fp {
			return ErrReviewChanged
		}
		cur.Approve()
		return nil
	}); err != nil {
		return err
	}
	_ = st.Audit(ctx, who, "approve", reviewed.Spec.Name, map[string]any{"launch": reviewed.Spec.RedactedLaunch()})
	return nil
}

// RejectRegistration rejects r so that it never runs, by who, with an
// audit entry. mcp-hub reject and the web console reject through it; the
// callers refuse upstreams of the config file first.
func RejectRegistration(ctx context.Context, st Store, who string, r upstream.Registration) error {
	if _, err := st.Update(ctx, r.Spec.Name, func(cur *upstream.Registration) error {
		cur.Approval, cur.ApprovedHash, cur.ApprovalNote = upstream.ApprovalRejected, "", ""
		return nil
	}); err != nil {
		return err
	}
	_ = st.Audit(ctx, who, "reject", r.Spec.Name, map[string]any{"launch": r.Spec.RedactedLaunch()})
	return nil
}

// ToolChanges returns what the named upstream lists that its pins do not
// cover, as the hub sees it (the live listing when it runs, else the
// store's); no findings when nothing changed.
func (h *Hub) ToolChanges(ctx context.Context, name string) (ToolChanges, error) {
	if h.opts.Store == nil {
		return ToolChanges{Name: name}, nil
	}
	c, err := h.changesOf(ctx, name)
	if c.Name == "" {
		c.Name = name
	}
	return c, err
}

// ApproveChanges pins c, the changes a person reviewed, by who (the
// package-level [ApproveToolChanges], which mcp-hub approve runs) and
// serves them at once. It fails with an error wrapping
// [upstream.ErrPinsChanged] when a pin changed after c was read.
func (h *Hub) ApproveChanges(ctx context.Context, who string, c ToolChanges) error {
	if err := h.writable(); err != nil {
		return err
	}
	return h.approveChanges(ctx, who, c)
}

// DeclineChanges records that who declined c: what changed stays as the
// trust policy has it (quarantined under pin) until approved.
func (h *Hub) DeclineChanges(ctx context.Context, who string, c ToolChanges) error {
	if h.opts.Store == nil {
		return errNoStore
	}
	return h.opts.Store.Audit(ctx, who, "approve-pins-declined", c.Name,
		pinDetail("the person declined", pin.Accept(c.Findings, who, time.Now()), c.Findings))
}

// CanLogin reports whether the hub can log in to OAuth upstreams itself
// (Options.Login is set).
func (h *Hub) CanLogin() bool { return h.opts.Login != nil }

// Login logs in to the named upstream with OAuth, directing the person to
// the authorization URL with open, then connects it and waits for the
// attempt; concurrent logins to one upstream share one flow.
func (h *Hub) Login(ctx context.Context, name string, open func(ctx context.Context, authURL string) error) (upstream.AuthStatus, error) {
	if h.opts.Login == nil {
		return upstream.AuthStatus{}, errors.New("this hub cannot log in to upstreams (no OAuth login configured)")
	}
	if _, ok := h.mgr.Get(name); !ok {
		return upstream.AuthStatus{}, errNotFound(name)
	}
	return h.chatLogin(ctx, name, func(ctx context.Context, _ string, _ any, authURL string) error {
		return open(ctx, authURL)
	})
}
