package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestAddListRemove runs add, list and remove in-process on one data dir.
func TestAddListRemove(t *testing.T) {
	s := newSetup(t, "")
	if o := s.run(t, List, "list"); o.code != ExitOK || !strings.HasPrefix(o.stdout, "No upstreams: "+s.config+" defines none and none are registered in ") {
		t.Fatalf("list of an empty store: %s", o)
	}
	o := s.run(t, Add, "add", "notes", "--env", "TOKEN=sk-typed-secret-value", "--", fixtureBin, "-only", "echo")
	if o.code != ExitOK || !strings.Contains(o.stdout, `Added "notes" (approved). It will:`) || !strings.Contains(o.stdout, "A running hub picks it up within seconds.") {
		t.Fatalf("add: %s", o)
	}
	r, err := s.get(t, "notes")
	if err != nil || !r.Approved() || r.Source != upstream.SourceCLI || r.Spec.Command != fixtureBin || r.Spec.Env["TOKEN"] != "sk-typed-secret-value" {
		t.Fatalf("stored after add: %+v, %v", r, err)
	}
	o = s.run(t, List, "list")
	if o.code != ExitOK || !regexp.MustCompile(`(?m)^notes +stdio +cli +approved +true +`).MatchString(o.stdout) {
		t.Errorf("list: %s", o)
	}
	for _, out := range []string{o.stdout, o.stderr} {
		if strings.Contains(out, "sk-typed-secret-value") {
			t.Errorf("list shows the env value:\n%s", out)
		}
	}

	for _, tt := range []struct {
		name string
		f    func(context.Context, *Env) int
		args []string
		code int
		want string // in stderr
	}{
		{"add again", Add, []string{"add", "notes", "--", "other"}, ExitFail, `mcp-hub add: an upstream named "notes" is already registered (mcp-hub remove notes first)`},
		{"add bad env", Add, []string{"add", "x", "--env", "NOVALUE", "--", "cmd"}, ExitConfig, `mcp-hub add: --env "NOVALUE": want KEY=VALUE`},
		{"add no name", Add, []string{"add"}, ExitConfig, "Usage: mcp-hub add NAME [flags] -- COMMAND [ARGS...]"},
		{"list extra argument", List, []string{"list", "extra"}, ExitConfig, "Usage: mcp-hub list [flags]"},
		{"list bad flag", List, []string{"list", "--nope"}, ExitConfig, "mcp-hub list: unknown flag: --nope"},
		{"remove unknown", Remove, []string{"remove", "nobody"}, ExitFail, `mcp-hub remove: no upstream named "nobody" is registered in ` + filepath.Join(s.data, "hub.db") +
			` (registered with a hub on another data directory or store? give remove its --data-dir or --store)`},
		{"remove two", Remove, []string{"remove", "a", "b"}, ExitConfig, "Usage: mcp-hub remove NAME [flags]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := s.run(t, tt.f, tt.args[0], tt.args[1:]...)
			if o.code != tt.code || !strings.Contains(o.stderr, tt.want) {
				t.Errorf("want exit %d and stderr with %q; got %s", tt.code, tt.want, o)
			}
		})
	}

	o = s.run(t, Remove, "remove", "notes")
	if o.code != ExitOK || o.stdout != "Removed \"notes\". A running hub stops it within seconds.\n" {
		t.Fatalf("remove: %s", o)
	}
	if _, err := s.get(t, "notes"); !errors.Is(err, upstream.ErrNotFound) {
		t.Errorf("after remove: %v, want not found", err)
	}
	log, err := s.store(t).AuditLog(context.Background(), "notes", 0)
	if err != nil || len(log) != 2 || log[0].Action != "add" || log[1].Action != "remove" || log[0].Actor != "cli" {
		t.Errorf("audit log: %+v, %v; want add and remove by cli", log, err)
	}
}

// TestApproveReject runs approve and reject in-process on registrations
// an admin tool left pending.
func TestApproveReject(t *testing.T) {
	s := newSetup(t, fixtureConfig("filed", nil, ""))
	s.register(t, "pending", upstream.ApprovalPending, "-only", "echo")
	s.register(t, "doomed", upstream.ApprovalPending)

	// stdin is no terminal: nothing is approved without --yes.
	o := s.run(t, Approve, "approve", "pending")
	if o.code != ExitFail || !strings.Contains(o.stdout, `"pending" was registered by admin. Approving lets it:`) ||
		!strings.Contains(o.stderr, "not approved; stdin is not a terminal: review the above and re-run with --yes") {
		t.Fatalf("approve without --yes: %s", o)
	}
	if strings.Contains(o.stdout, "sk-planted-secret-value") {
		t.Errorf("approve shows the env value:\n%s", o.stdout)
	}
	if r, _ := s.get(t, "pending"); r.Approved() {
		t.Fatal("approved without --yes")
	}
	o = s.run(t, Approve, "approve", "pending", "--yes")
	if o.code != ExitOK || !strings.Contains(o.stdout, `Approved "pending". A running hub starts it within seconds.`) {
		t.Fatalf("approve --yes: %s", o)
	}
	if r, _ := s.get(t, "pending"); !r.Approved() {
		t.Fatal("not approved after approve --yes")
	}
	if o := s.run(t, Approve, "approve", "pending", "-y"); o.code != ExitOK || !strings.Contains(o.stdout, `"pending" is already approved.`) {
		t.Errorf("approve again: %s", o)
	}

	o = s.run(t, Reject, "reject", "doomed")
	if o.code != ExitOK || o.stdout != "Rejected \"doomed\": it will not run (remove it with mcp-hub remove doomed).\n" {
		t.Fatalf("reject: %s", o)
	}
	if r, _ := s.get(t, "doomed"); r.Approval != upstream.ApprovalRejected {
		t.Errorf("after reject: approval %q", r.Approval)
	}

	for _, tt := range []struct {
		name string
		f    func(context.Context, *Env) int
		args []string
		code int
		want string
	}{
		{"approve unknown", Approve, []string{"approve", "nobody", "--yes"}, ExitFail, `mcp-hub approve: no upstream named "nobody" is registered`},
		{"reject unknown", Reject, []string{"reject", "nobody"}, ExitFail, `mcp-hub reject: no upstream named "nobody" is registered`},
		{"reject no name", Reject, []string{"reject"}, ExitConfig, "Usage: mcp-hub reject NAME [flags]"},
		{"approve no name", Approve, []string{"approve"}, ExitConfig, "Usage: mcp-hub approve NAME [flags]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := s.run(t, tt.f, tt.args[0], tt.args[1:]...)
			if o.code != tt.code || !strings.Contains(o.stderr, tt.want) {
				t.Errorf("want exit %d and stderr with %q; got %s", tt.code, tt.want, o)
			}
		})
	}

	// An upstream of the config file is edited there, not rejected.
	reg := upstream.Registration{Spec: upstream.Spec{Name: "filed", Command: fixtureBin}, Enabled: true, Source: upstream.SourceConfig}
	reg.Approve()
	if _, err := s.store(t).Create(context.Background(), reg); err != nil {
		t.Fatal(err)
	}
	if o := s.run(t, Reject, "reject", "filed"); o.code != ExitFail || !strings.Contains(o.stderr, `mcp-hub reject: "filed" is defined in `+s.config+" (the config file in effect); edit it there") {
		t.Errorf("reject of a config upstream: %s", o)
	}
	if o := s.run(t, Remove, "remove", "filed"); o.code != ExitFail || !strings.Contains(o.stderr, `mcp-hub remove: "filed" is defined in `+s.config+" (the config file in effect); edit it there") {
		t.Errorf("remove of a config upstream: %s", o)
	}
}

// TestStatus runs status in-process, with a clock of its own: the age of a
// report is measured by the command's clock, not the machine's.
func TestStatus(t *testing.T) {
	s := newSetup(t, "")
	s.register(t, "up", upstream.ApprovalApproved)
	s.register(t, "waiting", upstream.ApprovalPending)
	st := s.store(t)
	ctx := context.Background()
	if err := st.SaveStatus(ctx, upstream.Status{Name: "up", State: upstream.StateConnected, Tools: 7}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveToken(ctx, upstream.Token{Upstream: "up", Resource: "https://h/mcp", AccessToken: "pasted-secret-token", Pasted: true}); err != nil {
		t.Fatal(err)
	}
	stats, err := st.Statuses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reported := stats["up"].ReportedAt
	s.now = func() time.Time { return reported.Add(90 * time.Second) }

	o := s.run(t, Status, "status")
	if o.code != ExitOK {
		t.Fatalf("status: %s", o)
	}
	// The store recorded this process as the reporting hub: it runs.
	for _, re := range []string{
		`(?m)^NAME +STATE +TOOLS +APPROVAL +LOGIN +LAST ERROR +REPORTED$`,
		`(?m)^up +CONNECTED +7 +approved +logged in with a pasted token +1m30s ago by hub pid ` + strconv.Itoa(os.Getpid()) + `$`,
		`(?m)^waiting +PENDING +- +pending +- +awaiting approval: mcp-hub approve --data-dir ` + regexp.QuoteMeta(s.data) + ` waiting +never \(no hub has run it\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(o.stdout) {
			t.Errorf("status lacks %s:\n%s", re, o.stdout)
		}
	}
	if strings.Contains(o.stdout, "pasted-secret-token") {
		t.Errorf("status shows the token:\n%s", o.stdout)
	}
	if o := s.run(t, Status, "status", "up"); o.code != ExitConfig || !strings.Contains(o.stderr, "Usage: mcp-hub status") {
		t.Errorf("status with an argument: %s", o)
	}
}

// TestStatusInstances: a per-session upstream's line counts the instances
// the running hub reported and names the client sessions they run for.
func TestStatusInstances(t *testing.T) {
	s := newSetup(t, "")
	st := s.store(t)
	ctx := context.Background()
	spec := upstream.Spec{Name: "browser", Command: fixtureBin, Scope: upstream.ScopeSession}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(ctx, upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true, Source: upstream.SourceCLI,
		Approval: upstream.ApprovalApproved, ApprovedHash: spec.Fingerprint()}); err != nil {
		t.Fatal(err)
	}
	for _, sessions := range [][]string{{"3f2a9c1b", "stdio-1", "stateless-4"}, {"stdio-1"}} {
		n := len(sessions)
		if err := st.SaveStatus(ctx, upstream.Status{Name: "browser", State: upstream.StateConnected, Tools: 2, Instances: n, Sessions: sessions}); err != nil {
			t.Fatal(err)
		}
		o := s.run(t, Status, "status")
		want := fmt.Sprintf(`(?m)^browser +CONNECTED \(scope session, %d instances? for %s\) +2 +approved `, n, regexp.QuoteMeta(strings.Join(sessions, ", ")))
		if o.code != ExitOK || !regexp.MustCompile(want).MatchString(o.stdout) {
			t.Errorf("status with %d instances lacks %s:\n%s", n, want, o.stdout)
		}
	}
}
