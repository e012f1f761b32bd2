package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// textSegments counts the full-text index's segments.
func (e *testEnv) textSegments() int {
	e.tb.Helper()
	var n int
	if err := e.store.DB.Get(&n, `SELECT count(DISTINCT segid) FROM decisions_fts_idx`); err != nil {
		e.tb.Fatal(err)
	}
	return n
}

// matches lists the decisions holding word, newest first.
func (e *testEnv) matches(word string) []int64 {
	e.tb.Helper()
	var seqs []int64
	if err := e.store.DB.Select(&seqs, `SELECT rowid FROM decisions_fts WHERE decisions_fts MATCH ? ORDER BY rowid DESC`, word); err != nil {
		e.tb.Fatal(err)
	}
	return seqs
}

// A sync or an import that adds mergeTextAfter decisions or more leaves the
// full-text index in one segment, holding what it held before the merge; a
// smaller one leaves the segments as they are.
func TestLargeLoadsMergeTheTextIndex(t *testing.T) {
	defer func(n int) { mergeTextAfter = n }(mergeTextAfter)
	mergeTextAfter = 60
	journalOf := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			b.WriteString(dec(fmt.Sprintf("m-%d", i), i, i%600) + "\n")
		}
		return b.String()
	}
	// Small syncs, one transaction each: a segment each until FTS5
	// merges them.
	e := newTestEnv(t)
	text := ""
	for i := 0; i < 8; i++ {
		text += journalOf(i*5+1, i*5+5)
		e.write(decFile, text)
		e.sync()
	}
	if n := e.textSegments(); n < 2 {
		t.Fatalf("%d segments after 8 small syncs; the test needs several", n)
	}
	before := e.matches("input")
	if len(before) != 40 {
		t.Fatalf("%d decisions hold 'input'; want 40", len(before))
	}

	t.Run("sync", func(t *testing.T) {
		e.write(decFile, text+journalOf(41, 100))
		if rep := e.sync(); rep.Decisions != 60 {
			t.Fatalf("sync added %d decisions; want 60", rep.Decisions)
		}
		if n := e.textSegments(); n != 1 {
			t.Errorf("%d segments after a sync of 60 decisions; want 1", n)
		}
		if got := e.matches("input"); len(got) != 100 || got[0] != before[0]+60 || got[99] != before[39] {
			t.Errorf("after the merge 'input' is in %d decisions (%v…); want 100", len(got), got[:min(3, len(got))])
		}
	})

	// An import syncs after each flush of ImportFlushRecords: it merges
	// once at its end, when all its flushes add up to mergeTextAfter.
	t.Run("import", func(t *testing.T) {
		mergeTextAfter = ImportFlushRecords * 3 / 2
		total := 2*ImportFlushRecords + 1000
		im := newTestEnv(t)
		src := filepath.Join(t.TempDir(), "src.jsonl")
		if err := os.WriteFile(src, []byte(journalOf(1, total)), 0o644); err != nil {
			t.Fatal(err)
		}
		rep := im.importFiles(ImportOptions{}, src)
		if rep.Sync.Decisions != total {
			t.Fatalf("import indexed %d decisions; want %d", rep.Sync.Decisions, total)
		}
		if n := im.textSegments(); n != 1 {
			t.Errorf("%d segments after importing %d decisions in flushes of %d; want 1", n, total, ImportFlushRecords)
		}
		if got := im.matches("input"); len(got) != total || got[0] != int64(total) || got[total-1] != 1 {
			t.Errorf("after the import's merge 'input' is in %d decisions; want %d", len(got), total)
		}
	})
}
