package toolpolicy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	p, err := New("allow", map[string]string{
		"*/delete_*":          "deny",
		"filesystem/*":        "ask",
		"filesystem/read_*":   "allow",
		"github/create_*":     "ask",
		"github/create_issue": "allow",
		"x/a*":                "allow",
		"x/*a":                "deny",
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		server, tool string
		want         Action
		pattern      string
	}{
		{"memory", "read_graph", Allow, ""},
		{"memory", "delete_entities", Deny, "*/delete_*"},
		{"filesystem", "write_file", Ask, "filesystem/*"},
		{"filesystem", "read_file", Allow, "filesystem/read_*"},
		{"filesystem", "delete_file", Deny, "*/delete_*"}, // the tool part is more specific
		{"github", "create_issue", Allow, "github/create_issue"},
		{"github", "create_pr", Ask, "github/create_*"},
		{"x", "aa", Deny, "x/*a"}, // equally specific: the stricter wins
	}
	for _, tt := range tests {
		got, pat := p.Decide(tt.server, tt.tool)
		if got != tt.want || pat != tt.pattern {
			t.Errorf("Decide(%s, %s) = %s by %q, want %s by %q", tt.server, tt.tool, got, pat, tt.want, tt.pattern)
		}
	}
	var nilPolicy *Policy
	if a, _ := nilPolicy.Decide("a", "b"); a != Allow || !nilPolicy.IsZero() {
		t.Error("a nil policy allows")
	}
	if p.IsZero() {
		t.Error("IsZero of a policy that asks")
	}
}

func TestNewErrors(t *testing.T) {
	for _, tt := range []struct {
		def   string
		rules map[string]string
		want  string
	}{
		{"maybe", nil, "default"},
		{"", map[string]string{"nosuch": "deny"}, "want server/tool"},
		{"", map[string]string{"a/b/c": "deny"}, "want server/tool"},
		{"", map[string]string{"a/b": "block"}, "must be allow, ask or deny"},
	} {
		if _, err := New(tt.def, tt.rules); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q, %v) = %v, want %q", tt.def, tt.rules, err, tt.want)
		}
	}
}

// TestElicitationMasksSecretArguments: the person is shown what a call
// does, not the credentials in its arguments, at any depth.
func TestElicitationMasksSecretArguments(t *testing.T) {
	p := ElicitParams(Request{Server: "gh", Tool: "create", Args: json.RawMessage(`{"title":"hi","api_key":"sk-live-1","auth":{"password":"pw-2","user":"ann"},"list":[{"token":"tk-3"}],"n":{"client_secret":["cs-4"]}}`)})
	var v struct{ Message string }
	if err := json.Unmarshal(p, &v); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"sk-live-1", "pw-2", "tk-3", "cs-4"} {
		if strings.Contains(v.Message, secret) {
			t.Errorf("the question shows %q: %s", secret, v.Message)
		}
	}
	if !strings.Contains(v.Message, `"title":"hi"`) || !strings.Contains(v.Message, `"user":"ann"`) {
		t.Errorf("the question lost what is no secret: %s", v.Message)
	}
	// Arguments without a secret are shown as written.
	p = ElicitParams(Request{Server: "gh", Tool: "create", Args: json.RawMessage(`{"z":1,"a":2}`)})
	if !strings.Contains(string(p), `{\"z\":1,\"a\":2}`) {
		t.Errorf("%s", p)
	}
}

func TestElicitation(t *testing.T) {
	p := ElicitParams(Request{Server: "fs", Tool: "write_file", Args: json.RawMessage(`{"path":"/x","content":"` + strings.Repeat("y", 2000) + `"}`), Script: strings.Repeat("ab", 32), Pattern: "fs/*"})
	var v struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(p, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Message, "abababababab") || !strings.Contains(v.Message, `"fs/*"`) || len(v.Message) > 1500 {
		t.Errorf("message %q", v.Message)
	}
	if e := v.RequestedSchema.Properties["allow"].Enum; len(e) != 2 || e[0] != choiceScript {
		t.Errorf("enum %q", e)
	}
	for _, tt := range []struct {
		res   string
		ok    bool
		scope Scope
	}{
		{`{"action":"accept","content":{"allow":"for the rest of this session"}}`, true, Session},
		{`{"action":"accept","content":{"allow":"only this call"}}`, true, Once},
		{`{"action":"accept"}`, true, Once},
		{`{"action":"decline"}`, false, Once},
		{`{"action":"cancel"}`, false, Once},
		{`garbage`, false, Once},
	} {
		ok, scope := ParseAnswer(json.RawMessage(tt.res))
		if ok != tt.ok || scope != tt.scope {
			t.Errorf("ParseAnswer(%s) = %v %v", tt.res, ok, scope)
		}
	}
	var g Grants
	if g.Has("a", "b") {
		t.Error("empty grants")
	}
	g.Add("a", "b")
	if !g.Has("a", "b") || g.Has("a", "c") {
		t.Error("grants")
	}
}
