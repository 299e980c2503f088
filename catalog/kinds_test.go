package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResourcesAndTemplates(t *testing.T) {
	srcs := []Source{
		{Server: "b", Resources: resources(t, "file:///shared", "file:///b"),
			Templates: templates(t, "file:///{path}", "db://{table}/{id}", "file:///{+path}", "bad{")},
		{Server: "a", Resources: resources(t, "file:///shared", "file:///a", "file:///a"),
			Templates: templates(t, "db://{table}/{id}", "mem://{key}")},
	}
	c := Build(srcs, nil)
	checkCatalog(t, c)
	got := map[string]string{}
	for _, e := range c.Resources() {
		got[e.Name] = e.Server
	}
	if diff := cmp.Diff(map[string]string{"file:///shared": "a", "file:///a": "a", "file:///b": "b"}, got); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	var names []string
	for _, e := range c.Templates() {
		names = append(names, e.Server+" "+e.Name)
	}
	if diff := cmp.Diff([]string{"a db://{table}/{id}", "b file:///{+path}", "b file:///{path}", "a mem://{key}"}, names); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	wantShadows := []Shadow{
		{KindResource, "file:///a", "a", "file:///a", "a", "duplicate"},
		{KindResource, "file:///shared", "b", "file:///shared", "a", "collision"},
		{KindTemplate, "bad{", "b", "bad{", "", "invalid"},
		{KindTemplate, "db://{table}/{id}", "b", "db://{table}/{id}", "a", "collision"},
	}
	if diff := cmp.Diff(wantShadows, c.Shadowed()); diff != "" {
		t.Errorf("shadows (-want +got):\n%s", diff)
	}
	if e, ok := c.Resource("file:///b"); !ok || e.Server != "b" {
		t.Errorf("Resource(file:///b) = %+v, %v", e, ok)
	}
	if _, ok := c.Resource("file:///none"); ok {
		t.Error("Resource(file:///none) found")
	}

	matches := []struct{ uri, want string }{
		{"db://users/42", "db://{table}/{id}"},
		{"file:///etc", "file:///{path}"},         // b lists {path} before {+path}
		{"file:///etc/passwd", "file:///{+path}"}, // {path} does not match '/'
		{"mem://k1", "mem://{key}"},
		{"http://x", ""},
		{"", ""},
	}
	for _, m := range matches {
		e, ok := c.MatchTemplate(m.uri)
		if ok != (m.want != "") || e.Name != m.want {
			t.Errorf("MatchTemplate(%q) = %q, %v; want %q", m.uri, e.Name, ok, m.want)
		}
	}
}

func TestTemplateThatPanicsInUritemplate(t *testing.T) {
	// uritemplate accepts this template but panics building its regexp
	// (repeat count over 1000); Build must report it, not crash.
	vars := make([]string, 1005)
	for i := range vars {
		vars[i] = fmt.Sprintf("v%d", i)
	}
	tmpl := "x://{" + strings.Join(vars, ",") + "}"
	c := Build([]Source{{Server: "s", Templates: templates(t, tmpl, "y://{a}")}}, nil)
	checkCatalog(t, c)
	if len(c.Templates()) != 1 {
		t.Fatalf("templates %+v", c.Templates())
	}
	sh := c.Shadowed()
	if len(sh) != 1 || sh[0].Reason != ReasonInvalid || sh[0].Name != tmpl {
		t.Errorf("shadows %+v", sh)
	}
}

func TestPromptsSeparateFromTools(t *testing.T) {
	c := Build([]Source{
		{Server: "b", Tools: tools(t, "x"), Prompts: prompts(t, "x", "hub_p")},
		{Server: "a", Prompts: prompts(t, "x", "y.z")},
	}, &Options{Own: []Item{tool(t, "hub_p")}})
	checkCatalog(t, c)
	if diff := cmp.Diff([]exposed{{"hub_p", "", "hub_p", nil}, {"x", "b", "x", nil}}, summarise(c.Tools())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	yz := "y_z_" + h8("a", "y.z")
	want := []exposed{{"x", "a", "x", nil}, {yz, "a", "y.z", []string{`name: "y.z" is not a valid client prompt name; exposed as "` + yz + `"`}}}
	if diff := cmp.Diff(want, summarise(c.Prompts())); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	if e, ok := c.Prompt(yz); !ok || e.Kind != KindPrompt {
		t.Errorf("Prompt(%q) = %+v", yz, e)
	}
	wantShadows := []Shadow{
		{KindPrompt, "hub_p", "b", "hub_p", "hub", "reserved"},
		{KindPrompt, "x", "b", "x", "a", "collision"},
	}
	if diff := cmp.Diff(wantShadows, c.Shadowed()); diff != "" {
		t.Errorf("shadows (-want +got):\n%s", diff)
	}
}
