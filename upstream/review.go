package upstream

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Review renders, for a person about to approve s, what approving it lets
// happen: everything [Spec.Fingerprint] covers, with where each value comes
// from, then what deserves a careful look ([Spec.LaunchWarnings], one per
// line, starting "⚠ "). Elicitation, `mcp-hub approve`, `mcp-hub add` and
// the REST API all show this text.
//
// For stdio it shows the exact argv, never truncated, the working
// directory and every environment variable: a literal value is masked
// ("<literal value, masked>") unless the variable changes what code the
// program loads (NODE_OPTIONS, LD_PRELOAD, PATH, …), whose value is shown
// in full; "${VAR}" reads "the hub's environment variable VAR" and
// "file:PATH" reads "contents of PATH". For sse and http it shows the URL
// with its query values masked, each query parameter's name, and every
// header with where its value comes from.
func (s *Spec) Review() string {
	var b strings.Builder
	if s.InferTransport() == TransportStdio {
		b.WriteString("run: ")
		b.WriteString(formatArgv(s.Command, s.Args))
		if s.Cwd != "" {
			b.WriteString("\nin directory: ")
			b.WriteString(s.Cwd)
		}
		if len(s.Env) > 0 {
			b.WriteString("\nwith environment variables:")
			for _, k := range sortedKeys(s.Env) {
				fmt.Fprintf(&b, "\n  %s = %s", k, describeValue(s.Env[k], codeLoading(k)))
			}
		}
	} else {
		masked, keys := maskQuery(s.URL)
		fmt.Fprintf(&b, "connect (%s) to: %s", s.InferTransport(), masked)
		if len(keys) > 0 {
			b.WriteString("\nwith query parameters (values masked): ")
			b.WriteString(strings.Join(keys, ", "))
		}
		if len(s.Headers) > 0 {
			b.WriteString("\nwith headers:")
			for _, k := range sortedKeys(s.Headers) {
				fmt.Fprintf(&b, "\n  %s: %s", k, describeValue(s.Headers[k], false))
			}
		}
		if s.OAuth != nil {
			b.WriteString("\nlogging in with OAuth: ")
			b.WriteString(s.OAuth.review())
		}
	}
	if p := permissions(s); p != "" {
		b.WriteString("\nrequests it may make of the client: ")
		b.WriteString(p)
	}
	if len(s.Roots) > 0 {
		b.WriteString("\nroots it is given when no client answers its roots/list: ")
		b.WriteString(strings.Join(s.Roots, ", "))
	}
	if s.Trust != "" {
		b.WriteString("\nchanged or new tools, prompts and resource templates: ")
		b.WriteString(trustText[s.Trust])
	}
	b.WriteString("\ninstances: ")
	b.WriteString(s.Scope.Describe())
	ws := s.LaunchWarnings()
	if s.Trust == TrustOff {
		ws = append(ws, "its tools are not pinned (trust off): a change to what they say or do reaches the model unseen")
	}
	if len(ws) > 0 {
		b.WriteByte('\n')
	}
	for _, w := range ws {
		b.WriteString("\n⚠ ")
		b.WriteString(w)
	}
	return b.String()
}

// trustText says what a trust policy does, for [Spec.Review].
var trustText = map[Trust]string{
	TrustPin:  "quarantined until a person approves them (trust pin)",
	TrustWarn: "served, logged and flagged until a person approves them (trust warn)",
	TrustOff:  "not checked (trust off)",
}

// formatArgv renders a command and its arguments as a person reads them:
// each quoted for a POSIX shell where needed, never truncated, with the
// values of secret-looking arguments masked ([redact.Argv]: --token x,
// --api-key=x, mysql's -px, URL credentials; never -p, -e or -c of an
// interpreter, which are what runs). Every output that shows what a stdio
// upstream runs goes through it.
func formatArgv(command string, args []string) string {
	argv := redact.Argv(append([]string{command}, args...))
	var b strings.Builder
	b.WriteString(quoteArg(argv[0]))
	for _, a := range argv[1:] {
		b.WriteByte(' ')
		b.WriteString(quoteArg(a))
	}
	return b.String()
}

// Value sources, as [Spec.Review] names them.
const (
	maskedValue   = "<literal value, masked>"
	maskedText    = "<literal text, masked>"
	hubVarPrefix  = "the hub's environment variable "
	fileSrcPrefix = "contents of "
)

// describeValue says where an env or header value comes from; see
// [ResolveValue]. Literal text is masked unless shown is set.
func describeValue(v string, shown bool) string {
	if path, ok := strings.CutPrefix(v, "file:"); ok {
		return fileSrcPrefix + path
	}
	segs := valueSegments(v)
	if len(segs) == 1 && !segs[0].isVar {
		switch {
		case shown:
			return strconv.Quote(v) + " (literal, shown in full)"
		case v == "":
			return `"" (empty)`
		}
		return maskedValue
	}
	parts := make([]string, len(segs))
	for i, sg := range segs {
		switch {
		case sg.isVar:
			parts[i] = hubVarPrefix + sg.text
		case shown:
			parts[i] = strconv.Quote(sg.text)
		default:
			parts[i] = maskedText
		}
	}
	out := strings.Join(parts, " + ")
	if shown {
		out += " (literal text shown in full)"
	}
	return out
}

// segment is a run of literal text or a ${VAR} reference in a value.
type segment struct {
	text  string // the literal text, or the variable's name
	isVar bool
}

// valueSegments splits a value the way [ResolveValue] reads it. An
// unterminated "${" is literal text (resolving it fails).
func valueSegments(v string) []segment {
	var segs []segment
	for {
		i := strings.Index(v, "${")
		j := -1
		if i >= 0 {
			j = strings.IndexByte(v[i:], '}')
		}
		if i < 0 || j < 0 {
			if v != "" || len(segs) == 0 {
				segs = append(segs, segment{text: v})
			}
			return segs
		}
		if i > 0 {
			segs = append(segs, segment{text: v[:i]})
		}
		segs = append(segs, segment{text: v[i+2 : i+j], isVar: true})
		v = v[i+j+1:]
	}
}

// hubVars returns the hub variables and the file a value reads.
func hubVars(v string) (vars []string, file string) {
	if path, ok := strings.CutPrefix(v, "file:"); ok {
		return nil, path
	}
	for _, sg := range valueSegments(v) {
		if sg.isVar {
			vars = append(vars, sg.text)
		}
	}
	return vars, ""
}

// codeLoadingVars are environment variables that change what code a
// program loads or runs: dynamic linkers, interpreters' module paths and
// start-up options, shells' start-up files, git's helpers and hooks, and
// where package runners download from.
var codeLoadingVars = map[string]bool{
	"PATH":            true,
	"LD_PRELOAD":      true,
	"LD_AUDIT":        true,
	"LD_LIBRARY_PATH": true,
	"GCONV_PATH":      true,
	"NODE_OPTIONS":    true, "NODE_PATH": true,
	"PYTHONPATH": true, "PYTHONSTARTUP": true, "PYTHONHOME": true, "PYTHONUSERBASE": true,
	"PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true, "PERL5DB": true,
	"RUBYOPT": true, "RUBYLIB": true, "GEM_PATH": true, "GEM_HOME": true,
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true, "CLASSPATH": true,
	"LUA_INIT": true, "LUA_PATH": true, "LUA_CPATH": true,
	"PHPRC": true, "PHP_INI_SCAN_DIR": true,
	"BASH_ENV": true, "ENV": true, "ZDOTDIR": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true,
	"GIT_EXEC_PATH": true, "GIT_TEMPLATE_DIR": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true,
	"GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true, "GIT_PROXY_COMMAND": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_EDITOR": true, "GIT_PAGER": true, "GIT_SEQUENCE_EDITOR": true,
	"NPM_CONFIG_REGISTRY": true, "npm_config_registry": true,
	"PIP_INDEX_URL": true, "PIP_EXTRA_INDEX_URL": true,
	"UV_INDEX_URL": true, "UV_EXTRA_INDEX_URL": true, "UV_DEFAULT_INDEX": true, "UV_INDEX": true,
}

// codeLoadingPrefixes are families of such variables.
var codeLoadingPrefixes = []string{"DYLD_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"}

// codeLoading reports whether the environment variable name changes what
// code a program loads or runs.
func codeLoading(name string) bool {
	if codeLoadingVars[name] {
		return true
	}
	for _, p := range codeLoadingPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// maskQuery returns the URL with every query value masked, and the names of
// its query parameters in order (a parameter without "=" is masked whole and
// listed as "(unnamed)"). Userinfo is masked too.
func maskQuery(raw string) (string, []string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid url>", nil
	}
	if u.User != nil {
		u.User = url.User("***")
	}
	if u.RawQuery == "" && !u.ForceQuery {
		return u.String(), nil
	}
	var keys, parts []string
	for part := range strings.SplitSeq(u.RawQuery, "&") {
		if part == "" {
			continue
		}
		k, _, ok := strings.Cut(part, "=")
		if !ok {
			parts = append(parts, "***")
			keys = appendNew(keys, "(unnamed)")
			continue
		}
		parts = append(parts, k+"=***")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		keys = appendNew(keys, k)
	}
	u.RawQuery = ""
	u.ForceQuery = false
	s := u.String()
	if frag := strings.IndexByte(s, '#'); frag >= 0 {
		return s[:frag] + "?" + strings.Join(parts, "&") + s[frag:], keys
	}
	return s + "?" + strings.Join(parts, "&"), keys
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// permissions lists the client requests the spec allows or refuses
// explicitly.
func permissions(s *Spec) string {
	var out []string
	for _, p := range []struct {
		name string
		v    *bool
	}{{"sampling", s.AllowSampling}, {"elicitation", s.AllowElicitation}, {"roots", s.AllowRoots}} {
		switch {
		case p.v == nil:
		case *p.v:
			out = append(out, p.name+" allowed")
		default:
			out = append(out, p.name+" refused")
		}
	}
	return strings.Join(out, ", ")
}

// metadataNames are host names of cloud metadata services (instance
// credentials), and metadataAddrs their addresses outside 169.254.0.0/16.
var (
	metadataNames = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal", "metadata.azure.internal"}
	metadataAddrs = []netip.Addr{netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}
	sharedSpace   = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598, carrier-grade NAT
)

// hostWarning says what is special about where a URL points, or "" for a
// name or public address. Names are classified as written: nothing is
// resolved.
func hostWarning(u *url.URL) string {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.WithZone("").Unmap()
		switch {
		case slices.Contains(metadataAddrs, a):
			return fmt.Sprintf("%s is a cloud metadata service address, which hands out the machine's credentials", host)
		case a.IsLinkLocalUnicast():
			return fmt.Sprintf("%s is a link-local address, where cloud metadata services hand out the machine's credentials", host)
		case a.IsLoopback(), a.IsUnspecified():
			return fmt.Sprintf("%s is this machine (loopback): requests reach services that trust local callers", host)
		case a.IsPrivate(), sharedSpace.Contains(a):
			return fmt.Sprintf("%s is a private network address: requests reach your local network", host)
		}
		return ""
	}
	switch {
	case slices.Contains(metadataNames, host):
		return fmt.Sprintf("%s is a cloud metadata service, which hands out the machine's credentials", host)
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return fmt.Sprintf("%s is this machine (loopback): requests reach services that trust local callers", host)
	case strings.HasSuffix(host, ".internal") || strings.HasSuffix(host, ".local") ||
		strings.HasSuffix(host, ".lan") || strings.HasSuffix(host, ".home.arpa"):
		return fmt.Sprintf("%s is a private network name: requests reach your local network", host)
	}
	return ""
}

// urlWarnings are the warnings of an sse or http spec: where it points,
// plain http, and headers that send the hub's variables or files' contents.
func urlWarnings(s *Spec) []string {
	u, err := url.Parse(s.URL)
	if err != nil {
		return nil
	}
	var ws []string
	hw := hostWarning(u)
	if hw != "" {
		ws = append(ws, hw)
	}
	if u.Scheme == "http" && !strings.Contains(hw, "loopback") {
		ws = append(ws, "it uses plain http: headers and everything sent travel unencrypted")
	}
	host := u.Hostname()
	for _, k := range sortedKeys(s.Headers) {
		vars, file := hubVars(s.Headers[k])
		if file != "" {
			ws = append(ws, fmt.Sprintf("header %s sends the contents of %s to %s", k, file, host))
		}
		for _, v := range vars {
			ws = append(ws, fmt.Sprintf("header %s sends the hub's environment variable %s to %s", k, v, host))
		}
	}
	return ws
}
