package hub_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// demoFiles are the embedded sample journals (agent-written lines, a
// pretty-printed record, ISO-8601 placeholders, outcomes in both files)
// plus a loop event journal and a knowledge journal with a bad line each.
func demoFiles(tb testing.TB) map[string]string {
	tb.Helper()
	read := func(name string) string {
		b, err := os.ReadFile("../demo/sample/" + name)
		if err != nil {
			tb.Fatal(err)
		}
		return string(b)
	}
	return map[string]string{
		project.DecisionsFile: read("decisions.jsonl") + read("agent-written.jsonl") + "\n   \nnot json at all\n" +
			`{"id":"iter-1-1","iteration":9,"tier":"auto_approve","depth":"trivial","category":"quality","input":"a duplicate id","decision":"APPROVED"}` + "\n",
		project.RetroFile: read("retrograde.jsonl"),
		loop.EventsFile: `{"ts":"2026-03-08T10:00:00Z","framework":"citadel","loop":"docs","event":"seen","status":"running","title":"Docs drift","iteration":1,"max_iterations":5}` + "\n" +
			`{"ts":"2026-03-08T10:05:00Z","framework":"citadel","loop":"docs","event":"attempt","detail":"lint"}` + "\n" +
			"{broken\n" +
			`{"ts":"2026-03-08T11:00:00Z","framework":"citadel","loop":"docs","event":"stop","status":"done","iteration":3}` + "\n" +
			`{"ts":"2026-03-08T11:00:00Z","framework":"ccw","loop":"loop-v2-1","event":"seen","status":"paused"}` + "\n",
		knowledge.JournalFile: `{"ts":"2026-03-08T10:00:00Z","event":"hit","file":"conductor/knowledge/errors.json","id":"err-001"}` + "\n" +
			`{"ts":"2026-03-08T10:01:00Z","event":"hit","file":"conductor/knowledge/errors.json","id":"err-002"}` + "\n" +
			`{"ts":"2026-03-08T10:02:00Z","event":"source","dir":"conductor/knowledge"}` + "\n" +
			`{"ts":"2026-03-08T10:03:00Z","event":"bogus"}` + "\n",
	}
}

// TestPushStoresEveryChunkOnce pushes a project twice and checks that the
// hub holds every chunk of every journal exactly once, byte for byte, with
// the records the local index derives from them.
func TestPushStoresEveryChunkOnce(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		url := serve(t, s)
		p := newProject(t, "alpha", demoFiles(t))
		rep := p.push(t, url, adminToken)
		if held := rep.Held(); len(held) > 0 {
			t.Fatalf("push held %+v", held)
		}
		again := p.push(t, url, adminToken)
		if n, _ := again.Pushed(); n != 0 {
			t.Errorf("second push shipped %d chunks; want 0", n)
		}
		ctx := context.Background()
		for _, j := range hub.Journals {
			data, err := os.ReadFile(p.Path(j.Path))
			if err != nil {
				t.Fatal(err)
			}
			var texts [][]byte
			var offsets []int64
			rows, err := s.DB.QueryContext(ctx, s.DB.Rebind(`SELECT byte_offset, text FROM hub_chunks WHERE project_id = ? AND kind = ? ORDER BY byte_offset`), "alpha", j.Kind)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var off int64
				var text []byte
				if err := rows.Scan(&off, &text); err != nil {
					t.Fatal(err)
				}
				offsets, texts = append(offsets, off), append(texts, text)
			}
			rows.Close()
			if got, want := len(texts), chunks(t, p.Path(j.Path)); got != want {
				t.Errorf("%s: hub holds %d chunks; the file has %d", j.Kind, got, want)
			}
			var joined []byte
			for i, text := range texts {
				if offsets[i] != int64(len(joined)) {
					t.Fatalf("%s: chunk at %d follows %d bytes: a gap or an overlap", j.Kind, offsets[i], len(joined))
				}
				joined = append(joined, text...)
			}
			if string(joined) != string(data) {
				t.Errorf("%s: the hub's chunks are not the file's bytes", j.Kind)
			}
		}
		ix := p.local(t)
		counts, err := ix.Store.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := s.Projects(ctx, "alpha")
		if err != nil || len(ps) != 1 {
			t.Fatalf("Projects = %v, %v", ps, err)
		}
		got := ps[0]
		if got.Decisions != int64(counts.Decisions) {
			t.Errorf("hub has %d decisions; the local index %d", got.Decisions, counts.Decisions)
		}
		if got.Name != "name-alpha" || got.LoopEvents != 4 || got.KnowledgeHits != 2 {
			t.Errorf("project = %+v; want name-alpha, 4 loop events, 2 knowledge hits", got)
		}
		// Rejected: the decision lines the local index rejects, the broken
		// loop event, the bogus knowledge event.
		files, err := ix.Store.Files(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := files[0].Rejected + 2; got.Rejected != want {
			t.Errorf("rejected = %d; want %d", got.Rejected, want)
		}
		if len(got.Loops) != 2 || got.Loops[1].Status != "done" || *got.Loops[1].Iteration != 3 || got.Loops[1].Title != "Docs drift" || got.Loops[1].Events != 3 {
			t.Errorf("loops = %+v; want ccw paused and citadel docs done at iteration 3 with its title kept", got.Loops)
		}
		sameJSON(t, "trust", must(s.Trust(ctx, "alpha", hub.TrustOptions{})), localTrust(t, p, trust.Options{}))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTrustEqualsLocal holds the hub's trust report of a project equal to
// the project's own `orbit trust`, whole and by category, on a journal
// whose outcomes arrive in later lines and in the retrograde journal,
// pushed in many small batches (outcomes before their decisions, too).
func TestTrustEqualsLocal(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		url := serve(t, s)
		journalText := synthJournal(t, 3000, 7)
		lines := strings.SplitAfter(journalText, "\n")
		p := newProject(t, "beta", map[string]string{project.DecisionsFile: strings.Join(lines[:1500], "")})
		// Outcomes recorded on their own, some for decisions not yet pushed.
		p.write(t, project.RetroFile, `{"ts":"2026-03-08T10:00:00Z","decision_id":"iter-2-1","outcome":"INCORRECT","evidence":"x"}`+"\n"+
			`{"decision_id":"iter-200-1","outcome":"CORRECT"}`+"\n"+
			`{"ts":"2030-01-01T00:00:00Z","decision_id":"iter-3-1","outcome":"PENDING"}`+"\n")
		p.pushBatches(t, url, adminToken, 64<<10)
		p.appendTo(t, project.DecisionsFile, strings.Join(lines[1500:], ""))
		p.pushBatches(t, url, adminToken, 64<<10)
		ctx := context.Background()
		sameJSON(t, "trust", must(s.Trust(ctx, "beta", hub.TrustOptions{})), localTrust(t, p, trust.Options{}))
		for _, c := range journal.Categories {
			sameJSON(t, "trust of "+c, must(s.Trust(ctx, "beta", hub.TrustOptions{Category: c})),
				localTrust(t, p, trust.Options{Filter: trust.Filter{Category: c}}))
		}
	})
}

// TestRepeatedBatchIsRefused sends a batch the hub already stored (its
// answer lost): it is refused, nothing is stored twice, and the next push
// goes on from where the hub stands.
func TestRepeatedBatchIsRefused(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		url := serve(t, s)
		text := synthJournal(t, 200, 3)
		p := newProject(t, "gamma", map[string]string{project.DecisionsFile: text})
		first := text[:strings.Index(text, "\n")+1]
		b := hub.Batch{Project: "gamma", Kind: journal.KindDecisions, TailHash: hub.TailHash(nil), Data: []byte(first)}
		admin := hub.Access{Admin: true, Project: hub.AllProjects}
		ctx := context.Background()
		if _, err := s.Push(ctx, admin, b, testNow); err != nil {
			t.Fatal(err)
		}
		_, err := s.Push(ctx, admin, b, testNow)
		var ce *hub.ConflictError
		if !errors.As(err, &ce) || ce.State.Offset != int64(len(first)) || ce.State.Lines != 1 {
			t.Fatalf("repeated batch: err = %v; want a conflict saying the hub holds %d bytes, 1 line", err, len(first))
		}
		rep := p.push(t, url, adminToken)
		if rep.Files[0].Chunks != 199 {
			t.Errorf("push after the lost answer shipped %d chunks; want the other 199", rep.Files[0].Chunks)
		}
		var n int
		if err := s.DB.Get(&n, s.DB.Rebind(`SELECT count(*) FROM hub_decisions WHERE project_id = ?`), "gamma"); err != nil || n != 200 {
			t.Errorf("hub holds %d decisions (%v); want 200", n, err)
		}
	})
}

// TestRewrittenPastIsHeld rewrites a line already pushed: the journal is
// held back and reported, the hub's copy is untouched, and the other
// journals still go.
func TestRewrittenPastIsHeld(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		url := serve(t, s)
		text := synthJournal(t, 5, 4)
		p := newProject(t, "delta", map[string]string{project.DecisionsFile: text})
		p.push(t, url, adminToken)
		p.write(t, project.DecisionsFile, strings.Replace(text, "APPROVED", "REJECTED", 1)+synthJournal(t, 8, 4)[len(text):])
		p.write(t, project.RetroFile, `{"decision_id":"iter-1-1","outcome":"CORRECT"}`+"\n")
		rep := p.push(t, url, adminToken)
		held := rep.Held()
		if len(held) != 1 || held[0].Kind != journal.KindDecisions || !strings.Contains(held[0].Held, "rewritten") {
			t.Fatalf("held = %+v; want the decision journal, rewritten", held)
		}
		if rep.Files[1].Chunks != 1 {
			t.Errorf("retrograde journal: %d chunks pushed; want 1", rep.Files[1].Chunks)
		}
		ps := must(s.Projects(context.Background(), "delta"))
		if ps[0].Decisions != 5 {
			t.Errorf("hub holds %d decisions; want the 5 first pushed", ps[0].Decisions)
		}
		// Cut shorter than what the hub holds: held too.
		p.write(t, project.DecisionsFile, text[:10])
		if held := p.push(t, url, adminToken).Held(); len(held) != 1 || !strings.Contains(held[0].Held, "shorter") {
			t.Errorf("truncated journal: held = %+v", held)
		}
	})
}

// TestUnterminatedLineWaits: a last line still being written is not
// pushed; once complete, it is.
func TestUnterminatedLineWaits(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		url := serve(t, s)
		text := synthJournal(t, 3, 5)
		p := newProject(t, "eps", map[string]string{project.DecisionsFile: text + `{"id":"late","iteration":1`})
		rep := p.push(t, url, adminToken)
		if !rep.Files[0].Pending || rep.Files[0].Chunks != 3 {
			t.Fatalf("report = %+v; want 3 chunks and the last line pending", rep.Files[0])
		}
		p.appendTo(t, project.DecisionsFile, `,"tier":"auto_approve","depth":"trivial","category":"quality","input":"x","decision":"APPROVED"}`+"\n")
		rep = p.push(t, url, adminToken)
		if rep.Files[0].Pending || rep.Files[0].Decisions != 1 {
			t.Errorf("report = %+v; want the completed line pushed", rep.Files[0])
		}
	})
}
