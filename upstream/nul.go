package upstream

import (
	"reflect"
	"strconv"
	"strings"
)

// NUL (U+0000) is refused in every text field of a spec, once, here, for
// every way a spec comes in (the admin tools, the REST API, mcp-hub add,
// import and setup, the config file): no program takes it in an argument,
// variable or header, and PostgreSQL does not store it in text, so without
// this check one store would keep what the other refuses with a raw
// database error.

// noNUL returns a FieldError naming the first text field of v (a Spec, or
// a part of one, at path) that holds NUL.
func noNUL(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.String:
		if strings.IndexByte(v.String(), 0) >= 0 {
			return fieldErr(path, "must not contain the NUL character (\\u0000)")
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return noNUL(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := noNUL(v.Index(i), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			if k.Kind() == reflect.String && strings.IndexByte(k.String(), 0) >= 0 {
				return fieldErr(path, "must not contain the NUL character (\\u0000) in a name")
			}
			if err := noNUL(iter.Value(), path+"."+k.String()); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				name = f.Name
			}
			if path != "" {
				name = path + "." + name
			}
			if err := noNUL(v.Field(i), name); err != nil {
				return err
			}
		}
	}
	return nil
}
