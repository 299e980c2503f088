package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Browser returns an Options.Interact for a person at a terminal (mcp-hub
// login): it writes the authorization URL to w on a line of its own, then
// opens it with the browser $BROWSER names (getenv reads it), else with the
// platform's opener (xdg-open, open, rundll32). A browser is never
// required: the URL can be opened by hand, on any machine whose browser
// reaches the redirect on 127.0.0.1. A $BROWSER command that fails ends the
// login with its error (it is what automation sets); a platform opener that
// fails is only reported.
func Browser(w io.Writer, getenv func(string) string) func(ctx context.Context, name string, owner any, authURL string) error {
	return func(ctx context.Context, name string, _ any, authURL string) error {
		fmt.Fprintf(w, "To log in to %s, open this URL in a browser:\n\n%s\n\n", name, authURL)
		if b := getenv("BROWSER"); b != "" {
			return runBrowser(ctx, b, authURL)
		}
		if err := platformOpen(authURL); err != nil {
			fmt.Fprintf(w, "(no browser opened: %v; open the URL yourself)\n", err)
		}
		return nil
	}
}

// runBrowser runs the commands of $BROWSER in turn (separated by the path
// list separator, as xdg-open and Python's webbrowser read it; "%s" stands
// for the URL, which is appended otherwise) until one succeeds.
func runBrowser(ctx context.Context, spec, authURL string) error {
	var last error
	for entry := range strings.SplitSeq(spec, string(os.PathListSeparator)) {
		fields := strings.Fields(entry)
		if len(fields) == 0 {
			continue
		}
		replaced := false
		for i, f := range fields {
			if strings.Contains(f, "%s") {
				fields[i], replaced = strings.ReplaceAll(f, "%s", authURL), true
			}
		}
		if !replaced {
			fields = append(fields, authURL)
		}
		cmd := exec.CommandContext(ctx, fields[0], fields[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, io.Discard, io.Discard
		if last = cmd.Run(); last == nil {
			return nil
		}
		last = fmt.Errorf("$BROWSER (%s): %w", fields[0], last)
	}
	if last == nil {
		return errors.New("$BROWSER names no command")
	}
	return last
}

// platformOpen starts the platform's URL opener without waiting for it.
func platformOpen(authURL string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", authURL)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", authURL)
	default:
		cmd = exec.Command("xdg-open", authURL)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
