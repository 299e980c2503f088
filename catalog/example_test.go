package catalog_test

import (
	"fmt"

	"github.com/mcp-hub/mcp-hub/catalog"
)

func Example() {
	parse := func(raw string) catalog.Item {
		it, err := catalog.ParseTool([]byte(raw))
		if err != nil {
			panic(err)
		}
		return it
	}
	own := []catalog.Item{parse(`{"name":"hub_status","inputSchema":{"type":"object"}}`)}
	srcs := []catalog.Source{
		{Server: "github", Tools: []catalog.Item{
			parse(`{"name":"search","inputSchema":{"type":"object"}}`),
			parse(`{"name":"hub_admin","inputSchema":{"type":"object"}}`),
		}},
		{Server: "files", Tools: []catalog.Item{
			parse(`{"name":"search","x-extra":1}`),
			parse(`{"name":"read.file","inputSchema":{"type":["object","null"]}}`),
		}},
	}

	c := catalog.Build(srcs, &catalog.Options{Own: own})
	fmt.Printf("%s\n", c.ToolsResult())
	for _, e := range c.Tools() {
		fmt.Printf("%s from %q %q\n", e.Name, e.Server, e.Fixes)
	}
	for _, s := range c.Shadowed() {
		fmt.Printf("shadowed: %s %q of %s (winner %s)\n", s.Reason, s.Name, s.Server, s.Winner)
	}

	p := catalog.Build(srcs, &catalog.Options{Policy: catalog.PolicyPrefix, Own: own})
	for _, e := range p.Tools() {
		fmt.Println("prefix:", e.Name)
	}
	// Output:
	// {"tools":[{"name":"hub_status","inputSchema":{"type":"object"}},{"name":"read_file_97875296","inputSchema":{"type":"object"}},{"name":"search","x-extra":1,"inputSchema":{"type":"object"}}]}
	// hub_status from "" []
	// read_file_97875296 from "files" ["inputSchema: \"type\" was [\"object\",\"null\"]; set to \"object\"" "name: \"read.file\" is not a valid client tool name; exposed as \"read_file_97875296\""]
	// search from "files" ["inputSchema: missing; set to {\"type\":\"object\"}"]
	// shadowed: reserved "hub_admin" of github (winner hub)
	// shadowed: collision "search" of github (winner files)
	// prefix: files__read_file_97875296
	// prefix: files__search
	// prefix: github__hub_admin
	// prefix: github__search
	// prefix: hub_status
}
