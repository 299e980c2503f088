package toolsearch

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxLineDescription bounds the description on a tool's line of [Text];
// the whole description is in the structured result.
const maxLineDescription = 240

// Text renders results for a model: a line saying how many tools match and
// how to call one, then per tool one line (server, tool, the name it is
// listed under, the first sentence or so of its description) and its input
// schema on the next.
func Text(query string, results []Result, total, offset int) string {
	var b strings.Builder
	switch {
	case total == 0 && strings.TrimSpace(query) == "":
		b.WriteString("No tools: no MCP server behind this hub offers any now.")
		return b.String()
	case total == 0:
		fmt.Fprintf(&b, "No tool matches %q. Try other words, or an empty query to list every tool.", query)
		return b.String()
	case strings.TrimSpace(query) == "":
		fmt.Fprintf(&b, "%d tools", total)
	default:
		fmt.Fprintf(&b, "%d tools match %q, best first", total, query)
	}
	if len(results) < total {
		fmt.Fprintf(&b, "; %d to %d shown", offset+1, offset+len(results))
		if next := offset + len(results); next < total {
			fmt.Fprintf(&b, " (offset %d for more)", next)
		}
	}
	b.WriteString(". Call one with hub_call_tool {server, tool, arguments}.\n")
	for i, r := range results {
		fmt.Fprintf(&b, "\n%d. server %q tool %q", offset+i+1, r.Server, r.Tool)
		switch {
		case r.ExposedAs == "":
			b.WriteString(" (not listed under its name: another server's tool holds it; call it with hub_call_tool)")
		case r.ExposedAs != r.Tool:
			fmt.Fprintf(&b, " (listed as %q)", r.ExposedAs)
		}
		if d := summary(r.Title, r.Description); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
		b.WriteString("\n   input schema: ")
		b.Write(r.InputSchema)
	}
	return b.String()
}

// summary returns the title and the first paragraph of a description on
// one line, cut at maxLineDescription runes.
func summary(title, desc string) string {
	desc = strings.TrimSpace(desc)
	if i := strings.Index(desc, "\n\n"); i >= 0 {
		desc = desc[:i]
	}
	desc = strings.Join(strings.Fields(desc), " ")
	if title != "" && !strings.EqualFold(title, desc) {
		if desc == "" {
			desc = title
		} else {
			desc = title + " — " + desc
		}
	}
	if utf8.RuneCountInString(desc) > maxLineDescription {
		n := 0
		for i := range desc {
			if n == maxLineDescription {
				desc = strings.TrimRight(desc[:i], " ") + "…"
				break
			}
			n++
		}
	}
	return desc
}
