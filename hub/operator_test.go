package hub

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestApproveRejectRegistration: the approval the command line and the
// console share approves the spec the person reviewed, never one that
// changed since (ErrReviewChanged, nothing stored), and records who; a
// rejection is recorded too.
func TestApproveRejectRegistration(t *testing.T) {
	ctx := context.Background()
	ps, err := persist.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	st := testStore{ps}
	reg := upstream.Registration{Spec: upstream.Spec{Name: "p", Command: "echo", Args: []string{"one"}}, Source: upstream.SourceAdmin,
		Approval: upstream.ApprovalPending, Enabled: true}
	if _, err := st.Create(ctx, reg); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(ctx, "p", func(r *upstream.Registration) error { r.Spec.Args = []string{"two"}; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := ApproveRegistration(ctx, st, "console", reg); !errors.Is(err, ErrReviewChanged) {
		t.Fatalf("approving a spec that changed since it was reviewed: %v, want ErrReviewChanged", err)
	}
	if r, _ := st.Get(ctx, "p"); r.Approved() {
		t.Fatal("approved a spec nobody reviewed")
	}
	cur, _ := st.Get(ctx, "p")
	if err := ApproveRegistration(ctx, st, "console", cur); err != nil {
		t.Fatal(err)
	}
	if r, _ := st.Get(ctx, "p"); !r.Approved() || r.Spec.Args[0] != "two" {
		t.Errorf("after approval: %+v", r)
	}
	if err := RejectRegistration(ctx, st, "console", cur); err != nil {
		t.Fatal(err)
	}
	if r, _ := st.Get(ctx, "p"); r.Approval != upstream.ApprovalRejected || r.Approved() {
		t.Errorf("after rejection: %+v", r)
	}
	log, _ := ps.AuditLog(ctx, "p", 0)
	var got []string
	for _, e := range log {
		got = append(got, e.Actor+":"+e.Action)
	}
	if s := strings.Join(got, " "); s != "console:approve console:reject" {
		t.Errorf("audit = %s", s)
	}
	if p := ApprovalPrompt(cur); !strings.HasPrefix(p, `"p" was registered by admin. Approving lets it:`) || !strings.Contains(p, "    run: echo two") {
		t.Errorf("ApprovalPrompt:\n%s", p)
	}
}

// TestFrontChecks: the checks the console borrows from the HTTP front are
// the front's: Host (DNS rebinding), Origin, same origin, bearer token.
func TestFrontChecks(t *testing.T) {
	h, _ := startHTTPHub(t, nil)
	fr, err := h.HTTPFront(&HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	req := func(host string, hdr ...string) *http.Request {
		r := httptest.NewRequest("POST", "http://"+host+"/ui/x", nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		return r
	}
	for _, tc := range []struct {
		name string
		err  error
		code string
	}{
		{"host ok", fr.CheckHost(req("127.0.0.1:7411")), ""},
		{"host rebinding", fr.CheckHost(req("evil.example:7411")), "FORBIDDEN_HOST"},
		{"origin loopback", fr.CheckOrigin(req("127.0.0.1:7411", "Origin", "http://localhost:9999")), ""},
		{"origin other", fr.CheckOrigin(req("127.0.0.1:7411", "Origin", "https://evil.example")), "FORBIDDEN_ORIGIN"},
		{"same origin", fr.CheckSameOrigin(req("127.0.0.1:7411", "Origin", "http://127.0.0.1:7411")), ""},
		{"other port", fr.CheckSameOrigin(req("127.0.0.1:7411", "Origin", "http://127.0.0.1:9999")), "CROSS_ORIGIN"},
		{"cross site", fr.CheckSameOrigin(req("127.0.0.1:7411", "Sec-Fetch-Site", "same-site")), "CROSS_ORIGIN"},
		{"bearer", fr.CheckBearer(req("127.0.0.1:7411", "Authorization", "Bearer "+testToken)), ""},
		{"bearer wrong", fr.CheckBearer(req("127.0.0.1:7411", "Authorization", "Bearer nope")), "UNAUTHENTICATED"},
		{"bearer none", fr.CheckBearer(req("127.0.0.1:7411")), "UNAUTHENTICATED"},
	} {
		switch {
		case tc.code == "" && tc.err != nil:
			t.Errorf("%s: %v", tc.name, tc.err)
		case tc.code != "" && ErrorCode(tc.err) != tc.code:
			t.Errorf("%s: %v (%s), want %s", tc.name, tc.err, ErrorCode(tc.err), tc.code)
		}
	}
}
