package journal

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/orbit-loop/orbit/project"
)

// AtomicFile is a file written beside its final path and renamed over it on
// Commit: a reader sees the old content or the new, never a mix, and a crash
// leaves one of them. The directory is opened without following links from
// the project root, the temporary file is created O_EXCL|O_NOFOLLOW in it,
// and the file it replaces must be a regular file (project.Dir).
type AtomicFile struct {
	*os.File
	dir  *project.Dir
	path string
	done bool
}

// CreateAtomic starts replacing path (absolute, or relative to root).
func CreateAtomic(root, path string, perm os.FileMode) (*AtomicFile, error) {
	path = project.Abs(root, path)
	d, err := project.OpenDir(root, filepath.Dir(path), true)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	// Refuse before writing anything when the target cannot be replaced.
	if mode, ok, err := d.Lstat(filepath.Base(path)); err != nil || (ok && !mode.IsRegular()) {
		d.Close()
		if err == nil {
			err = &project.UnsafeError{Path: path, Why: "not a regular file: not replaced"}
		}
		return nil, fmt.Errorf("write: %w", err)
	}
	tmp, err := d.CreateTemp("."+filepath.Base(path)+".tmp-", perm)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &AtomicFile{File: tmp, dir: d, path: path}, nil
}

// Commit makes the new content durable and puts it in place: fsync, close,
// rename, fsync the directory.
func (a *AtomicFile) Commit() error {
	if a.done {
		return nil
	}
	a.done = true
	defer a.dir.Close()
	writes.Add(1)
	name := filepath.Base(a.File.Name())
	if err := a.File.Sync(); err != nil {
		a.File.Close()
		a.dir.Remove(name)
		return fmt.Errorf("write %s: %w", a.path, err)
	}
	if err := a.File.Close(); err != nil {
		a.dir.Remove(name)
		return fmt.Errorf("write %s: %w", a.path, err)
	}
	if err := a.dir.Rename(name, filepath.Base(a.path)); err != nil {
		a.dir.Remove(name)
		return fmt.Errorf("write: %w", err)
	}
	return a.dir.Sync()
}

// Abort discards the new content; the old file is untouched. It is a no-op
// after Commit.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.File.Close()
	a.dir.Remove(filepath.Base(a.File.Name()))
	a.dir.Close()
}

// WriteFileAtomic replaces path (absolute, or relative to root) with data
// durably.
func WriteFileAtomic(root, path string, data []byte, perm os.FileMode) error {
	a, err := CreateAtomic(root, path, perm)
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return a.Commit()
}
