package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"reflect"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
)

// configWatcher applies edits of the config file to the running hub. It
// polls the file's content, so edits in place, editors' rename-and-replace
// and delete-then-recreate all look alike; a missing or broken file is
// logged and the last good configuration stays in force.
type configWatcher struct {
	fs      *pflag.FlagSet
	environ []string
	hub     *hub.Hub
	logger  *slog.Logger
	last    *config.Config // the configuration in force
	sum     [32]byte       // of the file content last seen
	missing bool
}

// run polls every interval until ctx ends.
func (w *configWatcher) run(ctx context.Context, interval time.Duration) {
	if b, err := os.ReadFile(w.last.File); err == nil {
		w.sum = sha256.Sum256(b)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.check(ctx)
	}
}

// check applies the file if it changed since the last look.
func (w *configWatcher) check(ctx context.Context) {
	file := w.last.File
	b, err := os.ReadFile(file)
	if err != nil {
		if !w.missing {
			w.missing = true
			if errors.Is(err, fs.ErrNotExist) {
				w.logger.Warn("config file is gone; the last good configuration stays in force", "file", file)
			} else {
				w.logger.Warn("cannot read the config file; the last good configuration stays in force", "file", file, "err", err)
			}
		}
		return
	}
	w.missing = false
	sum := sha256.Sum256(b)
	if sum == w.sum {
		return
	}
	w.sum = sum
	next, err := loadConfig(w.fs, w.environ)
	if err != nil {
		w.logger.Error("config edit not applied; the last good configuration stays in force", "err", err)
		return
	}
	if next.File != file {
		w.logger.Warn("the config file changed place; keeping the one in use", "file", file, "now", next.File)
		return
	}
	added, removed, changed := diffServers(w.last, next)
	if err := w.hub.Reload(ctx, next.HubServers()); err != nil {
		w.logger.Error("config edit applied in part", "err", err)
	} else {
		w.logger.Info("config reloaded", "file", file, "added", added, "removed", removed, "changed", changed)
	}
	logHubEntries(w.logger, next, w.last)
	if !sameSettings(w.last, next) {
		w.logger.Warn("settings other than servers changed in the config file; they take effect at the next start", "file", file)
	}
	w.last = next
}

// diffServers names the servers an edit adds, removes and changes.
func diffServers(a, b *config.Config) (added, removed, changed []string) {
	old := map[string]config.Server{}
	for _, s := range a.Servers {
		old[s.Spec.Name] = s
	}
	seen := map[string]bool{}
	for _, s := range b.Servers {
		seen[s.Spec.Name] = true
		o, ok := old[s.Spec.Name]
		switch {
		case !ok:
			added = append(added, s.Spec.Name)
		case !reflect.DeepEqual(o, s):
			changed = append(changed, s.Spec.Name)
		}
	}
	for _, s := range a.Servers {
		if !seen[s.Spec.Name] {
			removed = append(removed, s.Spec.Name)
		}
	}
	return added, removed, changed
}

// sameSettings reports whether two configurations agree on everything but
// their servers.
func sameSettings(a, b *config.Config) bool {
	x, y := *a, *b
	x.Servers, y.Servers = nil, nil
	x.HubEntries, y.HubEntries = nil, nil
	return reflect.DeepEqual(x, y)
}
