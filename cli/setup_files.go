package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Backups of a client's config file are FILE.mcp-hub-TIME.bak, a copy of
// the file before setup changed it, or FILE.mcp-hub-TIME.none when there was
// no file; TIME sorts as it runs.
const backupTime = "20060102-150405.000"

// writeWithBackup writes b to path after copying what was there (old, when
// existed) next to it, and returns the backup's path.
func writeWithBackup(path string, old []byte, existed bool, b []byte, now time.Time) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	ext := ".none"
	if existed {
		ext = ".bak"
	}
	var backup string
	for t := now.UTC(); ; t = t.Add(time.Millisecond) {
		backup = path + ".mcp-hub-" + t.Format(backupTime) + ext
		f, err := os.OpenFile(backup, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		_, err = f.Write(old)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(backup)
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		break
	}
	if err := writeAtomic(linkTarget(path), b, mode); err != nil {
		return "", err
	}
	return backup, nil
}

// linkTarget is the file path names, following symbolic links (a client
// file kept in a dotfiles repository and linked into place): setup writes
// that file, and the link stays. A path that is no link is itself; a link
// to nothing yet names the file it will be.
func linkTarget(path string) string {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path
		}
		to, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return path
}

// checkWritable reports why setup could not write path (and its backup
// beside it), before it changes anything: a file made read-only (its
// owner may not write it, which setup honours even when it runs as root),
// a directory it cannot create files in.
func checkWritable(path string) error {
	target := linkTarget(path)
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", target)
		}
		if fi.Mode().Perm()&0o200 == 0 {
			return fmt.Errorf("%s is read-only (mode %04o): make it writable (chmod u+w) to let setup change it", target, fi.Mode().Perm())
		}
	}
	for _, dir := range []string{filepath.Dir(target), filepath.Dir(path)} {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			continue // setup creates it
		}
		f, err := os.CreateTemp(dir, ".mcp-hub-probe-*")
		if err != nil {
			return fmt.Errorf("cannot create files in %s: %w", dir, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}

// writeAtomic replaces path with b: a reader sees the old file or the new
// one, never part of one.
func writeAtomic(path string, b []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// newestBackup returns the newest backup setup made of path.
func newestBackup(path string) (string, error) {
	matches, err := filepath.Glob(globQuote(path) + ".mcp-hub-*")
	if err != nil {
		return "", err
	}
	var backups []string
	for _, m := range matches {
		if strings.HasSuffix(m, ".bak") || strings.HasSuffix(m, ".none") {
			backups = append(backups, m)
		}
	}
	if len(backups) == 0 {
		return "", fmt.Errorf("%s has no backup from mcp-hub setup (%s.mcp-hub-TIME.bak)", path, filepath.Base(path))
	}
	slices.Sort(backups) // TIME sorts as it runs; the extension comes after it
	return backups[len(backups)-1], nil
}

// globQuote escapes the characters filepath.Glob reads as a pattern.
func globQuote(s string) string {
	return regexp.MustCompile(`[*?\[\\]`).ReplaceAllStringFunc(s, func(c string) string {
		if filepath.Separator == '\\' {
			return "[" + c + "]"
		}
		return `\` + c
	})
}

// setupDiff is the unified diff from old to b, with secret values masked:
// the values of the servers' env and headers, secret-looking arguments and
// URL queries of both versions, and any string whose key looks secret.
func setupDiff(path string, old, b []byte) string {
	d := udiff.Unified(path, path+" (after)", string(old), string(b))
	var secrets []string
	for _, doc := range [][]byte{old, b} {
		cc, err := clientconfig.Parse(path, doc)
		if err != nil {
			continue
		}
		for _, en := range cc.Entries {
			secrets = append(secrets, entrySecrets(en.Value)...)
		}
	}
	d = redact.NewScrubber(secrets...).Scrub(d)
	return secretKeyRE.ReplaceAllStringFunc(d, func(m string) string {
		sub := secretKeyRE.FindStringSubmatch(m)
		if !redact.SecretName(sub[2]) || redact.IsReference(sub[3]) || sub[3] == "" {
			return m
		}
		return sub[1] + `"` + redact.Mask + `"`
	})
}

// secretKeyRE is a JSON string member: "key": "value".
var secretKeyRE = regexp.MustCompile(`("((?:[^"\\]|\\.)*)"\s*:\s*)"((?:[^"\\]|\\.)*)"`)

// entrySecrets returns the secret values of a client's server entry, as
// written and as JSON writes them.
func entrySecrets(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	add := func(s string) {
		out = append(out, s)
		if j, err := json.Marshal(s); err == nil {
			out = append(out, string(j[1:len(j)-1]))
		}
	}
	for _, k := range []string{"env", "headers"} {
		kv, _ := m[k].(map[string]any)
		for _, val := range kv {
			if s, ok := val.(string); ok && s != "" && !redact.IsReference(s) {
				add(s)
			}
		}
	}
	if u, ok := m["url"].(string); ok {
		var mk redact.Masker
		if mk.URL(u) != u {
			add(u)
		}
	}
	cmd, _ := m["command"].(string)
	argv := []string{cmd}
	args, _ := m["args"].([]any)
	for _, a := range args {
		s, _ := a.(string)
		argv = append(argv, s)
	}
	var mk redact.Masker
	masked := mk.Argv(argv)
	for i := 1; i < len(argv) && i < len(masked); i++ {
		if masked[i] != argv[i] {
			add(argv[i])
			if _, val, ok := strings.Cut(argv[i], "="); ok && val != "" {
				add(val)
			}
		}
	}
	return out
}
