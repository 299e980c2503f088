package hub

import (
	"context"
	"fmt"
	"log"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Example embeds the hub in a program: upstreams registered from code, one
// client session over a go-sdk in-memory transport.
func Example() {
	h, err := New(&Options{Name: "my-hub", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	// Any MCP server program can be an upstream; here, the project's test
	// fixture, offering two tools.
	err = h.AddUpstream(upstream.Spec{Name: "tools", Command: fixture, Args: []string{"-only", "echo,add"}}, upstream.AddOptions{})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	serverSide, clientSide := mcp.NewInMemoryTransports()
	go func() { _ = h.Serve(ctx, serverSide) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "my-app", Version: "1"}, nil)
	cs, err := client.Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	// The first list waits (bounded) for upstreams still connecting.
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	fmt.Println(slices.Contains(names, "add"), slices.Contains(names, "hub_call_tool"))

	sum, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.StructuredContent)
	// Output:
	// true true
	// map[sum:5]
}
