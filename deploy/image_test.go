package deploy

import (
	"archive/tar"
	"bufio"
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
	"time"
)

// imageEnv turns on the image test (make test-image sets it): it builds
// the image with podman, which takes a minute or two.
const imageEnv = "MCPHUB_TEST_IMAGE"

// TestImage builds the container image the way make image does and checks
// what a person deploying it relies on: the config (a non-root user, the
// entrypoint and command, the data volume, the labels), and the binary in
// it: static, answering --version and a stdio initialize. Running the
// container is tried too; a kernel that refuses it (as in a sandbox without
// the rights crun needs) is reported, not failed.
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
	t.Cleanup(func() { _ = podman(tag, "rmi", "-f", tag) })

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
	for _, want := range []string{"etc/passwd", "etc/ssl/certs/ca-certificates.crt"} {
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
	initializeOverStdio(t, bin)

	// Running it, where the kernel lets podman.
	if out, err := podmanOut("run", "--rm", tag, "--version"); err != nil {
		if strings.Contains(out, "Operation not permitted") || strings.Contains(out, "permission denied") {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			t.Logf("running containers is refused on this machine (%s); the image's binary was checked outside it", lines[len(lines)-1])
		} else {
			t.Errorf("podman run --version: %v\n%s", err, out)
		}
	} else if !strings.Contains(out, "v9.9.9-test") {
		t.Errorf("podman run --version: %s", out)
	}
}

// initializeOverStdio runs bin as a stdio MCP server and checks its answer
// to initialize.
func initializeOverStdio(t *testing.T, bin string) {
	t.Helper()
	cmd := exec.Command(bin, "--data-dir", t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"image-test","version":"1"}}}`+"\n")
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Buffer(nil, 1<<20)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, `"id":1`) || !strings.Contains(l, `"serverInfo"`) {
			t.Errorf("initialize answered %s", l)
		}
	case <-time.After(60 * time.Second):
		t.Error("no answer to initialize within 60 s")
	}
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

// podman runs podman with the vfs storage driver (scripts/podman.sh).
func podman(_ string, args ...string) error {
	_, err := podmanOut(args...)
	return err
}

func podmanOut(args ...string) (string, error) {
	out, err := exec.Command("podman", append([]string{"--storage-driver", "vfs"}, args...)...).CombinedOutput()
	return string(out), err
}
