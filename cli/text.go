package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Texts the commands share.

// indent indents every line of s but the empty ones by four spaces.
func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}

// oneLine joins the lines of s and cuts it to 120 characters.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// printRows writes a table: header, then the lines (tab-separated cells,
// each line ending in a newline) sorted by their key, a name.
func printRows(w io.Writer, header string, lines map[string]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, name := range slices.Sorted(maps.Keys(lines)) {
		fmt.Fprint(tw, lines[name])
	}
	tw.Flush()
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
