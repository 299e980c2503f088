package toolsearch

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestWordTable: the embedded table reads, is of the size
// internal/wordnetgen makes, and holds what WordNet 3.1 says of a few
// words (the relations the ranking relies on, not words of any data set).
func TestWordTable(t *testing.T) {
	lx := theLexicon()
	if n := len(lx.keys); n < 20_000 || n > 60_000 {
		t.Errorf("%d words; the generator's settings give about 31,000", n)
	}
	rel := func(w string) []string {
		var out []string
		i, ok := lx.find(w)
		if !ok {
			t.Errorf("%q is not in the table", w)
			return nil
		}
		lx.related(i, func(kind byte, term string) { out = append(out, string(kind)+":"+term) })
		return out
	}
	for _, tc := range []struct{ word, want string }{
		{"permit", "s:allow"},     // a synonym in its first sense
		{"relocate", "h:move"},    // a broader word
		{"connect", "s:relat"},    // terms are stemmed as the index stems them
		{"creator", "s:maker"},    // first sense only: not "h:person"
		{"get_rid_of", "s:remov"}, // a collocation
		{"analysis", "d:analyz"},  // a derivation
	} {
		if got := rel(tc.word); !slices.Contains(got, tc.want) {
			t.Errorf("%s: %v, want %s among them", tc.word, got, tc.want)
		}
	}
	for i, r := range lx.rels {
		for x := range strings.SplitSeq(r, " ") {
			if len(x) < 3 || x[1] != ':' || !strings.ContainsRune("sdh", rune(x[0])) || strings.ContainsAny(x[2:], "_ :\t") {
				t.Fatalf("%s: relation %q", lx.keys[i], x)
			}
		}
	}
}

func TestWordTableBadInput(t *testing.T) {
	gz := func(s string) *bytes.Reader {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return bytes.NewReader(b.Bytes())
	}
	for _, in := range []string{"b\ts:x\na\ts:y\n", "a s:x\n", "a\ts:x\na\ts:y\n"} {
		if _, err := readLexicon(gz(in)); !errors.Is(err, errLexLine) {
			t.Errorf("%q: %v, want errLexLine", in, err)
		}
	}
	if _, err := readLexicon(strings.NewReader("not gzip")); err == nil {
		t.Error("plain text read as a table")
	}
	l, err := readLexicon(gz("a\ts:x\nb_c\ts:y\n"))
	if err != nil || len(l.keys) != 2 || len(l.colloc["b"]) != 1 {
		t.Errorf("a good table: %v, %+v", err, l)
	}
}

// TestLemmas: a query word is looked up by its dictionary forms, as
// WordNet's morphy finds them.
func TestLemmas(t *testing.T) {
	lx := theLexicon()
	for _, tc := range []struct{ in, want string }{
		{"files", "file"}, {"copies", "copy"}, {"boxes", "box"}, {"deleted", "delete"},
		{"stopped", "stop"}, {"renaming", "rename"}, {"permitted", "permit"}, {"file", "file"},
	} {
		var got []string
		lx.lemmas(tc.in, func(i int32) { got = append(got, lx.keys[i]) })
		if !slices.Contains(got, tc.want) {
			t.Errorf("lemmas(%q) = %q, want %q among them", tc.in, got, tc.want)
		}
	}
	var got []string
	lx.lemmas("qux", func(i int32) { got = append(got, lx.keys[i]) })
	if got != nil {
		t.Errorf("lemmas(qux) = %q", got)
	}
}

// TestRelatedWords: a request whose words no tool has finds the tool by a
// word WordNet relates to them, and ranks it below a tool that has the
// request's own word.
func TestRelatedWords(t *testing.T) {
	tool := func(name, desc string) Tool {
		raw, _ := json.Marshal(map[string]any{"name": name, "description": desc, "inputSchema": map[string]any{"type": "object"}})
		return Tool{Name: name, ExposedAs: name, Raw: raw}
	}
	ix := Build([]Server{
		{Name: "files", Tools: []Tool{
			tool("move_file", "Move a file to another path."),
			tool("list_allowed_paths", "List the paths this server may read."),
			tool("list_paths", "List the paths under a path."),
		}},
		{Name: "store", Tools: []Tool{
			tool("add_records", "Add records to the table."),
			tool("remove_records", "Remove records from the table."),
		}},
		{Name: "vm", Tools: []Tool{
			tool("relocate_vm", "Relocate a virtual machine to another host."),
		}},
	}, nil)
	for _, tc := range []struct {
		query string
		want  []string // the first results, in order
	}{
		{"relocate report.txt", []string{"relocate_vm", "move_file"}},         // relocate: move (broader)
		{"which paths am I permitted to see", []string{"list_allowed_paths"}}, // permit: allow (synonym)
		{"get rid of some records", []string{"remove_records"}},               // get rid of: remove (collocation)
	} {
		res, _ := ix.Search(tc.query, len(tc.want))
		var got []string
		for _, r := range res {
			got = append(got, r.Tool)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.query, got, tc.want)
		}
	}
	// Without the table none of them is found so.
	p := withoutLexicon()
	bare := build([]Server{{Name: "files", Tools: []Tool{tool("move_file", "Move a file to another path.")}}}, nil, &p)
	if res, _ := bare.Search("relocate report.txt", 1); len(res) != 0 {
		t.Errorf("without the table: %v", res)
	}
}
