package cli

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// TestImportedOnlyByMain: no package of the module imports cli but the
// command (cmd/mcp-hub), tests included, so the commands stay on top of
// everything else and nothing depends on a command's texts or flags.
func TestImportedOnlyByMain(t *testing.T) {
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	const self = "github.com/mcp-hub/mcp-hub/cli"
	allowed := map[string]bool{"cmd/mcp-hub": true}
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == self {
				found++
				if !allowed[filepath.ToSlash(filepath.Dir(rel))] {
					t.Errorf("%s imports %s; only cmd/mcp-hub may", rel, self)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Errorf("no file imports %s: the walk missed cmd/mcp-hub", self)
	}
}
