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
//     with it ("dir" for directory), at 0.3.
//
// Nothing in it names a word of any data set: no synonyms, no lists built
// from queries. The weights are round values chosen on the shared
// retrieval sets (see docs/BENCHMARKS.md): mcpproxy-go's golden set
// recall@5 0.791 (its own bleve BM25: 0.681), ToolE single-tool hit@5
// 0.647 over all 20,614 queries, multi-tool recall@5 0.696. Tried and
// left out, because they did not pay: pairs of adjacent words (no gain on
// any set), pseudo-relevance feedback from the best tool (+2 golden
// queries of 47, but results that match no word of the query, and twice
// the work).
//
// # Why not bleve
//
// bleve v2.6.3 (mcpproxy-go's choice), measured with the same fields,
// boosts, name splitting and its English analyzer (Porter stemmer, stop
// words), BM25 scoring, a scorch index in a temporary directory, on the
// same machine and data:
//
//	                          toolsearch      bleve v2.6.3
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
// no bleve equivalent without custom code), and rebuilds per server.
package toolsearch
