package jsonedit

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// ccwDoc is laid out as CCW's documentation example: blank lines between
// groups, objects inline inside arrays.
const ccwDoc = `{
  "loop_id": "loop-v2-1",
  "status": "running",

  "skill_state": {
    "develop": {
      "tasks": [
        { "id": "task-001", "status": "pending" }
      ],
      "files": []
    },

    "errors": []
  }
}
`

func TestDocEdits(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		op   func(d *Doc) error
		want string
	}{
		{"replace a scalar", ccwDoc, func(d *Doc) error { return d.Set([]string{"status"}, []byte(`"paused"`)) },
			strings.Replace(ccwDoc, `"status": "running"`, `"status": "paused"`, 1)},
		{"replace a nested scalar inside an inline object", ccwDoc,
			func(d *Doc) error {
				n := d.Find("skill_state", "develop", "tasks").Elems[0].Get("status")
				d.data = Apply(d.data, []Edit{{n.Start, n.End, `"done"`}})
				return nil
			},
			strings.Replace(ccwDoc, `"status": "pending"`, `"status": "done"`, 1)},
		{"add a member after the last, on its own line", ccwDoc,
			func(d *Doc) error { return d.Set([]string{"failure_reason"}, []byte(`"stopped: why"`)) },
			strings.Replace(ccwDoc, "    \"errors\": []\n  }\n}", "    \"errors\": []\n  },\n  \"failure_reason\": \"stopped: why\"\n}", 1)},
		{"add an object member, indented like the file", ccwDoc,
			func(d *Doc) error { return d.Set([]string{"skill_state", "summary"}, []byte(`{"a":1,"b":[2]}`)) },
			strings.Replace(ccwDoc, "    \"errors\": []\n", "    \"errors\": [],\n    \"summary\": {\n      \"a\": 1,\n      \"b\": [\n        2\n      ]\n    }\n", 1)},
		{"add to an inline object", `{"a": {"x": 1}, "b": 2}`,
			func(d *Doc) error { return d.Set([]string{"a", "y"}, []byte(`"z"`)) },
			`{"a": {"x": 1, "y": "z"}, "b": 2}`},
		{"add to an empty root", "{}\n", func(d *Doc) error { return d.Set([]string{"k"}, []byte(`[1]`)) },
			"{\n  \"k\": [\n    1\n  ]\n}\n"},
		{"add to an empty inline object", `{"a": {}}`, func(d *Doc) error { return d.Set([]string{"a", "k"}, []byte(`1`)) },
			`{"a": {"k": 1}}`},
		{"delete the last member", `{"a": 1, "b": 2}`, func(d *Doc) error { return d.Delete("b") }, `{"a": 1}`},
		{"delete the first member", "{\n  \"a\": 1,\n  \"b\": 2\n}", func(d *Doc) error { return d.Delete("a") }, "{\n  \"b\": 2\n}"},
		{"delete a middle member", "{\n  \"a\": 1,\n\n  \"b\": 2,\n  \"c\": 3\n}", func(d *Doc) error { return d.Delete("b") },
			"{\n  \"a\": 1,\n  \"c\": 3\n}"},
		{"delete the only member", `{"a": {"b": 1}}`, func(d *Doc) error { return d.Delete("a", "b") }, `{"a": {}}`},
		{"delete a repeated member", `{"a": 1, "a": 2, "b": 3}`, func(d *Doc) error { return d.Delete("a") }, `{"b": 3}`},
		{"delete a missing member", `{"a": 1}`, func(d *Doc) error { return d.Delete("z") }, `{"a": 1}`},
		{"append to an empty array on its own line", ccwDoc,
			func(d *Doc) error { return d.Append([]string{"skill_state", "errors"}, []byte(`{"message":"x"}`)) },
			strings.Replace(ccwDoc, "    \"errors\": []\n", "    \"errors\": [\n      {\n        \"message\": \"x\"\n      }\n    ]\n", 1)},
		{"append to an array of inline objects", ccwDoc,
			func(d *Doc) error {
				return d.Append([]string{"skill_state", "develop", "tasks"}, []byte(`{"id":"task-002"}`))
			},
			strings.Replace(ccwDoc, "{ \"id\": \"task-001\", \"status\": \"pending\" }\n", "{ \"id\": \"task-001\", \"status\": \"pending\" },\n        {\n          \"id\": \"task-002\"\n        }\n", 1)},
		{"add to a CRLF document", "{\r\n  \"a\": 1\r\n}\r\n", func(d *Doc) error { return d.Set([]string{"o"}, []byte(`{"k":1}`)) },
			"{\r\n  \"a\": 1,\r\n  \"o\": {\r\n    \"k\": 1\r\n  }\r\n}\r\n"},
		{"add after a blank line", "{\n  \"a\": 1,\n\n  \"b\": 2\n}\n", func(d *Doc) error { return d.Set([]string{"c"}, []byte(`3`)) },
			"{\n  \"a\": 1,\n\n  \"b\": 2,\n  \"c\": 3\n}\n"},
		{"remove the first element", "{\n  \"a\": [\n    {\"x\": 1},\n    {\"y\": 2}\n  ]\n}\n",
			func(d *Doc) error { return d.Remove(d.Find("a").Elems[0]) }, "{\n  \"a\": [\n    {\"y\": 2}\n  ]\n}\n"},
		{"remove the last element", "{\n  \"a\": [\n    {\"x\": 1},\n    {\"y\": 2}\n  ]\n}\n",
			func(d *Doc) error { return d.Remove(d.Find("a").Elems[1]) }, "{\n  \"a\": [\n    {\"x\": 1}\n  ]\n}\n"},
		{"remove the only element", `{"a": [{"x": [1]}]}`, func(d *Doc) error { return d.Remove(d.Find("a").Elems[0]) }, `{"a": []}`},
		{"remove a nested member by its value", `{"a": [{"x": 1, "y": 2}]}`,
			func(d *Doc) error { return d.Remove(d.Find("a").Elems[0].Get("x")) }, `{"a": [{"y": 2}]}`},
		{"replace an element as written", `{"a": [1, {"b": 2}, 3]}`,
			func(d *Doc) error { return d.Replace(d.Find("a").Elems[1], []byte(`{ "c" : 4 }`)) }, `{"a": [1, { "c" : 4 }, 3]}`},
		{"append to an inline array", `{"a": [1, 2]}`, func(d *Doc) error { return d.Append([]string{"a"}, []byte(`3`)) }, `{"a": [1, 2, 3]}`},
		{"append to an empty inline array", `{"a": {"b": []}}`, func(d *Doc) error { return d.Append([]string{"a", "b"}, []byte(`"x"`)) },
			`{"a": {"b": ["x"]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDoc([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.op(d); err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if !json.Valid(d.Bytes()) {
				t.Errorf("the result is not JSON")
			}
		})
	}
}

func TestDocErrors(t *testing.T) {
	d, err := ParseDoc([]byte(`{"a": 1, "l": [], "o": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"set below a number":   d.Set([]string{"a", "b"}, []byte(`1`)),
		"set below a missing":  d.Set([]string{"x", "b"}, []byte(`1`)),
		"set not JSON":         d.Set([]string{"a"}, []byte(`{`)),
		"append to an object":  d.Append([]string{"o"}, []byte(`1`)),
		"append to a missing":  d.Append([]string{"z"}, []byte(`1`)),
		"delete below a array": d.Delete("l", "x"),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if got := string(d.Bytes()); got != `{"a": 1, "l": [], "o": {}}` {
		t.Errorf("failed edits changed the document: %s", got)
	}
}

// FuzzDocSet checks that setting, then deleting, a new member gives back
// the document byte for byte, and that every edit keeps it valid JSON.
func FuzzDocSet(f *testing.F) {
	for _, s := range []string{ccwDoc, `{}`, `{"a":1}`, "{\n\t\"a\": [1,\n\t2]\n}", `{"a": {"b": [ ]}}`} {
		f.Add([]byte(s), "k", []byte(`{"x":[1,2]}`))
	}
	f.Fuzz(func(t *testing.T, data []byte, key string, val []byte) {
		d, err := ParseDoc(data)
		if err != nil || d.Root().Kind != '{' || d.Root().Has(key) || !json.Valid(val) || !utf8.ValidString(key) {
			return
		}
		if err := d.Set([]string{key}, val); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(d.Bytes()) {
			t.Fatalf("after set: not JSON:\n%s", d.Bytes())
		}
		if len(d.Root().Members) > 1 {
			if err := d.Delete(key); err != nil {
				t.Fatal(err)
			}
			if string(d.Bytes()) != string(data) {
				t.Fatalf("set then delete changed the document:\n%q\nwas\n%q", d.Bytes(), data)
			}
		}
	})
}
