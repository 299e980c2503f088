// Package catalog merges the tools, prompts, resources and resource
// templates of many upstream MCP servers, plus the hub's own tools, into the
// one catalog the hub serves to its clients.
//
// # Purity
//
// The package is pure: no I/O, no goroutines, no locks, no logging, no
// global state. [Build] returns the same catalog, byte for byte, for the
// same input, whatever the order of its sources, and never panics. A
// [Catalog] is immutable and safe for concurrent use.
//
// # Items
//
// Upstream list results are kept as raw JSON objects, one [Item] per tool,
// prompt, resource or template, so unknown members and key order survive.
// [ParseTool], [ParsePrompt], [ParseResource] and [ParseTemplate] validate
// an object once per upstream listing and record where its key (name, uri or
// uriTemplate) is, so that Build can rename an item by splicing bytes
// instead of decoding and re-encoding it. Objects with duplicate members are
// rejected.
//
// ParseTool normalises inputSchema, which clients require to be an object
// with "type":"object": a missing, null or non-object schema becomes
// {"type":"object"}; a schema without "type" gets "type":"object" as its
// first member; any other "type" value becomes "object". Every other byte of
// the tool is kept. Each change is noted in [Item.Fixes].
//
// # Naming
//
// [Filter] first drops tools and prompts by original name, silently.
// Exposed tool and prompt names match [NamePattern]. Under [PolicyMerge] a
// name is exposed unchanged; under [PolicyPrefix] it becomes Server +
// Separator + name. A candidate that does not match NamePattern is
// rewritten: each invalid rune becomes '_', the result is cut to 55 bytes,
// and "_" plus 8 hex digits of sha256(Server "\x00" original) are appended.
// Tools and prompts are named separately, by the same rules.
//
// Claimants of one exposed name are ranked by server ([strings.Compare] of
// [Source.Server]), then original name, then listing order:
//
//   - the hub's own tools ([Options.Own]) are exposed unchanged and always
//     win; an upstream name that would be exposed with [ReservedPrefix] is
//     never exposed (reason "reserved");
//   - a server listing a name twice keeps the first listing ("duplicate");
//   - under PolicyMerge the first claimant wins and the others are shadowed
//     ("collision");
//   - under PolicyPrefix, where only separator ambiguity (server "a__b" tool
//     "c" against server "a" tool "b__c") or a hash collision can make two
//     items claim one name, the first claimant keeps it and each other one,
//     in (server, original) order, is exposed as the candidate cut to 55
//     bytes plus "_" and 8 hex digits of
//     sha256(Server "\x00" original "\x00" salt), with the first salt 1, 2, …
//     that gives an unused name. No tool is dropped but duplicates and
//     reserved names.
//
// Resources and resource templates are never renamed; a uri or uriTemplate
// offered by two servers goes to the first one ("collision"), one listed
// twice by a server to the first listing ("duplicate"). Templates that do
// not compile are reported as "invalid", and so are Items not made by a
// Parse function.
//
// No two entries of a kind share an exposed name, every exposed tool and
// prompt name is valid, and every item that is not filtered out is either
// exposed once or reported by [Catalog.Shadowed].
//
// # Results
//
// Build decodes no JSON. It sorts tools and prompts once, by a radix sort on
// names packed into integers, which both orders the output and brings the
// claimants of each name together, and renders the tools/list,
// prompts/list, resources/list and resources/templates/list results once,
// each in one allocation, in the order of [Catalog.Tools] and the like.
// Entries' Raw bytes point into them; all returned bytes are shared and
// must not be modified.
package catalog
