package orbitloop_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
)

// TestWriteProgressKeepsTheAgentsLines is issue 15, point 2: the agent
// maintains the progress file (seed 000); orbit regenerates only its own
// part, at the top within the first 30 lines, and keeps every other line
// byte for byte. A file it cannot parse is kept as a dated backup first.
func TestWriteProgressKeepsTheAgentsLines(t *testing.T) {
	agent := "# CEO-LOOP Progress — Iteration 7 of 20\r\n\n## Notes\n- iter-6: all CONFIRMED\n  \ttrailing spaces and a tab  \n## Last line without a newline"
	block := func(t *testing.T, got string) (orbit, rest string) {
		t.Helper()
		if !strings.HasPrefix(got, orbitloop.ProgressBegin+"\n") {
			t.Fatalf("progress file does not start with orbit's part:\n%s", got)
		}
		end := strings.Index(got, orbitloop.ProgressEnd+"\n")
		if end < 0 {
			t.Fatalf("no end marker:\n%s", got)
		}
		orbit, rest = got[:end+len(orbitloop.ProgressEnd)+1], got[end+len(orbitloop.ProgressEnd)+1:]
		if n := strings.Count(orbit, "\n"); n > 30 {
			t.Errorf("orbit's part is %d lines; want it within the first 30", n)
		}
		return orbit, rest
	}
	tests := []struct {
		name     string
		before   string
		wantRest string // what follows orbit's part
		backup   string // what the backup holds ("" when none)
	}{
		{"no file", "", "", ""},
		{"the agent's file from before orbit", agent, "\n" + agent, ""},
		{"orbit's part at the top", orbitloop.ProgressBegin + "\nold\n" + orbitloop.ProgressEnd + "\n" + agent, agent, ""},
		{"orbit's part moved down by the agent", "mine first\n" + orbitloop.ProgressBegin + "\nold\n" + orbitloop.ProgressEnd + "\n" + agent, "mine first\n" + agent, ""},
		{"begin without end", orbitloop.ProgressBegin + "\nold\n" + agent, "\nold\n" + agent, orbitloop.ProgressBegin + "\nold\n" + agent},
		{"two parts", orbitloop.ProgressBegin + "\n" + orbitloop.ProgressEnd + "\nmine\n" + orbitloop.ProgressBegin + "\n" + orbitloop.ProgressEnd + "\n",
			"\nmine\n", orbitloop.ProgressBegin + "\n" + orbitloop.ProgressEnd + "\nmine\n" + orbitloop.ProgressBegin + "\n" + orbitloop.ProgressEnd + "\n"},
		{"not text", "notes\x00\xff", "", "notes\x00\xff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := newIndex(t)
			if tt.before != "" {
				looptest.Write(t, ix.Project.Path(project.ProgressFile), tt.before)
			}
			now := time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)
			p, err := ceo.GatherProgress(context.Background(), ix, now)
			if err != nil {
				t.Fatal(err)
			}
			w, err := orbitloop.WriteProgress(context.Background(), ix, p)
			if err != nil {
				t.Fatalf("WriteProgress: %v", err)
			}
			got := read(t, ix, project.ProgressFile)
			orbit, rest := block(t, got)
			if rest != tt.wantRest {
				t.Errorf("after orbit's part:\n%q\nwant\n%q", rest, tt.wantRest)
			}
			if !strings.Contains(orbit, "## Queue Status") {
				t.Errorf("orbit's part:\n%s", orbit)
			}
			if tt.backup == "" {
				if w.Backup != "" {
					t.Errorf("a backup %s of a file orbit could parse", w.Backup)
				}
			} else {
				want := project.ProgressFile + ".orbit-backup-20260309T120000Z"
				if w.Backup != want || w.Why == "" || !strings.Contains(w.Note(), want) {
					t.Errorf("backup %q, why %q, note %q; want %s", w.Backup, w.Why, w.Note(), want)
				}
				if b, err := os.ReadFile(ix.Project.Path(want)); err != nil || string(b) != tt.backup {
					t.Errorf("backup holds %q, %v; want the file as it was", b, err)
				}
			}
			// Written again: the agent's lines do not move, nothing
			// doubles.
			if _, err := orbitloop.WriteProgress(context.Background(), ix, p); err != nil {
				t.Fatal(err)
			}
			if again := read(t, ix, project.ProgressFile); again != got {
				t.Errorf("a second write changed the file:\n%q\nwant\n%q", again, got)
			}
		})
	}
}

// TestWriteProgressTooLarge: a progress file over 1 MiB is not read: it is
// kept whole as the backup, by a rename.
func TestWriteProgressTooLarge(t *testing.T) {
	ix := newIndex(t)
	big := strings.Repeat("x", 1<<20+1)
	looptest.Write(t, ix.Project.Path(project.ProgressFile), big)
	now := time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)
	p, err := ceo.GatherProgress(context.Background(), ix, now)
	if err != nil {
		t.Fatal(err)
	}
	w, err := orbitloop.WriteProgress(context.Background(), ix, p)
	if err != nil || w.Backup == "" {
		t.Fatalf("WriteProgress = %+v, %v; want a backup", w, err)
	}
	if b, err := os.ReadFile(ix.Project.Path(w.Backup)); err != nil || len(b) != len(big) {
		t.Errorf("backup of %d bytes, %v; want %d", len(b), err, len(big))
	}
	if got := read(t, ix, project.ProgressFile); !strings.HasPrefix(got, orbitloop.ProgressBegin) || len(got) > 10000 {
		t.Errorf("progress file after: %d bytes", len(got))
	}
}
