package hub

import (
	"errors"
	"net/http"
)

// Front is the hub's HTTP front ([Hub.HTTPHandler]) with its request
// checks, for a handler mounted beside it on the same server (the web
// console): the same Host, Origin and bearer-token rules as /mcp and the
// admin API, not a second copy of them.
type Front struct {
	f *httpFront
}

// HTTPFront returns the hub's HTTP front, as HTTPHandler does.
func (h *Hub) HTTPFront(opts *HTTPOptions) (*Front, error) {
	hd, err := h.HTTPHandler(opts)
	if err != nil {
		return nil, err
	}
	return &Front{f: hd.(*httpFront)}, nil
}

// ServeHTTP serves the hub's routes (/mcp, /sse, /api/…, …).
func (fr *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) { fr.f.ServeHTTP(w, r) }

// CheckHost refuses a request for a Host that is not the hub's
// (DNS-rebinding protection), as on /mcp.
func (fr *Front) CheckHost(r *http.Request) error {
	if msg, ok := fr.f.checkHost(r); !ok {
		return &adminError{http.StatusForbidden, "FORBIDDEN_HOST", msg}
	}
	return nil
}

// CheckOrigin refuses a browser request from an Origin that is neither
// loopback nor configured, as on /mcp.
func (fr *Front) CheckOrigin(r *http.Request) error {
	if msg, ok := fr.f.checkOrigin(r); !ok {
		return &adminError{http.StatusForbidden, "FORBIDDEN_ORIGIN", msg}
	}
	return nil
}

// CheckSameOrigin refuses a request a browser marks as coming from a page
// of another origin (Origin, Sec-Fetch-Site), as the admin API does.
func (fr *Front) CheckSameOrigin(r *http.Request) error { return checkSameOrigin(r) }

// CheckBearer checks the request's bearer token (Authorization: Bearer),
// in constant time. It fails when the hub has no token, --http-no-auth or
// not. With an identity provider (HTTPOptions.Auth) it takes the provider's
// tokens that carry the admin scope instead.
func (fr *Front) CheckBearer(r *http.Request) error {
	if rs := fr.f.rs; rs != nil {
		return rs.checkAdmin(r)
	}
	if msg, ok := fr.f.checkBearer(r); !ok {
		return &adminError{http.StatusUnauthorized, "UNAUTHENTICATED", msg}
	}
	return nil
}

// ErrorCode returns the REST API's error code of one of the checks' or
// operations' errors ("INTERNAL" for any other).
func ErrorCode(err error) string {
	var ae *adminError
	if errors.As(err, &ae) {
		return ae.code
	}
	return "INTERNAL"
}
