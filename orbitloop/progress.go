package orbitloop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
)

// The lines that mark orbit's part of the progress file. The agent
// maintains the file in seed 000's workflow: orbit rewrites what is between
// them, at the top, and keeps every other line as it is.
const (
	ProgressBegin = "<!-- orbit:begin — orbit rewrites this part at every stop; everything outside it is yours, kept as you write it -->"
	ProgressEnd   = "<!-- orbit:end -->"
)

// maxProgressBytes bounds what orbit reads of the progress file; a larger
// one is kept whole as a backup.
const maxProgressBytes = 1 << 20

// ProgressWrite is what writing the progress file did.
type ProgressWrite struct {
	// Backup is where a progress file orbit could not parse was kept,
	// dated, before anything was written ("" when it could), and Why says
	// what was wrong with it.
	Backup string
	Why    string
}

// Note is what a command says about the write ("" when there is nothing
// to say).
func (w ProgressWrite) Note() string {
	if w.Backup == "" {
		return ""
	}
	return fmt.Sprintf("%s could not be parsed (%s): kept as %s before writing it again", project.ProgressFile, w.Why, w.Backup)
}

// WriteProgress writes orbit's part of the ORBIT loop's progress file
// (.claude/ceo-loop-progress.md) from p, between ProgressBegin and
// ProgressEnd at the top of the file, within its first 30 lines (gotcha
// 5). Every other line, the agent's, is kept byte for byte: a file without
// orbit's markers gets orbit's part above it; a part the agent moved down
// goes back to the top, the agent's lines around it kept in their order. A
// file orbit cannot parse (its markers broken, not text, too large) is kept
// as a dated backup before anything is written, and the result says so. It
// is the one writer of the progress file (`orbit report progress --write`,
// every Stop of the hook, every stop of the loop), under the file's lock,
// atomically (temp file and rename).
func WriteProgress(ctx context.Context, ix *journal.Index, p ceo.Progress) (ProgressWrite, error) {
	var res ProgressWrite
	root := ix.Project.Root
	unlock, err := flock.Path(ctx, root, ix.Project.Path(project.ProgressFile)+".lock")
	if err != nil {
		return res, err
	}
	defer unlock()
	var b bytes.Buffer
	b.WriteString(ProgressBegin + "\n")
	report.ProgressMarkdown(&b, p)
	b.WriteString(ProgressEnd + "\n")
	block := b.Bytes()

	old, err := project.ReadFile(root, project.ProgressFile, maxProgressBytes)
	var tooLarge *project.TooLargeError
	switch {
	case errors.Is(err, os.ErrNotExist):
		old = nil
	case errors.As(err, &tooLarge):
		// Kept whole, by a rename: nothing of it is read.
		res.Why = "over " + project.Size(maxProgressBytes)
		if res.Backup, err = backupName(p.Now); err == nil {
			err = renameInProject(root, project.ProgressFile, res.Backup)
		}
		if err != nil {
			return res, err
		}
		return res, journal.WriteFileAtomic(root, project.ProgressFile, block, 0o644)
	case err != nil:
		return res, err
	}
	out, why := mergeProgress(old, block)
	if why != "" {
		res.Why = why
		if res.Backup, err = backupName(p.Now); err != nil {
			return res, err
		}
		if err := journal.WriteFileAtomic(root, res.Backup, old, 0o644); err != nil {
			return res, fmt.Errorf("keep %s as %s: %w", project.ProgressFile, res.Backup, err)
		}
	}
	return res, journal.WriteFileAtomic(root, project.ProgressFile, out, 0o644)
}

// mergeProgress puts orbit's block at the top of the progress file old,
// keeping every other line. why is not "" when old cannot be parsed: out
// then keeps what of it is text, without orbit's marker lines.
func mergeProgress(old, block []byte) (out []byte, why string) {
	if len(old) == 0 {
		return block, ""
	}
	if !utf8.Valid(old) || bytes.IndexByte(old, 0) >= 0 {
		return block, "not text"
	}
	lines := bytes.SplitAfter(old, []byte("\n"))
	var begins, ends []int
	for i, l := range lines {
		switch t := bytes.TrimSpace(l); {
		case bytes.HasPrefix(t, []byte("<!-- orbit:begin")):
			begins = append(begins, i)
		case bytes.Equal(t, []byte(ProgressEnd)):
			ends = append(ends, i)
		}
	}
	switch {
	case len(begins) == 0 && len(ends) == 0:
		// The agent's file, from before orbit: orbit's part goes above
		// it, a blank line between.
		return append(append(append([]byte(nil), block...), '\n'), old...), ""
	case len(begins) == 1 && len(ends) == 1 && begins[0] < ends[0]:
		out = append([]byte(nil), block...)
		for i, l := range lines {
			if i < begins[0] || i > ends[0] {
				out = append(out, l...)
			}
		}
		return out, ""
	case len(begins) == 0:
		why = "an orbit:end line without orbit:begin"
	case len(ends) == 0:
		why = "an orbit:begin line without orbit:end"
	case len(begins) > 1 || len(ends) > 1:
		why = fmt.Sprintf("%d orbit:begin and %d orbit:end lines", len(begins), len(ends))
	default:
		why = "orbit:end before orbit:begin"
	}
	out = append(append([]byte(nil), block...), '\n')
	for i, l := range lines {
		if !containsInt(begins, i) && !containsInt(ends, i) {
			out = append(out, l...)
		}
	}
	return out, why
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// backupName is the dated name a progress file is kept under.
func backupName(now time.Time) (string, error) {
	if now.IsZero() {
		return "", errors.New("progress backup: no time")
	}
	return project.ProgressFile + ".orbit-backup-" + now.UTC().Format("20060102T150405Z"), nil
}

// renameInProject renames a file of the project's .claude/ directory.
func renameInProject(root, from, to string) error {
	d, err := project.OpenDir(root, filepath.Dir(filepath.Join(root, from)), false)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Rename(filepath.Base(from), filepath.Base(to))
}

// AgentNotes returns the lines of the progress file outside orbit's part:
// the agent's own notes, as it wrote them (nil when there are none, or
// the file cannot be read: its next writer says why). At most max bytes of
// the file are read.
func AgentNotes(root string, max int64) []byte {
	f, err := project.Open(root, project.ProgressFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, max))
	out, why := mergeProgress(data, nil)
	if why == "not text" {
		return nil
	}
	return bytes.TrimLeft(out, "\n")
}
