package queue_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/queue"
)

// seedQueue is seed 000's example queue, verbatim
// (testdata/doc-example.ceo-decisions-pending.json).
const seedQueue = "testdata/doc-example.ceo-decisions-pending.json"

func writeFile(tb testing.TB, name, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestReadSeedExample(t *testing.T) {
	q, err := queue.Read("", seedQueue)
	if err != nil {
		t.Fatalf("Read(%s): %v", seedQueue, err)
	}
	if !q.Exists || q.Path != seedQueue {
		t.Errorf("Read(%s) Exists, Path = %v, %q; want true, %q", seedQueue, q.Exists, q.Path, seedQueue)
	}
	if len(q.Requests) != 1 {
		t.Fatalf("Read(%s) has %d requests; want 1", seedQueue, len(q.Requests))
	}
	got := q.Requests[0]
	want := queue.Request{
		ID:          "req-001",
		SubmittedAt: "2026-03-08T10:01:00Z",
		Requestor:   "forge:builder",
		Category:    "architecture",
		Title:       "WebSocket vs polling for agent communication",
		Description: "Should we implement WebSocket-based real-time agent communication or keep polling?",
		Impact:      "medium",
		Reversible:  true,
		Context:     "Current polling adds 2-3s latency. WebSocket would require server changes.",
	}
	// raw is unexported; compare the exported fields.
	got2 := queue.Request{ID: got.ID, SubmittedAt: got.SubmittedAt, Requestor: got.Requestor, Category: got.Category, Title: got.Title,
		Description: got.Description, Impact: got.Impact, Reversible: got.Reversible, Context: got.Context, Depth: got.Depth}
	if !reflect.DeepEqual(got2, want) {
		t.Errorf("Read(%s) request =\n%+v\nwant\n%+v", seedQueue, got2, want)
	}
	if r, ok := q.Find("req-001"); !ok || r.Title != want.Title {
		t.Errorf("Find(req-001) = %q, %v; want the request", r.Title, ok)
	}
	if _, ok := q.Find("req-999"); ok {
		t.Errorf("Find(req-999) found a request; want none")
	}
	// Unchanged, the file is written back byte for byte.
	data, err := os.ReadFile(seedQueue)
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Bytes(); !bytes.Equal(got, data) {
		t.Errorf("Bytes() of the seed queue =\n%s\nwant the file as it was:\n%s", got, data)
	}
}

func TestReadEmpty(t *testing.T) {
	tests := []struct {
		name       string
		content    *string
		wantExists bool
	}{
		{"missing file", nil, false},
		{"empty file", ptr(""), true},
		{"whitespace only", ptr("  \n\n"), true},
		{"byte-order mark only", ptr("\xef\xbb\xbf\n"), true},
		{"empty array", ptr("[]\n"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ceo-decisions-pending.json")
			if tt.content != nil {
				if err := os.WriteFile(path, []byte(*tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			q, err := queue.Read("", path)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if len(q.Requests) != 0 || q.Exists != tt.wantExists {
				t.Errorf("Read = %d requests, Exists %v; want 0, %v", len(q.Requests), q.Exists, tt.wantExists)
			}
			if got := string(q.Bytes()); got != "[]\n" {
				t.Errorf("Bytes() = %q; want %q", got, "[]\n")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// item renders one queue item from a valid base with changes: a nil value
// removes the field.
func item(changes map[string]any) string {
	m := map[string]any{
		"id": "req-001", "category": "feature", "title": "Add export", "impact": "low", "reversible": true,
	}
	for k, v := range changes {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// A syntax error names its line.
func TestReadSyntaxErrorLine(t *testing.T) {
	for _, tt := range []struct {
		content string
		line    int
	}{
		{"[\n  {\"title\": \"x\",\n   \"impact\" \"low\"}\n]", 3},
		{"[]\n\n]", 3},
		{"[{\"title\": \"a\x00b\"}]", 1},
	} {
		path := writeFile(t, "ceo-decisions-pending.json", tt.content)
		_, err := read(t, path)
		var qe *queue.Error
		if !errors.As(err, &qe) || qe.Line != tt.line || !strings.HasPrefix(err.Error(), path+":"+strconv.Itoa(tt.line)+": ") {
			t.Errorf("Read(%q) error = %v; want one at %s:%d", tt.content, err, path, tt.line)
		}
	}
}

func TestReadErrors(t *testing.T) {
	valid := item(nil)
	tests := []struct {
		name    string
		content string
		item    int // 0: a fault of the whole file
		id      string
		field   string
		msg     string // substring of the message
	}{
		{"malformed JSON", `[{"title": "x",]`, 0, "", "", "want a JSON array"},
		{"not an array", `{"title": "x"}`, 0, "", "", "want a JSON array"},
		{"a string", `"hello"`, 0, "", "", "want a JSON array"},
		{"item not an object", `[` + valid + `, 42]`, 2, "", "", "want a JSON object"},
		{"item null", `[null]`, 1, "", "", "want a JSON object"},
		{"missing title", `[` + item(map[string]any{"title": nil}) + `]`, 1, "req-001", "title", "missing"},
		{"empty title", `[` + item(map[string]any{"title": ""}) + `]`, 1, "req-001", "title", "missing"},
		{"missing category", `[` + valid + `,` + item(map[string]any{"id": "req-002", "category": nil}) + `]`, 2, "req-002", "category", "missing"},
		{"missing impact", `[` + item(map[string]any{"impact": nil}) + `]`, 1, "req-001", "impact", "missing"},
		{"missing reversible", `[` + item(map[string]any{"reversible": nil}) + `]`, 1, "req-001", "reversible", "missing"},
		{"reversible null", `[{"id":"req-009","category":"feature","title":"t","impact":"low","reversible":null}]`, 1, "req-009", "reversible", "missing"},
		{"reversible is a string", `[` + item(map[string]any{"reversible": "yes"}) + `]`, 1, "req-001", "reversible", "want bool"},
		{"reversible is a number", `[` + item(map[string]any{"reversible": 1}) + `]`, 1, "req-001", "reversible", "want bool"},
		{"title is a number", `[` + item(map[string]any{"title": 5}) + `]`, 1, "req-001", "title", "want string"},
		{"title is an object", `[` + item(map[string]any{"title": map[string]any{"en": "x"}}) + `]`, 1, "req-001", "title", "want string"},
		{"impact is an array", `[` + item(map[string]any{"impact": []string{"low"}}) + `]`, 1, "req-001", "impact", "want string"},
		{"unknown category", `[` + item(map[string]any{"category": "marketing"}) + `]`, 1, "req-001", "category", `"marketing" is not allowed`},
		{"unknown impact", `[` + item(map[string]any{"impact": "critical"}) + `]`, 1, "req-001", "impact", `"critical" is not allowed`},
		{"unknown depth", `[` + item(map[string]any{"depth": "deep"}) + `]`, 1, "req-001", "depth", `"deep" is not allowed`},
		{"duplicate id", `[` + valid + `,` + item(map[string]any{"title": "Other"}) + `]`, 2, "req-001", "id", "duplicate of item 1"},
		{"fault without an id", `[` + item(map[string]any{"id": nil, "impact": "huge"}) + `]`, 1, "", "impact", `"huge"`},
		{"invalid UTF-8", `[` + strings.Replace(valid, `"title":"`, "\"title\":\"caf\xff", 1) + `]`, 1, "req-001", "", "invalid UTF-8"},
		{"title too long", `[` + item(map[string]any{"title": strings.Repeat("t", journal.MaxFieldBytes+1)}) + `]`, 1, "req-001", "title", "bytes long; at most"},
		{"context too long", `[` + item(map[string]any{"context": strings.Repeat("c", journal.MaxFieldBytes+1)}) + `]`, 1, "req-001", "context", "bytes long; at most"},
	}
	if !strings.Contains(valid, `"title":"`) {
		t.Fatalf("item() = %s: the UTF-8 case needs its title", valid)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "ceo-decisions-pending.json", tt.content)
			q, err := read(t, path)
			if tt.item > 0 {
				// A bad item spoils only itself: it is named, the others
				// are read, and it stays in the file as it is.
				if err != nil {
					t.Fatalf("Read(%s) = %v; want the fault of item %d in Invalid, not an error", tt.content, err, tt.item)
				}
				if len(q.Invalid) != 1 {
					t.Fatalf("Read(%s): %d invalid items; want 1", tt.content, len(q.Invalid))
				}
				var all []json.RawMessage
				if err := json.Unmarshal([]byte(tt.content), &all); err != nil {
					t.Fatal(err)
				}
				if len(q.Requests) != len(all)-1 {
					t.Errorf("Read(%s): %d valid requests; want %d", tt.content, len(q.Requests), len(all)-1)
				}
				err = q.Invalid[0].Err
				if got := string(q.Without(func(queue.Request) bool { return true }).Bytes()); strings.Count(got, "\n  ") < 1 || len(q.Invalid) != 1 {
					t.Errorf("Bytes() after taking the valid items out = %s; want the invalid item kept", got)
				}
			} else if err == nil {
				t.Fatalf("Read(%s) = %d requests, nil; want an error", tt.content, len(q.Requests))
			}
			var qe *queue.Error
			if !errors.As(err, &qe) {
				t.Fatalf("Read error %T %v; want *queue.Error", err, err)
			}
			if qe.Path != path || qe.Item != tt.item || qe.ID != tt.id || qe.Field != tt.field || !strings.Contains(qe.Msg, tt.msg) {
				t.Errorf("Read error = %+v; want Path %s Item %d ID %q Field %q Msg containing %q", *qe, path, tt.item, tt.id, tt.field, tt.msg)
			}
			msg := err.Error()
			want := []string{path}
			if tt.item > 0 {
				want = append(want, "item "+strconv.Itoa(tt.item))
			}
			if tt.id != "" {
				want = append(want, "("+tt.id+")")
			}
			if tt.field != "" {
				want = append(want, ": "+tt.field+":")
			}
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("Read error %q; want it to name %q", msg, w)
				}
			}
		})
	}
}

// read is queue.Read that turns a panic into a test failure, so that one
// bad case does not stop the others.
func read(tb testing.TB, path string) (q *queue.Queue, err error) {
	tb.Helper()
	defer func() {
		if r := recover(); r != nil {
			data, _ := os.ReadFile(path)
			tb.Fatalf("Read(%s) panicked on %s: %v", path, data, r)
		}
	}()
	return queue.Read("", path)
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		name string
		err  queue.Error
		want string
	}{
		{"whole file", queue.Error{Path: "q.json", Msg: "want a JSON array"}, "q.json: want a JSON array"},
		{"item without id", queue.Error{Path: "q.json", Item: 3, Field: "title", Msg: "missing (required)"}, "q.json: item 3: title: missing (required)"},
		{"item with id", queue.Error{Path: "q.json", Item: 2, ID: "req-7", Field: "impact", Msg: "bad"}, "q.json: item 2 (req-7): impact: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestParseRequestDepth(t *testing.T) {
	r, err := queue.ParseRequest("stdin", 1, []byte(`  {"title":"t","category":"deploy","impact":"high","reversible":false,"depth":"light"}  `))
	if err != nil {
		t.Fatal(err)
	}
	if r.Depth != "light" || r.Reversible || r.Category != "deploy" || r.Impact != "high" {
		t.Errorf("ParseRequest = %+v; want depth light, irreversible high deploy", r)
	}
	if got := string(r.Raw()); !strings.HasPrefix(got, "{") || !strings.HasSuffix(got, "}") {
		t.Errorf("Raw() = %q; want the object without surrounding space", got)
	}
}

// queueWithExtras has items with fields orbit does not know, odd number
// spellings, escapes and nesting, in a layout unlike orbit's own.
const queueWithExtras = `[
{"id":"req-001","category":"quality","title":"Fix typo","impact":"low","reversible":true},
    {
      "id": "req-002", "priority": 1.50, "tags": ["a", "b"],
      "category": "architecture", "title": "SQLite vs Postgres \u2014 \"state\"",
      "impact": "medium", "reversible": true,
      "meta": {"nested": {"n": 12345678901234567890, "empty": {}}, "list": []},
      "context": "line1\nline2 <b>&amp;</b>"
    },
  {"z_last": null, "id": "req-003", "category": "deploy", "title": "Ship", "impact": "high", "reversible": false, "depth": "heavy"}
]`

func TestWithoutWriteKeepsTheRest(t *testing.T) {
	path := writeFile(t, "ceo-decisions-pending.json", queueWithExtras)
	q, err := queue.Read("", path)
	if err != nil {
		t.Fatal(err)
	}
	var before []json.RawMessage
	if err := json.Unmarshal([]byte(queueWithExtras), &before); err != nil {
		t.Fatal(err)
	}
	rest := q.Without(func(r queue.Request) bool { return r.ID == "req-001" })
	if len(q.Requests) != 3 {
		t.Errorf("Without changed the original queue: %d requests; want 3", len(q.Requests))
	}
	if rest.Path != path || !rest.Exists || len(rest.Requests) != 2 {
		t.Fatalf("Without = %q, %v, %d requests; want %q, true, 2", rest.Path, rest.Exists, len(rest.Requests), path)
	}
	if err := rest.Write(); err != nil {
		t.Fatalf("Write: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var after []json.RawMessage
	if err := json.Unmarshal(data, &after); err != nil {
		t.Fatalf("written queue is not a JSON array: %v\n%s", err, data)
	}
	if len(after) != 2 {
		t.Fatalf("written queue has %d items; want 2:\n%s", len(after), data)
	}
	for i, want := range before[1:] {
		// Same members, same order, same spelling of every value: compare
		// the compacted text.
		if got, w := compact(t, after[i]), compact(t, want); got != w {
			t.Errorf("item %d written as\n%s\nwant\n%s", i+1, got, w)
		}
	}
	// The file re-reads to the same requests.
	q2, err := queue.Read("", path)
	if err != nil {
		t.Fatalf("re-read: %v", err)
	}
	for i, r := range q2.Requests {
		if r.ID != rest.Requests[i].ID || r.Title != rest.Requests[i].Title || r.Context != rest.Requests[i].Context {
			t.Errorf("re-read item %d = %+v; want %+v", i+1, r, rest.Requests[i])
		}
	}
	// Atomic: nothing but the queue is left in the directory.
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(path) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory after Write holds %v; want only %s", names, filepath.Base(path))
	}
}

func compact(tb testing.TB, raw []byte) string {
	tb.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

func TestWithoutEverything(t *testing.T) {
	path := writeFile(t, "ceo-decisions-pending.json", queueWithExtras)
	q, err := queue.Read("", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Without(func(queue.Request) bool { return true }).Write(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "[]\n" {
		t.Errorf("queue file after taking every item out = %q; want %q", data, "[]\n")
	}
}

func TestBytesEmpty(t *testing.T) {
	for _, q := range []*queue.Queue{{}, {Path: "x", Exists: true, Requests: []queue.Request{}}} {
		if got := string(q.Bytes()); got != "[]\n" {
			t.Errorf("Bytes() of an empty queue = %q; want %q", got, "[]\n")
		}
	}
}

func TestReadBOMAndCRLF(t *testing.T) {
	content := "\xef\xbb\xbf[\r\n  {\"id\": \"req-1\", \"category\": \"quality\", \"title\": \"t\", \"impact\": \"low\", \"reversible\": false}\r\n]\r\n"
	path := writeFile(t, "q.json", content)
	q, err := queue.Read("", path)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(q.Requests) != 1 || q.Requests[0].ID != "req-1" || q.Requests[0].Reversible {
		t.Errorf("Read = %+v; want req-1, irreversible", q.Requests)
	}
}
