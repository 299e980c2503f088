package config

import (
	"errors"
	"strings"
	"testing"
)

// TestStoreKey: store selects the registration store from the file, the
// environment or --store; a value that names no store is refused with an
// error that names the key and never repeats the value (a URL may hold a
// password).
func TestStoreKey(t *testing.T) {
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"", true},
		{"sqlite", true},
		{"postgres://hub:pw@db.internal:5432/mcphub?sslmode=require", true},
		{"postgresql://db.internal/mcphub", true},
		{"${MCP_HUB_POSTGRES_URL}", true},
		{"file:/run/secrets/mcp-hub-store", true},
		{"mysql://hub:pw-s3cret@db.internal/mcphub", false},
		{"/var/lib/mcp-hub/hub.db", false},
	} {
		for _, how := range []string{"env", "flag", "file"} {
			var (
				c   *Config
				err error
			)
			switch how {
			case "env":
				c, err = loadConfig(parseFlags(t), []string{"MCP_HUB_STORE=" + tc.value})
			case "flag":
				c, err = loadConfig(parseFlags(t, "--store="+tc.value), nil)
			case "file":
				c, err = loadConfig(parseFlags(t, "--config", writeFile(t, "hub.yaml", "store: '"+tc.value+"'\n")), nil)
			}
			if tc.ok {
				if err != nil || string(c.Store) != tc.value {
					t.Errorf("%s %q: store %q, %v", how, tc.value, c.Store, err)
				}
				continue
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "store" || !strings.Contains(err.Error(), "postgres://") {
				t.Errorf("%s %q: %v; want an error about the store key", how, tc.value, err)
			} else if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: the error repeats the value: %v", how, err)
			}
		}
	}
}
