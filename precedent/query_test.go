package precedent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/synth"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "SQLite vs Postgres for state storage", []string{"sqlite", "postgres", "state", "storage"}},
		{"ticket id splits", "OPS-306 rollback", []string{"ops", "306", "rollback"}},
		{"operators are words", `a AND b OR NOT c NEAR(d)`, []string{"near"}},
		{"column filter is words", "title:foo input:bar", []string{"title", "foo", "input", "bar"}},
		{"quotes and stars", `"unbalanced c++ mig*`, []string{"unbalanced", "mig"}},
		{"duplicates once", "cache Cache CACHE", []string{"cache"}},
		{"diacritics removed as the index does", "Überprüfung der Datenbank café", []string{"uberprufung", "der", "datenbank", "cafe"}},
		{"combining mark kept in the word, dropped", "cafe\u0301 CAFÉ", []string{"cafe"}},
		{"greek and cyrillic lower-cased, accents kept", "ΣΟΦΊΑ Ёлка", []string{"σοφία", "ёлка"}},
		{"emoji separates", "deploy🚀rollback", []string{"deploy", "rollback"}},
		{"cjk run is one word", "数据库迁移 plan", []string{"数据库迁移", "plan"}},
		{"empty", "  ;;; ** ", nil},
		{"lone letters dropped", "a b c x1", []string{"x1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTokensBounded(t *testing.T) {
	long := strings.Repeat("alpha beta gamma delta epsilon ", 400) + strings.Repeat("x", 500)
	for i := 0; i < 200; i++ {
		long += " word" + strings.Repeat("z", i%7) + string(rune('a'+i%26))
	}
	got := Tokens(long)
	if len(got) > maxTokens {
		t.Fatalf("Tokens of a 10 KB text gave %d tokens; want at most %d", len(got), maxTokens)
	}
	for _, tok := range got {
		if n := len([]rune(tok)); n > maxTokenRunes {
			t.Errorf("token %q has %d runes; want at most %d", tok, n, maxTokenRunes)
		}
	}
}

func TestMatchQuoting(t *testing.T) {
	if got, want := MatchAny([]string{"a", `b"c`}), `"a" OR "b""c"`; got != want {
		t.Errorf("MatchAny = %s; want %s", got, want)
	}
	if got, want := MatchAll([]string{"x", "y"}), `"x" AND "y"`; got != want {
		t.Errorf("MatchAll = %s; want %s", got, want)
	}
}

var (
	fuzzOnce  sync.Once
	fuzzDir   string
	fuzzStore *db.Store
	fuzzErr   error
)

// TestMain removes testIndex's directory, which outlives every test that
// shares it (each run of the package left one behind).
func TestMain(m *testing.M) {
	code := m.Run()
	if fuzzStore != nil {
		fuzzStore.Close()
	}
	if fuzzDir != "" {
		os.RemoveAll(fuzzDir)
	}
	os.Exit(code)
}

// testIndex builds a small index of synthetic decisions once.
func testIndex(tb testing.TB) *db.Store {
	tb.Helper()
	fuzzOnce.Do(func() {
		dir, err := os.MkdirTemp("", "orbit-precedent-")
		if err != nil {
			fuzzErr = err
			return
		}
		fuzzDir = dir
		os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
		f, err := os.Create(filepath.Join(dir, project.DecisionsFile))
		if err != nil {
			fuzzErr = err
			return
		}
		synth.Generate(f, synth.Options{Decisions: 400, Seed: 3})
		f.Close()
		p, _ := project.New(dir, "")
		fuzzStore, fuzzErr = db.Open(context.Background(), p.DB, db.Options{})
		if fuzzErr == nil {
			_, fuzzErr = journal.NewIndex(fuzzStore, p).Sync(context.Background(), journal.SyncOptions{})
		}
	})
	if fuzzErr != nil {
		tb.Fatal(fuzzErr)
	}
	return fuzzStore
}

// FuzzSearch: any text a user or hook passes is a valid query: never an
// FTS5 syntax error, never SQL injection, never a panic.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{
		"SQLite vs Postgres", "OPS-306", "a AND", "c++", "NEAR(", `"unbalanced`, "title:foo", "input:bar OR reason:baz",
		"'; DROP TABLE decisions; --", "*", "(", ")", "NOT", "^start", "col:*", "\x00", "Überprüfung", "🙂 emoji",
		strings.Repeat("word ", 2000),
	} {
		f.Add(s)
	}
	store := testIndex(f)
	f.Fuzz(func(t *testing.T, q string) {
		hits, err := Search(context.Background(), store, q, Options{K: 5})
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		if len(hits) > 5 {
			t.Fatalf("Search(%q) returned %d hits; want at most 5", q, len(hits))
		}
		var n int
		if err := store.DB.Get(&n, `SELECT count(*) FROM decisions`); err != nil || n != 400 {
			t.Fatalf("after Search(%q): %d decisions (err %v); want 400 untouched", q, n, err)
		}
	})
}
