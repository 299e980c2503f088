package cli

import "strings"

// Texts the commands share.

// fileOr names the config file f, or says "the config file" when there is
// none.
func fileOr(f string) string {
	if f == "" {
		return "the config file"
	}
	return f
}

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
