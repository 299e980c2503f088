// Package keyed makes the digests the hub hands out: the approval digest
// of the REST API and the console's hidden fields, which a person's
// approval is bound to. They are HMAC-SHA256 under a secret of the hub's
// (persisted in its store, so every replica of a team hub on one
// PostgreSQL database agrees), never a plain hash: what they cover may
// include secret values (an approval fingerprint hashes env and header
// values), and a plain hash of a short secret can be reversed by trying
// values. Without the key a digest says nothing of what it covers, and
// two hubs give different digests of the same thing.
package keyed

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
)

// SecretName names the key's secret in the store.
const SecretName = "digest-key"

// SecretSize is the size of a new secret, in bytes.
const SecretSize = 32

// Key keys digests.
type Key struct{ secret []byte }

// New returns the key of secret (at least 16 bytes).
func New(secret []byte) (*Key, error) {
	if len(secret) < 16 {
		return nil, errors.New("keyed: the secret is shorter than 16 bytes")
	}
	return &Key{secret: append([]byte(nil), secret...)}, nil
}

// Random returns a key of a new random secret: for a hub without a store,
// whose digests need not outlive the process.
func Random() *Key {
	b := make([]byte, SecretSize)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return &Key{secret: b}
}

// Digest returns the hex HMAC-SHA256 (128 bits of it) of domain and parts,
// each length-prefixed, so that no two different lists share a digest.
func (k *Key) Digest(domain string, parts ...string) string {
	m := hmac.New(sha256.New, k.secret)
	var n [8]byte
	for _, p := range append([]string{domain}, parts...) {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		m.Write(n[:])
		m.Write([]byte(p))
	}
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Equal compares two digests in constant time.
func Equal(a, b string) bool {
	return len(a) == len(b) && hmac.Equal([]byte(a), []byte(b))
}
