package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// NPMPackage is the npm package that launches the hub: npx -y NPMPackage.
// Its sources are npm/cli; scripts/npm.sh builds it.
const NPMPackage = clientconfig.NPMPackage

// setupClients are the clients setup knows, by the name it takes, with
// their clientconfig IDs.
var setupClients = []struct{ arg, id string }{
	{"claude", "claude-desktop"},
	{"claude-code", "claude-code"},
	{"cursor", "cursor"},
	{"vscode", "vscode"},
	{"windsurf", "windsurf"},
}

const setupUse = `CLIENT [--launcher npx|path] [--move-servers] [--dry-run | --undo] [flags]

Adds the hub to an MCP client's config file, so that the client launches
mcp-hub; with --move-servers the client then sees its servers once, through
the hub. CLIENT and the file it keeps its servers in on this machine
(--config-file names another, such as a project's .vscode/mcp.json):

%s
The entry (named mcp-hub; --name) runs "npx -y ` + NPMPackage + `"
(--launcher npx, the default when npm installed this binary) or this binary
by its absolute path (--launcher path, the default otherwise), with the
config file and data directory setup uses (when they are not the defaults)
and the other config flags given to setup. An entry that launches mcp-hub
already, under any name, is the one updated (--name renames it): a second
would make the client start two hubs.

--move-servers imports the file's other servers into the hub, as mcp-hub
import does (approved: a person running this is the approval), and removes
from the file each one the hub now holds, so the client sees it once,
through the hub. An entry the hub does not take (a name it has for another
server, an entry it cannot read) stays in the file, with the reason.

Before it changes the file, setup copies it next to itself as
FILE.mcp-hub-TIME.bak; running it again changes nothing. Every other entry,
key and comment of the file stays as it was. --dry-run prints the change as a
diff (secret values masked) and changes nothing. --undo puts the newest
backup back, byte for byte, and keeps the file it replaces as
FILE.mcp-hub-TIME.undone; the servers it moved stay in the hub.`

// Setup adds the hub to an MCP client's config file.
func Setup(ctx context.Context, e *Env) int {
	fs := e.flags(fmt.Sprintf(setupUse, e.setupClientList()))
	file := fs.String("config-file", "", "the client's config file (default: where CLIENT keeps it on this OS)")
	launcher := fs.String("launcher", "", `how the client starts the hub: "npx" (npx -y `+NPMPackage+`) or "path" (this binary's absolute path)`)
	name := fs.String("name", "mcp-hub", "the name of the hub's entry in the client's file")
	move := fs.Bool("move-servers", false, "import the file's other servers into the hub and remove them from the file")
	dryRun := fs.Bool("dry-run", false, "print the change as a diff and change nothing")
	undo := fs.Bool("undo", false, "restore the file from its newest backup")
	cfg, code, ok := e.parse(fs)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		return e.argCountError(fs.Args(), 1)
	}
	client, ok := setupClient(fs.Arg(0))
	if !ok {
		return e.usageError("unknown client %q; want one of %s", fs.Arg(0), setupClientNames())
	}
	path := *file
	if path == "" {
		p, err := client.UserPath(runtime.GOOS, e.userDirs())
		if err != nil {
			fmt.Fprintf(e.Stderr, "mcp-hub setup: %s: %v; name the file with --config-file\n", client.Name, err)
			return ExitConfig
		}
		path = p
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if *undo {
		if *move {
			return e.usageError("--undo restores the file alone; it takes no --move-servers")
		}
		return e.setupUndo(ctx, cfg, client, path, *dryRun)
	}
	entry, err := e.hubEntry(fs, cfg, client, *launcher)
	if err != nil {
		return e.usageError("%v", err)
	}

	old, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(e.Stderr, "mcp-hub setup:", err)
		return ExitFail
	}
	cc, err := clientconfig.Parse(path, old)
	switch {
	case !existed || errors.Is(err, clientconfig.ErrNoServers):
		cc = &clientconfig.File{Path: path, Shape: client.Shape}
	case err != nil:
		fmt.Fprintln(e.Stderr, "mcp-hub setup:", err)
		fmt.Fprintln(e.Stderr, "Nothing was changed.")
		return ExitFail
	}
	// The entry that launches mcp-hub already, whatever its name, is the
	// hub's: it is updated (renamed when --name says so), never joined by
	// a second one, which would make the client start two hubs.
	existing, extraHubs := hubEntries(cc, *name, entry.Command)
	target := *name
	if existing != "" && !fs.Changed("name") {
		target = existing
	}
	var kept []string
	if existing != "" {
		for _, en := range cc.Entries {
			if en.Name == existing {
				entry, kept = keepEntrySettings(en.Value, entry)
			}
		}
		if msg := keptStoreConflict(kept, e.prog(), fs.Arg(0)); *move && msg != "" {
			fmt.Fprintf(e.Stderr, "mcp-hub setup: %s: %s\nNothing was imported or changed.\n", path, msg)
			return ExitFail
		}
	}
	updated, err := setHubEntry(old, cc, existing, target, entry)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-hub setup: %s: %v\nNothing was changed.\n", path, err)
		return ExitFail
	}

	var moved []string
	code = ExitOK
	if *move {
		var others []clientconfig.Entry
		for _, en := range cc.Entries {
			switch {
			case en.Name == target || en.Name == existing:
			case launchesHub(en.Value) || slices.Contains(extraHubs, en.Name):
				// Left in the file, said below.
			default:
				others = append(others, en)
			}
		}
		cc.Entries = others
		if len(others) > 0 && !*dryRun {
			// Before anything is imported: a file setup cannot write would
			// leave the servers in the hub and in the file.
			if err := checkWritable(path); err != nil {
				fmt.Fprintf(e.Stderr, "mcp-hub setup: %v\nNothing was imported or changed.\n", err)
				return ExitFail
			}
		}
		if len(others) > 0 {
			code = importServers(ctx, e, cfg, cc, *dryRun)
			fmt.Fprintln(e.Stdout)
		}
		if moved, err = movable(ctx, e, cfg, cc, *dryRun); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub setup:", err)
			return ExitFail
		}
		for _, n := range moved {
			if updated, _, err = clientconfig.RemoveServer(updated, cc.Shape, n); err != nil {
				fmt.Fprintf(e.Stderr, "mcp-hub setup: %s: %v\n", path, err)
				return ExitFail
			}
		}
	}

	for _, n := range extraHubs {
		fmt.Fprintf(e.Stdout, "%s: left in the file: it launches mcp-hub too, so %s starts two hubs; remove one of them\n", n, client.Name)
	}
	if existed && bytes.Equal(updated, old) {
		fmt.Fprintf(e.Stdout, "%s is set up already: its entry %q launches the hub. Nothing was changed.\n", path, target)
		return code
	}
	if *dryRun {
		fmt.Fprint(e.Stdout, setupDiff(path, old, updated))
		fmt.Fprintln(e.Stdout, "Dry run: nothing was changed.")
		return code
	}
	if err := checkWritable(path); err != nil {
		fmt.Fprintf(e.Stderr, "mcp-hub setup: %v\nNothing was changed.\n", err)
		return ExitFail
	}
	backup, err := writeWithBackup(path, old, existed, updated, e.now())
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub setup:", err)
		return ExitFail
	}
	fmt.Fprintf(e.Stdout, "%s: %s\n", client.Name, path)
	fmt.Fprintf(e.Stdout, "  %q launches the hub: %s\n", target, strings.Join(redact.Argv(append([]string{entry.Command}, entry.Args...)), " "))
	switch {
	case existing != "" && existing != target:
		fmt.Fprintf(e.Stdout, "  (it replaces %q, which launched mcp-hub)\n", existing)
	case existing != "" && existing != *name:
		fmt.Fprintf(e.Stdout, "  (the entry that launched mcp-hub already, updated: no second hub entry was added)\n")
	}
	if len(kept) > 0 {
		fmt.Fprintf(e.Stdout, "  kept from the entry it updates: %s\n", strings.Join(kept, "; "))
	}
	if len(moved) > 0 {
		fmt.Fprintf(e.Stdout, "  moved into the hub: %s\n", strings.Join(moved, ", "))
	}
	fmt.Fprintf(e.Stdout, "Backup: %s (%s setup %s --undo puts it back)\n", backup, e.prog(), fs.Arg(0))
	fmt.Fprintf(e.Stdout, "Restart %s to start the hub.\n", client.Name)
	return code
}

// setupClient returns the client setup's name arg stands for.
func setupClient(arg string) (clientconfig.Client, bool) {
	for _, c := range setupClients {
		if arg == c.arg || arg == c.id {
			return clientconfig.ClientByID(c.id)
		}
	}
	return clientconfig.Client{}, false
}

func setupClientNames() string {
	var names []string
	for _, c := range setupClients {
		names = append(names, c.arg)
	}
	return strings.Join(names, ", ")
}

// setupClientList lists the clients and their files on this OS, for the
// usage text.
func (e *Env) setupClientList() string {
	var b strings.Builder
	for _, sc := range setupClients {
		c, _ := clientconfig.ClientByID(sc.id)
		p, err := c.UserPath(runtime.GOOS, e.userDirs())
		if err != nil {
			p = err.Error()
		}
		fmt.Fprintf(&b, "  %-12s %s: %s\n", sc.arg, c.Name, p)
	}
	return b.String()
}

// userDirs are the folders client config paths start from, by the
// command's environment (HOME; on Windows USERPROFILE and APPDATA), else
// the process's.
func (e *Env) userDirs() clientconfig.Dirs {
	env := func(k string) string {
		for _, kv := range slices.Backward(e.Environ) {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	d := clientconfig.Dirs{Home: env("HOME"), AppData: env("APPDATA")}
	if runtime.GOOS == "windows" && env("USERPROFILE") != "" {
		d.Home = env("USERPROFILE")
	}
	if d.Home == "" {
		d.Home, _ = os.UserHomeDir()
	}
	return d
}

// hubEntry is the entry that makes client launch the hub with launcher
// ("" for the default) and the configuration setup runs with: the config
// file and data dir in effect when they are not the defaults (from a flag
// or the environment: the client starts the hub without either), and the
// other config flags given to setup.
func (e *Env) hubEntry(flags *pflag.FlagSet, cfg *config.Config, client clientconfig.Client, launcher string) (clientconfig.Server, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if launcher == "" {
		launcher = "path"
		if err == nil && slices.Contains(strings.Split(filepath.ToSlash(exe), "/"), "node_modules") {
			launcher = "npx" // npm installed this binary (npx, npm install -g)
		}
	}
	var command string
	var args []string
	switch launcher {
	case "npx":
		command, args = "npx", []string{"-y", NPMPackage}
		if runtime.GOOS == "windows" {
			// npx is npx.cmd there, which clients cannot start without a shell.
			command, args = "cmd", append([]string{"/c", "npx"}, args...)
		}
	case "path":
		if err != nil {
			return clientconfig.Server{}, fmt.Errorf("cannot find this binary's path (%v); use --launcher npx", err)
		}
		if goRunBuild(exe) {
			return clientconfig.Server{}, fmt.Errorf("this binary is a temporary build of go run (%s), gone when it exits, so the client could not start it: build one (make build) and run ./bin/mcp-hub setup", exe)
		}
		command = exe
	default:
		return clientconfig.Server{}, fmt.Errorf(`--launcher %q: want "npx" or "path"`, launcher)
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	if cfg.File != "" && cfg.File != config.DefaultFile() {
		args = append(args, "--config", abs(cfg.File))
	}
	if cfg.DataDir != "" {
		args = append(args, "--data-dir", abs(cfg.DataDir))
	}
	own := pflag.NewFlagSet("", pflag.ContinueOnError)
	config.AddFlags(own)
	flags.Visit(func(f *pflag.Flag) {
		if own.Lookup(f.Name) != nil && f.Name != "config" && f.Name != "data-dir" {
			args = append(args, "--"+f.Name, f.Value.String())
		}
	})
	return clientconfig.HubEntry(client, command, args...), nil
}

// launchesHub reports whether a client's server entry runs mcp-hub: its
// command is an mcp-hub binary or its arguments name the npm package.
func launchesHub(v any) bool {
	m, _ := v.(map[string]any)
	cmd, _ := m["command"].(string)
	var args []string
	list, _ := m["args"].([]any)
	for _, a := range list {
		if s, ok := a.(string); ok {
			args = append(args, s)
		}
	}
	_, ok := clientconfig.LaunchesHub(cmd, args)
	return ok
}

// movable returns the names of the entries of cc the hub holds now (or,
// on a dry run, would hold after importing them): approved, launched
// exactly as the entry says, from its store or its config file.
func movable(ctx context.Context, e *Env, cfg *config.Config, cc *clientconfig.File, dryRun bool) ([]string, error) {
	held := map[string]string{} // name -> fingerprint, "" when not approved
	for _, s := range cfg.Servers {
		held[s.Spec.Name] = s.Spec.Fingerprint()
	}
	dbPath, err := hubstore.Path(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if cfg.Store != "" || fileExists(dbPath) {
		st, err := openStore(ctx, e, cfg)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		regs, err := st.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range regs {
			if _, ok := held[r.Spec.Name]; ok {
				continue // the config file's wins
			}
			held[r.Spec.Name] = ""
			if r.Approved() {
				held[r.Spec.Name] = r.Spec.Fingerprint()
			}
		}
	}
	var names []string
	for _, it := range planImport(cc) {
		if it.Outcome != importAdded {
			continue
		}
		fp, ok := held[it.Name]
		if ok && fp != "" && fp == it.Server.Spec.Fingerprint() || !ok && dryRun {
			names = append(names, it.Name)
		}
	}
	return names, nil
}

// setupUndo restores path from its newest backup.
func (e *Env) setupUndo(ctx context.Context, cfg *config.Config, client clientconfig.Client, path string, dryRun bool) int {
	backup, err := newestBackup(path)
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub setup --undo:", err)
		return ExitFail
	}
	cur, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(e.Stderr, "mcp-hub setup --undo:", err)
		return ExitFail
	}
	var prev []byte
	hadFile := strings.HasSuffix(backup, ".bak")
	if hadFile {
		if prev, err = os.ReadFile(backup); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub setup --undo:", err)
			return ExitFail
		}
	}
	if dryRun {
		fmt.Fprint(e.Stdout, setupDiff(path, cur, prev))
		fmt.Fprintf(e.Stdout, "Dry run: would restore %s from %s; nothing was changed.\n", path, backup)
		return ExitOK
	}
	if err := checkWritable(path); err != nil {
		fmt.Fprintf(e.Stderr, "mcp-hub setup --undo: %v\nNothing was changed.\n", err)
		return ExitFail
	}
	if exists {
		undone := strings.TrimSuffix(strings.TrimSuffix(backup, ".bak"), ".none") + ".undone"
		if err := os.WriteFile(undone, cur, 0o600); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub setup --undo:", err)
			return ExitFail
		}
		fmt.Fprintf(e.Stdout, "Kept what %s held as %s.\n", path, undone)
	}
	if hadFile {
		mode := os.FileMode(0o600)
		if fi, err := os.Stat(backup); err == nil {
			mode = fi.Mode().Perm()
		}
		err = writeAtomic(linkTarget(path), prev, mode) // through a link: the link stays
	} else if exists {
		err = os.Remove(linkTarget(path))
	}
	if err == nil {
		err = os.Remove(backup)
	}
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub setup --undo:", err)
		return ExitFail
	}
	if hadFile {
		fmt.Fprintf(e.Stdout, "Restored %s from %s.\n", path, backup)
	} else {
		fmt.Fprintf(e.Stdout, "Removed %s: there was none before setup (%s).\n", path, backup)
	}
	if also := e.stillInHub(ctx, cfg, path, prev); len(also) > 0 {
		fmt.Fprintf(e.Stdout, "The hub keeps the servers it took: %s (%s lists them again; %s remove NAME drops one from the hub).\n",
			strings.Join(also, ", "), client.Name, e.prog())
	}
	fmt.Fprintf(e.Stdout, "Restart %s to load the file.\n", client.Name)
	return ExitOK
}

// stillInHub returns the servers of the restored file b that the hub's
// store holds too.
func (e *Env) stillInHub(ctx context.Context, cfg *config.Config, path string, b []byte) []string {
	cc, err := clientconfig.Parse(path, b)
	if err != nil {
		return nil
	}
	dbPath, err := hubstore.Path(cfg.DataDir)
	if err != nil || (cfg.Store == "" && !fileExists(dbPath)) {
		return nil
	}
	st, err := openStore(ctx, e, cfg)
	if err != nil {
		return nil
	}
	defer st.Close()
	var names []string
	for _, en := range cc.Entries {
		if _, err := st.Get(ctx, en.Name); err == nil && !slices.Contains(names, en.Name) {
			names = append(names, en.Name)
		}
	}
	return names
}
