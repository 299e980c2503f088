package hub

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResourceSubscriptionsStateless: on an upstream that speaks the
// stateless era, a client's resources/subscribe becomes a
// subscriptions/listen stream for the uri (that era has no
// resources/subscribe), updates reach the subscribers, and the stream
// ends with the last subscriber.
func TestResourceSubscriptionsStateless(t *testing.T) {
	spec := httpFixture(t, "a", "-era", "both", "-conformance", "-only", "touch_resource,subscriptions")
	h, srv := startHTTPHub(t, nil, spec)
	const uri = "test://watched-resource"
	var updates atomic.Int32
	cs := sdkSession(t, srv.URL, false, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			if r.Params.URI == uri {
				updates.Add(1)
			}
		},
	})
	ctx := context.Background()
	eventually(t, 10*time.Second, "the fixture", func() bool { return h.settled() })
	up, _ := h.Manager().Get("a")
	if c := up.Conn(); c == nil || !c.Stateless() {
		t.Fatalf("the hub speaks %q to the fixture, want 2026-07-28", c.ProtocolVersion())
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	// The fixture's stateless handler serves each listen stream on a
	// session of its own: "subscriptions" answers from another one, so
	// the update proves the stream.
	callText(t, cs, "touch_resource", map[string]any{"uri": uri})
	eventually(t, 10*time.Second, "the update", func() bool { return updates.Load() == 1 })
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the stream's end reaches the fixture
	callText(t, cs, "touch_resource", map[string]any{"uri": uri})
	time.Sleep(300 * time.Millisecond)
	if n := updates.Load(); n != 1 {
		t.Errorf("%d updates after the unsubscribe, want none", n-1)
	}
	// The hub's answers to a stateless-era upstream's results drop the
	// upstream's own serverInfo.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "touch_resource", Arguments: map[string]any{"uri": uri}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res.Meta); strings.Contains(string(b), `"fixture"`) {
		t.Errorf("the upstream's serverInfo reached the client: %s", b)
	}
}
