package queue_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/queue"
)

// FuzzRead feeds any bytes to the queue parser as a pending file: it never
// panics; it either refuses them with a *queue.Error naming the file, or
// returns requests that are each valid and that read back the same from the
// file Write renders (so taking an item out never alters the others).
func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/bad/queue-*.json")
	seeds = append(seeds, seedQueue)
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `[]`, `[{}]`, `{}`, `null`, `[null]`, `[[]]`, `"x"`, "\xef\xbb\xbf[]", " \r\n[\r\n]\r\n",
		`[{"title":"t","category":"quality","impact":"low","reversible":false}]`,
		`[{"id":"a","title":"t","category":"quality","impact":"low","reversible":true},{"id":"a","title":"u","category":"scope","impact":"high","reversible":false}]`,
		`[{"title":"t","title":"","category":"quality","impact":"low","reversible":true}]`,
		`[{"title":"t","category":"quality","impact":"low","reversible":true,"depth":"heavy","extra":{"nested":[1,2,{"a":null}]}}]`,
		`[{"title":"t\u0000","category":"quality","impact":"low","reversible":true}]`,
		`[{"Title":"t","Category":"quality","Impact":"low","Reversible":true}]`,
		`[{"title":"t","category":"quality","impact":"low","reversible":1}]`,
		`[{"title":"t","category":"quality","impact":"low","reversible":true}]]`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "ceo-decisions-pending.json")
	again := filepath.Join(dir, "rewritten.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		q, err := queue.Read("", path)
		if err != nil {
			var qe *queue.Error
			if !errors.As(err, &qe) {
				t.Fatalf("Read(%q) error %T %v; want a *queue.Error", data, err, err)
			}
			if !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("Read(%q) error %q does not name the file", data, err)
			}
			return
		}
		for i, r := range q.Requests {
			switch {
			case r.Title == "":
				t.Fatalf("Read(%q) request %d has no title", data, i+1)
			case !slices.Contains(journal.Categories, r.Category):
				t.Fatalf("Read(%q) request %d category %q", data, i+1, r.Category)
			case !slices.Contains(policy.Impacts, r.Impact):
				t.Fatalf("Read(%q) request %d impact %q", data, i+1, r.Impact)
			case r.Depth != "" && !slices.Contains(journal.Depths, r.Depth):
				t.Fatalf("Read(%q) request %d depth %q", data, i+1, r.Depth)
			}
			if _, ok := q.Find(r.ID); r.ID != "" && !ok {
				t.Fatalf("Find(%q) after Read(%q) = not found", r.ID, data)
			}
		}
		out := q.Bytes()
		if err := os.WriteFile(again, out, 0o644); err != nil {
			t.Fatal(err)
		}
		q2, err := queue.Read("", again)
		if err != nil {
			t.Fatalf("Read(Bytes()) of %q: %v\nBytes():\n%s", data, err, out)
		}
		if len(q2.Requests) != len(q.Requests) {
			t.Fatalf("Read(Bytes()) of %q has %d requests; want %d", data, len(q2.Requests), len(q.Requests))
		}
		for i := range q.Requests {
			a, b := q.Requests[i], q2.Requests[i]
			if !sameFields(a, b) {
				t.Fatalf("Read(%q) request %d = %+v; after Write it reads %+v", data, i+1, a, b)
			}
			if compact(t, a.Raw()) != compact(t, b.Raw()) {
				t.Fatalf("Read(%q) request %d raw %s; after Write %s", data, i+1, a.Raw(), b.Raw())
			}
		}
		if !bytes.Equal(q2.Bytes(), out) {
			t.Fatalf("Bytes() is not stable for %q:\n%s\nthen\n%s", data, out, q2.Bytes())
		}
	})
}

func sameFields(a, b queue.Request) bool {
	return a.ID == b.ID && a.SubmittedAt == b.SubmittedAt && a.Requestor == b.Requestor && a.Category == b.Category &&
		a.Title == b.Title && a.Description == b.Description && a.Impact == b.Impact && a.Reversible == b.Reversible &&
		a.Context == b.Context && a.Depth == b.Depth
}
