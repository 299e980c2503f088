package upstream

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// An upstream may ask the client for its roots (roots/list): the
// directories it should work in. When a client session can answer, the
// hub forwards the request to it; otherwise the hub answers with the
// spec's Roots, so a server that asks once when it starts (the filesystem
// server does) gets an answer instead of an error.

// Root is one root of a roots/list answer.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// validRoot checks a root as written in a spec: an absolute directory,
// one under the home directory (~/…), or a file:// URI.
func validRoot(r string) error {
	switch {
	case strings.HasPrefix(r, "file://"):
		u, err := url.Parse(r)
		if err != nil || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
			return errors.New("a file:// URI of a directory on this machine, e.g. file:///home/me/notes")
		}
	case r == "~" || strings.HasPrefix(r, "~/") || filepath.IsAbs(r):
	default:
		return errors.New("an absolute directory (or ~/…) or a file:// URI")
	}
	if strings.ContainsAny(r, "\x00\r\n") {
		return errors.New("must not contain NUL, CR or LF")
	}
	return nil
}

// RootList returns the spec's roots as a roots/list answer lists them:
// file:// URIs named after their last element (~ is the home directory of
// the hub's user). It is empty, never nil, when the spec has none.
func (s *Spec) RootList() []Root {
	out := []Root{}
	for _, r := range s.Roots {
		if strings.HasPrefix(r, "file://") {
			u, _ := url.Parse(r)
			out = append(out, Root{URI: r, Name: filepath.Base(filepath.FromSlash(u.Path))})
			continue
		}
		p := r
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, strings.TrimPrefix(p[1:], "/"))
			}
		}
		p = filepath.Clean(p)
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
		if !strings.HasPrefix(u.Path, "/") {
			u.Path = "/" + u.Path // C:/x on Windows: file:///C:/x
		}
		out = append(out, Root{URI: u.String(), Name: filepath.Base(p)})
	}
	return out
}
