package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// A client's file may launch the hub already, as the README's "Connect
// your client" writes it: {"hub": {"command": …, "args": ["--config",
// "/path/to/my-servers.json"], "env": {"GITHUB_TOKEN": …}}}. setup updates
// that entry (the launcher, the flags it was given), and keeps what the
// person put there and setup was not told: the hub's other flags (the
// config file that lists their servers) and the entry's env and cwd (the
// values its servers' ${VAR}s read). Dropping them would leave the client
// with a hub that serves none of those servers.

// entryArg is one flag of a hub entry's arguments with its value, or one
// positional argument (name "").
type entryArg struct {
	name   string   // the flag's name without dashes; "" for a positional
	tokens []string // as written
}

// splitHubArgs splits the hub's arguments of an entry (what follows the
// binary, or npx's package) into flags with their values and positionals.
// The hub's config flags take a value; another flag takes the next
// argument as its value unless it is written --flag=value or the next
// argument is a flag.
func splitHubArgs(args []string) []entryArg {
	known := pflag.NewFlagSet("", pflag.ContinueOnError)
	config.AddFlags(known)
	var out []entryArg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, entryArg{tokens: args[i:]})
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, entryArg{tokens: []string{a}})
			continue
		}
		name, _, withValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		arg := entryArg{name: name, tokens: []string{a}}
		if !withValue && i+1 < len(args) {
			f := known.Lookup(name)
			if f != nil && f.Value.Type() != "bool" || f == nil && !strings.HasPrefix(args[i+1], "-") {
				arg.tokens = append(arg.tokens, args[i+1])
				i++
			}
		}
		out = append(out, arg)
	}
	return out
}

// keepEntrySettings returns entry (what setup writes) with what old (the
// value of the client's entry that launches the hub already) says and
// entry does not: old's hub flags that entry's lack, its positional
// arguments, and its env and cwd. kept says what it kept, for the report
// (env values are not shown).
func keepEntrySettings(old any, entry clientconfig.Server) (_ clientconfig.Server, kept []string) {
	m, _ := old.(map[string]any)
	if m == nil {
		return entry, nil
	}
	command, _ := m["command"].(string)
	var oldArgs []string
	list, _ := m["args"].([]any)
	for _, a := range list {
		if s, ok := a.(string); ok {
			oldArgs = append(oldArgs, s)
		}
	}
	oldHub, ok := clientconfig.LaunchesHub(command, oldArgs)
	if !ok {
		oldHub = oldArgs // this very binary, under another name
	}
	newHub, ok := clientconfig.LaunchesHub(entry.Command, entry.Args)
	if !ok {
		newHub = entry.Args
	}
	launcher := slices.Clone(entry.Args[:len(entry.Args)-len(newHub)])
	have := map[string]bool{}
	var newFlags []string
	for _, a := range splitHubArgs(newHub) {
		have[a.name+"\x00"+strings.Join(a.tokens, "\x00")] = true
		if a.name != "" {
			have[a.name] = true
		}
		newFlags = append(newFlags, a.tokens...)
	}
	var positionals, flags []string
	for _, a := range splitHubArgs(oldHub) {
		switch {
		case a.name == "" && !have["\x00"+strings.Join(a.tokens, "\x00")]:
			positionals = append(positionals, a.tokens...) // a command goes before the flags
			kept = append(kept, strings.Join(redact.Argv(a.tokens), " "))
		case a.name != "" && !have[a.name]:
			flags = append(flags, a.tokens...)
			kept = append(kept, strings.Join(redact.Argv(a.tokens), " "))
		}
	}
	if len(positionals)+len(flags) > 0 {
		entry.Args = slices.Concat(launcher, positionals, newFlags, flags)
	}
	if env, _ := m["env"].(map[string]any); len(env) > 0 {
		var names []string
		for _, k := range slices.Sorted(maps.Keys(env)) {
			v, ok := env[k].(string)
			if _, set := entry.Env[k]; !ok || set {
				continue
			}
			if entry.Env == nil {
				entry.Env = map[string]string{}
			}
			entry.Env[k] = v
			names = append(names, k)
		}
		if len(names) > 0 {
			kept = append(kept, "env "+strings.Join(names, ", "))
		}
	}
	if cwd, _ := m["cwd"].(string); cwd != "" && entry.Cwd == "" {
		entry.Cwd = cwd
		kept = append(kept, "cwd "+cwd)
	}
	return entry, kept
}

// keptStoreConflict says why setup --move-servers must not run when the
// entry it updates keeps a --data-dir or --store setup was not given: the
// servers it moves would go into the store setup runs with, which the
// client's hub does not read. It is "" when there is no conflict.
func keptStoreConflict(kept []string, prog, client string) string {
	for _, k := range kept {
		if strings.HasPrefix(k, "--data-dir") || strings.HasPrefix(k, "--store") {
			return fmt.Sprintf("the hub's entry runs it with %s, another store than this setup's: --move-servers would move the servers where that hub does not look; run %s setup %s %s --move-servers to move them into its store",
				k, prog, client, k)
		}
	}
	return ""
}
