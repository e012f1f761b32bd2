package frameworks

// The loop files of other frameworks are read leniently: the document is
// validated once by encoding/json (json.Valid), then split into members
// kept as raw slices of the file (asObject, asList: no copy, no second
// validation), each read by the type the adapter wants (str, num, obj...)
// so that one field of an unexpected type is reported instead of failing
// the file. The splitter is hand-written because the whole process measured
// it worth its hundred lines: `orbit loop list` over the loops suite's 1,000
// records executes 183-187M instructions with it and 487-488M with
// encoding/json decoding each object into map[string]json.RawMessage
// (2.6x; --json 604-633M against 910-928M). A hand-written validator stood
// in for json.Valid too: it saved 12% of loop list's instructions (209-210M
// with json.Valid), 5% of --json's, for 162 lines and a fuzz target, and
// was dropped. Measured 2026-11-30, three runs each:
//
//	go run ./bench/cmd/orbit-bench -only loops -keep   # then, in its loops-1 project:
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind orbit loop list

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

// object is a foreign JSON object read leniently: each member kept raw (a
// slice of the file's bytes), so that a field of an unexpected type is
// reported and shown as it is instead of failing the whole file. Objects are
// small: members are found by a linear scan, the last of a repeated key
// winning as in encoding/json.
type object []member

// member is one name and value; key is the name as written between its
// quotes (decoded only when it holds an escape).
type member struct {
	key []byte
	raw json.RawMessage
}

func (o object) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if string(o[i].key) == key {
			return o[i].raw, true
		}
	}
	return nil, false
}

// keys are the member names, sorted, each once.
func (o object) keys() []string {
	keys := make([]string, 0, len(o))
	for _, m := range o {
		keys = append(keys, string(m.key))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// readObject reads the JSON object in the file at path. A file that is not
// a JSON object is an error naming the file and the position.
func readObject(path string) (object, []byte, error) {
	data, err := readFile(path, nil)
	if err != nil {
		return nil, nil, err
	}
	o, err := parseObject(path, data)
	return o, data, err
}

// maxFileBytes bounds a framework file orbit reads.
const maxFileBytes = 16 << 20

// readFile reads a whole file into buf's storage (grown when too small),
// never through a link at its last component and only if it is a regular
// file of at most maxFileBytes (project.ReadRegular: plain system calls,
// which showed over a thousand loop files). The directories it is read
// from are checked once by listDir.
func readFile(path string, buf []byte) ([]byte, error) {
	return project.ReadRegular(path, buf, maxFileBytes)
}

func parseObject(path string, data []byte) (object, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !json.Valid(data) {
		var x any
		return nil, jsonError(path, data, json.Unmarshal(data, &x))
	}
	o, ok := asObject(data)
	if !ok {
		return nil, fmt.Errorf("%s: want a JSON object, got %s", path, clip(string(bytes.TrimSpace(data)), 40))
	}
	return o, nil
}

// asObject splits valid JSON holding an object into its members, each a
// slice of data (nothing is copied or decoded). The document was validated
// as a whole once; its parts are split, never validated again. A repeated
// key keeps its last value, as encoding/json does.
func asObject(data []byte) (object, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	o := make(object, 0, 8)
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] == '}' {
			return o, true
		}
		kEnd := skipValue(data, i)
		key := data[i:kEnd]
		i = skipSpace(data, kEnd) + 1 // ':'
		i = skipSpace(data, i)
		vEnd := skipValue(data, i)
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(unquote(key))
		} else {
			key = key[1 : len(key)-1]
		}
		o = append(o, member{key, data[i:vEnd]})
		i = skipSpace(data, vEnd)
		if i < len(data) && data[i] == ',' {
			i++
		}
	}
}

// asList splits valid JSON holding an array into its elements.
func asList(data []byte) ([]json.RawMessage, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	l := []json.RawMessage{}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] == ']' {
			return l, true
		}
		end := skipValue(data, i)
		l = append(l, data[i:end])
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i++
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value starting at i.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(data)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = skipValue(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	default:
		j := i
	literal:
		for ; j < len(data); j++ {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				break literal
			}
		}
		return j
	}
}

// unquote decodes a JSON string; the common case (no escapes) is a copy.
func unquote(r []byte) string {
	if len(r) >= 2 && r[0] == '"' && bytes.IndexByte(r, '\\') < 0 {
		return string(r[1 : len(r)-1])
	}
	var s string
	if json.Unmarshal(r, &s) != nil {
		return string(r)
	}
	return s
}

// jsonError names the file and the line:column of a JSON syntax error.
func jsonError(path string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := se.Offset
		if off > 0 {
			off--
		}
		line, col := loop.Position(data, off)
		return journal.Problem{File: path, Line: line, LineEnd: line, Column: col, Severity: journal.SevError, Code: journal.CodeJSON,
			Message: "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		return fmt.Errorf("%s: want a JSON object, got %s", path, te.Value)
	default:
		return fmt.Errorf("%s: invalid JSON: %v", path, err)
	}
}

func (o object) raw(key string) (json.RawMessage, bool) {
	r, ok := o.get(key)
	if !ok || len(r) == 0 || string(r) == "null" {
		return nil, false
	}
	return r, true
}

func isNull(r json.RawMessage) bool { return len(r) == 0 || string(bytes.TrimSpace(r)) == "null" }

// str is a string member ("" and false when absent, null or not a string).
func (o object) str(key string) (string, bool) {
	r, ok := o.raw(key)
	if !ok || r[0] != '"' {
		return "", false
	}
	return unquote(r), true
}

// text is a member as it reads: a string's value, any other value's JSON
// (a number, an object), "" when absent or null.
func (o object) text(key string) string {
	r, ok := o.raw(key)
	if !ok {
		return ""
	}
	if r[0] == '"' {
		return unquote(r)
	}
	if r[0] == '{' || r[0] == '[' {
		return compact(r)
	}
	return string(r)
}

// num reads a number member. A number written as a string is read, with a
// note saying so; anything else is not a number (note says what it is).
func (o object) num(key string) (v float64, ok bool, note string) {
	r, found := o.raw(key)
	if !found {
		return 0, false, ""
	}
	if c := r[0]; c == '-' || c >= '0' && c <= '9' {
		if f, err := strconv.ParseFloat(string(r), 64); err == nil {
			return f, true, ""
		}
	}
	if r[0] == '"' {
		s := unquote(r)
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f, true, fmt.Sprintf("%s is the string %q, not a number", key, s)
		}
	}
	return 0, false, fmt.Sprintf("%s is %s, not a number", key, clip(compact(r), 40))
}

// int reads an integer member, as num does.
func (o object) int(key string) (v *int64, note string) {
	f, ok, note := o.num(key)
	if !ok {
		return nil, note
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, fmt.Sprintf("%s is %v, not a whole number", key, f)
	}
	i := int64(f)
	return &i, note
}

// bool reads a boolean member.
func (o object) bool(key string) (v bool, ok bool) {
	r, found := o.raw(key)
	if !found {
		return false, false
	}
	switch string(r) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// obj is an object member (nil when absent or not an object).
func (o object) obj(key string) object {
	r, ok := o.raw(key)
	if !ok {
		return nil
	}
	sub, _ := asObject(r)
	return sub
}

// list is an array member (nil when absent or not an array).
func (o object) list(key string) []json.RawMessage {
	r, ok := o.raw(key)
	if !ok {
		return nil
	}
	l, _ := asList(r)
	return l
}

// kind names the JSON type of a member, for messages.
func (o object) kind(key string) string {
	r, ok := o.get(key)
	if !ok {
		return "absent"
	}
	r = bytes.TrimSpace(r)
	switch {
	case len(r) == 0 || string(r) == "null":
		return "null"
	case r[0] == '"':
		return "a string"
	case r[0] == '{':
		return "an object"
	case r[0] == '[':
		return "an array"
	case string(r) == "true" || string(r) == "false":
		return "a boolean"
	default:
		return "a number"
	}
}

func compact(r json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, r) != nil {
		return string(r)
	}
	return b.String()
}

// clip shortens s to n runes for messages.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
