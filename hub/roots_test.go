//lint:file-ignore SA1019 the test exercises roots, deprecated in 2026-07-28 but part of the protocol versions the hub serves.
package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/catalog"
)

// TestRootsNoClientAnswers (issue 29 item 7): an upstream's roots/list that
// no client session can answer (here: the calling client has no roots)
// gets the roots configured for the server, else an empty list, instead of
// an error; a client with roots still gets the request; a server whose
// spec forbids roots is refused as before.
func TestRootsNoClientAnswers(t *testing.T) {
	// On either era: a session-era upstream sends roots/list as a request
	// of its own, a 2026-07-28 one asks in an input_required result.
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testRootsNoClientAnswers(t, version) })
	}
}

func testRootsNoClientAnswers(t *testing.T, version string) {
	configured := fixtureSpec("configured", "-only", "roots")
	configured.Roots = []string{"/srv/notes", "file:///srv/more"}
	none := fixtureSpec("none", "-only", "roots")
	forbidden := fixtureSpec("forbidden", "-only", "roots")
	no := false
	forbidden.AllowRoots = &no
	configured.ProtocolVersion, none.ProtocolVersion, forbidden.ProtocolVersion = version, version, version
	h, srv := startHTTPHubOpts(t, &Options{Catalog: catalog.Options{Policy: catalog.PolicyPrefix}}, nil, configured, none, forbidden)
	eventually(t, 10*time.Second, "the upstreams", func() bool { return h.settled() && len(h.Catalog().Tools()) >= 3 })

	noRoots := sdkSession(t, srv.URL, false, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	call := func(cs *mcp.ClientSession, name string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	if got, isErr := call(noRoots, "configured__roots"); isErr || got != `[{"name":"notes","uri":"file:///srv/notes"},{"name":"more","uri":"file:///srv/more"}]` {
		t.Errorf("configured roots: %q (isError %v)", got, isErr)
	}
	if got, isErr := call(noRoots, "none__roots"); isErr || got != `[]` {
		t.Errorf("no configured roots: %q (isError %v)", got, isErr)
	}
	if got, isErr := call(noRoots, "forbidden__roots"); !isErr || !strings.Contains(got, `does not let upstream "forbidden" send roots/list`) {
		t.Errorf("forbidden roots: %q (isError %v)", got, isErr)
	}
	withRoots := sdkSessionRoots(t, srv.URL, false, nil, &mcp.Root{URI: "file:///client", Name: "client"})
	if got, isErr := call(withRoots, "configured__roots"); isErr || !strings.Contains(got, "file:///client") || strings.Contains(got, "/srv/notes") {
		t.Errorf("a client with roots: %q (isError %v)", got, isErr)
	}
}
