package jsonedit

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // substring; "" for valid
		offset  int
	}{
		{"object", `{"a": [1, -2.5e3, true, false, null, "x\u00e9\n"]}`, "", 0},
		{"bom", "\ufeff{}", "", 0},
		{"nested", `[[[[{}]]]]`, "", 0},
		{"trailing comma", `{"a": 1,}`, "expecting a string key", 8},
		{"missing colon", `{"a" 1}`, "expecting ':'", 5},
		{"unterminated string", `{"a": "b`, "end of file in a string", 8},
		{"control char", "{\"a\": \"b\tc\"}", "control character", 8},
		{"bad escape", `"\x"`, "invalid escape", 2},
		{"leading zero", `01`, "after the top-level value", 1},
		{"garbage after", `{} {}`, "after the top-level value", 3},
		{"empty", ``, "end of file", 0},
		{"bare word", `undefined`, "expecting a value", 0},
		{"number no digits", `-`, "invalid number", 1},
		{"exponent no digits", `1e+`, "exponent", 3},
		{"too deep", strings.Repeat("[", MaxDepth+2), "nested more than", MaxDepth + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Parse([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse(%q) = %v; want success", tt.in, err)
				}
				if got := tt.in[n.Start:n.End]; strings.TrimPrefix(tt.in, "\ufeff") != got {
					t.Errorf("span = %q; want the whole document", got)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q) succeeded; want an error containing %q", tt.in, tt.wantErr)
			}
			je := err.(*SyntaxError)
			if !strings.Contains(je.Msg, tt.wantErr) || je.Offset != tt.offset {
				t.Errorf("Parse(%q) = %q at %d; want %q at %d", tt.in, je.Msg, je.Offset, tt.wantErr, tt.offset)
			}
		})
	}
}

func TestParseSpans(t *testing.T) {
	doc := []byte("{\n  \"errors\": [\n    {\"id\": \"e\\u0031\", \"n\": 2},\n    {\"id\": \"x\"}\n  ],\n  \"id\": 1,\n  \"id\": 2\n}")
	root, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	arr := root.Get("errors")
	if got := string(doc[arr.Elems[0].Start:arr.Elems[0].End]); got != `{"id": "e\u0031", "n": 2}` {
		t.Errorf("first element span = %s", got)
	}
	if got := arr.Elems[0].Get("id").Str(doc); got != "e1" {
		t.Errorf("decoded id = %q; want e1", got)
	}
	if got := string(doc[root.Get("id").Start:root.Get("id").End]); got != "2" {
		t.Errorf("repeated key: got %s; want the last value, 2", got)
	}
	li := NewLines(doc)
	if got := li.Line(arr.Elems[1].Start); got != 4 {
		t.Errorf("line of the second element = %d; want 4", got)
	}
}

// FuzzParse checks the span parser against encoding/json: it accepts
// exactly the valid documents, and every string it decodes is what
// encoding/json decodes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"errors": []}`, `{"a": "\ud83d\ude00", "b": [1, 2.5, -0e1]}`, `[`, `"\u12"`, `{"a":1}x`, "\"\xff\"", `[[],{}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Parse(data)
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("Parse(%q) error = %v; json.Valid = %v", data, err, valid)
		}
		if err != nil {
			if je := err.(*SyntaxError); je.Offset < 0 || je.Offset > len(data) {
				t.Fatalf("error offset %d outside the document of %d bytes", je.Offset, len(data))
			}
			return
		}
		var walk func(n *Node)
		walk = func(n *Node) {
			if !json.Valid(data[n.Start:n.End]) {
				t.Fatalf("span %q is not a JSON value", data[n.Start:n.End])
			}
			if n.Kind == '"' {
				var want string
				json.Unmarshal(data[n.Start:n.End], &want)
				if got := n.Str(data); got != want {
					t.Fatalf("decoded %q; encoding/json decodes %q", got, want)
				}
			}
			for _, m := range n.Members {
				walk(m.Val)
			}
			for _, e := range n.Elems {
				walk(e)
			}
		}
		walk(n)
	})
}
