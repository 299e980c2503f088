package toolsearch

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/internal/wire"
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
		b.WriteByte('\n')
		b.WriteString(strconv.Itoa(offset + i + 1))
		b.WriteString(". server ")
		b.WriteString(strconv.Quote(r.Server))
		b.WriteString(" tool ")
		b.WriteString(strconv.Quote(r.Tool))
		switch {
		case r.ExposedAs == "":
			b.WriteString(" (not listed under its name: another server's tool holds it; call it with hub_call_tool)")
		case r.ExposedAs != r.Tool:
			b.WriteString(" (listed as ")
			b.WriteString(strconv.Quote(r.ExposedAs))
			b.WriteByte(')')
		}
		if d := summary(r.Title, r.Description); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
		if len(r.AlsoOn) > 0 {
			b.WriteString("\n   the same tool is on ")
			writeServers(&b, r.AlsoOn)
			b.WriteString(" too")
		}
		b.WriteString("\n   input schema: ")
		b.Write(r.InputSchema)
	}
	return b.String()
}

// maxAlsoOn bounds the other servers of a tool that Text names; the
// structured result has them all.
const maxAlsoOn = 5

// writeServers writes server names, quoted, the first maxAlsoOn of them
// and how many more.
func writeServers(b *strings.Builder, names []string) {
	for i, n := range names[:min(len(names), maxAlsoOn)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	if more := len(names) - maxAlsoOn; more > 0 {
		fmt.Fprintf(b, " and %d more", more)
	}
}

// summary returns the title and the first paragraph of a description on
// one line (runs of white space made one space), cut at maxLineDescription
// runes. It reads no further than it keeps: descriptions run to pages.
func summary(title, desc string) string {
	var b []byte
	n := 0 // runes in b
	space := false
	add := func(text string) bool { // false once cut
		for i, r := range text {
			if r == '\n' && strings.HasPrefix(text[i+1:], "\n") {
				return true // the first paragraph ends
			}
			if unicode.IsSpace(r) {
				space = n > 0
				continue
			}
			if n+btoi(space) >= maxLineDescription {
				b = append(b, "…"...)
				return false
			}
			if space {
				b = append(b, ' ')
				n++
				space = false
			}
			b = utf8.AppendRune(b, r)
			n++
		}
		return true
	}
	title = strings.TrimSpace(title)
	desc = strings.TrimSpace(desc)
	if title != "" && !strings.EqualFold(title, desc) {
		if !add(title) {
			return string(b)
		}
		if desc != "" {
			add(" — ")
		}
	}
	add(desc)
	return string(b)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AppendCallResult appends the result of a hub_search_tools call: the
// [Text] for the model as its content, and {tools, total} as its
// structuredContent (each tool as [Result] marshals). It writes the JSON
// itself: encoding/json's reflection and its second pass over every input
// schema cost more than the ranking (BenchmarkSearchVsHubCall).
func AppendCallResult(dst []byte, query string, results []Result, total, offset int) []byte {
	dst = append(dst, `{"content":[{"type":"text","text":`...)
	dst = wire.AppendString(dst, Text(query, results, total, offset))
	dst = append(dst, `}],"structuredContent":{"tools":[`...)
	for i, r := range results {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"server":`...)
		dst = wire.AppendString(dst, r.Server)
		dst = append(dst, `,"tool":`...)
		dst = wire.AppendString(dst, r.Tool)
		dst = append(dst, `,"exposedAs":`...)
		dst = wire.AppendString(dst, r.ExposedAs)
		if r.Title != "" {
			dst = append(dst, `,"title":`...)
			dst = wire.AppendString(dst, r.Title)
		}
		if r.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = wire.AppendString(dst, r.Description)
		}
		dst = append(dst, `,"inputSchema":`...)
		dst = append(dst, r.InputSchema...) // catalog.ParseTool checked it is an object
		dst = append(dst, `,"score":`...)
		dst = strconv.AppendFloat(dst, r.Score, 'f', -1, 64)
		if len(r.AlsoOn) > 0 {
			dst = append(dst, `,"alsoOn":[`...)
			for i, n := range r.AlsoOn {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = wire.AppendString(dst, n)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"total":`...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	return append(dst, `}}`...)
}
