package hub

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// The admin API changes what runs, so a web page must not reach it. A
// page's cross-origin request can skip the CORS preflight only with a
// "simple" content type (text/plain, forms) and always carries the
// browser's Origin or Sec-Fetch-Site header: the API takes JSON bodies
// only and refuses any request a browser marks as coming from another
// origin, with or without a token (a token can leak to a page; the
// --http-no-auth mode has none).

// checkAPIRequest refuses cross-origin browser requests (403) and bodies
// that are not application/json (415).
func (f *httpFront) checkAPIRequest(r *http.Request) error {
	if err := checkSameOrigin(r); err != nil {
		return err
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return nil // no body
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		if ct == "" {
			ct = "none"
		}
		return &adminError{http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", fmt.Sprintf(
			"the admin API takes JSON bodies only: send Content-Type: application/json (got %s)", ct)}
	}
	return nil
}

// checkSameOrigin refuses (403) a request a browser marks as coming from a
// page of another origin: an Origin other than this Host, or a
// Sec-Fetch-Site other than same-origin or none.
func checkSameOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return &adminError{http.StatusForbidden, "CROSS_ORIGIN", fmt.Sprintf(
				"origin %q is not this hub's (%s): the admin API and the console take no requests from pages of other origins", o, r.Host)}
		}
	}
	switch site := strings.ToLower(r.Header.Get("Sec-Fetch-Site")); site {
	case "", "same-origin", "none":
	default:
		return &adminError{http.StatusForbidden, "CROSS_ORIGIN", fmt.Sprintf(
			"a browser marked this request as coming from another site (Sec-Fetch-Site: %s): the admin API and the console take no requests from pages of other origins", site)}
	}
	return nil
}

// checkApprover lets approval over the API through only with the bearer
// token, even when --http-no-auth (NoAuth) turned it off for everything
// else: no-auth serves MCP clients that cannot send headers, and must not
// let any local process approve what runs.
func (f *httpFront) checkApprover(w http.ResponseWriter, r *http.Request) bool {
	if !f.opts.NoAuth {
		return true // ServeHTTP checked the token
	}
	if f.opts.Token == "" {
		writeAPI(w, 0, r.PathValue("name"), adminResult{}, &adminError{http.StatusForbidden, "APPROVAL_NEEDS_TOKEN", fmt.Sprintf(
			"approving over the API needs the bearer token, and this hub runs with --http-no-auth and no token (http.token): "+
				"approve in a terminal with `%s`", f.h.approveCmd(r.PathValue("name")))})
		return false
	}
	if msg, ok := f.checkBearer(r); !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-hub", error="invalid_token"`)
		writeAPI(w, 0, r.PathValue("name"), adminResult{}, &adminError{http.StatusUnauthorized, "UNAUTHENTICATED",
			msg + ": approving over the API needs the bearer token even with --http-no-auth (which covers MCP clients, not approval); " +
				"or approve in a terminal with `" + f.h.approveCmd(r.PathValue("name")) + "`"})
		return false
	}
	return true
}
