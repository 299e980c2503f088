package redirect

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSameOrigin(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/other?x=1", true},
		{"https://Example.com/mcp", "https://example.com.:443/mcp/", true},
		{"http://example.com/mcp", "http://example.com:80/", true},
		{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp", false},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", false},
		{"http://example.com/mcp", "https://example.com/mcp", false},
		{"https://example.com/mcp", "https://evil.example.com/mcp", false},
	} {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := SameOrigin(a, b); got != tt.want {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// redirected builds the request a client makes for a redirect from
// first (method) to to, as net/http hands it to CheckRedirect.
func redirected(t *testing.T, method, first, to string, hops int, header http.Header) (*http.Request, []*http.Request) {
	t.Helper()
	var via []*http.Request
	for range hops {
		r, err := http.NewRequest(method, first, nil)
		if err != nil {
			t.Fatal(err)
		}
		if header != nil {
			r.Header = header.Clone()
		}
		via = append(via, r)
	}
	req, err := http.NewRequest(method, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Referer", first)
	req.Response = &http.Response{Status: "307 Temporary Redirect", StatusCode: 307}
	return req, via
}

func TestUpstream(t *testing.T) {
	for _, tt := range []struct {
		name, to string
		hops     int
		refused  string // "" follows
	}{
		{"same origin", "http://127.0.0.1:9000/mcp/", 1, ""},
		{"another port", "http://127.0.0.1:9001/mcp", 1, "another origin"},
		{"another name of the host", "http://localhost:9000/mcp", 1, "another origin"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", 1, "link-local"},
		{"private", "https://10.1.2.3/mcp", 1, "private network"},
		{"too many", "http://127.0.0.1:9000/mcp/", 10, "10th redirect"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, via := redirected(t, http.MethodPost, "http://127.0.0.1:9000/mcp", tt.to, tt.hops, nil)
			err := Upstream(req, via)
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var r *Refused
			if !errors.As(err, &r) || !strings.Contains(err.Error(), tt.refused) || !strings.Contains(err.Error(), "307 Temporary Redirect") {
				t.Fatalf("err = %v, want a refusal saying %q", err, tt.refused)
			}
		})
	}
}

func TestOAuth(t *testing.T) {
	bearer := http.Header{"Authorization": {"Bearer x"}}
	for _, tt := range []struct {
		name, method, to string
		header           http.Header
		refused          string // "" follows
	}{
		{"token request, same origin", http.MethodPost, "https://as.example/token2", nil, ""},
		{"token request, another origin", http.MethodPost, "https://93.184.216.34/token", nil, "carries a credential"},
		{"discovery, another public https origin", http.MethodGet, "https://93.184.216.34/.well-known/x", nil, ""},
		{"discovery with a credential", http.MethodGet, "https://93.184.216.34/.well-known/x", bearer, "carries a credential"},
		{"discovery to http", http.MethodGet, "http://93.184.216.34/.well-known/x", nil, "not https"},
		{"discovery to metadata", http.MethodGet, "https://169.254.169.254/latest/meta-data/", nil, "link-local"},
		{"discovery to a private address", http.MethodGet, "https://192.168.1.1/", nil, "private network"},
		{"discovery to loopback", http.MethodGet, "https://127.0.0.1:1/", nil, "loopback"},
		{"discovery to localhost", http.MethodGet, "https://localhost/", nil, "loopback"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, via := redirected(t, tt.method, "https://as.example/token", tt.to, 1, tt.header)
			err := OAuth(req, via)
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !SameOrigin(req.URL, via[0].URL) && req.Header.Get("Referer") != "" {
					t.Error("the Referer goes to another origin")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Fatalf("err = %v, want a refusal saying %q", err, tt.refused)
			}
		})
	}
}

// A Location is quoted up to a bound, cut on a character boundary.
func TestLocationQuoteBounded(t *testing.T) {
	long := "http://elsewhere.example/" + strings.Repeat("é", 1<<16)
	req, via := redirected(t, http.MethodPost, "http://127.0.0.1:9000/mcp", long, 1, nil)
	err := Upstream(req, via)
	if err == nil || len(err.Error()) > 1200 || !strings.Contains(err.Error(), "bytes)") {
		t.Fatalf("error of %d bytes for a Location of %d: %.300v", len(err.Error()), len(long), err)
	}
	if !utf8.ValidString(err.Error()) {
		t.Errorf("the quote was cut inside a character: %.300v", err)
	}
}

func TestClientKeepsItsOwnPolicy(t *testing.T) {
	own := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c := Client(&http.Client{CheckRedirect: own}); c.CheckRedirect == nil || c.CheckRedirect(nil, nil) != http.ErrUseLastResponse {
		t.Error("Client replaced a CheckRedirect of the caller's")
	}
	if c := Client(nil); c.CheckRedirect == nil {
		t.Error("Client(nil) follows every redirect")
	}
}

// A refusal of another origin says to change the server's url where its
// caller says the server is defined (Where); without Where, only that a
// new URL needs a new approval: it names no command of its own, since
// which apply depends on where the server is defined (mcp-hub add and
// hub_update_server refuse a server of the config file). A refusal for
// another reason says nothing of moving.
func TestRefusalSaysWhereToChangeTheURL(t *testing.T) {
	req, via := redirected(t, http.MethodPost, "http://127.0.0.1:9000/mcp", "http://127.0.0.1:9001/mcp", 1, nil)
	err := Upstream(req, via)
	var r *Refused
	if !errors.As(err, &r) || !r.Moved() {
		t.Fatalf("err = %v, want a refusal of another origin", err)
	}
	if got := err.Error(); !strings.HasSuffix(got, "(127.0.0.1 is a loopback address.) If the server has moved there, change its url to the new address: a new URL needs a new approval.") ||
		strings.Contains(got, "hub_update_server") || strings.Contains(got, "mcp-hub add") {
		t.Errorf("without Where: %s", got)
	}
	r.Where = `"x" is defined in /etc/hub.yaml: edit its url there.`
	if got := err.Error(); !strings.HasSuffix(got, `If the server has moved there, change its url to the new address. "x" is defined in /etc/hub.yaml: edit its url there.`) {
		t.Errorf("with Where: %s", got)
	}
	req, via = redirected(t, http.MethodPost, "http://127.0.0.1:9000/mcp", "http://127.0.0.1:9000/mcp/", 10, nil)
	if err := Upstream(req, via); !errors.As(err, &r) || r.Moved() || strings.Contains(err.Error(), "moved") {
		t.Errorf("too many redirects: %v", err)
	}
}
