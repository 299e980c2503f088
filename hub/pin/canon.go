// Package pin pins what an upstream tells the model: each tool, prompt and
// resource template it lists, and its instructions, as the SHA-256 of the
// canonical JSON of the whole definition. It compares a listing with the
// pins (Check), renders what changed for a person (Finding.Render) and
// flags descriptions that deserve a careful look (Warnings). It is pure:
// the hub decides what a finding means (the upstream's trust policy) and
// the store keeps the pins.
package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// hashDomain starts the bytes every pin hashes, so a pin is never mistaken
// for another hash of the same JSON; rawDomain those of a definition with
// no canonical form.
const (
	hashDomain = "mcp-hub pin v1\n"
	rawDomain  = "mcp-hub pin v1 raw\n"
)

// Hash returns the hex SHA-256 of raw's canonical JSON, and that canonical
// JSON. A value with no canonical form (duplicate members, invalid JSON)
// is hashed byte for byte under another domain, and returned as it is: it
// keeps its pin only while the upstream sends exactly the same bytes.
func Hash(raw []byte) (hash string, canonical json.RawMessage) {
	c, err := wire.Canonical(raw)
	domain := hashDomain
	if err != nil {
		c, domain = slices.Clone(raw), rawDomain
	}
	sum := sha256.Sum256(append([]byte(domain), c...))
	return hex.EncodeToString(sum[:]), c
}
