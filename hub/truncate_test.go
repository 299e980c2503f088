package hub

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/upstream"
)

func TestLimitOutput(t *testing.T) {
	img := `{"type":"image","data":"` + strings.Repeat("A", 40) + `","mimeType":"image/png"}`
	tests := []struct {
		name     string
		result   string
		max      int
		texts    []string // the text items after, in order
		kept     int      // content items after
		flagged  bool
		sameMeta string // a _meta member that must survive
	}{
		{"under the limit", `{"content":[{"type":"text","text":"hello"}]}`, 10, []string{"hello"}, 1, false, ""},
		{"no limit", `{"content":[{"type":"text","text":"` + strings.Repeat("x", 50) + `"}]}`, 0, []string{strings.Repeat("x", 50)}, 1, false, ""},
		{"one long text", `{"content":[{"type":"text","text":"` + strings.Repeat("x", 50) + `"}]}`, 10, []string{strings.Repeat("x", 10)}, 1, true, ""},
		{"characters, not bytes", `{"content":[{"type":"text","text":"` + strings.Repeat("é", 12) + `"}]}`, 10, []string{strings.Repeat("é", 10)}, 1, true, ""},
		{"bytes over, characters under", `{"content":[{"type":"text","text":"` + strings.Repeat("é", 8) + `"}]}`, 10, []string{strings.Repeat("é", 8)}, 1, false, ""},
		{"second text cut, third dropped, image kept", `{"content":[{"type":"text","text":"12345"},` + img + `,{"type":"text","text":"abcdefgh"},{"type":"text","text":"zzz"}],"isError":false}`,
			8, []string{"12345", "abc"}, 3, true, ""},
		{"exact fit then more", `{"content":[{"type":"text","text":"1234"},{"type":"text","text":"5678"}]}`, 4, []string{"1234", ""}, 2, true, ""},
		{"existing _meta kept", `{"content":[{"type":"text","text":"` + strings.Repeat("x", 50) + `"}],"_meta":{"keep":1}}`, 10, []string{strings.Repeat("x", 10)}, 1, true, "keep"},
		{"not a content array", `{"content":"` + strings.Repeat("x", 50) + `"}`, 10, nil, 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := limitOutput([]byte(tt.result), tt.max)
			var r struct {
				Content []struct{ Type, Text string }
				Meta    map[string]json.RawMessage `json:"_meta"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				if tt.texts == nil {
					return
				}
				t.Fatalf("result %s: %v", out, err)
			}
			if tt.texts == nil {
				if string(out) != tt.result {
					t.Errorf("changed a result it cannot read: %s", out)
				}
				return
			}
			if len(r.Content) != tt.kept {
				t.Fatalf("%d content items, want %d: %s", len(r.Content), tt.kept, out)
			}
			var texts []string
			for i, c := range r.Content {
				if c.Type != "text" {
					continue
				}
				text := c.Text
				if tt.flagged && i == len(r.Content)-1 || strings.Contains(text, "[mcp-hub: output truncated") {
					cut, _, found := strings.Cut(text, "\n\n[mcp-hub: output truncated")
					if !found {
						t.Errorf("truncated text %q has no marker", text)
					}
					text = cut
				}
				texts = append(texts, text)
			}
			if strings.Join(texts, "|") != strings.Join(tt.texts, "|") {
				t.Errorf("texts = %q, want %q", texts, tt.texts)
			}
			_, flagged := r.Meta[truncatedMetaKey]
			if flagged != tt.flagged {
				t.Errorf("_meta flag = %v, want %v: %s", flagged, tt.flagged, out)
			}
			if tt.sameMeta != "" && r.Meta[tt.sameMeta] == nil {
				t.Errorf("_meta lost %q: %s", tt.sameMeta, out)
			}
			if !tt.flagged && string(out) != tt.result {
				t.Errorf("a result within the limit changed: %s", out)
			}
		})
	}
}

// TestOutputLimitThroughHub: a long tools/call result reaches the client
// truncated; a short one byte for byte.
func TestOutputLimitThroughHub(t *testing.T) {
	_, c := startHub(t, &Options{MaxToolOutputLength: 1000}, fixtureSpec("a", "-only", "big,echo"))
	line := c.call(t, 2, "tools/call", `{"name":"big","arguments":{"kib":4}}`)
	if !strings.Contains(string(line), "output truncated: 1000 of 4096 characters shown") || !strings.Contains(string(line), truncatedMetaKey) {
		t.Errorf("4 KiB result through a 1000-character limit: %.300s", line)
	}
	line = c.call(t, 3, "tools/call", `{"name":"echo","arguments":{"message":"short"}}`)
	if strings.Contains(string(line), "truncated") {
		t.Errorf("a short result was touched: %s", line)
	}
}

// TestAllowedServerNames: with an allowlist, other names are refused from
// code, config, the admin tools and the store.
func TestAllowedServerNames(t *testing.T) {
	h, err := New(&Options{AllowedServerNames: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.AddUpstream(fixtureSpec("b"), upstream.AddOptions{}); err == nil || !strings.Contains(err.Error(), "not an allowed server name") {
		t.Errorf("AddUpstream of a name not allowed: %v", err)
	}
	if err := h.Start(t.Context(), []ConfigServer{{Spec: fixtureSpec("b")}}); err == nil {
		t.Error("Start accepted a config entry not allowed")
	}
	if err := h.AddUpstream(fixtureSpec("a", "-only", "echo"), upstream.AddOptions{}); err != nil {
		t.Errorf("AddUpstream of an allowed name: %v", err)
	}
}
