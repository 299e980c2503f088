package deploy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// imageEnv turns on the image test (make test-image sets it): it builds
// the image with podman, which takes a minute or two.
const imageEnv = "MCPHUB_TEST_IMAGE"

// TestImage builds the container image the way make image does and checks
// what a person deploying it relies on: the config (a non-root user, the
// entrypoint and command, the data volume, the labels), and the binary in
// it: static, answering --version and a stdio initialize. Then it runs the
// image (image_run_test.go): --version, stdio through podman run -i, the
// default command serving HTTP with a token, as the non-root user, the
// volume keeping registrations, a clean stop. A machine where podman
// cannot run containers even with the flags scripts/podman.sh finds is
// reported, not failed: what can be checked without running is.
func TestImage(t *testing.T) {
	if os.Getenv(imageEnv) == "" {
		t.Skipf("SKIPPING the container image test (podman): run make test-image (it sets %s=1)", imageEnv)
	}
	dir, err := root()
	if err != nil {
		t.Fatal(err)
	}
	tag := "localhost/mcp-hub:test-image"
	archive := filepath.Join(t.TempDir(), "image.tar")
	cmd := exec.Command(filepath.Join(dir, "scripts", "image.sh"), "-t", tag, "-o", archive)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VERSION=v9.9.9-test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, tail(string(out), 4000))
	}
	t.Cleanup(func() { _, _ = podmanOut("rmi", "-f", tag) })

	// The image's config.
	out, err := podmanOut("image", "inspect", tag)
	if err != nil {
		t.Fatalf("podman image inspect: %v\n%s", err, out)
	}
	var inspect []struct {
		Config struct {
			User       string
			Entrypoint []string
			Cmd        []string
			Env        []string
			Volumes    map[string]struct{}
			Labels     map[string]string
			WorkingDir string
		}
		Architecture, Os string
	}
	if err := json.Unmarshal([]byte(out), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	c := inspect[0].Config
	if c.User == "" || strings.HasPrefix(c.User, "0") || strings.HasPrefix(c.User, "root") {
		t.Errorf("user %q: the hub must not run as root", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/mcp-hub"}) {
		t.Errorf("entrypoint %q", c.Entrypoint)
	}
	if !slices.Equal(c.Cmd, []string{"serve", "--http", "0.0.0.0:7411", "--http-allow-remote"}) {
		t.Errorf("cmd %q", c.Cmd)
	}
	if _, ok := c.Volumes["/data"]; !ok {
		t.Errorf("volumes %v: the data dir /data is not a volume", c.Volumes)
	}
	if !slices.Contains(c.Env, "MCP_HUB_DATA_DIR=/data") {
		t.Errorf("env %q: the data dir is not the volume", c.Env)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  "v9.9.9-test",
		"org.opencontainers.image.source":   "https://github.com/mcp-hub/mcp-hub",
		"org.opencontainers.image.licenses": "MIT",
	} {
		if got := c.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if inspect[0].Os != "linux" {
		t.Errorf("os %q", inspect[0].Os)
	}

	// The binary, exported from the image's layers.
	files := imageFiles(t, archive)
	bin := filepath.Join(t.TempDir(), "mcp-hub")
	if err := os.WriteFile(bin, files["usr/local/bin/mcp-hub"], 0o755); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"etc/passwd", "etc/ssl/certs/ca-certificates.crt", "usr/share/doc/mcp-hub/LICENSE", "usr/share/doc/mcp-hub/NOTICE"} {
		if files[want] == nil {
			t.Errorf("the image lacks /%s", want)
		}
	}
	if !strings.Contains(string(files["etc/passwd"]), ":65532:65532:") {
		t.Errorf("/etc/passwd has no entry for the image's user: %s", files["etc/passwd"])
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("the image's mcp-hub is not an ELF binary: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the image's mcp-hub is dynamically linked: the image has no libc")
		}
	}
	f.Close()
	v, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "v9.9.9-test") {
		t.Errorf("mcp-hub --version: %v\n%s", err, v)
	}
	stdioSession(t, exec.Command(bin, "--data-dir", t.TempDir()))

	// Running it, with what podman needs on this host.
	runContainers(t, dir, tag)
}

// imageFiles returns the regular files of an OCI archive's image (one
// platform), later layers over earlier ones.
func imageFiles(t *testing.T, archive string) map[string][]byte {
	t.Helper()
	blobs := map[string][]byte{}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			blobs[strings.TrimPrefix(h.Name, "./")] = b
		}
	}
	blob := func(digest string) []byte {
		b := blobs["blobs/"+strings.Replace(digest, ":", "/", 1)]
		if b == nil {
			t.Fatalf("the archive lacks blob %s", digest)
		}
		return b
	}
	type desc struct{ MediaType, Digest string }
	var index struct{ Manifests []desc }
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil || len(index.Manifests) == 0 {
		t.Fatalf("index.json: %v", err)
	}
	var manifest struct{ Layers []desc }
	if err := json.Unmarshal(blob(index.Manifests[0].Digest), &manifest); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	files := map[string][]byte{}
	for _, l := range manifest.Layers {
		var r io.Reader = bytes.NewReader(blob(l.Digest))
		if strings.HasSuffix(l.MediaType, "gzip") {
			zr, err := gzip.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		lt := tar.NewReader(r)
		for {
			h, err := lt.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("layer %s: %v", l.Digest, err)
			}
			if h.Typeflag == tar.TypeReg {
				b, _ := io.ReadAll(lt)
				files[strings.TrimPrefix(h.Name, "./")] = b
			}
		}
	}
	return files
}

// podmanOut runs podman with the vfs storage driver (scripts/podman.sh)
// and returns what it wrote to stdout and stderr.
func podmanOut(args ...string) (string, error) {
	out, err := exec.Command("podman", append([]string{"--storage-driver", "vfs"}, args...)...).CombinedOutput()
	return string(out), err
}
