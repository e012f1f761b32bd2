package report

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// JSON encodes v in orbit's JSON contract, the one encoder of every
// command, endpoint and tool result:
//
//   - every field of a struct is present, in declaration order (embedded
//     structs' fields in their place): a field the Go type marks omitempty
//     or omitzero is null when empty or zero, never absent (unknown is
//     null), except a list or map;
//   - a nil slice is [] (an empty list is []), a nil map {};
//   - no HTML escaping: "<" stays "<", as jq and the journal write it.
//
// A value whose type has a method UnknownFields() []string shows those
// fields as null: an accuracy with nothing scored is unknown, not 0.
// Types with their own MarshalJSON or MarshalText encode themselves.
func JSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encode(&b, reflect.ValueOf(v)); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return b.Bytes(), nil
}

// JSONFields is JSON(v) keeping only fields of the object (or of each
// object of an array) when fields is not empty, in that order: compact,
// as an MCP tool result carries it.
func JSONFields(v any, fields []string) ([]byte, error) {
	data, err := JSON(v)
	if err != nil || len(fields) == 0 {
		return data, err
	}
	return selectFields(data, fields)
}

// CheckFields refuses a field name that is not one of allowed (the fields
// of what is printed, Fields), naming those that are.
func CheckFields(fields, allowed []string) error {
	for _, name := range fields {
		if !slices.Contains(allowed, name) {
			return fmt.Errorf("unknown JSON field %q (available: %s)", name, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// WriteJSON prints v as indented JSON, keeping only fields of the object (or
// of each object of an array) when fields is not empty, in that order.
func WriteJSON(w io.Writer, v any, fields []string) error {
	data, err := JSONFields(v, fields)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// Fields are the names of the top-level fields v encodes to: of its object,
// or of each element of a list. Nil for a value that is not an object.
func Fields(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct || selfEncoding(t) {
		return nil
	}
	fs := fieldsOf(t)
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func selfEncoding(t reflect.Type) bool {
	return t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}

// field is one encoded field of a struct: its name and where it is.
type field struct {
	name  string
	index []int
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf lists a struct's encoded fields as encoding/json names them:
// json tags (a "-" tag skips), embedded structs without a tag flattened in
// place, and the shallower of two fields of one name winning.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var out []field
	depth := map[string]int{}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			idx := append(slices.Clone(index), i)
			if sf.Anonymous && name == "" {
				et := sf.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct && !selfEncoding(et) {
					walk(et, idx)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if d, seen := depth[name]; seen {
				if d <= len(idx) {
					continue
				}
				out = slices.DeleteFunc(out, func(f field) bool { return f.name == name })
			}
			depth[name] = len(idx)
			out = append(out, field{name: name, index: idx})
		}
	}
	walk(t, nil)
	fieldCache.Store(t, out)
	return out
}

func encode(b *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		b.WriteString("null")
		return nil
	}
	t := v.Type()
	if selfEncoding(t) && !(v.Kind() == reflect.Pointer && v.IsNil()) {
		return leaf(b, v.Interface())
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encode(b, v.Elem())
	case reflect.Struct:
		var unknown []string
		if u, ok := v.Interface().(interface{ UnknownFields() []string }); ok {
			unknown = u.UnknownFields()
		}
		b.WriteByte('{')
		for i, f := range fieldsOf(t) {
			if i > 0 {
				b.WriteByte(',')
			}
			leaf(b, f.name)
			b.WriteByte(':')
			fv, ok := fieldByIndex(v, f.index)
			if !ok || slices.Contains(unknown, f.name) {
				b.WriteString("null")
				continue
			}
			tag := t.FieldByIndex(f.index).Tag.Get("json")
			if (strings.Contains(tag, ",omitempty") && empty(fv)) || (strings.Contains(tag, ",omitzero") && fv.IsZero() && fv.Kind() != reflect.Slice && fv.Kind() != reflect.Map) {
				b.WriteString("null")
				continue
			}
			if err := encode(b, fv); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return leaf(b, v.Interface())
		}
		fallthrough
	case reflect.Array:
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return leaf(b, v.Interface())
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			leaf(b, k.String())
			b.WriteByte(':')
			if err := encode(b, v.MapIndex(k)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	return leaf(b, v.Interface())
}

// fieldByIndex is v.FieldByIndex that reports a nil embedded pointer
// instead of panicking.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Struct:
		return v.IsZero()
	}
	return false
}

// leaf encodes a value encoding/json's way, without HTML escaping.
func leaf(b *bytes.Buffer, v any) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
	return nil
}

// selectFields keeps the named fields, in the order named.
func selectFields(data []byte, fields []string) ([]byte, error) {
	pick := func(raw json.RawMessage) []byte {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return raw
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(',')
			}
			leaf(&b, f)
			b.WriteByte(':')
			if v, ok := m[f]; ok {
				b.Write(v)
			} else {
				b.WriteString("null")
			}
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return pick(trimmed), nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(trimmed, &items); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(pick(it))
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}
