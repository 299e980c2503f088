package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// A stored registration that cannot be decoded (a corrupt row, an unknown
// transport) never runs and never stops the hub: it is listed as FAILED
// with the reason, and can be removed. Everything else starts as usual.

// brokenState is the state a broken registration is shown in.
const brokenState = upstream.StateFailed

// brokenText is what the lists say about a broken registration.
func brokenText(b upstream.BrokenRegistration) string {
	return fmt.Sprintf("%v: %s; nothing runs for it: remove it (hub_remove_server, or `mcp-hub remove %s`) and register it again",
		upstream.ErrBroken, b.Reason, b.Name)
}

// brokenViews returns the views of the broken registrations.
func (h *Hub) brokenViews(ctx context.Context) ([]serverView, error) {
	broken, err := h.opts.Store.Broken(ctx)
	if err != nil {
		return nil, err
	}
	var out []serverView
	for _, b := range broken {
		out = append(out, serverView{Name: b.Name, Transport: "unknown", State: string(brokenState),
			Source: string(b.Source), LastError: brokenText(b)})
	}
	return out, nil
}

// withBroken merges the broken registrations' views into vs, by name.
func (h *Hub) withBroken(ctx context.Context, vs []serverView) ([]serverView, error) {
	bv, err := h.brokenViews(ctx)
	if err != nil || len(bv) == 0 {
		return vs, err
	}
	vs = append(vs, bv...)
	slices.SortStableFunc(vs, func(a, b serverView) int { return strings.Compare(a.Name, b.Name) })
	return vs, nil
}

// warnBroken logs each broken registration once (per reason).
func (h *Hub) warnBroken(ctx context.Context) {
	broken, err := h.opts.Store.Broken(ctx)
	if err != nil {
		h.logger.Warn("read the registrations", "err", err)
		return
	}
	for _, b := range broken {
		h.warnOnce("broken\x00"+b.Name+"\x00"+b.Reason, "stored registration cannot be decoded; it does not run (the others do)",
			"upstream", b.Name, "reason", b.Reason, "fix", "mcp-hub remove "+b.Name)
	}
}

// errBroken is the admin error for an operation on a broken registration.
func errBroken(b upstream.BrokenRegistration) error {
	return &adminError{http.StatusConflict, "BROKEN", fmt.Sprintf("%q: %s", b.Name, brokenText(b))}
}

// storeGetErr turns an error of Store.Get into an admin error.
func storeGetErr(name string, err error) error {
	var b upstream.BrokenRegistration
	switch {
	case errors.As(err, &b):
		return errBroken(b)
	case errors.Is(err, upstream.ErrNotFound):
		return errNotFound(name)
	}
	return errInternal("cannot read the registration", err)
}

// removeBroken removes a broken registration: whatever its source, since
// nothing of it can run (a config file that still defines the name
// registers it again on the next start or reload).
func (h *Hub) removeBroken(ctx context.Context, who string, b upstream.BrokenRegistration) (adminResult, error) {
	if err := h.opts.Store.Delete(ctx, b.Name); err != nil && !errors.Is(err, upstream.ErrNotFound) {
		return adminResult{}, errInternal("cannot remove the registration", err)
	}
	_ = h.opts.Store.Audit(ctx, who, "remove", b.Name, map[string]string{"broken": b.Reason})
	if err := h.reconcile(ctx); err != nil {
		return adminResult{}, errInternal("apply the change", err)
	}
	h.upstreamChanged(b.Name)
	return adminResult{fmt.Sprintf("Removed %q (its stored registration could not be decoded).", b.Name),
		map[string]any{"name": b.Name, "removed": true}}, nil
}

// replaceBroken deletes the broken rows whose names the config file
// defines (the file is the truth for its names; they are registered again
// from it) and the broken config rows it no longer defines.
func (h *Hub) replaceBroken(ctx context.Context, config []ConfigServer) error {
	broken, err := h.opts.Store.Broken(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for _, b := range broken {
		inFile := slices.ContainsFunc(config, func(c ConfigServer) bool { return c.Spec.Name == b.Name })
		if !inFile && b.Source != upstream.SourceConfig {
			continue
		}
		what := "the config file's entry replaces it"
		if !inFile {
			what = "forgotten: the config file no longer defines it"
		}
		h.logger.Warn("stored registration cannot be decoded; "+what, "upstream", b.Name, "reason", b.Reason, "file", h.opts.ConfigFile)
		if err := h.opts.Store.Delete(ctx, b.Name); err != nil && !errors.Is(err, upstream.ErrNotFound) {
			return fmt.Errorf("replace the undecodable registration of %s: %w", b.Name, err)
		}
		_ = h.opts.Store.Audit(ctx, "config", "replace", b.Name, map[string]string{"broken": b.Reason})
	}
	return nil
}
