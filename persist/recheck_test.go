package persist

import (
	"encoding/json"
	"testing"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Issue 12: approvals stored before approvals covered values are re-checked
// once, when the schema migrates to version 4. One whose env or header
// values nobody was shown goes back to pending with a note; one that
// covered everything keeps its approval under the new fingerprint.
func TestRecheckLegacyApprovals(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		type row struct {
			spec     upstream.Spec
			source   Source
			approval Approval
			hash     string // "" means the spec's legacy hash
			config   string // raw config, overriding spec
		}
		stdio := func(name string, env map[string]string) upstream.Spec {
			return upstream.Spec{Name: name, Transport: upstream.TransportStdio, Command: "/usr/bin/srv", Args: []string{"--x"}, Cwd: "/srv", Env: env}
		}
		web := func(name, url string, headers map[string]string) upstream.Spec {
			return upstream.Spec{Name: name, Transport: upstream.TransportHTTP, URL: url, Headers: headers}
		}
		yes := true
		sampling := stdio("sampling", nil)
		sampling.AllowSampling = &yes
		before := stdio("tampered", map[string]string{"A": "b"}) // what was approved
		rows := []row{
			{spec: stdio("withenv", map[string]string{"NODE_OPTIONS": "--max-old-space-size=256"}), source: SourceAdmin, approval: ApprovalApproved},
			{spec: stdio("envref", map[string]string{"TOKEN": "${TOKEN}"}), source: SourceCLI, approval: ApprovalApproved},
			{spec: web("withheader", "https://example.com/mcp", map[string]string{"X-Key": "file:/etc/key"}), source: SourceAdmin, approval: ApprovalApproved},
			{spec: sampling, source: SourceAdmin, approval: ApprovalApproved},
			{spec: stdio("plain", nil), source: SourceAdmin, approval: ApprovalApproved},
			{spec: web("withquery", "https://example.com/mcp?key=abc", nil), source: SourceCLI, approval: ApprovalApproved},
			{spec: stdio("cfg", map[string]string{"API_KEY": "k"}), source: SourceConfig, approval: ApprovalApproved},
			{spec: stdio("tampered", nil), source: SourceAdmin, approval: ApprovalApproved, hash: before.Launch().LegacyHash()},
			{spec: stdio("waiting", map[string]string{"A": "b"}), source: SourceAdmin, approval: ApprovalPending, hash: "-"},
			{spec: stdio("corrupt", nil), source: SourceAdmin, approval: ApprovalApproved, config: `{"name":`},
		}
		want := map[string]struct {
			approval Approval
			note     string
		}{
			"withenv":    {ApprovalPending, upstream.NotePredatesValueReview},
			"envref":     {ApprovalPending, upstream.NotePredatesValueReview},
			"withheader": {ApprovalPending, upstream.NotePredatesValueReview},
			"sampling":   {ApprovalPending, upstream.NotePredatesValueReview},
			"plain":      {ApprovalApproved, ""},
			"withquery":  {ApprovalApproved, ""}, // the old hash covered the whole URL, and the old prompt showed it
			"cfg":        {ApprovalApproved, ""}, // the config file's author wrote the values
			"tampered":   {ApprovalPending, upstream.NoteChangedSinceApproval},
			"waiting":    {ApprovalPending, ""},
		}

		db := newTestDB(t, d)
		raw := db.raw(t)
		conn, err := raw.Connx(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		migs, err := loadMigrations()
		if err != nil {
			t.Fatal(err)
		}
		if d == dialectPostgres { // the schema before issue 12
			key, _ := pgKeys(db.schema(t))
			err = pgMigrate(t.Context(), conn, nil, db.loc, key, migs, 3)
		} else {
			err = migrate(t.Context(), conn, db.loc, migs, 3)
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.Close()
		for i, r := range rows {
			config := r.config
			if config == "" {
				b, _ := json.Marshal(r.spec)
				config = string(b)
			}
			hash := r.hash
			switch hash {
			case "":
				hash = r.spec.Launch().LegacyHash()
			case "-":
				hash = ""
			}
			_, err := raw.ExecContext(t.Context(), `INSERT INTO upstreams
			(id, name, description, transport, config, enabled, auto_connect, source, approval, approved_hash, created_at, updated_at)
			VALUES (?, ?, '', ?, ?, ?, ?, ?, ?, ?, '2024-01-02T03:04:05.000000000Z', '2024-01-02T03:04:05.000000000Z')`,
				"00000000-0000-4000-8000-00000000000"+string(rune('a'+i)), r.spec.Name, string(r.spec.InferTransport()), config,
				true, true, string(r.source), string(r.approval), hash)
			if err != nil {
				t.Fatal(err)
			}
		}
		s := db.open(t, nil)
		check := func(when string) {
			t.Helper()
			for name, w := range want {
				r, err := s.Get(t.Context(), name)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if r.Approval != w.approval || r.ApprovalNote != w.note {
					t.Errorf("%s: %s = %q (note %q), want %q (note %q)", when, name, r.Approval, r.ApprovalNote, w.approval, w.note)
				}
				if r.Approval == ApprovalApproved && (!r.Approved() || r.ApprovedHash != r.Spec.Fingerprint()) {
					t.Errorf("%s: %s kept its approval but not under the new fingerprint", when, name)
				}
				if r.Approval == ApprovalPending && r.ApprovedHash != "" {
					t.Errorf("%s: %s is pending with a hash", when, name)
				}
			}
		}
		check("after the migration")
		var corrupt string
		if err := s.db.GetContext(t.Context(), &corrupt, "SELECT approval FROM upstreams WHERE name = 'corrupt'"); err != nil || corrupt != "approved" {
			t.Errorf("the undecodable row: approval %q, %v; want it left alone", corrupt, err)
		}
		for _, name := range []string{"withenv", "tampered"} {
			log, err := s.AuditLog(t.Context(), name, 10)
			if err != nil || len(log) != 1 || log[0].Action != "revoke" || log[0].Actor != "hub" {
				t.Errorf("audit of %s: %+v, %v; want one revoke by the hub", name, log, err)
			}
		}

		// Once: a note survives reopening, and a person's approval clears it.
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = db.open(t, nil)
		check("after reopening")
		r, err := s.Update(t.Context(), "withenv", func(r *Record) error { r.Approve(); return nil })
		if err != nil || !r.Approved() || r.ApprovalNote != "" {
			t.Errorf("approve: %+v, %v", r, err)
		}
		if r, _ := s.Get(t.Context(), "withenv"); !r.Approved() || r.ApprovalNote != "" {
			t.Errorf("stored approval: %q note %q", r.Approval, r.ApprovalNote)
		}
	})
}
