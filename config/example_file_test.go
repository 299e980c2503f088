package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// TestExampleConfig checks that hub.yaml.example is a valid config and that
// it documents every config key the hub knows.
func TestExampleConfig(t *testing.T) {
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "hub.yaml.example")
	c, err := loadConfig(parseFlags(t, "--config", path), nil)
	if err != nil {
		t.Fatalf("hub.yaml.example does not load: %v", err)
	}
	if len(c.Servers) != 3 {
		t.Errorf("example declares %d servers, want 3", len(c.Servers))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, k := range Keys() {
		key := k.Path
		leaf := key[strings.LastIndex(key, ".")+1:]
		if leaf == "*" {
			continue
		}
		if !regexp.MustCompile(`(?m)^[ #]*` + regexp.QuoteMeta(leaf) + `:`).MatchString(text) {
			t.Errorf("hub.yaml.example does not document %s", key)
		}
	}
}
