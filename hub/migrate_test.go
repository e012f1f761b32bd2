package hub_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/internal/tooltest"
	"github.com/orbit-loop/orbit/loop"
)

// TestOldLoopsKindMigrated opens a hub at schema 2, where the loop event
// journal was kind "loops", with one event line pushed under that name;
// migrating names it by the follower's kind (loop-events), and the next
// push carries on from the acknowledged offset: both lines once each.
// A batch an older client sends as "loops" is taken as loop-events.
func TestOldLoopsKindMigrated(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{hub.Postgres, hub.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			spec := "sqlite:" + filepath.Join(t.TempDir(), "hub.db")
			if dialect == hub.Postgres {
				spec = tooltest.Postgres(t)
			}
			s, err := hub.Open(ctx, spec, hub.Options{NoMigrate: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.MigrateTo(ctx, 2); err != nil {
				t.Fatal(err)
			}
			first := `{"ts":"2026-03-08T10:00:00Z","framework":"citadel","loop":"docs","event":"seen","status":"running"}` + "\n"
			second := `{"ts":"2026-03-08T11:00:00Z","framework":"citadel","loop":"docs","event":"status","status":"done"}` + "\n"
			third := `{"ts":"2026-03-08T12:00:00Z","framework":"ccw","loop":"w","event":"seen","status":"paused"}` + "\n"
			for _, st := range []struct {
				q    string
				args []any
			}{
				{`INSERT INTO hub_projects (id, name, loop_events) VALUES ('old', 'old', 1)`, nil},
				{`INSERT INTO hub_files (project_id, kind, path, acked_offset, acked_lines, tail) VALUES ('old', 'loops', ?, ?, 1, ?)`,
					[]any{loop.EventsFile, len(first), []byte(first)}},
				{`INSERT INTO hub_chunks (project_id, kind, byte_offset, length, line, line_end, state, text) VALUES ('old', 'loops', 0, ?, 1, 1, 'record', ?)`,
					[]any{len(first), []byte(first)}},
			} {
				if _, err := s.DB.ExecContext(ctx, s.DB.Rebind(st.q), st.args...); err != nil {
					t.Fatalf("%s: %v", st.q, err)
				}
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			url := serve(t, s)
			p := newProject(t, "old", map[string]string{loop.EventsFile: first + second})
			rep := p.push(t, url, adminToken)
			for _, f := range rep.Files {
				if f.Kind == loop.KindEvents && (f.Chunks != 1 || f.Offset != int64(len(first+second)) || f.Held != "") {
					t.Errorf("push after the migration: %+v; want the second line alone", f)
				}
			}
			var kinds []string
			if err := s.DB.SelectContext(ctx, &kinds, `SELECT kind FROM hub_chunks WHERE project_id = 'old' ORDER BY byte_offset`); err != nil {
				t.Fatal(err)
			}
			if len(kinds) != 2 || kinds[0] != loop.KindEvents || kinds[1] != loop.KindEvents {
				t.Errorf("chunks of the loop event journal: kinds %v; want two %s", kinds, loop.KindEvents)
			}

			// An older client still names the journal "loops".
			st, err := s.State(ctx, hub.Access{Admin: true}, "old")
			if err != nil {
				t.Fatal(err)
			}
			var at hub.FileState
			for _, f := range st {
				if f.Kind == loop.KindEvents {
					at = f
				}
			}
			res, err := s.Push(ctx, hub.Access{Admin: true}, hub.Batch{Project: "old", Kind: "loops", Offset: at.Offset, Lines: at.Lines,
				TailHash: at.TailHash, Data: []byte(third)}, time.Now())
			if err != nil || res.State.Kind != loop.KindEvents || res.Chunks != 1 {
				t.Fatalf("a batch of kind loops: %+v, %v; want one chunk of %s", res, err, loop.KindEvents)
			}
			ps := must(s.Projects(ctx, "old"))
			if len(ps) != 1 || ps[0].LoopEvents != 3 || len(ps[0].Loops) != 2 {
				t.Errorf("project after the migration: %+v; want 3 loop events of 2 loops", ps)
			}
		})
	}
}
