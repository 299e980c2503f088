package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// pageNames are the console's pages, each a template of the same name
// rendered inside the layout.
var pageNames = []string{"servers", "server", "catalog", "approvals", "activity", "settings"}

// parsePages parses every page with the layout, and the message page.
func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"lower": strings.ToLower,
		"ago":   ago,
		"dur":   roundDuration,
		"rate":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
		"pct": func(part, all uint64) string {
			if all == 0 {
				return "0%"
			}
			return fmt.Sprintf("%.0f%%", 100*float64(part)/float64(all))
		},
		"domid": domID,
		"dict":  dict,
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: page %s: %w", name, err)
		}
		out[name] = t
	}
	t, err := template.New("refused").Funcs(funcs).ParseFS(templateFS, "templates/refused.html")
	if err != nil {
		return nil, fmt.Errorf("console: message page: %w", err)
	}
	out["refused"] = t
	return out, nil
}

// page is what the layout renders around a page's content.
type page struct {
	Name, Title string
	CSRF        string
	// Digest is the state the page shows (stateDigest, hex): its event
	// stream starts from it, so a change between the rendering and the
	// stream's start is not missed.
	Digest  string
	Flash   *flash
	Waiting int // approvals waiting, in the navigation
	Data    any
}

// servePage renders the page the path names.
func (c *Console) servePage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	if r.URL.Path == "/ui/events" {
		c.serveEvents(w, r)
		return
	}
	// The state the page shows, taken before its data is read: a change
	// after this makes the page's event stream send a refresh at once.
	digestBefore := c.stateDigest(ctx)
	var (
		name, title string
		data        any
		err         error
	)
	path := r.URL.Path
	switch {
	case path == "/ui/" || path == "/ui/servers":
		name, title = "servers", "Servers"
		data, err = c.serversData(ctx)
	case strings.HasPrefix(path, "/ui/servers/"):
		name = "server"
		server := strings.TrimPrefix(path, "/ui/servers/")
		title = server
		data, err = c.serverData(ctx, server)
	case path == "/ui/catalog":
		name, title = "catalog", "Catalog"
		data = c.catalogData(r.URL.Query().Get("q"))
	case path == "/ui/approvals":
		name, title = "approvals", "Approvals"
		data, err = c.approvalsData(ctx)
	case path == "/ui/activity":
		name, title = "activity", "Activity"
		data = c.activityData()
	case path == "/ui/settings":
		name, title = "settings", "Settings"
		data = c.settingsData()
	default:
		c.refuse(w, r, http.StatusNotFound, "no such page")
		return
	}
	if err != nil {
		c.refuse(w, r, statusOf(err), redact.Error(err.Error()))
		return
	}
	p := page{Name: name, Title: title, CSRF: s.csrf, Flash: s.takeFlash(), Data: data, Digest: digestHex(digestBefore)}
	if p.Waiting, err = c.waiting(ctx); err != nil {
		c.logger.Warn("count approvals", "err", err)
	}
	var buf bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		c.logger.Error("render console page", "page", name, "err", err)
		c.refuse(w, r, http.StatusInternalServerError, "the page could not be rendered")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// dict makes a map of its key, value arguments, for a template called
// with several values.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

// ago renders how long ago t was, for people ("3m ago"); "" for zero.
func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return roundDuration(time.Since(t))
}

// roundDuration renders d for people, rounded to what matters at its size.
func roundDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// domID turns a name into a safe id fragment (upstream names are
// [A-Za-z0-9_.-]; tool names may be anything).
func domID(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, ".%x", r)
		}
	}
	return b.String()
}

// serverRow is one upstream on the servers page.
type serverRow struct {
	hub.ServerView
	// Error is the last error in words, with doctor's hints.
	Error string
	// Uptime is how long it has been connected ("" when it is not).
	Uptime string
	// Since is how long it has been in its state.
	Since      string
	StderrTail []string
	// Launch is what it runs (secrets masked).
	Launch string
	// CanLogin says whether the console can log in to it (OAuth).
	CanLogin bool
	// Removable: a stored registration the console may remove (not one of
	// the config file, nor one the embedding program added); Running: the
	// hub runs it (it has lifecycle buttons).
	Removable, Running bool
}

type serversPage struct {
	Servers []serverRow
	Counts  map[string]int // by state
}

func (c *Console) serversData(ctx context.Context) (serversPage, error) {
	views, err := c.h.Servers(ctx)
	if err != nil {
		return serversPage{}, fmt.Errorf("cannot read the registrations: %w", err)
	}
	out := serversPage{Counts: map[string]int{}}
	for _, v := range views {
		out.Servers = append(out.Servers, c.row(v))
		out.Counts[v.State]++
	}
	return out, nil
}

// row completes what the hub reports of an upstream with what its
// running upstream says.
func (c *Console) row(v hub.ServerView) serverRow {
	row := serverRow{ServerView: v, Error: v.LastError,
		Removable: v.Source != "" && (v.Source != string(upstream.SourceConfig) || v.Transport == "unknown")} // broken rows can always go
	if u, ok := c.h.Manager().Get(v.Name); ok {
		st := u.Status()
		row.Running = true
		row.Since = ago(st.Since)
		if st.State == upstream.StateConnected {
			row.Uptime = row.Since
		}
		if hints := u.Hints(); len(hints) > 0 && row.Error != "" {
			row.Error += "; hint: " + strings.Join(hints, "; ")
		}
		row.StderrTail = u.StderrTail()
		spec := u.Spec()
		row.Launch = spec.RedactedLaunch().String()
		_, authed := u.AuthStatus()
		row.CanLogin = c.h.CanLogin() && (authed || st.State == upstream.StateNeedsLogin)
	}
	row.Error = redact.Text(row.Error)
	for i, l := range row.StderrTail {
		row.StderrTail[i] = redact.Text(l)
	}
	return row
}

// serverPage is one upstream in full.
type serverPage struct {
	Row    serverRow
	Config string // the spec as JSON, secret values masked
	Review string // what approving it would cover, when it waits
	Tools  []string
	Info   []kv
}

type kv struct{ Key, Value string }

func (c *Console) serverData(ctx context.Context, name string) (serverPage, error) {
	views, err := c.h.Servers(ctx)
	if err != nil {
		return serverPage{}, fmt.Errorf("cannot read the registrations: %w", err)
	}
	i := slices.IndexFunc(views, func(v hub.ServerView) bool { return v.Name == name })
	if i < 0 {
		return serverPage{}, notFound(name)
	}
	p := serverPage{Row: c.row(views[i])}
	var spec upstream.Spec
	if st := c.h.Store(); st != nil {
		if r, err := st.Get(ctx, name); err == nil {
			spec = r.Spec
			if !r.Approved() {
				p.Review = redact.Text(hub.ApprovalPrompt(r, c.h.TakeoverNote(ctx, r)))
			}
		}
	}
	if u, ok := c.h.Manager().Get(name); ok {
		spec = u.Spec()
		st := u.Status()
		for _, x := range []kv{
			{"State since", st.Since.Format(time.RFC3339)},
			{"Process", pidText(st.PID)},
			{"Server", strings.TrimSpace(st.ServerName + " " + st.ServerVersion)},
			{"Protocol", st.ProtocolVersion},
			{"Failed attempts in a row", attemptsText(st.Attempts)},
			{"Next retry", untilText(st.NextRetry)},
		} {
			if x.Value != "" {
				p.Info = append(p.Info, x)
			}
		}
	}
	if spec.Name != "" {
		b, _ := json.MarshalIndent(spec.Redacted(), "", "  ")
		p.Config = redact.Text(string(b))
	}
	for _, e := range c.h.Catalog().ServerEntries(name) {
		if e.Kind == catalog.KindTool {
			p.Tools = append(p.Tools, e.Name)
		}
	}
	return p, nil
}

func pidText(pid int) string {
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf("pid %d", pid)
}

func attemptsText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func untilText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "in " + roundDuration(time.Until(t))
}

// toolRow is one tool of the catalog page.
type toolRow struct {
	Name, Server, Original string
	Description            string
	Schema                 string // the input schema, indented
	Fixes                  []string
	Stale                  bool
	// AlsoOn are the other servers that offer the same tool (a search
	// shows it once).
	AlsoOn []string
}

type catalogPage struct {
	Query                        string
	Tools                        []toolRow
	Shown                        int
	Shadowed                     []catalog.Shadow
	ShadowedAll                  int // before the search
	Prompts, Resources, Template int
}

func (c *Console) catalogData(q string) catalogPage {
	cat := c.h.Catalog()
	p := catalogPage{Query: q, Prompts: len(cat.Prompts()), Resources: len(cat.Resources()), Template: len(cat.Templates())}
	needle := strings.ToLower(strings.TrimSpace(q))
	row := func(e catalog.Entry) toolRow {
		var t struct {
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		_ = json.Unmarshal(e.Raw, &t)
		var schema bytes.Buffer
		if json.Indent(&schema, t.InputSchema, "", "  ") != nil {
			schema.Reset()
			schema.Write(t.InputSchema)
		}
		server := e.Server
		if server == "" {
			server = "(the hub)"
		}
		return toolRow{Name: e.Name, Server: server, Original: e.Original, Description: redact.Text(t.Description),
			Schema: redact.Text(schema.String()), Fixes: e.Fixes, Stale: e.Stale}
	}
	if needle == "" {
		for _, e := range cat.Tools() {
			p.Tools = append(p.Tools, row(e))
		}
	} else {
		// The servers' tools ranked as hub_search_tools ranks them (a
		// shadowed one is under Shadowed names), then the hub's own
		// tools whose name or description holds the words.
		// A tool several servers offer alike is one result: its row is
		// the copy listed under a name, with the other servers.
		ix := c.h.SearchIndex()
		results, _ := ix.Search(q, ix.Len())
		for _, r := range results {
			e, ok := cat.Tool(r.ExposedAs)
			if !ok || r.ExposedAs == "" || e.Server != r.Server {
				if e, ok = cat.Tool(r.Tool); !ok || !slices.Contains(r.AlsoOn, e.Server) {
					continue
				}
			}
			tr := row(e)
			for _, s := range append([]string{r.Server}, r.AlsoOn...) {
				if s != e.Server {
					tr.AlsoOn = append(tr.AlsoOn, s)
				}
			}
			p.Tools = append(p.Tools, tr)
		}
		for _, e := range cat.ServerEntries("") {
			if e.Kind == catalog.KindTool {
				if r := row(e); strings.Contains(strings.ToLower(r.Name+" "+r.Description), needle) {
					p.Tools = append(p.Tools, r)
				}
			}
		}
	}
	p.Shown = len(p.Tools)
	shadowed := cat.Shadowed()
	p.ShadowedAll = len(shadowed)
	for _, s := range shadowed {
		if needle == "" || strings.Contains(strings.ToLower(s.Name+" "+s.Server+" "+s.Winner), needle) {
			p.Shadowed = append(p.Shadowed, s)
		}
	}
	return p
}

// pendingServer is a registration that waits for a person.
type pendingServer struct {
	Name     string
	Prompt   string // the text mcp-hub approve shows
	Digest   string // of the spec reviewed (hub.ApprovalDigest: keyed, never its fingerprint)
	Rejected bool
}

// pendingChanges are an upstream's tool changes that wait for a person.
type pendingChanges struct {
	Name        string
	Summary     string
	Review      string // the diff (pin's rendering), masked
	Digest      string // of the changes shown (hub.ApprovalDigest), so that what is approved is what was shown
	Quarantined bool
}

type approvalsPage struct {
	NoStore bool
	Servers []pendingServer
	Changes []pendingChanges
}

// approvalsData reads what waits for a person: registrations not
// approved (pending first, then rejected ones) and tool changes.
func (c *Console) approvalsData(ctx context.Context) (approvalsPage, error) {
	st := c.h.Store()
	if st == nil {
		return approvalsPage{NoStore: true}, nil
	}
	regs, err := st.List(ctx)
	if err != nil {
		return approvalsPage{}, fmt.Errorf("cannot read the registrations: %w", err)
	}
	var p approvalsPage
	var rejected []pendingServer
	for _, r := range regs {
		if r.Approved() {
			ch, err := c.h.ToolChanges(ctx, r.Spec.Name)
			if err != nil {
				return approvalsPage{}, fmt.Errorf("cannot read the tool pins of %q: %w", r.Spec.Name, err)
			}
			if len(ch.Findings) > 0 {
				d, err := c.h.ApprovalDigest(ctx, r.Spec.Name, nil, ch)
				if err != nil {
					return approvalsPage{}, err
				}
				p.Changes = append(p.Changes, pendingChanges{Name: r.Spec.Name, Summary: ch.Summary(), Review: ch.Review(),
					Digest: d, Quarantined: ch.Quarantined()})
			}
			continue
		}
		d, err := c.h.ApprovalDigest(ctx, r.Spec.Name, &r, hub.ToolChanges{})
		if err != nil {
			return approvalsPage{}, err
		}
		ps := pendingServer{Name: r.Spec.Name, Prompt: redact.Text(hub.ApprovalPrompt(r, c.h.TakeoverNote(ctx, r))), Digest: d,
			Rejected: r.Approval == upstream.ApprovalRejected}
		if ps.Rejected {
			rejected = append(rejected, ps)
		} else {
			p.Servers = append(p.Servers, ps)
		}
	}
	p.Servers = append(p.Servers, rejected...)
	return p, nil
}

// waiting counts what waits for a person, for the navigation.
func (c *Console) waiting(ctx context.Context) (int, error) {
	p, err := c.approvalsData(ctx)
	n := len(p.Changes)
	for _, s := range p.Servers {
		if !s.Rejected {
			n++
		}
	}
	return n, err
}

// digest is a short hash of what a person was shown.
type activityPage struct {
	Servers []serverRate
	Calls   []hub.Call
	Seen    uint64
	Window  string
}

func (c *Console) activityData() activityPage {
	calls, seen := c.h.RecentCalls()
	for i := range calls {
		if calls[i].Server == "" {
			calls[i].Server = "(none)"
		}
	}
	rs, window := c.rates.current(c.h.CallTotals(), time.Now())
	return activityPage{Servers: rs, Calls: calls, Seen: seen, Window: roundDuration(window)}
}

type settingsPage struct {
	Settings []kv3
}

type kv3 struct{ Key, Value, Doc string }

func (c *Console) settingsData() settingsPage {
	var p settingsPage
	if c.opts.Settings == nil {
		return p
	}
	for _, s := range c.opts.Settings() {
		p.Settings = append(p.Settings, kv3{Key: s.Key, Value: redact.Text(s.Value), Doc: s.Doc})
	}
	return p
}

// notFound is the error of a page or action about an upstream that is not
// registered.
func notFound(name string) error {
	return &pageError{http.StatusNotFound, fmt.Sprintf("no MCP server named %q is registered", name)}
}

// pageError is a console error with its HTTP status.
type pageError struct {
	status int
	msg    string
}

func (e *pageError) Error() string { return e.msg }

// statusOf returns the HTTP status of an error of a page or an action.
func statusOf(err error) int {
	if pe, ok := err.(*pageError); ok {
		return pe.status
	}
	return hub.ErrorStatus(err)
}
