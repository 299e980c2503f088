// Package toolpolicy decides, per tool, whether a call may go ahead: allow,
// ask the person first, or deny. The hub applies one policy to every way a
// tool is called — a direct tools/call, hub_call_tool, and each call a
// code-mode script makes — so none is a back door around another.
//
// A policy is a default and rules. A rule's pattern is "server/tool",
// either part a glob where '*' matches any run of characters
// ("github/delete_*", "*/write_file", "filesystem/*"). Of the rules that
// match a call, the most specific wins: the one whose tool part has the
// most characters that are not '*', then the one whose server part has; of
// equally specific rules, the stricter (deny over ask over allow). So
// "*/delete_*: deny" holds for filesystem's delete_file beside
// "filesystem/*: ask", and "github/create_issue: allow" beside
// "github/*: ask". A call no rule matches gets the default (allow).
//
// Ask is answered by the person at the calling client (elicitation): they
// allow the call once (one call, or for a code-mode script every call of
// that tool in the script), or for the rest of their session. [Grants]
// keeps what they allowed for longer than one call.
package toolpolicy

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Action is what a policy decides for a call.
type Action string

// The actions, least strict first.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

func (a Action) strictness() int {
	switch a {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// ParseAction reads "allow", "ask" or "deny".
func ParseAction(s string) (Action, error) {
	switch a := Action(strings.ToLower(strings.TrimSpace(s))); a {
	case Allow, Ask, Deny:
		return a, nil
	}
	return "", fmt.Errorf("%q: must be allow, ask or deny", s)
}

// Rule is one pattern and its action.
type Rule struct {
	Pattern string // "server/tool", globs with '*'
	Action  Action
	server  string
	tool    string
	// characters of each part that are not '*'
	toolLiteral, serverLiteral int
}

// Policy is a default action and rules. The zero Policy (and a nil one)
// allows everything.
type Policy struct {
	Default Action
	Rules   []Rule
}

// New returns a policy with default def ("" means allow) and rules, a map
// of pattern to action, as a config file writes them.
func New(def string, rules map[string]string) (*Policy, error) {
	p := &Policy{Default: Allow}
	if def != "" {
		a, err := ParseAction(def)
		if err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		p.Default = a
	}
	for _, pat := range slices.Sorted(maps.Keys(rules)) {
		a, err := ParseAction(rules[pat])
		if err != nil {
			return nil, fmt.Errorf("rules.%s: %w", pat, err)
		}
		r, err := newRule(pat, a)
		if err != nil {
			return nil, fmt.Errorf("rules.%s: %w", pat, err)
		}
		p.Rules = append(p.Rules, r)
	}
	return p, nil
}

func newRule(pat string, a Action) (Rule, error) {
	server, tool, ok := strings.Cut(pat, "/")
	if !ok || server == "" || tool == "" || strings.Contains(tool, "/") {
		return Rule{}, fmt.Errorf("pattern %q: want server/tool (either may use * globs, e.g. github/delete_* or */write_file)", pat)
	}
	return Rule{Pattern: pat, Action: a, server: server, tool: tool,
		toolLiteral: len(tool) - strings.Count(tool, "*"), serverLiteral: len(server) - strings.Count(server, "*")}, nil
}

// Decide returns the action for a call of tool at server and the pattern
// of the rule that decided it ("" for the default).
func (p *Policy) Decide(server, tool string) (Action, string) {
	if p == nil {
		return Allow, ""
	}
	var best *Rule
	for i := range p.Rules {
		r := &p.Rules[i]
		if !glob(r.server, server) || !glob(r.tool, tool) {
			continue
		}
		if best == nil || moreSpecific(r, best) {
			best = r
		}
	}
	if best == nil {
		if p.Default == "" {
			return Allow, ""
		}
		return p.Default, ""
	}
	return best.Action, best.Pattern
}

// moreSpecific reports whether r wins over best.
func moreSpecific(r, best *Rule) bool {
	switch {
	case r.toolLiteral != best.toolLiteral:
		return r.toolLiteral > best.toolLiteral
	case r.serverLiteral != best.serverLiteral:
		return r.serverLiteral > best.serverLiteral
	}
	return r.Action.strictness() > best.Action.strictness()
}

// IsZero reports whether the policy allows every call.
func (p *Policy) IsZero() bool {
	if p == nil {
		return true
	}
	if p.Default != "" && p.Default != Allow {
		return false
	}
	for _, r := range p.Rules {
		if r.Action != Allow {
			return false
		}
	}
	return true
}

// glob matches s against pattern, where '*' matches any run of characters.
func glob(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return strings.HasSuffix(s, last)
}

// Grants are the tools a person allowed for longer than one call. It is
// safe for concurrent use; the zero Grants is empty.
type Grants struct {
	mu sync.Mutex
	m  map[string]bool
}

func key(server, tool string) string { return server + "\x00" + tool }

// Add allows tool of server.
func (g *Grants) Add(server, tool string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]bool{}
	}
	g.m[key(server, tool)] = true
}

// Has reports whether tool of server was allowed.
func (g *Grants) Has(server, tool string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[key(server, tool)]
}

// Scope is how long a person's yes lasts.
type Scope int

// The scopes.
const (
	Once    Scope = iota // this call (for a script: every call of the tool in it)
	Session              // every call of the tool in the client session
)

// Choices as the person sees them.
const (
	choiceOnce    = "only this call"
	choiceScript  = "in this script"
	choiceSession = "for the rest of this session"
)

// Request is what the person is asked about.
type Request struct {
	Server, Tool string
	// Args are the call's arguments (a JSON object), shown shortened.
	Args json.RawMessage
	// Script is the hex hash of the code-mode script making the call, ""
	// for a call of the client's own.
	Script string
	// Pattern is the rule that asks ("" for the default).
	Pattern string
	// Redact scrubs text shown to the person (secret-looking values).
	Redact func(string) string
}

// maxArgsShown bounds the arguments shown in the question.
const maxArgsShown = 600

// ElicitParams returns the params of the elicitation/create request that
// asks the person about r.
func ElicitParams(r Request) json.RawMessage {
	args := maskSecretMembers(r.Args)
	if r.Redact != nil {
		args = r.Redact(args)
	}
	if utf8.RuneCountInString(args) > maxArgsShown {
		args = string([]rune(args)[:maxArgsShown]) + "…"
	}
	why := "the hub's tool policy says to ask"
	if r.Pattern != "" {
		why = fmt.Sprintf("the hub's tool policy says to ask for %q", r.Pattern)
	}
	var msg string
	once := choiceOnce
	if r.Script != "" {
		once = choiceScript
		msg = fmt.Sprintf("A code-mode script the AI wrote (sha256 %s) wants to call the tool %q of the MCP server %q (%s). Arguments of this call: %s\n\nAllow it? \"%s\" allows every call of this tool by this script.",
			short(r.Script), r.Tool, r.Server, why, args, choiceScript)
	} else {
		msg = fmt.Sprintf("The AI wants to call the tool %q of the MCP server %q (%s). Arguments: %s\n\nAllow it?", r.Tool, r.Server, why, args)
	}
	p := map[string]any{
		"message": msg,
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"allow": map[string]any{
					"type": "string", "title": "Allow", "enum": []string{once, choiceSession},
					"default": once, "description": "how long this yes lasts",
				},
			},
			"required": []string{"allow"},
		},
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // strings and maps only
	}
	return b
}

// maskSecretMembers returns args (JSON) with the values of members whose
// names look secret ("api_key", "password", "token", at any depth)
// masked: the question shows what a call does, not the credentials it
// carries. What is not JSON is returned as it is.
func maskSecretMembers(args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(args)
	}
	masked := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if _, isObj := e.(map[string]any); !isObj && redact.SecretName(k) {
					x[k], masked = redact.Mask, true
				} else {
					x[k] = walk(e)
				}
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	walk(v)
	if !masked {
		return string(args) // as the caller wrote it, members in order
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(args)
	}
	return string(b)
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// ParseAnswer reads the result of the elicitation: whether the person
// allowed the call, and for how long.
func ParseAnswer(result json.RawMessage) (bool, Scope) {
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Allow string `json:"allow"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || r.Action != "accept" {
		return false, Once
	}
	if r.Content.Allow == choiceSession {
		return true, Session
	}
	return true, Once
}

// The refusals a caller gets, as tool errors. pattern is the rule that
// decided ("" for the default).

// DenyMessage refuses a call the policy denies.
func DenyMessage(server, tool, pattern string) string {
	return fmt.Sprintf("mcp-hub refused the call: the tool %q of MCP server %q is denied by the hub's tool policy (%s); a person can change toolPolicy in the hub's config file",
		tool, server, ruleName(pattern))
}

// CannotAskMessage refuses a call the policy asks about, from a client
// that cannot ask the person (no elicitation).
func CannotAskMessage(server, tool, pattern string) string {
	return fmt.Sprintf("mcp-hub refused the call: the hub's tool policy (%s) says a person must allow each call of the tool %q of MCP server %q, and this client cannot ask them (it does not support MCP elicitation); "+
		"a person can allow the tool in the hub's config file (toolPolicy.rules: {\"%s/%s\": allow}), or use a client that supports elicitation",
		ruleName(pattern), tool, server, server, tool)
}

// NotAllowedMessage says a call was not made because the person said no
// (why is "the person declined it") or could not be asked (why says so).
func NotAllowedMessage(server, tool, pattern, why string) string {
	return fmt.Sprintf("mcp-hub did not make the call of the tool %q of MCP server %q: %s (the hub's tool policy, %s, asks a person first)", tool, server, why, ruleName(pattern))
}

func ruleName(pattern string) string {
	if pattern == "" {
		return "its default"
	}
	return fmt.Sprintf("rule %q", pattern)
}
