package console

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Issue 26 item 3: the approvals page carried each pending spec's approval
// fingerprint, an unkeyed SHA-256 over the spec with its literal env
// values: trying values reproduced it, and so revealed a DB_PIN the page
// shows as ***. Now every digest on the page is keyed with the hub's
// secret: trying values finds nothing, and two hubs show the same spec
// with different digests.
func TestConsoleDigestsAreKeyed(t *testing.T) {
	spec := fixtureSpec("pinned", "-only", "echo")
	spec.Env = map[string]string{"DB_PIN": "420815"}
	hexRE := regexp.MustCompile(`[0-9a-f]{16,}`)
	var forms []string
	for range 2 {
		e := startEnv(t, nil)
		e.register(spec)
		b := e.login()
		page := b.page("/ui/approvals")
		if strings.Contains(page, "420815") {
			t.Fatal("the page shows the secret value")
		}
		// What an attacker with the page does: try values until a digest
		// of the spec matches one on the page.
		found := ""
		for pin := 420800; pin < 420830; pin++ {
			try := spec
			try.Env = map[string]string{"DB_PIN": fmt.Sprint(pin)}
			fp := try.Fingerprint()
			for _, h := range hexRE.FindAllString(page, -1) {
				if strings.HasPrefix(fp, h) || strings.HasPrefix(h, fp) {
					found = fmt.Sprint(pin)
				}
			}
		}
		if found != "" {
			t.Fatalf("the page holds an unkeyed digest of the spec: trying values recovered DB_PIN=%s", found)
		}
		m := regexp.MustCompile(`action="/ui/approvals/pinned/approve" data-action>\s*<input type="hidden" name="csrf" value="[^"]+"><input type="hidden" name="digest" value="([0-9a-f]+)">`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no approve form with a digest:\n%s", page)
		}
		forms = append(forms, m[1])
	}
	if forms[0] == forms[1] {
		t.Errorf("two hubs show the same spec with the same digest %s: it is not keyed per hub", forms[0])
	}
}

// Issue 26: the console's answers quote a bounded prefix of what a request
// named (here a server name of 400 KB in the path).
func TestConsoleErrorsQuoteABoundedPrefix(t *testing.T) {
	e := startEnv(t, nil)
	b := e.login()
	long := strings.Repeat("n", 400<<10)
	for _, path := range []string{"/ui/servers/" + long + "/restart", "/ui/approvals/" + long + "/approve", "/ui/changes/" + long + "/approve"} {
		code, out := b.post(path, nil)
		if len(out.Message) > 8<<10 || code/100 != 4 {
			t.Errorf("POST %.40s…: %d, message of %d bytes, want a 4xx of at most 8 KiB: %.200s", path, code, len(out.Message), out.Message)
		}
	}
}

// Issue 26: the approvals page says which tool names approving a server
// takes over from the servers that serve them now, as mcp-hub approve.
func TestConsoleApprovalNamesTakeovers(t *testing.T) {
	e := startEnv(t, nil)
	zgood := fixtureSpec("zgood", "-only", "echo")
	if _, err := e.store.Create(context.Background(), upstream.Registration{Spec: zgood, Source: upstream.SourceAdmin,
		Approval: upstream.ApprovalApproved, ApprovedHash: zgood.Fingerprint(), Enabled: true, AutoConnect: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.h.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "zgood's listing in the store", func() bool {
		invs, _ := e.st.Inventories(context.Background())
		return len(invs["zgood"].Tools) == 1
	})
	e.register(fixtureSpec("agood", "-only", "echo"))
	page := e.login().text("/ui/approvals")
	if !strings.Contains(page, "A tool it lists under one of these names takes it over: `echo` from `zgood`") {
		t.Errorf("the approvals page does not name the takeover:\n%s", page)
	}
}
