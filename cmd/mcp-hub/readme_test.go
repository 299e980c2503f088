package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	hubcli "github.com/mcp-hub/mcp-hub/cli"
)

// TestREADMEMatchesBinary: every mcp-hub command line the README shows
// names a command of the tree (or help) and flags that command's --help
// lists, and every path it gives under <user config dir>, <user data dir>
// or <data dir> is one the --help output gives too; the README names the
// default config file as --help does.
func TestREADMEMatchesBinary(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	tree := commands()
	help := map[string]string{} // command ("" for mcp-hub itself) → its --help
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		code := hubcli.Run(context.Background(), tree, hubcli.Env{Args: args, Stdout: &out, Stderr: &errOut})
		if code != exitOK || errOut.Len() > 0 {
			t.Fatalf("mcp-hub %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	help[""] = run("--help")
	for name := range tree {
		help[name] = run(name, "--help")
	}
	help["help"] = run("help")
	allHelp := strings.Join(slices.Collect(func(yield func(string) bool) {
		for _, h := range help {
			if !yield(h) {
				return
			}
		}
	}), "\n")

	// The command lines: in `code spans` and indented code blocks.
	var snippets []string
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(readme, -1) {
		snippets = append(snippets, m[1])
	}
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "    ") {
			snippets = append(snippets, l)
		}
	}
	lineRE := regexp.MustCompile(`(?:^|[\s/])mcp-hub((?: +[^\s#]+)*)`)
	checked := 0
	for _, sn := range snippets {
		for _, m := range lineRE.FindAllStringSubmatch(sn, -1) {
			words := strings.Fields(m[1])
			cmd := ""
			if len(words) > 0 && regexp.MustCompile(`^[a-z]+$`).MatchString(words[0]) {
				cmd, words = words[0], words[1:]
				if _, ok := help[cmd]; !ok {
					t.Errorf("README: %q: mcp-hub has no command %q", strings.TrimSpace(m[0]), cmd)
					continue
				}
			}
			checked++
			for _, w := range words {
				if w == "--" {
					break // the rest is an upstream's command line
				}
				flag, _, _ := strings.Cut(w, "=")
				if strings.HasPrefix(flag, "--") && !strings.Contains(help[cmd], flag+" ") {
					t.Errorf("README: %q: mcp-hub %s --help has no %s", strings.TrimSpace(m[0]), cmd, flag)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d command lines of the README: the scan misses them", checked)
	}

	// The paths.
	paths := regexp.MustCompile(`<(?:user config dir|user data dir|data dir)>[/\w.-]*`).FindAllString(readme, -1)
	for _, p := range paths {
		if !strings.Contains(allHelp, p) {
			t.Errorf("README names %s; no --help output does", p)
		}
	}
	slices.Sort(paths)
	t.Logf("checked %d mcp-hub command lines and %d paths (%s) of the README against --help", checked, len(paths), strings.Join(slices.Compact(paths), ", "))
	def := regexp.MustCompile(`default (<user config dir>/\S+?)\)`).FindStringSubmatch(help[""])
	if def == nil {
		t.Fatalf("mcp-hub --help names no default config file:\n%s", help[""])
	}
	if !strings.Contains(readme, "`"+def[1]+"`") {
		t.Errorf("README does not name the default config file %s", def[1])
	}
}
