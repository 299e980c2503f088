package suggest

import "testing"

func TestClosest(t *testing.T) {
	cmds := []string{"add", "approve", "doctor", "export", "serve", "setup", "status", "tools"}
	for _, tt := range []struct{ word, want string }{
		{"sever", "serve"},
		{"servee", "serve"},
		{"docter", "doctor"},
		{"STATUS", "status"},
		{"ad", ""}, // too short to guess
		{"xyzzy", ""},
		{"htttp", ""},
	} {
		if got := Closest(tt.word, cmds); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	if got := Closest("htttp", []string{"http", "http-no-auth", "stdio"}); got != "http" {
		t.Errorf("Closest(htttp) = %q", got)
	}
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"serve", "sever", 2}} {
		if got := Distance(tt.a, tt.b); got != tt.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}
