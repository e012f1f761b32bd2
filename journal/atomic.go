package journal

import (
	"fmt"
	"os"
	"path/filepath"
)

// AtomicFile is a file written beside its final path and renamed over it on
// Commit: a reader sees the old content or the new, never a mix, and a crash
// leaves one of them.
type AtomicFile struct {
	*os.File
	path string
	done bool
}

// CreateAtomic starts replacing path.
func CreateAtomic(path string, perm os.FileMode) (*AtomicFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &AtomicFile{File: tmp, path: path}, nil
}

// Commit makes the new content durable and puts it in place: fsync, close,
// rename, fsync the directory.
func (a *AtomicFile) Commit() error {
	if a.done {
		return nil
	}
	a.done = true
	writes.Add(1)
	name := a.File.Name()
	if err := a.File.Sync(); err != nil {
		a.File.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", a.path, err)
	}
	if err := a.File.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", a.path, err)
	}
	if err := os.Rename(name, a.path); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", a.path, err)
	}
	return syncDir(filepath.Dir(a.path))
}

// Abort discards the new content; the old file is untouched. It is a no-op
// after Commit.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.File.Close()
	os.Remove(a.File.Name())
}

// WriteFileAtomic replaces path with data durably.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	a, err := CreateAtomic(path, perm)
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return a.Commit()
}

// syncDir makes a rename or a file creation in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
