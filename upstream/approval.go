package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// fingerprintDomain starts the bytes every approval fingerprint hashes, so a
// fingerprint can never be mistaken for another hash of the same JSON (the
// legacy one included).
const fingerprintDomain = "mcp-hub approval fingerprint v2\n"

// Fingerprint returns what an approval covers, as the hex SHA-256 of the
// canonical JSON of every field of the spec that decides what runs on this
// machine or what leaves it: for stdio the command, its arguments, its
// working directory and every environment variable with its value as
// written (a literal, "${VAR}" naming a hub variable, or "file:PATH" naming
// a file); for sse and http the whole URL, query included, and every header
// with its value as written; and the permissions to make requests of the
// client (allowSampling, allowElicitation, allowRoots). Every field of
// [Spec] not tagged approval:"exempt" is covered, so fields added later are
// covered by construction. The transport is the inferred one.
//
// The hash covers literal secret values: it is stored, compared, and never
// shown.
func (s *Spec) Fingerprint() string {
	b, err := json.Marshal(s.fingerprinted())
	if err != nil { // cannot happen: a spec always encodes
		panic(err)
	}
	sum := sha256.Sum256(append([]byte(fingerprintDomain), b...))
	return hex.EncodeToString(sum[:])
}

// fingerprinted returns the spec's covered fields, keyed by their JSON names
// (encoding/json sorts the keys, which makes the encoding canonical).
func (s *Spec) fingerprinted() map[string]json.RawMessage {
	c := *s
	c.Transport = s.InferTransport()
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	for k := range exemptFields() {
		delete(m, k)
	}
	return m
}

// exemptFields are the JSON names of the Spec fields tagged
// approval:"exempt".
var exemptFields = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[Spec]()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("approval") != "exempt" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		m[name] = true
	}
	return m
})

// legacyCovered are the fingerprinted fields whose whole value the approval
// fingerprint before issue 12 ([LaunchSpec.LegacyHash]) covered, and which
// the approval prompt showed in full. Env and headers are not among them:
// only their names were covered.
var legacyCovered = map[string]bool{"transport": true, "command": true, "args": true, "cwd": true, "url": true}

// Reasons the hub gives for taking an approval back; see
// [Registration.ApprovalNote].
const (
	// NotePredatesValueReview: approved before approvals covered env and
	// header values, which nobody was shown.
	NotePredatesValueReview = "approval predates value review"
	// NoteChangedSinceApproval: what it runs differs from what was approved.
	NoteChangedSinceApproval = "what it runs changed since its approval"
)

// RecheckLegacyApproval re-checks, under [Spec.Fingerprint], an approval
// stored when approvals covered only the [LaunchSpec.LegacyHash] (before
// env and header values were part of them). It returns the registration as
// the current rules see it and whether that differs from r:
//
//   - an approval that matches the spec and covered all of it (no env, no
//     headers, no other field the old hash left out) is kept, with the new
//     fingerprint;
//   - one whose spec has values nobody was shown goes back to pending with
//     [NotePredatesValueReview], unless it comes from the config file, whose
//     author wrote the values (the hub re-approves those from the file);
//   - one that no longer matches its spec goes back to pending with
//     [NoteChangedSinceApproval].
//
// Registrations that are not approved, or whose approval already uses the
// current fingerprint, are returned unchanged.
func RecheckLegacyApproval(r Registration) (Registration, bool) {
	if r.Approval != ApprovalApproved || r.ApprovedHash == "" || r.ApprovedHash == r.Spec.Fingerprint() {
		return r, false
	}
	switch {
	case r.ApprovedHash != r.Spec.Launch().LegacyHash():
		r.Approval, r.ApprovedHash, r.ApprovalNote = ApprovalPending, "", NoteChangedSinceApproval
	case r.Source == SourceConfig || legacyCoversAll(&r.Spec):
		r.ApprovedHash, r.ApprovalNote = r.Spec.Fingerprint(), ""
	default:
		r.Approval, r.ApprovedHash, r.ApprovalNote = ApprovalPending, "", NotePredatesValueReview
	}
	return r, true
}

// legacyCoversAll reports whether the legacy hash covered everything the
// fingerprint covers for s.
func legacyCoversAll(s *Spec) bool {
	for k := range s.fingerprinted() {
		if !legacyCovered[k] {
			return false
		}
	}
	return true
}
