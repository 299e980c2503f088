package persist

import (
	"bytes"
	"sync"
	"testing"
)

// Issue 26 item 3: the hub's secret (the key of the digests it hands out)
// is created once per store: every hub on the store (replicas of a team
// hub, a reopened hub) reads the same one, even when they ask for it at
// the same time; another store has another.
func TestSecretSharedByTheStoresHubs(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		db := newTestDB(t, d)
		a, b := db.open(t, nil), db.open(t, nil)
		got := make([][]byte, 8)
		var wg sync.WaitGroup
		for i := range got {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Go(func() {
				v, err := s.Secret(t.Context(), "digest-key")
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			})
		}
		wg.Wait()
		for i, v := range got {
			if len(v) != secretSize || !bytes.Equal(v, got[0]) {
				t.Fatalf("hub %d read secret %x, hub 0 %x: want one secret of %d bytes", i, v, got[0], secretSize)
			}
		}
		other := newTestDB(t, d).open(t, nil)
		v, err := other.Secret(t.Context(), "digest-key")
		if err != nil || bytes.Equal(v, got[0]) {
			t.Errorf("another store's secret %x (%v): want another one", v, err)
		}
	})
}
