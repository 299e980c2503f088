// Package toolsearch ranks the tools of many MCP servers for a request in
// plain words: the search behind hub_search_tools, `mcp-hub tools
// --search` and the console's catalog search.
//
// [FromCatalog] reads what a catalog exposes (and what it shadows, which
// hub_call_tool still reaches) into [Server]s, [Build] indexes them and
// [Index.Search] ranks them. An Index is immutable and safe for concurrent
// use; a rebuild reuses the per-server segments of the previous index whose
// tools did not change.
//
// Each tool is indexed by fields, each with its own weight (BM25F): its
// name split into words at "_", "-", "." and case changes, its title, its
// description, its input schema's property names and their descriptions,
// and its server's name and description. Words are lowercased, English
// stop words dropped and the rest stemmed (Porter2).
package toolsearch
