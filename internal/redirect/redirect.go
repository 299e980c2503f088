// Package redirect decides which HTTP redirects the hub follows on behalf
// of an upstream: an approval reviewed one URL, and the hub sends that
// server's configured headers (literal, ${VAR} and file: values alike),
// its OAuth token and every message to that URL's origin only.
//
// The rule, one for every HTTP request the hub makes for an upstream:
//
//   - A redirect within the same origin (scheme, host and port of the
//     request that was redirected, which is the approved URL's) is followed
//     as before: "/mcp" → "/mcp/" on the same server.
//   - A redirect to another origin is refused: the request is not sent
//     there, nor anything else. The error names the Location that was
//     refused and says how to approve it: change the server's url, where
//     the caller says (Refused.Where: the hub's config file, or the
//     store's commands), since a new URL is a change a person approves.
//     [Upstream] is this rule
//     as an http.Client's CheckRedirect; [Check] applies it to a redirect
//     response the caller handles itself.
//   - OAuth's discovery requests (GET, no credential, no body) may follow a
//     redirect to another origin that is https and not loopback, private,
//     link-local (cloud metadata) or carrier-grade NAT, without a Referer;
//     its token, registration and revocation requests (which carry a
//     client secret, a code or a token) follow none: [OAuth].
//
// It imports nothing of the hub's.
package redirect

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects one request follows at most.
const maxRedirects = 10

// maxQuoted caps how much of a Location an error quotes.
const maxQuoted = 200

// Refused is the error of a redirect the hub did not follow.
type Refused struct {
	From     *url.URL // the request that was redirected
	Location string   // where it was sent (as the server wrote it, capped)
	Status   string   // the redirect's status ("307 Temporary Redirect"), when known
	Reason   string   // why, for a person
	// Where, for a redirect to another origin, says where a person
	// changes the server's url if it has moved there: the caller knows
	// where the server is defined (the config file, or the store and its
	// commands). Empty: the error says a new URL needs a new approval.
	Where string

	moved bool // refused for being another origin: the server may have moved
}

func (e *Refused) Error() string {
	status := ""
	if e.Status != "" {
		status = " " + e.Status
	}
	msg := fmt.Sprintf("%s answered%s with Location %s, %s", Origin(e.From), status, e.Location, e.Reason)
	switch {
	case !e.moved:
	case e.Where != "":
		msg += " If the server has moved there, change its url to the new address. " + e.Where
	default:
		msg += " If the server has moved there, change its url to the new address: a new URL needs a new approval."
	}
	return msg
}

// Moved reports whether e refused another origin, where the server may
// have moved (the error then says to change its url: [Refused.Where]).
func (e *Refused) Moved() bool { return e.moved }

// Origin is u's scheme://host[:port], the port only when it is not the
// scheme's default.
func Origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	scheme, host, port := parts(u)
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") || port == "" {
		return scheme + "://" + bracket(host)
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

func bracket(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

func parts(u *url.URL) (scheme, host, port string) {
	scheme = strings.ToLower(u.Scheme)
	host = strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port = u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme, host, port
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (default ports made explicit, case and a trailing dot of the host aside).
func SameOrigin(a, b *url.URL) bool {
	as, ah, ap := parts(a)
	bs, bh, bp := parts(b)
	return as == bs && ah == bh && ap == bp
}

// quote is a Location as an error shows it: at most maxQuoted bytes.
func quote(loc string) string {
	if len(loc) <= maxQuoted {
		return loc
	}
	cut := maxQuoted
	for cut > 0 && loc[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return loc[:cut] + fmt.Sprintf("… (%d bytes)", len(loc))
}

// newOrigin is the reason an upstream's redirect to another origin is
// refused, with a warning for a target the approval could never have
// meant (the cloud metadata address, a private network).
func newOrigin(to *url.URL) string {
	why := "another origin than the one approved: mcp-hub sends a server's headers, token and messages only to its approved URL's origin, so it sent nothing there."
	if kind := special(to.Hostname()); kind != "" {
		why += " (" + to.Hostname() + " is " + kind + ".)"
	}
	return why
}

// Check applies the upstream rule to a redirect response to req (the
// caller follows it only when Check returns nil).
func Check(req *http.Request, resp *http.Response) error {
	loc := resp.Header.Get("Location")
	to, err := req.URL.Parse(loc)
	if err != nil {
		return &Refused{From: req.URL, Location: quote(loc), Status: resp.Status, Reason: "which is not a valid URL."}
	}
	if SameOrigin(req.URL, to) {
		return nil
	}
	return &Refused{From: req.URL, Location: quote(to.String()), Status: resp.Status, Reason: newOrigin(to), moved: true}
}

// Upstream is the CheckRedirect of an upstream's HTTP client: same origin
// only, at most 10 redirects.
func Upstream(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	status := ""
	if req.Response != nil {
		status = req.Response.Status
	}
	if !SameOrigin(first, req.URL) {
		return &Refused{From: via[len(via)-1].URL, Location: quote(req.URL.String()), Status: status, Reason: newOrigin(req.URL), moved: true}
	}
	if len(via) >= maxRedirects {
		return &Refused{From: via[len(via)-1].URL, Location: quote(req.URL.String()), Status: status,
			Reason: fmt.Sprintf("the %dth redirect in a row.", len(via))}
	}
	return nil
}

// OAuth is the CheckRedirect of the hub's OAuth client (discovery,
// registration, token and revocation requests): a request that carries
// something (a body: a code, a client secret, a token; an Authorization or
// Cookie header) follows a redirect within its origin only; a discovery
// GET may follow one to another public https origin, without a Referer.
func OAuth(req *http.Request, via []*http.Request) error {
	if err := Upstream(req, via); err == nil {
		return nil
	}
	prev := via[len(via)-1]
	status := ""
	if req.Response != nil {
		status = req.Response.Status
	}
	refuse := func(reason string) error {
		return &Refused{From: prev.URL, Location: quote(req.URL.String()), Status: status, Reason: reason}
	}
	if len(via) >= maxRedirects {
		return refuse(fmt.Sprintf("the %dth redirect in a row.", len(via)))
	}
	if carries(via[0]) {
		return refuse("another origin, and the request carries a credential: the hub sends it only where it was meant to go.")
	}
	if strings.ToLower(req.URL.Scheme) != "https" {
		return refuse("not https: a discovery request follows a redirect to another origin only over https.")
	}
	host := req.URL.Hostname()
	if kind := special(host); kind != "" {
		return refuse("which is " + kind + ": a discovery request never follows a redirect there.")
	}
	if _, err := netip.ParseAddr(host); err != nil {
		ips, err := net.DefaultResolver.LookupNetIP(req.Context(), "ip", host)
		if err != nil {
			return refuse(fmt.Sprintf("whose host cannot be resolved (%v).", err))
		}
		for _, ip := range ips {
			if kind := addrKind(ip); kind != "" {
				return refuse(fmt.Sprintf("whose host resolves to %s, which is %s: a discovery request never follows a redirect there.", ip, kind))
			}
		}
	}
	req.Header.Del("Referer")
	return nil
}

// carries reports whether req carries anything secret: a body, an
// Authorization or Cookie header, or a method other than GET and HEAD.
func carries(req *http.Request) bool {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return true
	}
	if req.Body != nil && req.Body != http.NoBody {
		return true
	}
	return req.Header.Get("Authorization") != "" || req.Header.Get("Cookie") != ""
}

// special names what kind of address host is when no approval of a public
// URL could have meant it ("a link-local address (…cloud metadata)"), or "".
func special(host string) string {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return "a loopback address"
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "metadata.google.internal") {
		return "a cloud metadata address"
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return ""
	}
	return addrKind(ip)
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func addrKind(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid(), ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (169.254.169.254 is the cloud metadata service)"
	case ip.IsPrivate():
		return "a private network address"
	case cgnat.Contains(ip):
		return "a carrier-grade NAT address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	return ""
}

// Client returns a copy of c (a new client when nil) whose redirects
// follow [OAuth], unless c has a CheckRedirect of its own.
func Client(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	if out.CheckRedirect == nil {
		out.CheckRedirect = OAuth
	}
	return &out
}
