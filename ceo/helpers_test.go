package ceo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/internal/projecttest"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// Seed 000's example files, verbatim.
const (
	seedStateFile = "testdata/doc-example.ceo-loop-state.json"
	seedQueueFile = "testdata/doc-example.ceo-decisions-pending.json"
)

// t0 is the clock of every test: the seed's worked example starts at 10:00.
var t0 = time.Date(2026, 3, 8, 10, 15, 0, 0, time.UTC)

// fixed returns options whose clock reads at.
func fixed(at time.Time) ceo.Options {
	return ceo.Options{Now: func() time.Time { return at }}
}

// env is a project in a temporary directory with its index open.
type env struct {
	tb    testing.TB
	ctx   context.Context
	proj  project.Project
	store *db.Store
	ix    *journal.Index
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	dir := tb.TempDir()
	p := projecttest.At(tb, dir)
	ix := projecttest.Open(tb, p, t0)
	return &env{tb: tb, ctx: context.Background(), proj: p, store: ix.Store, ix: ix}
}

func (e *env) path(rel string) string { return e.proj.Path(rel) }

// write replaces a project file.
func (e *env) write(rel, content string) {
	e.tb.Helper()
	if err := os.WriteFile(e.path(rel), []byte(content), 0o644); err != nil {
		e.tb.Fatal(err)
	}
}

// copyIn copies a testdata file to a project file.
func (e *env) copyIn(src, rel string) {
	e.tb.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.write(rel, string(data))
}

// read returns a project file's content; ok is false when it is absent.
func (e *env) read(rel string) (string, bool) {
	e.tb.Helper()
	data, err := os.ReadFile(e.path(rel))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		e.tb.Fatal(err)
	}
	return string(data), true
}

// mustRead returns a project file's content.
func (e *env) mustRead(rel string) string {
	e.tb.Helper()
	s, ok := e.read(rel)
	if !ok {
		e.tb.Fatalf("%s does not exist", rel)
	}
	return s
}

// appendRecords appends records (marshalled as journal lines) to a project
// file, the way another tool would.
func (e *env) appendRecords(rel string, recs ...any) {
	e.tb.Helper()
	var b bytes.Buffer
	for _, r := range recs {
		line, err := journal.Marshal(r)
		if err != nil {
			e.tb.Fatal(err)
		}
		b.Write(line)
	}
	f, err := os.OpenFile(e.path(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b.Bytes()); err != nil {
		e.tb.Fatal(err)
	}
}

func (e *env) sync() {
	e.tb.Helper()
	rep, err := e.ix.Sync(e.ctx, journal.SyncOptions{})
	if err != nil {
		e.tb.Fatalf("Sync: %v", err)
	}
	if n := rep.Errors(); n > 0 {
		e.tb.Fatalf("Sync rejected %d lines: %v", n, rep.Problems)
	}
}

// decision returns an indexed decision, with its current outcome.
func (e *env) decision(id string) db.DecisionRow {
	e.tb.Helper()
	d, found, err := e.store.Decision(e.ctx, id)
	if err != nil {
		e.tb.Fatal(err)
	}
	if !found {
		e.tb.Fatalf("decision %s is not in the index", id)
	}
	return d
}

// lines returns a JSONL file's lines as generic objects (none when absent).
func (e *env) lines(rel string) []map[string]any {
	e.tb.Helper()
	s, _ := e.read(rel)
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.tb.Fatalf("%s: %v in %q", rel, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// past is a decision line as a hand-written or earlier journal holds it.
func past(id string, iteration int64, ts string) journal.Decision {
	return journal.Decision{
		ID: id, Iteration: iteration, TS: ts, Tier: "auto_approve", Depth: "trivial", Category: "quality",
		Input: "past decision " + id, Decision: "APPROVED", Reason: "fine", Verification: "PENDING",
		Retrograde: journal.Retrograde{Outcome: journal.OutcomeNA},
	}
}

// seedOutcomes appends correct + incorrect scored decisions (iteration 1,
// ids score-N) with their outcomes in the retrograde journal, incorrect
// ones first, and syncs.
func (e *env) seedOutcomes(correct, incorrect int) {
	e.tb.Helper()
	var ds, outs []any
	for k := range correct + incorrect {
		id := fmt.Sprintf("score-%d", k+1)
		d := past(id, 1, "2026-03-08T09:00:00Z")
		ds = append(ds, &d)
		o := journal.OutcomeCorrect
		if k < incorrect {
			o = journal.OutcomeIncorrect
		}
		outs = append(outs, &journal.OutcomeRecord{TS: "2026-03-08T09:30:00Z", DecisionID: id, Outcome: o, Evidence: "seeded"})
	}
	e.appendRecords(project.DecisionsFile, ds...)
	e.appendRecords(project.RetroFile, outs...)
	e.sync()
}

// inputError asserts err is a *ceo.InputError whose message holds every
// one of want.
func inputError(tb testing.TB, err error, want ...string) {
	tb.Helper()
	if !ceo.IsInput(err) {
		tb.Fatalf("error = %T %v; want an input error (*ceo.InputError, *journal.FieldError)", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			tb.Errorf("input error %q; want it to contain %q", err.Error(), w)
		}
	}
}

func boolp(b bool) *bool          { return &b }
func int64p(n int64) *int64       { return &n }
func float64p(f float64) *float64 { return &f }
func strp(s string) *string       { return &s }

// replaceState returns the seed state with the three fields orbit keeps
// set: everything else byte-for-byte as the seed has it.
func replaceState(tb testing.TB, correct, incorrect int, level string) string {
	tb.Helper()
	data, err := os.ReadFile(seedStateFile)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.NewReplacer(
		`"correct_decisions": 47`, fmt.Sprintf(`"correct_decisions": %d`, correct),
		`"incorrect_decisions": 2`, fmt.Sprintf(`"incorrect_decisions": %d`, incorrect),
		`"trust_level": "standard"`, fmt.Sprintf(`"trust_level": %q`, level),
	).Replace(string(data))
}

// rebuild deletes the index and opens an empty one, as `orbit rebuild`
// does; the next sync reads every file from its start.
func (e *env) rebuild() {
	e.tb.Helper()
	if err := e.store.Close(); err != nil {
		e.tb.Fatal(err)
	}
	if err := db.Remove(e.proj.DB); err != nil {
		e.tb.Fatal(err)
	}
	store, err := db.Open(e.ctx, e.proj.DB, db.Options{})
	if err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() { store.Close() })
	e.store = store
	now := e.ix.Now
	e.ix = journal.NewIndex(store, e.proj)
	e.ix.Now = now
	e.sync()
}

// explainedState is the seed's state file with counters an empty journal
// explains (0 correct, 0 incorrect): the seed's own 47/49 would be adopted
// as a baseline (TestReconcileAdoptsCounters), which is not what these
// tests look at.
func explainedState(tb testing.TB) string {
	tb.Helper()
	return replaceState(tb, 0, 0, "standard")
}
