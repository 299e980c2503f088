package hub

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s: %v %v", name, res, err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// TestResourcesAndPrompts: two upstreams offer the same resources and
// prompts; the first by name wins, the loser is reported, reads, gets and
// completions reach the winner; unknown ones get clear errors.
func TestResourcesAndPrompts(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("b", "-conformance", "-name", "bee"), fixtureSpec("a", "-conformance", "-only", "pid"))
	cs := sdkSession(t, srv.URL, false, nil)
	ctx := context.Background()
	eventually(t, 10*time.Second, "both upstreams in the catalog", func() bool {
		return len(h.Catalog().ServerEntries("a")) > 0 && len(h.Catalog().ServerEntries("b")) > 0
	})

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	if want := []string{"test://static-binary", "test://static-text", "test://watched-resource"}; !slices.Equal(uris, want) {
		t.Errorf("resources = %v, want %v (each once)", uris, want)
	}
	if e, _ := h.Catalog().Resource("test://static-text"); e.Server != "a" {
		t.Errorf("test://static-text served by %q, want a (sorts first)", e.Server)
	}
	shadowed := 0
	for _, s := range h.Catalog().Shadowed() {
		if s.Server == "b" && s.Winner == "a" && (s.Kind == catalog.KindResource || s.Kind == catalog.KindPrompt || s.Kind == catalog.KindTemplate) {
			shadowed++
		}
	}
	if shadowed != 3+5+1 {
		t.Errorf("%d resources, prompts and templates of b reported shadowed by a, want 9", shadowed)
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text == "" {
		t.Fatalf("read static-text: %v %v", read, err)
	}
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/123/data"})
	if err != nil || !strings.Contains(read.Contents[0].Text, "123") {
		t.Fatalf("read through the template: %v %v", read, err)
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nowhere"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != codeResourceNotFound || !strings.Contains(werr.Message, "test://nowhere") {
		t.Errorf("read of an unknown uri: %v, want error %d naming it", err, codeResourceNotFound)
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 {
		t.Errorf("templates: %v %v", tmpl, err)
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 5 { // the fixture's conformance set has five
		t.Fatalf("prompts: %v %v", prompts, err)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "x1", "arg2": "y2"}})
	if err != nil || !strings.Contains(got.Messages[0].Content.(*mcp.TextContent).Text, "x1") {
		t.Fatalf("prompts/get: %v %v", got, err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "no_such_prompt"}); err == nil || !strings.Contains(err.Error(), "unknown prompt") {
		t.Errorf("get of an unknown prompt: %v", err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "par"},
	})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"paris", "park", "party"}) {
		t.Errorf("completion: %v %v", comp, err)
	}
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "test://template/{id}/data"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"},
	}); err != nil {
		t.Errorf("completion of a template argument: %v", err)
	}
}

// TestPromptsPrefixed: under the prefix policy prompts are renamed like
// tools, and gets and completions reach the upstream under the original
// name; resources keep their uris.
func TestPromptsPrefixed(t *testing.T) {
	_, srv := startHTTPHubOpts(t, &Options{Catalog: catalog.Options{Policy: catalog.PolicyPrefix}}, nil,
		fixtureSpec("a", "-conformance", "-only", "pid"), fixtureSpec("b", "-conformance", "-only", "pid"))
	cs := sdkSession(t, srv.URL, false, nil)
	ctx := context.Background()
	var names []string
	eventually(t, 10*time.Second, "both upstreams' prompts", func() bool {
		res, err := cs.ListPrompts(ctx, nil)
		names = names[:0]
		for _, p := range res.Prompts {
			names = append(names, p.Name)
		}
		return err == nil && len(names) == 10
	})
	if !slices.Contains(names, "b__test_prompt_with_arguments") {
		t.Fatalf("prompts = %v", names)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "b__test_prompt_with_arguments", Arguments: map[string]string{"arg1": "x1", "arg2": "y2"}})
	if err != nil || !strings.Contains(got.Messages[0].Content.(*mcp.TextContent).Text, "y2") {
		t.Fatalf("prompts/get of a prefixed prompt: %v %v", got, err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "b__test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg2", Value: "g"},
	})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"gamma"}) {
		t.Errorf("completion of a prefixed prompt: %v %v", comp, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"}); err != nil {
		t.Errorf("resources keep their uris under prefix: %v", err)
	}
}

// TestResourceSubscriptions: sessions share one upstream subscription per
// resource; updates reach exactly the subscribers; the last one to leave
// (unsubscribe or disconnect) ends it upstream; a reconnected upstream is
// subscribed again.
func TestResourceSubscriptions(t *testing.T) {
	// The session era's resources/subscribe (the stateless era's listen
	// streams: TestResourceSubscriptionsStateless).
	h, srv := startHTTPHub(t, nil, sessionEraSpec(fixtureSpec("a", "-conformance", "-only", "touch_resource,subscriptions")))
	const uri = "test://watched-resource"
	var updates [3]atomic.Int32
	sessions := make([]*mcp.ClientSession, 3)
	for i := range sessions {
		sessions[i] = sdkSession(t, srv.URL, i == 2, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
				if r.Params.URI == uri {
					updates[i].Add(1)
				}
			},
		})
	}
	ctx := context.Background()
	subs := func() string { return callText(t, sessions[0], "subscriptions", nil) }
	eventually(t, 10*time.Second, "the fixture", func() bool { return h.settled() })

	for _, i := range []int{0, 2} { // a streamable and an SSE session
		if err := sessions[i].Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("session %d subscribe: %v", i, err)
		}
	}
	if got := subs(); got != `{"test://watched-resource":1}` {
		t.Errorf("upstream subscriptions = %s, want one shared subscription", got)
	}
	if err := sessions[1].Subscribe(ctx, &mcp.SubscribeParams{URI: "test://nowhere"}); err == nil {
		t.Error("subscribing to an unknown uri succeeded")
	}

	callText(t, sessions[1], "touch_resource", map[string]any{"uri": uri})
	eventually(t, 10*time.Second, "updates for both subscribers", func() bool {
		return updates[0].Load() == 1 && updates[2].Load() == 1
	})
	time.Sleep(100 * time.Millisecond)
	if n := updates[1].Load(); n != 0 {
		t.Errorf("a session that did not subscribe got %d updates", n)
	}

	// The upstream restarts: the hub subscribes on the new connection.
	if err := h.Manager().Restart("a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the subscription renewed", func() bool {
		res, err := sessions[1].CallTool(ctx, &mcp.CallToolParams{Name: "subscriptions"})
		return err == nil && !res.IsError && res.Content[0].(*mcp.TextContent).Text == `{"test://watched-resource":1}`
	})
	callText(t, sessions[1], "touch_resource", map[string]any{"uri": uri})
	eventually(t, 10*time.Second, "updates after the restart", func() bool {
		return updates[0].Load() == 2 && updates[2].Load() == 2
	})

	if err := sessions[0].Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if got := subs(); got != `{"test://watched-resource":1}` {
		t.Errorf("after one of two unsubscribed: %s, want the subscription kept", got)
	}
	sessions[2].Close() // the last subscriber goes away without unsubscribing
	eventually(t, 10*time.Second, "the upstream subscription ended", func() bool { return subs() == `{}` })
}

// TestListChangedPerKind: an upstream that brings prompts and resources
// makes the hub send prompts and resources list_changed.
func TestListChangedPerKind(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo"))
	var prompts, resources atomic.Int32
	cs := sdkSession(t, srv.URL, false, &mcp.ClientOptions{
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts.Add(1) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources.Add(1) },
	})
	eventually(t, 10*time.Second, "the first upstream", func() bool { return h.settled() })
	if err := h.AddUpstream(fixtureSpec("b", "-conformance", "-only", "pid"), upstream.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "prompts and resources list_changed", func() bool {
		return prompts.Load() > 0 && resources.Load() > 0
	})
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(res.Prompts) != 5 {
		t.Errorf("prompts after the add: %v %v", res, err)
	}
	b, _ := json.Marshal(cs.InitializeResult().Capabilities)
	for _, want := range []string{`"prompts":{"listChanged":true}`, `"resources":{"listChanged":true,"subscribe":true}`, `"completions":{}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("capabilities %s lack %s", b, want)
		}
	}
}
