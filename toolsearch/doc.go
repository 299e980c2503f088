// Package toolsearch ranks the tools of many MCP servers for a request in
// plain words: the search behind hub_search_tools, `mcp-hub tools
// --search` and the console's catalog search, and the search mode of the
// hub's tools/list ([Exposure]).
//
// [FromCatalog] reads what a catalog exposes (and what it shadows, which
// hub_call_tool still reaches) into [Server]s, [Build] indexes them and
// [Index.Search] ranks them. An Index is immutable and safe for concurrent
// use. A rebuild reuses the per-server segments of the previous index whose
// tools did not change, so the hub rebuilds on every catalog change:
// 5,000 tools of 250 servers index in about 0.17 s from nothing, and in
// 4 to 24 ms when one server changed (TestSyntheticCatalog; a 2-core
// machine shared with other builds, so timings vary by ×2 and more).
//
// # Ranking
//
// Each tool is a document of fields, each weighted and length-normalised
// on its own (BM25F, k1 1.5): its name split into words at "_", "-", "."
// and case changes (weight 4), its title (2), its description (1), its
// input schema's property names (1) and their descriptions, titles and
// enum values (0.5), its server's name (1) and description and
// instructions (0.5). Words are lowercased, dropped when they are English
// stop words (the Snowball list: function words, never words chosen from a
// query set) and stemmed with Porter2 (snowballstem). On top of that:
//
//   - server evidence: the server is scored as one document of all its
//     tools' text, and half its score is added to each of its tools that
//     matched, so a request's words spread over a server's tools point at
//     that server;
//   - affixes: an indexed word that a query word extends or is extended by
//     by at most 3 letters, both at least 4 long, counts at 0.3 ("rent"
//     for "rental", "financ" for "financi": what the stemmer left apart);
//     a query word no tool has counts as the start of the words that start
//     with it ("dir" for directory), at 0.3;
//   - related words, from a table made from WordNet 3.1 (wordnet.txt.gz,
//     made by internal/wordnetgen; WordNet's license in WORDNET-LICENSE and
//     NOTICE): each query word, looked up by its dictionary forms
//     (WordNet's morphy rules: "permitted" is permit), brings in the
//     indexed words WordNet relates to it in its commonest senses —
//     the words derived from it or it from them at 0.5 of its weight
//     ("analysis": analyze), its synonyms at 0.3 ("permit": allow;
//     "connect": relate), broader words at 0.1 ("relocate": move) — at most
//     16 a word; a collocation of the query ("get rid of", "look up")
//     brings in its own ("get rid of": remove). The weights follow the
//     closeness of the meaning: a derived word is the same idea in another
//     part of speech, a synonym shares one sense of the word, a broader
//     word only part of it.
//
// # Copies
//
// A tool that several servers offer with the same definition (the same
// bytes: one server registered under several names, or a tool every
// server of a kind carries) is one result, so that the first k results
// are k different tools: the copy of the first server in the catalog's
// order (the one a call by the tool's name reaches), or the first whose
// server the query names ("cwd on fx3"), at the best score of the
// copies, with the other servers in [Result.AlsoOn]. An empty query
// lists each tool once too. Copies count once in the statistics (how
// many tools and servers have a word, mean lengths): a catalog with one
// server registered 22 times ranks, score for score, as with it once
// (the 22 copies had made every other word rarer, and the copies' own
// words commoner).
//
// The table holds 30,897 words: those the WordNet concordance tagged at
// least once, or that have two senses or more (the concordance is of
// 1960s prose, where "delete" and "folder" never occur; a word's number
// of senses is WordNet's other sign of a common word); a word's senses
// are its first, and its second where that is at least half as common
// (WordNet orders senses by their tagged counts). Its related words are
// stored as index terms, stemmed by the index's stemmer (internal/stemmer).
// It is 470 KB embedded in the binary, read on the first search (11–18 ms),
// and holds 2.7 MiB of heap from then on; an Index remembers what it found
// for each query word (at most 20,000 words).
//
// Nothing in it names a word of any data set: no synonyms, no lists built
// from queries. The weights are round values, measured on the shared
// retrieval sets (see docs/BENCHMARKS.md): mcpproxy-go's golden set
// recall@5 0.869 (its own bleve BM25: 0.681), ToolE single-tool hit@5
// 0.656 over all 20,614 queries, multi-tool recall@5 0.703. Each of them
// was kept because the three sets gained together or stayed (the table's
// neighbours, synonyms 0.2–0.4, derivations 0.3–0.5, broader words
// 0.1–0.15, gain on all three too); what was tried and left out, with its
// numbers (golden R@5 and MRR | ToolE hit@5 | multi R@5; the ranking
// before the word table: 0.791, 0.650 | 0.6473 | 0.696):
//
//	pairs of adjacent words                 no gain on any set
//	feedback from the best tool             +2 golden queries, +0.003 ToolE; results
//	                                        that match no word of the query, twice the work
//	adjacent query words adjacent in a      0.791, 0.650 | 0.6473 (hit@1 0.441 -> 0.437)
//	  name (phrase bonus 1 x their idfs)      | 0.696
//	coordination (score x 0.8 + 0.2 x the   0.791, 0.650 | 0.6474 | 0.694; with the table
//	  idf share of query words matched)       0.869, 0.678 | 0.6546 | 0.706 (MRR -0.011)
//	rare-in-English weighting (query word   0.780, 0.641 | 0.6522 | 0.701: "time" is
//	  x 0.5 + 0.5 x specificity from          common in English and decisive in a catalog
//	  WordNet's tagged counts)
//	splitting run-together names by the     0.791, 0.650 | 0.6454 | 0.689: brand names
//	  table's dictionary ("filesystem")       split into common words ("timeport": time)
//	BM25 k1 1.2 / 2 (with the table)        0.840 | 0.6537 | 0.687 / 0.858 | 0.6544 | 0.715
//	b of names 0, of all fields 0.75        0.869 | 0.6545 | 0.703 / 0.869 | 0.6487 | 0.688
//	  (with the table)
//	related words' idf at most their word's 0.869, 0.678 | 0.6535 | 0.704
//	related words x2 when their query word  0.858, 0.690 | 0.6564 | 0.705
//	  is in no tool
//	the reverse relations too (the words    0.862, 0.690 | 0.6558 | 0.693 (narrower words
//	  that name the query word as theirs)     alone: 0.862 | 0.6563 | 0.703)
//	the whole of WordNet (115,227 words,    0.869, 0.705 | 0.6558 | 0.705: the same
//	  1.4 MB)                                 within 4 queries, three times the size
//
// Tried in the second round and left out, each alone on the ranking above
// (0.869, 0.705 | 0.6556 | 0.703; the real-servers check of
// realservers_test.go, hit@5 19 of 29 requests, 20 of 32 with the fixture
// servers; TestAblation):
//
//	property types and formats as a field   the same on every set and the check
//	  ("number", "uri"; weight 0.5)
//	indefinite pronouns as stop words       the same on every set and the check; and a
//	  ("everything", "someone")               server named everything could not be named
//	the table read back from server names   the same on the three sets; the check +1
//	  (in the name field only, 0.5:           (remember: memory); but names are brands,
//	  "memory" has "remember" as synonym)     read as words: "get", "bring": fetch;
//	                                          "weather": brave; "opinion": notion ("bring
//	                                          me the readme" ranked fetch first)
//	affixes of up to 4 letters              the same on the three sets (ToolE hit@1
//	                                          +0.0007: 50 queries up, 36 down); the check
//	                                          +1 (know: knowledge); but what it adds is
//	                                          mostly unrelated: "long": longitude, "rest":
//	                                          restrict, "breakfast": break
//
// # Why not bleve
//
// bleve v2.6.3 (mcpproxy-go's choice), measured with the same fields,
// boosts, name splitting and its English analyzer (Porter stemmer, stop
// words), BM25 scoring, a scorch index in a temporary directory, on the
// same machine and data:
//
//	                          toolsearch      bleve v2.6.3
//	                          (before the word table)
//	golden recall@5           0.791           0.759
//	ToolE hit@5               0.647           0.619
//	ToolE multi recall@5      0.696           0.679
//	ToolE query (199 tools)   12-16 µs        206 µs
//	5,000 tools: build        0.17-0.45 s     1.39 s (no incremental rebuild)
//	5,000 tools: search p50   0.22-0.4 ms     0.93 ms
//	binary, over hello+json   +0.65 MB        +18.5 MB
//	modules added             1 (snowballstem) 26 (bbolt, protobuf, roaring,
//	                                          zapx v11-v17, …)
//
// BM25 with fields is a few hundred lines; bleve brings an on-disk segment
// format, a key-value store and a query language the hub does not need,
// and its BM25 needs scorch, which needs a directory. The in-package
// index is smaller, faster, ranks better (the affix and server steps have
// no bleve equivalent without custom code), and rebuilds per server. (The
// word table adds 0.5 MB to the binary and 2.7 MiB of heap once searched.)
package toolsearch
