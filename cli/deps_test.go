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

const modulePath = "github.com/mcp-hub/mcp-hub/"

// moduleImport is one import of a package of the module by a file of it.
type moduleImport struct {
	file string // the importing file, from the module root
	dir  string // its package's directory, slash-separated
	pkg  string // the imported package, from the module root ("hub/pin")
}

// moduleImports returns every import of a package of the module by a Go
// file of it, tests included.
func moduleImports(t *testing.T) []moduleImport {
	t.Helper()
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	var out []moduleImport
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
			if p, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(p, modulePath) {
				out = append(out, moduleImport{file: rel, dir: filepath.ToSlash(filepath.Dir(rel)), pkg: strings.TrimPrefix(p, modulePath)})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportedOnlyByMain: no package of the modulePath imports cli but the
// command (cmd/mcp-hub), tests included, so the commands stay on top of
// everything else and nothing depends on a command's texts or flags.
func TestImportedOnlyByMain(t *testing.T) {
	found := 0
	for _, im := range moduleImports(t) {
		if im.pkg != "cli" {
			continue
		}
		found++
		if im.dir != "cmd/mcp-hub" {
			t.Errorf("%s imports %s; only cmd/mcp-hub may", im.file, modulePath+im.pkg)
		}
	}
	if found == 0 {
		t.Errorf("no file imports %scli: the walk missed cmd/mcp-hub", modulePath)
	}
}

// TestInternalIsTheGround: the packages under internal/ (wire, framing,
// prom, redact, …) import no package of the modulePath outside internal/, so
// every other package may use them and they stay the ground floor. Code
// that works on the hub's own types (upstream's, say) belongs beside its
// user instead, as hub/pin does.
func TestInternalIsTheGround(t *testing.T) {
	found := 0
	for _, im := range moduleImports(t) {
		if !strings.HasPrefix(im.dir, "internal/") {
			continue
		}
		found++
		if !strings.HasPrefix(im.pkg, "internal/") {
			t.Errorf("%s imports %s; a package under internal/ imports only internal/ packages", im.file, modulePath+im.pkg)
		}
	}
	if found == 0 {
		t.Error("no file under internal/ imports a package of the module: the walk missed them")
	}
}
