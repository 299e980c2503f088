package hub

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// truncatedMetaKey is the _meta key the hub adds to a tools/call result whose
// text it shortened: {"shown": characters kept, "total": characters sent}.
const truncatedMetaKey = "com.github.mcp-hub/truncated"

// limitOutput shortens the text content of a tools/call result to max
// characters in all, keeping every other content item (images, resources)
// and member as the upstream sent them. The last text kept ends with a
// visible marker, text items past the limit are dropped, and _meta gains
// truncatedMetaKey. A result within the limit, or one the hub cannot read,
// is returned unchanged. max <= 0 means no limit.
func limitOutput(result []byte, max int) []byte {
	// Every character takes at least one byte: a result no longer than max
	// bytes cannot be over the limit, and the hot path stops here.
	if max <= 0 || len(result) <= max {
		return result
	}
	content, err := wire.Get(result, "content")
	if err != nil || content == nil || content[0] != '[' {
		return result
	}
	type item struct {
		raw    []byte
		text   string
		isText bool
	}
	var items []item
	total := 0
	err = wire.Elements(content, func(elem []byte) error {
		it := item{raw: elem}
		if elem[0] == '{' {
			if typ, _ := wire.Get(elem, "type"); string(typ) == `"text"` {
				if raw, _ := wire.Get(elem, "text"); raw != nil {
					if s, err := wire.String(raw); err == nil {
						it.text, it.isText = s, true
						total += utf8.RuneCountInString(s)
					}
				}
			}
		}
		items = append(items, it)
		return nil
	})
	if err != nil || total <= max {
		return result
	}
	marker := fmt.Sprintf("\n\n[mcp-hub: output truncated: %d of %d characters shown; the limit is security.maxToolOutputLength]", max, total)
	out := make([]byte, 0, max*2+len(marker)+256)
	out = append(out, '[')
	budget, first, cut := max, true, false
	for _, it := range items {
		if it.isText && cut {
			continue // past the limit
		}
		if it.isText && utf8.RuneCountInString(it.text) > budget {
			s := it.text
			i, n := 0, 0
			for i < len(s) && n < budget {
				_, w := utf8.DecodeRuneInString(s[i:])
				i += w
				n++
			}
			edited, err := wire.EditObject(it.raw, []wire.Member{{Key: "text", Value: wire.AppendString(nil, s[:i]+marker)}})
			if err != nil {
				return result
			}
			it.raw, cut = edited, true
		} else if it.isText {
			budget -= utf8.RuneCountInString(it.text)
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, it.raw...)
	}
	out = append(out, ']')

	flag := []byte(`{"shown":` + strconv.Itoa(max) + `,"total":` + strconv.Itoa(total) + `}`)
	meta := []byte(`{}`)
	if m, err := wire.Get(result, "_meta"); err == nil && m != nil && m[0] == '{' {
		meta = m
	}
	meta, err = wire.EditObject(meta, []wire.Member{{Key: truncatedMetaKey, Value: flag}})
	if err != nil {
		return result
	}
	edited, err := wire.EditObject(result, []wire.Member{{Key: "content", Value: out}, {Key: "_meta", Value: meta}})
	if err != nil {
		return result
	}
	return edited
}
