package keyed

import "testing"

func TestDigest(t *testing.T) {
	a, b := Random(), Random()
	if a.Digest("d", "x") == b.Digest("d", "x") {
		t.Error("two keys give the same digest")
	}
	if d1, d2 := a.Digest("d", "x"), a.Digest("d", "x"); d1 != d2 {
		t.Error("one key gives two digests of the same parts")
	}
	if a.Digest("d", "ab", "c") == a.Digest("d", "a", "bc") {
		t.Error("parts are not separated")
	}
	if a.Digest("d", "x") == a.Digest("e", "x") {
		t.Error("domains are not separated")
	}
	k, err := New([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil || k.Digest("d") != func() string { k2, _ := New([]byte("0123456789abcdef0123456789abcdef")); return k2.Digest("d") }() {
		t.Error("the same secret gives another key")
	}
	if _, err := New([]byte("short")); err == nil {
		t.Error("a short secret is taken")
	}
	if !Equal("ab", "ab") || Equal("ab", "ac") || Equal("ab", "abc") {
		t.Error("Equal")
	}
}
