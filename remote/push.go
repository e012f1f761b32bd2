package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// PushOptions tune a push.
type PushOptions struct {
	// BatchBytes is the target size of one batch (default 1 MiB); a batch
	// holds whole chunks, at least one.
	BatchBytes int64
	// Skip names journals (by kind) not to push in this run: those whose
	// past the local follower just found rewritten.
	Skip map[string]string
	// Progress, when set, is called after each batch the hub acknowledged.
	Progress func(kind string, offset, size int64)
}

// FileReport is what a push did with one journal.
type FileReport struct {
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Chunks int    `json:"chunks"`
	Bytes  int64  `json:"bytes"`
	// Offset is what the hub holds of the file after the push.
	Offset    int64 `json:"offset"`
	Decisions int   `json:"decisions"`
	Events    int   `json:"events"`
	Rejected  int   `json:"rejected"`
	// Held says why the file was not pushed (its past was rewritten), or
	// stopped early; empty when it is all on the hub.
	Held string `json:"held,omitempty"`
	// Pending is true when the file ends in a line still being written:
	// it is pushed once complete.
	Pending bool `json:"pending,omitempty"`
}

// Report is what a push did.
type Report struct {
	Project string       `json:"project"`
	Remote  string       `json:"remote"`
	Files   []FileReport `json:"files"`
}

// Held reports the files a push did not (wholly) ship.
func (r Report) Held() []FileReport {
	var out []FileReport
	for _, f := range r.Files {
		if f.Held != "" {
			out = append(out, f)
		}
	}
	return out
}

// Pushed counts the chunks and bytes shipped.
func (r Report) Pushed() (chunks int, bytes int64) {
	for _, f := range r.Files {
		chunks += f.Chunks
		bytes += f.Bytes
	}
	return chunks, bytes
}

// maxConflicts bounds how often one file's push starts again from the
// hub's state (another push of the same project moved it meanwhile).
const maxConflicts = 8

// Push ships every journal chunk of the project appended since the hub
// last acknowledged it: per journal, from the hub's offset, in batches of
// whole chunks, each acknowledged by the hub only once stored. A journal
// whose bytes before that offset are not the ones the hub holds (its past
// was rewritten) is held back and reported, never pushed over.
func Push(ctx context.Context, c *Client, p project.Project, id project.Identity, opts PushOptions) (Report, error) {
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = 1 << 20
	}
	rep := Report{Project: id.ID}
	states, err := c.State(ctx, id.ID)
	if err != nil {
		return rep, err
	}
	for _, j := range hub.Journals {
		fr := FileReport{Kind: j.Kind, Path: j.Path}
		st := hub.FileState{Kind: j.Kind, Path: j.Path, TailHash: hub.TailHash(nil)}
		for _, s := range states {
			if s.Kind == j.Kind {
				st = s
			}
		}
		if why, ok := opts.Skip[j.Kind]; ok {
			fr.Offset, fr.Held = st.Offset, why
			rep.Files = append(rep.Files, fr)
			continue
		}
		err := pushFile(ctx, c, p, id, j, st, opts, &fr)
		rep.Files = append(rep.Files, fr)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func pushFile(ctx context.Context, c *Client, p project.Project, id project.Identity, j hub.Journal, st hub.FileState, opts PushOptions, fr *FileReport) error {
	fr.Offset = st.Offset
	f, size, err := openJournal(p.Root, j.Path)
	if errors.Is(err, os.ErrNotExist) {
		if st.Offset > 0 {
			fr.Held = fmt.Sprintf("the file is gone, and the hub holds %d bytes of it", st.Offset)
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	conflicts := 0
	for {
		if held, err := checkPast(f, size, st); err != nil || held != "" {
			fr.Held = held
			return err
		}
		data, pending, err := nextBatch(f, j.Path, st, size, opts.BatchBytes)
		if err != nil {
			fr.Held = err.Error()
			return nil
		}
		fr.Pending = pending
		if len(data) == 0 {
			return nil
		}
		res, err := c.Push(ctx, hub.Batch{Project: id.ID, Name: id.Name, Kind: j.Kind, Offset: st.Offset, Lines: st.Lines, TailHash: st.TailHash, Data: data})
		var ce *hub.ConflictError
		if errors.As(err, &ce) {
			// Another push of this project moved the hub (or the file's
			// past differs): start again from where the hub stands.
			if conflicts++; conflicts > maxConflicts {
				return fmt.Errorf("push %s: %w", j.Path, err)
			}
			st, fr.Offset = ce.State, ce.State.Offset
			continue
		}
		if err != nil {
			return fmt.Errorf("push %s: %w", j.Path, err)
		}
		fr.Chunks += res.Chunks
		fr.Bytes += int64(len(data))
		fr.Decisions += res.Decisions
		fr.Events += res.Events
		fr.Rejected += res.Rejected
		st, fr.Offset = res.State, res.State.Offset
		if opts.Progress != nil {
			opts.Progress(j.Kind, st.Offset, size)
		}
	}
}

// openJournal opens a journal of the project at root for reading, as every
// project file is opened (project.Open: a regular file, no link followed).
func openJournal(root, path string) (*os.File, int64, error) {
	f, err := project.Open(root, path)
	if err != nil {
		return nil, 0, err
	}
	// The size read now bounds this push: lines appended meanwhile wait for
	// the next one.
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("push %s: %w", path, err)
	}
	return f, fi.Size(), nil
}

// checkPast compares the file's bytes before the hub's offset with the
// hub's tail hash: a file that shrank below it, or whose last bytes before
// it changed, had its past rewritten since it was pushed.
func checkPast(f *os.File, size int64, st hub.FileState) (string, error) {
	if size < st.Offset {
		return fmt.Sprintf("the file's past was rewritten: it is %d bytes, shorter than the %d the hub holds", size, st.Offset), nil
	}
	start := max(0, st.Offset-hub.TailWindow)
	buf := make([]byte, st.Offset-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("push %s: %w", f.Name(), err)
	}
	if hub.TailHash(buf) != st.TailHash {
		return fmt.Sprintf("the file's past was rewritten: its bytes before byte %d (line %d) are not the ones the hub holds", st.Offset, st.Lines+1), nil
	}
	return "", nil
}

// nextBatch reads the whole chunks after the hub's offset, up to about
// limit bytes (at least one chunk): the batch's bytes exactly as in the
// file. pending says the file ends in an unterminated line, left for later.
func nextBatch(f *os.File, path string, st hub.FileState, size, limit int64) (data []byte, pending bool, err error) {
	r := journal.NewReader(io.NewSectionReader(f, st.Offset, size-st.Offset), path, st.Offset, int(st.Lines))
	end := st.Offset
	for end-st.Offset < limit {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, err
		}
		if c.Kind == journal.Pending {
			pending = true
			break
		}
		if c.End()-st.Offset > hub.MaxBatch {
			if end == st.Offset {
				return nil, false, fmt.Errorf("%s:%d: a line of %d bytes is longer than a push batch may be (%d): push stops before it", path, c.Line, c.Length, hub.MaxBatch)
			}
			break
		}
		end = c.End()
	}
	if end == st.Offset {
		return nil, pending, nil
	}
	data = make([]byte, end-st.Offset)
	if _, err := f.ReadAt(data, st.Offset); err != nil {
		return nil, false, fmt.Errorf("push %s: %w", path, err)
	}
	return data, pending, nil
}
