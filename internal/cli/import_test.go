package cli

import (
	"strings"
	"testing"
)

func TestImportSuggestName(t *testing.T) {
	for in, want := range map[string]string{
		"my notes":                    "my-notes",
		"Fetch.Server":                "Fetch-Server",
		"@scope/pkg":                  "scope-pkg",
		"  ":                          "",
		"hub":                         "",
		"é":                           "",
		"a--b":                        "a--b",
		"x" + strings.Repeat("y", 40): "x" + strings.Repeat("y", 31),
	} {
		if got := suggestName(in); got != want {
			t.Errorf("suggestName(%q) = %q, want %q", in, got, want)
		}
	}
}
