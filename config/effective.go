package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Setting is one key of the configuration in effect, for people to read
// (the web console's settings page): never a secret value.
type Setting struct {
	Key   string // dotted, as in the file: "timeouts.call", "mcpServers.github"
	Value string // masked where secret
	Doc   string
}

// Settings returns every key of the configuration in effect, in the order
// [Keys] documents them, then each upstream the config file declares (by
// what it runs). Secret values are masked by redact's rules: the HTTP
// token unless it only names where it comes from (${VAR}, file:PATH), env
// and header values, secret-looking arguments and URL parameters.
func (c *Config) Settings() []Setting {
	var out []Setting
	out = settingsOf("", reflect.ValueOf(*c), out)
	for _, s := range c.Servers {
		v := s.Spec.RedactedLaunch().String()
		if s.Disabled {
			v += "\n(disabled)"
		}
		out = append(out, Setting{Key: "mcpServers." + s.Spec.Name, Value: v, Doc: s.Spec.Description})
	}
	return out
}

var sourceType = reflect.TypeFor[Source]()

// settingsOf appends the keys of the struct v under prefix.
func settingsOf(prefix string, v reflect.Value, out []Setting) []Setting {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && opts != "squash" && name == "" {
			out = settingsOf(prefix, fv, out)
			continue
		}
		key := joinKey(prefix, name)
		if fv.Kind() == reflect.Struct && fv.Type() != durationType {
			out = settingsOf(key, fv, out)
			continue
		}
		out = append(out, Setting{Key: key, Value: settingValue(fv), Doc: f.Tag.Get("doc")})
	}
	return out
}

// settingValue renders one value for people, secrets masked.
func settingValue(v reflect.Value) string {
	switch {
	case v.Type() == sourceType:
		s := v.String()
		if s == "" {
			return ""
		}
		return redact.Value(s)
	case v.Type() == durationType:
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.String:
		return redact.Text(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Map:
		// telemetry.headers: each value masked as a header value is.
		keys := v.MapKeys()
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			val := v.MapIndex(k).String()
			if v.Type().Elem() == sourceType {
				val = redact.Value(val)
			} else {
				val = redact.Text(val)
			}
			parts = append(parts, k.String()+"="+val)
		}
		slices.Sort(parts)
		return strings.Join(parts, ", ")
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = redact.Text(v.Index(i).String())
		}
		return strings.Join(parts, ", ")
	}
	return redact.Text(fmt.Sprint(v.Interface()))
}
