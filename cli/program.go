package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Hints name mcp-hub as the person ran it, so that a command a hint shows
// runs when copied: ./bin/mcp-hub from a clone, the path typed, npx -y
// @mcp-hub/cli under npx (the npm launcher says so), and mcp-hub when that
// is on PATH.

// ProgramName is how a person ran this binary, from os.Args[0], for the
// commands hints show: the name found on PATH ("mcp-hub") when that finds
// this very binary, else the path as typed ("./bin/mcp-hub"). A name with
// a space is what a launcher says it was run as ("npx -y @mcp-hub/cli", by
// the npm launcher) and is kept; a binary go run built is "go run
// ./cmd/mcp-hub", as the README runs it from a clone.
func ProgramName(argv0 string) string {
	if argv0 == "" || strings.ContainsRune(argv0, ' ') {
		return argv0
	}
	if goRunBuild(argv0) {
		return "go run ./cmd/mcp-hub"
	}
	base := filepath.Base(argv0)
	if !strings.ContainsRune(argv0, os.PathSeparator) && !strings.ContainsRune(argv0, '/') {
		return base // found on PATH
	}
	if p, err := exec.LookPath(base); err == nil && sameFile(p, argv0) {
		return base
	}
	return argv0
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// prog is the program as hints name it.
func (e *Env) prog() string {
	if e.Program == "" {
		return "mcp-hub"
	}
	return e.Program
}

// cmdLine is the command as hints name it: "./bin/mcp-hub add".
func (e *Env) cmdLine() string {
	if e.Name == "" {
		return e.prog()
	}
	return e.prog() + " " + e.Name
}

// hintRE matches a command line of mcp-hub in a text for people.
var hintRE = regexp.MustCompile("(^|[\\s(`'\"])mcp-hub( (?:add|approve|doctor|export|help|import|list|login|logout|reject|remove|serve|setup|status|tools|ui)\\b)")

// ours names the program as the person ran it in the commands that a text
// from another package shows ("review it with mcp-hub approve NAME").
func (e *Env) ours(s string) string {
	if e.prog() == "mcp-hub" {
		return s
	}
	return hintRE.ReplaceAllString(s, "${1}"+strings.ReplaceAll(e.prog(), "$", "$$")+"${2}")
}
