package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/project"
)

// Appender writes whole lines to the end of a journal while holding an
// exclusive flock on it. It never rewrites a past byte: the descriptor is
// O_APPEND, each call is one write(2) of whole lines, then fsync.
type Appender struct {
	f       *os.File
	dir     *project.Dir
	path    string
	created bool
}

// OpenAppender opens path (absolute, or relative to the project root) for
// appending, creating it and its directory if absent, and locks it. Close
// unlocks it. Other appenders, orbit's or any tool's that takes flock, wait
// until then. Nothing between root and the file may be a link, and the file
// must be a regular file (project.OpenFile).
func OpenAppender(root, path string) (*Appender, error) {
	d, err := project.OpenDir(root, filepath.Dir(project.Abs(root, path)), true)
	if err != nil {
		return nil, fmt.Errorf("append %s: %w", path, err)
	}
	name := filepath.Base(path)
	_, existed, err := d.Lstat(name)
	if err == nil {
		var f *os.File
		if f, err = d.Open(name, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			if err = flock.Lock(f); err == nil {
				return &Appender{f: f, dir: d, path: f.Name(), created: !existed}, nil
			}
			f.Close()
			d.Close()
			return nil, err
		}
	}
	d.Close()
	return nil, fmt.Errorf("append: %w", err)
}

// Append writes lines, which must each end in a newline, in one write and
// fsyncs the file. If the file does not end in a newline (a torn fragment
// left by a write cut short), the write starts with one, so that the fragment
// stays on a line of its own and never swallows the first new record.
func (a *Appender) Append(lines []byte) error {
	if err := a.Write(lines); err != nil {
		return err
	}
	return a.Sync()
}

// Write is Append without the fsync: the lines are in the file, and Sync
// makes them durable.
func (a *Appender) Write(lines []byte) error {
	if len(lines) == 0 {
		return nil
	}
	if lines[len(lines)-1] != '\n' {
		return fmt.Errorf("append %s: data does not end with a newline", a.path)
	}
	fresh, err := a.endsFresh()
	if err != nil {
		return err
	}
	if !fresh {
		lines = append([]byte{'\n'}, lines...)
	}
	writes.Add(1)
	if _, err := a.f.Write(lines); err != nil {
		return fmt.Errorf("append %s: %w", a.path, err)
	}
	return nil
}

// Sync fsyncs the file, and the directory it was created in the first
// time.
func (a *Appender) Sync() error {
	if err := fsync(a.f); err != nil {
		return fmt.Errorf("append %s: fsync: %w", a.path, err)
	}
	if a.created {
		a.created = false
		if err := a.dir.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// fsync is (*os.File).Sync (a variable for the tests).
var fsync = (*os.File).Sync

// endsFresh reports whether the file is empty or ends in a newline.
func (a *Appender) endsFresh() (bool, error) {
	fi, err := a.f.Stat()
	if err != nil {
		return false, fmt.Errorf("append %s: %w", a.path, err)
	}
	if fi.Size() == 0 {
		return true, nil
	}
	var last [1]byte
	if _, err := a.f.ReadAt(last[:], fi.Size()-1); err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("append %s: %w", a.path, err)
	}
	return bytes.Equal(last[:], []byte{'\n'}), nil
}

// Close releases the lock and closes the file.
func (a *Appender) Close() error {
	uerr := flock.Unlock(a.f)
	if err := a.f.Close(); err != nil && uerr == nil {
		uerr = fmt.Errorf("append %s: %w", a.path, err)
	}
	a.dir.Close()
	return uerr
}
