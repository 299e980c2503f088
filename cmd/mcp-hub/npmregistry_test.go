package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"strings"
	"sync"
	"testing"
)

// npmRegistry is an npm registry on this machine serving the packages
// scripts/npm.sh packed, as the public registry serves them after a
// release: a packument per package (GET /@scope%2fname) whose one version
// is the package.json in the tarball plus its dist (tarball URL,
// integrity), and the tarballs. npx and npm install from it as from any
// registry. It records every request.
type npmRegistry struct {
	url      string
	packages map[string][]byte // packument by package name
	tarballs map[string][]byte // tarball by URL path

	mu       sync.Mutex
	requests []string // method and path of each request, in order
}

// startNPMRegistry serves the packed tarballs. absent are packages the
// test did not build (the other platforms' binaries): each gets a
// packument naming its os and cpu, as the published one does, but no
// tarball (a request for it gets 404, which the test can find in
// requests).
func startNPMRegistry(t *testing.T, tarballs []string, absent []npmManifest) *npmRegistry {
	t.Helper()
	r := &npmRegistry{packages: map[string][]byte{}, tarballs: map[string][]byte{}}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	for _, f := range tarballs {
		tgz, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pj, err := packageJSON(tgz)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var m map[string]any
		if err := json.Unmarshal(pj, &m); err != nil {
			t.Fatalf("%s: package.json: %v", f, err)
		}
		name, _ := m["name"].(string)
		version, _ := m["version"].(string)
		tarPath := "/" + name + "/-/" + path.Base(name) + "-" + version + ".tgz"
		r.tarballs[tarPath] = tgz
		s512 := sha512.Sum512(tgz)
		s1 := sha1.Sum(tgz)
		m["_id"] = name + "@" + version
		m["dist"] = map[string]any{
			"tarball":   r.url + tarPath,
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
			"shasum":    hex.EncodeToString(s1[:]),
		}
		r.packages[name] = packument(name, version, m)
	}
	for _, a := range absent {
		m := map[string]any{
			"name": a.Name, "version": a.Version, "os": a.OS, "cpu": a.CPU, "_id": a.Name + "@" + a.Version,
			"dist": map[string]any{"tarball": r.url + "/" + a.Name + "/-/" + path.Base(a.Name) + "-" + a.Version + ".tgz"},
		}
		r.packages[a.Name] = packument(a.Name, a.Version, m)
	}
	return r
}

// npmManifest is what a packument says of a package this test has no
// tarball of.
type npmManifest struct {
	Name, Version string
	OS, CPU       []string
}

func packument(name, version string, manifest map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"name":      name,
		"dist-tags": map[string]string{"latest": version},
		"versions":  map[string]any{version: manifest},
	})
	return b
}

// packageJSON returns package/package.json of an npm tarball.
func packageJSON(tgz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, errors.New("no package/package.json")
		}
		if h.Name == "package/package.json" {
			return io.ReadAll(tr)
		}
	}
}

func (r *npmRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests = append(r.requests, req.Method+" "+req.URL.Path)
	r.mu.Unlock()
	if req.Method == http.MethodGet {
		if b, ok := r.packages[strings.TrimPrefix(req.URL.Path, "/")]; ok { // the path is /@scope%2fname, decoded
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
			return
		}
		if b, ok := r.tarballs[req.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(b)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	io.WriteString(w, `{"error":"not found"}`)
}

// Requests returns the requests served so far.
func (r *npmRegistry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// env is the environment of npm and npx using the registry, with cache as
// npm's cache (npx's installs go below it).
func (r *npmRegistry) env(cache string) []string {
	return []string{
		"npm_config_registry=" + r.url + "/",
		"npm_config_cache=" + cache,
		"npm_config_offline=false",
		"npm_config_audit=false",
		"npm_config_fund=false",
		"npm_config_update_notifier=false",
	}
}
