package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

const importUse = `FILE [--dry-run] [flags]

Registers the MCP servers of a client's config file with the hub: Claude
Desktop's claude_desktop_config.json and Cursor's or Claude Code's mcp.json
(mcpServers), VS Code's .vscode/mcp.json (servers) or settings.json
(mcp.servers). Commands, arguments, env, cwd, URLs and headers are kept as
written; VS Code's envFile is read into env, and ${workspaceFolder},
${userHome} and ${env:NAME} (in env and headers) are rewritten.

A person running this is the approval: imported servers are approved,
enabled and connect when the hub starts, as with mcp-hub add. Names already
registered, defined in the hub's config file, defined twice in FILE (each
definition is skipped: which one was meant is not clear; remove one and
import again) or not valid upstream names are skipped, each with the
reason; nothing is renamed.

Exit status: 0 when every server was added or skipped with a reason; 1 when
FILE cannot be read or parsed (invalid JSON is reported with its line and
column), or an entry could not be read (the others are still added); 2 on
a usage error. --dry-run prints the same report and changes nothing.`

// importOutcome is what import did, or would do, with one entry.
type importOutcome string

const (
	importAdded      importOutcome = "added"
	importSkipped    importOutcome = "skipped"
	importUnreadable importOutcome = "could not read"
)

// importItem is one entry of the file and its outcome.
type importItem struct {
	clientconfig.Entry
	Outcome importOutcome
	Why     string // for skipped and could not read
	Server  config.Server
	Notes   []string
}

// Import registers the servers of a client's config file.
func Import(ctx context.Context, e *Env) int {
	fs := e.flags(importUse)
	dryRun := fs.Bool("dry-run", false, "print what would be imported and change nothing")
	cfg, code, ok := e.parse(fs)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		return e.argCountError(fs.Args(), 1)
	}
	cc, err := clientconfig.Read(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(e.Stderr, "mcp-hub import:", err)
		return ExitFail
	}
	return importServers(ctx, e, cfg, cc, *dryRun)
}

// importServers registers the servers of cc (all of them, or what a dry
// run would register), writes the report and returns the exit code. Import
// and setup --move-servers run it.
func importServers(ctx context.Context, e *Env, cfg *config.Config, cc *clientconfig.File, dryRun bool) int {
	items := planImport(cc)

	// Open the store, unless a dry run would have to create it.
	var st *persist.Store
	if dbPath, err := hubstore.Path(cfg.DataDir); err != nil || !dryRun || cfg.Store != "" || fileExists(dbPath) {
		if st, err = openStore(ctx, e, cfg); err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub import:", err)
			return ExitFail
		}
		defer st.Close()
	}
	registered := map[string]upstream.Registration{}
	if st != nil {
		regs, err := st.List(ctx)
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub import:", err)
			return ExitFail
		}
		for _, r := range regs {
			registered[r.Spec.Name] = r
		}
	}
	inConfig := map[string]bool{}
	for _, s := range cfg.Servers {
		inConfig[s.Spec.Name] = true
	}

	failed := false
	for i := range items {
		it := &items[i]
		if it.Outcome != importAdded {
			continue
		}
		name := it.Name
		if why := selfLaunch(cfg, it.Server.Spec); why != "" {
			it.Outcome, it.Why = importSkipped, why
			continue
		}
		if inConfig[name] {
			it.Outcome, it.Why = importSkipped, fmt.Sprintf("defined in %s, the hub's config file; edit it there", cfg.File)
			continue
		}
		if r, ok := registered[name]; ok {
			it.Outcome, it.Why = importSkipped, e.ours(alreadyRegistered(r))
			continue
		}
		if dryRun {
			continue
		}
		spec := it.Server.Spec
		reg := upstream.Registration{Spec: spec, Enabled: !it.Server.Disabled, AutoConnect: true,
			Source: upstream.SourceCLI, Approval: upstream.ApprovalApproved, ApprovedHash: spec.Fingerprint()}
		if _, err := st.Create(ctx, reg); err != nil {
			if errors.Is(err, upstream.ErrExists) {
				it.Outcome, it.Why = importSkipped, fmt.Sprintf("an upstream named %q was registered meanwhile", name)
				continue
			}
			fmt.Fprintf(e.Stderr, "mcp-hub import: %s: %v\n", name, err)
			it.Outcome, it.Why, failed = importUnreadable, fmt.Sprintf("not stored: %v", err), true
			continue
		}
		audit(ctx, st, "import", name, map[string]any{"launch": spec.RedactedLaunch(), "file": cc.Path})
	}
	if reportImport(e.Stdout, cc, items, dryRun) || failed {
		return ExitFail
	}
	return ExitOK
}

// planImport decides, from the file alone, what happens to each entry:
// importAdded (so far), importSkipped or importUnreadable.
func planImport(cc *clientconfig.File) []importItem {
	items := make([]importItem, 0, len(cc.Entries))
	lines := map[string][]string{} // the lines of each name's definitions
	for _, en := range cc.Entries {
		lines[en.Name] = append(lines[en.Name], strconv.Itoa(en.Line))
	}
	for _, en := range cc.Entries {
		it := importItem{Entry: en, Outcome: importAdded}
		switch {
		case upstream.ValidName(en.Name) != nil && launchesHub(en.Value):
			it.Outcome, it.Why = importSkipped, "it launches mcp-hub itself: the hub's own entry in this file, not a server to import"
		case upstream.ValidName(en.Name) != nil:
			it.Outcome, it.Why = importSkipped, upstream.ValidName(en.Name).Error()
			if s := suggestName(en.Name); s != "" {
				it.Why += fmt.Sprintf("; rename it (to %q, say) and import again", s)
			}
		case len(lines[en.Name]) > 1:
			it.Outcome, it.Why = importSkipped, fmt.Sprintf("defined %d times in the file (lines %s): which one was meant is not clear, so none is imported; remove the others and import again",
				len(lines[en.Name]), strings.Join(lines[en.Name], ", "))
		default:
			raw, notes, err := cc.Prepare(en.Value)
			it.Notes = notes
			if err == nil {
				it.Server, err = config.DecodeServer(cc.Path, en.Name, raw)
				newScope(raw, &it.Server.Spec)
			}
			if err != nil {
				it.Outcome, it.Why = importUnreadable, entryError(en.Name, err)
			} else if split, ok := upstream.SplitCommand(it.Server.Spec); ok {
				// As add refuses it: registered, it could never start.
				argv := redact.Argv(append([]string{split.Command}, split.Args...))
				cmd, _ := json.Marshal(argv[0])
				args, _ := json.Marshal(argv[1:])
				it.Outcome, it.Why = importSkipped, fmt.Sprintf("its command %q is a whole command line, and no program has that name: "+
					"write the program alone in command and its arguments in args (\"command\": %s, \"args\": %s) and import again",
					strings.Join(argv[:len(argv)-len(it.Server.Spec.Args)], " "), cmd, args)
			}
		}
		items = append(items, it)
	}
	return items
}

// entryError says what is wrong with an entry without repeating its file
// and name.
func entryError(name string, err error) string {
	var ce *config.Error
	if errors.As(err, &ce) {
		key := strings.TrimPrefix(strings.TrimPrefix(ce.Key, "mcpServers."+name), ".")
		msg := strings.ReplaceAll(ce.Msg, `"mcpServers.`+name+`.`, `"`)
		if key == "" {
			return msg
		}
		return key + ": " + msg
	}
	return err.Error()
}

func alreadyRegistered(r upstream.Registration) string {
	how := fmt.Sprintf("an upstream named %q is already registered (by %s)", r.Spec.Name, r.Source)
	if r.Source == upstream.SourceConfig {
		return how + "; it is defined in a config file: edit it there"
	}
	return how + "; mcp-hub remove " + r.Spec.Name + " first to replace it"
}

// reportImport writes the report and returns whether an entry could not be
// read.
func reportImport(w io.Writer, cc *clientconfig.File, items []importItem, dryRun bool) (unreadable bool) {
	fmt.Fprintf(w, "%s (%s): %d server(s)\n\n", cc.Path, cc.Format, len(items))
	width := len("could not read")
	nameWidth := 4
	for _, it := range items {
		nameWidth = max(nameWidth, len(it.Name))
	}
	counts := map[importOutcome]int{}
	for _, it := range items {
		counts[it.Outcome]++
		outcome := string(it.Outcome)
		if dryRun && it.Outcome == importAdded {
			outcome = "would add"
		}
		detail := fmt.Sprintf("line %d: %s", it.Line, it.Why)
		if it.Outcome == importAdded {
			detail = strings.ReplaceAll(it.Server.Spec.RedactedLaunch().String(), "\n", "; ")
			if it.Server.Disabled {
				detail += " (disabled)"
			}
		}
		fmt.Fprintf(w, "  %-*s  %-*s  %s\n", width, outcome, nameWidth, it.Name, detail)
		notes := slices.Clone(it.Notes)
		if it.Outcome == importAdded {
			for _, warn := range it.Server.Spec.LaunchWarnings() {
				notes = append(notes, "warning: "+warn)
			}
		}
		for _, n := range notes {
			fmt.Fprintf(w, "  %-*s  %-*s    %s\n", width, "", nameWidth, "", n)
		}
	}
	fmt.Fprintln(w)
	if dryRun {
		fmt.Fprintf(w, "Dry run: would add %d, skip %d; could not read %d.", counts[importAdded], counts[importSkipped], counts[importUnreadable])
	} else {
		fmt.Fprintf(w, "Added %d, skipped %d, could not read %d.", counts[importAdded], counts[importSkipped], counts[importUnreadable])
	}
	switch {
	case dryRun:
		fmt.Fprint(w, " Nothing was changed.")
	case counts[importAdded] > 0:
		fmt.Fprint(w, " They are approved; a running hub starts them within seconds.")
	}
	fmt.Fprintln(w)
	return counts[importUnreadable] > 0
}

// suggestName returns a valid upstream name close to an invalid one, or "".
func suggestName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		ok := r < 128 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(strings.TrimLeft(b.String(), "_-"), "-")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "-")
	}
	if upstream.ValidName(s) != nil {
		return ""
	}
	return s
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
