package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The console's buttons. Each runs the hub's function for the job (the
// one the REST API or the command line runs), as "console" in the audit
// log, and answers the console's script with JSON, or a browser without
// JavaScript with a redirect to the page it came from and a message there.
//
//	POST /ui/servers/{name}/{connect,disconnect,restart,remove,login}
//	POST /ui/approvals/{name}/{approve,reject}   digest: of the spec shown
//	POST /ui/changes/{name}/{approve,reject}     digest: of the changes shown
//
// The digests are hub.ApprovalDigest's, the ones the REST API binds its
// approvals to: keyed with the hub's secret, never a fingerprint.
//	POST /ui/logout

// who is the console in the audit log.
const who = "console"

// actionResult is an action's answer to the console's script.
type actionResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	// Redirect, when set, is where the browser goes next (a login's
	// authorization page).
	Redirect string `json:"redirect,omitempty"`
}

// actionWait bounds an action's wait for the hub (a restart waits for
// the attempt, at most the hub's admin wait).
const actionWait = 30 * time.Second

// loginWait bounds the wait for an OAuth login's authorization URL.
const loginWait = 20 * time.Second

func (c *Console) serveAction(w http.ResponseWriter, r *http.Request, s *session) {
	if r.URL.Path == "/ui/logout" {
		c.serveLogout(w, r)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/ui/"), "/")
	if len(parts) != 3 || parts[1] == "" {
		c.answer(w, r, s, "", actionResult{}, &pageError{http.StatusNotFound, "no such action"})
		return
	}
	kind, name, verb := parts[0], parts[1], parts[2]
	back := "/ui/"
	ctx, cancel := context.WithTimeout(r.Context(), actionWait)
	defer cancel()
	var (
		res actionResult
		err error
	)
	switch kind + "/" + verb {
	case "servers/connect", "servers/disconnect", "servers/restart":
		res.Message, err = c.h.Lifecycle(ctx, who, name, verb)
		back = c.backTo(r, "/ui/")
	case "servers/remove":
		res.Message, err = c.h.Remove(ctx, who, name)
	case "servers/login":
		res, err = c.login(ctx, name)
		back = c.backTo(r, "/ui/")
	case "approvals/approve":
		res.Message, err = c.approve(ctx, name, r.PostFormValue("digest"))
		back = "/ui/approvals"
	case "approvals/reject":
		res.Message, err = c.reject(ctx, name)
		back = "/ui/approvals"
	case "changes/approve", "changes/reject":
		res.Message, err = c.decideChanges(ctx, name, r.PostFormValue("digest"), verb == "approve")
		back = "/ui/approvals"
	default:
		err = &pageError{http.StatusNotFound, "no such action"}
	}
	res.OK = err == nil
	if res.Redirect != "" && !wantsJSON(r) {
		// A form's post is not redirected to another origin: the
		// console's CSP (form-action 'self') makes a browser refuse that.
		// A browser without JavaScript follows a link instead.
		c.message(w, http.StatusOK, redact.Text(res.Message), res.Redirect, "Continue to the authorization page")
		return
	}
	c.answer(w, r, s, back, res, err)
}

// answer reports an action's outcome: JSON to the console's script,
// otherwise a redirect to back with the message kept for the next page.
func (c *Console) answer(w http.ResponseWriter, r *http.Request, s *session, back string, res actionResult, err error) {
	status := http.StatusOK
	if err != nil {
		status = statusOf(err)
		res.Message = err.Error()
	}
	res.Message = redact.Error(res.Message)
	if wantsJSON(r) {
		writeJSON(w, status, res)
		return
	}
	if back == "" {
		c.refuse(w, r, status, res.Message)
		return
	}
	s.setFlash(&flash{OK: err == nil, Text: res.Message})
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// backTo is the page an action's form names in its "back" field, when it
// is one of the console's pages; def otherwise.
func (c *Console) backTo(r *http.Request, def string) string {
	b := r.PostFormValue("back")
	if strings.HasPrefix(b, "/ui/") && !strings.ContainsAny(b, "\\?#") && !strings.Contains(b, "//") {
		return b
	}
	return def
}

// approve approves a pending registration as the person reviewed it:
// dig is the digest of the spec the page showed. It is what mcp-hub
// approve does (hub.ApproveRegistration), then the hub starts it at once.
func (c *Console) approve(ctx context.Context, name, dig string) (string, error) {
	st := c.h.Store()
	if st == nil {
		return "", errors.New("this hub has no registration store")
	}
	r, err := st.Get(ctx, name)
	if errors.Is(err, upstream.ErrNotFound) {
		return "", notFound(name)
	} else if err != nil {
		return "", err
	}
	if r.Approved() {
		return fmt.Sprintf("%q is approved already.", name), nil
	}
	want, err := c.h.ApprovalDigest(ctx, name, &r, hub.ToolChanges{})
	if err != nil {
		return "", err
	}
	if dig == "" || !hub.SameDigest(dig, want) {
		return "", &pageError{http.StatusConflict, fmt.Sprintf("what %q runs changed since this page showed it: review it again", name)}
	}
	if err := hub.ApproveRegistration(ctx, st, who, r); errors.Is(err, hub.ErrReviewChanged) {
		return "", &pageError{http.StatusConflict, fmt.Sprintf("what %q runs changed while it was being approved: review it again", name)}
	} else if err != nil {
		return "", fmt.Errorf("cannot store the approval: %w", err)
	}
	if err := c.h.Apply(ctx); err != nil {
		return "", fmt.Errorf("approved %q, but the hub could not start it yet: %w", name, err)
	}
	return fmt.Sprintf("Approved %q: it starts now; its tools join the catalog when it is connected.", name), nil
}

// reject rejects a registration so that it never runs, as mcp-hub reject
// does (hub.RejectRegistration).
func (c *Console) reject(ctx context.Context, name string) (string, error) {
	st := c.h.Store()
	if st == nil {
		return "", errors.New("this hub has no registration store")
	}
	r, err := st.Get(ctx, name)
	if errors.Is(err, upstream.ErrNotFound) {
		return "", notFound(name)
	} else if err != nil {
		return "", err
	}
	if r.Source == upstream.SourceConfig {
		return "", &pageError{http.StatusConflict, fmt.Sprintf("%q is defined in %s; remove it there", name, c.h.ConfigFile())}
	}
	if err := hub.RejectRegistration(ctx, st, who, r); err != nil {
		return "", fmt.Errorf("cannot store the rejection: %w", err)
	}
	if err := c.h.Apply(ctx); err != nil {
		return "", fmt.Errorf("rejected %q, but the hub could not apply it yet: %w", name, err)
	}
	return fmt.Sprintf("Rejected %q: it will not run.", name), nil
}

// decideChanges approves or declines an upstream's tool changes as the
// person saw them: digest is that of the diff the page showed.
func (c *Console) decideChanges(ctx context.Context, name, dig string, approve bool) (string, error) {
	if st := c.h.Store(); st != nil {
		if _, err := st.Get(ctx, name); errors.Is(err, upstream.ErrNotFound) {
			return "", notFound(name)
		}
	}
	ch, err := c.h.ToolChanges(ctx, name)
	if err != nil {
		return "", fmt.Errorf("cannot read the tool pins: %w", err)
	}
	if len(ch.Findings) == 0 {
		return fmt.Sprintf("Nothing to decide: what %q lists is what was approved.", name), nil
	}
	want, err := c.h.ApprovalDigest(ctx, name, nil, ch)
	if err != nil {
		return "", err
	}
	if dig == "" || !hub.SameDigest(dig, want) {
		return "", &pageError{http.StatusConflict, fmt.Sprintf("what %q lists changed since this page showed it: review the changes again", name)}
	}
	if !approve {
		if err := c.h.DeclineChanges(ctx, who, ch); err != nil {
			return "", fmt.Errorf("cannot record the decision: %w", err)
		}
		what := "they stay flagged"
		if ch.Quarantined() {
			what = "they stay quarantined"
		}
		return fmt.Sprintf("Declined the changes to %q (%s): %s until approved.", name, ch.Summary(), what), nil
	}
	if err := c.h.ApproveChanges(ctx, who, ch); errors.Is(err, upstream.ErrPinsChanged) {
		return "", &pageError{http.StatusConflict, fmt.Sprintf("the pins of %q changed meanwhile: review the changes again", name)}
	} else if err != nil {
		return "", fmt.Errorf("cannot store the approval: %w", err)
	}
	return fmt.Sprintf("Approved the changes to %q: %s.", name, ch.Summary()), nil
}

// login starts an OAuth login to an upstream and answers with its
// authorization page, where the browser goes next; the hub completes the
// login on its loopback redirect and connects the upstream.
func (c *Console) login(ctx context.Context, name string) (actionResult, error) {
	if !c.h.CanLogin() {
		return actionResult{}, &pageError{http.StatusConflict, "this hub cannot log in to upstreams"}
	}
	urls := make(chan string, 1)
	done := make(chan error, 1)
	c.wg.Go(func() {
		_, err := c.h.Login(c.ctx, name, func(_ context.Context, authURL string) error {
			select {
			case urls <- authURL:
			default:
			}
			return nil
		})
		if err != nil {
			c.logger.Warn("console login to an upstream failed", "upstream", name, "err", err)
		}
		done <- err
	})
	wait := time.NewTimer(loginWait)
	defer wait.Stop()
	select {
	case u := <-urls:
		return actionResult{Message: fmt.Sprintf("Log in to %q on its authorization page; the hub connects it when you are done.", name), Redirect: u}, nil
	case err := <-done:
		if err != nil {
			return actionResult{}, fmt.Errorf("logging in to %q failed: %w", name, err)
		}
		return actionResult{Message: fmt.Sprintf("Logged in to %q.", name)}, nil
	case <-wait.C:
		return actionResult{}, &pageError{http.StatusGatewayTimeout, fmt.Sprintf("the login to %q did not start within %s", name, loginWait)}
	case <-ctx.Done():
		return actionResult{}, ctx.Err()
	}
}

// wantsJSON reports whether the console's script asked (it sends Accept:
// application/json).
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
