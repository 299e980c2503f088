package cli

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/proc"
	"github.com/mcp-hub/mcp-hub/probe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Entries that launch mcp-hub itself (config.HubEntry): list, doctor and
// the log name them as such. One that would take this hub's own config
// file or store is not run; any other runs, a hub under this hub.

// hubUnderWords describes a config entry that runs as a hub under this
// hub; "" when name is no such entry.
func hubUnderWords(cfg *config.Config, name string) string {
	for _, he := range cfg.HubEntries {
		if he.Name == name && he.NotRun == "" {
			return fmt.Sprintf("it launches mcp-hub itself: a hub under this hub, with the config file %s and %s", he.Config, he.Store)
		}
	}
	return ""
}

// hubTargets are the config entries that launch mcp-hub and are not run,
// as doctor reports them.
func hubTargets(cfg *config.Config) []probe.Target {
	var out []probe.Target
	for _, he := range cfg.HubEntries {
		if he.NotRun != "" {
			out = append(out, probe.Target{Spec: upstream.Spec{Name: he.Name, Command: he.Command, Args: he.Args},
				Source: string(upstream.SourceConfig), NotRun: he.NotRun})
		}
	}
	return out
}

// logHubEntries logs the config entries that launch mcp-hub: those not
// run as a warning, those that run (hubs under this hub) as information;
// only the ones prev (the configuration before, nil at start) did not have.
func logHubEntries(logger *slog.Logger, cfg, prev *config.Config) {
	seen := map[string]string{}
	if prev != nil {
		for _, he := range prev.HubEntries {
			seen[he.Name] = he.NotRun
		}
	}
	for _, he := range cfg.HubEntries {
		if why, ok := seen[he.Name]; ok && why == he.NotRun {
			continue
		}
		if he.NotRun != "" {
			logger.Warn("config entry not run: "+he.NotRun, "entry", he.Name)
		} else {
			logger.Info("upstream launches mcp-hub itself: a hub under this hub", "upstream", he.Name, "config", he.Config, "store", he.Store)
		}
	}
}

// maxHubsAbove is how many hubs may run above a hub, each started by the
// one above it, before a hub refuses to start: an upstream that launches
// mcp-hub and leads back to a hub above it (through a config file or a
// store that is not this hub's own, which mcp-hub cannot see) would
// otherwise start hubs without end.
const maxHubsAbove = 3

// hubsAbove counts the processes above this one that run this program,
// when it runs as an upstream of a hub (the marker is in environ). Where
// the process table cannot be read it is 0.
func hubsAbove(environ []string) int {
	if v, _ := lookupOf(environ)(proc.MarkerVar); v == "" {
		return 0
	}
	self, err := os.Executable()
	if err != nil {
		return 0
	}
	n := 0
	for pid, steps := os.Getppid(), 0; pid > 1 && steps < 64; steps++ {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == self {
			n++
		}
		st, err := proc.ReadStat(pid)
		if err != nil {
			break
		}
		pid = st.PPID
	}
	return n
}

// tooDeep is what a hub says when too many hubs run above it.
func tooDeep(n int) string {
	return fmt.Sprintf("%d hubs run above this one, each started by the one above it: an upstream that launches mcp-hub itself leads back to a hub above it "+
		"(mcp-hub list names the entries that launch mcp-hub itself; one with the config file or the store of the hub that runs it is never run); not starting another", n)
}

// selfLaunch says why a registration mcp-hub add or import would make
// must not be made: it launches mcp-hub with this hub's config file or
// store. It is "" when it may.
func selfLaunch(cfg *config.Config, spec upstream.Spec) string {
	if he, ok := cfg.HubUnder(spec); ok {
		return he.NotRun
	}
	return ""
}

// hubEntries finds the entries of a client's file that launch mcp-hub (or
// this binary, exe, whatever its name): the one setup updates (the one
// named name when it does, else the first), "" when there is none, and the
// others.
func hubEntries(cc *clientconfig.File, name, exe string) (target string, others []string) {
	var all []string
	for _, en := range cc.Entries {
		m, _ := en.Value.(map[string]any)
		command, _ := m["command"].(string)
		if (launchesHub(en.Value) || exe != "" && command != "" && sameFile(command, exe)) && !slices.Contains(all, en.Name) {
			all = append(all, en.Name)
		}
	}
	if len(all) == 0 {
		return "", nil
	}
	target = all[0]
	if slices.Contains(all, name) {
		target = name
	}
	return target, slices.DeleteFunc(all, func(n string) bool { return n == target })
}

// setHubEntry makes the entry name of a client's file b launch the hub
// (entry); existing, the entry that launches mcp-hub already ("" when none),
// goes when it has another name.
func setHubEntry(b []byte, cc *clientconfig.File, existing, name string, entry clientconfig.Server) ([]byte, error) {
	if existing != "" && existing != name {
		var err error
		if b, _, err = clientconfig.RemoveServer(b, cc.Shape, existing); err != nil {
			return nil, err
		}
	}
	return clientconfig.SetServer(b, cc.Shape, name, entry)
}

// goRunBuild reports whether exe is a binary go run built in a temporary
// directory, which it removes when the program exits.
func goRunBuild(exe string) bool {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	rel, err := filepath.Rel(tmp, exe)
	return err == nil && strings.HasPrefix(rel, "go-build") && strings.Contains(filepath.ToSlash(rel), "/exe/")
}
