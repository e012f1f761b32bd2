// Package project owns where orbit's files live: finding the project root the
// way git finds .git, and the paths of the authoritative files and the index
// inside it.
package project

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Paths of orbit's files, relative to the project root. The first five are
// seed 000's; orbit adds the retrograde journal, the index and the hook log.
const (
	DecisionsFile = ".claude/ceo-loop-decisions.jsonl"
	StateFile     = ".claude/ceo-loop-state.json"
	ProgressFile  = ".claude/ceo-loop-progress.md"
	PendingFile   = ".claude/ceo-decisions-pending.json"
	RetroFile     = ".claude/ceo-loop-retrograde.jsonl"
	IndexFile     = ".claude/orbit.db"
	HookLogFile   = ".claude/orbit-hook.log"
)

// ErrNotFound is returned when no project encloses a directory.
var ErrNotFound = errors.New("not inside an orbit project")

// Project is a project root and the index that serves it.
type Project struct {
	Root string
	// DB is the index path; IndexFile under Root unless overridden.
	DB string
}

// New returns the project rooted at root, with its index at db ("" for the
// default).
func New(root, db string) (Project, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Project{}, fmt.Errorf("project root %s: %w", root, err)
	}
	p := Project{Root: abs, DB: db}
	if p.DB == "" {
		p.DB = filepath.Join(abs, IndexFile)
	} else if p.DB, err = filepath.Abs(db); err != nil {
		return Project{}, fmt.Errorf("index path %s: %w", db, err)
	}
	return p, nil
}

// Path returns the absolute path of a file given relative to the root.
func (p Project) Path(rel string) string { return filepath.Join(p.Root, rel) }

// Markers are the files whose presence in a .claude/ makes its directory
// an orbit project: the journals, the index, the project's identity (all
// created by `orbit init`). A .claude/ holding only Claude Code's own settings or commands
// (a monorepo package's, the home directory's) is not one.
var Markers = []string{DecisionsFile, IndexFile, IdentityFile, RetroFile}

// Find walks up from dir, like git finds .git, to the nearest directory
// whose .orbit/ exists or whose .claude/ holds one of orbit's files
// (Markers). A .claude/ with Claude Code's settings alone does not stop the
// walk, so a loop started at a monorepo's root is found from a package that
// has its own .claude/commands/, and orbit never starts an index there.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find project from %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		if IsProject(d) {
			return d, nil
		}
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	return "", fmt.Errorf("%w: no .orbit/, and no .claude/ holding orbit's files, in %s or any parent (run `orbit init` at the project's root, or pass --root)", ErrNotFound, abs)
}

// IsProject reports whether dir holds .orbit/ or a .claude/ with one of
// orbit's files.
func IsProject(dir string) bool {
	if isDir(filepath.Join(dir, ".orbit")) {
		return true
	}
	if !isDir(filepath.Join(dir, ".claude")) {
		return false
	}
	for _, m := range Markers {
		if exists(filepath.Join(dir, m)) {
			return true
		}
	}
	return false
}

// canonical is p cleaned, absolute, with symlinks resolved (p itself when
// they cannot be).
func canonical(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// isDir reports whether p is a directory itself (not a link to one).
func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// CheckIndex refuses an index SQLite would reach through a link or that is
// not a regular file: SQLite opens the index and its -wal, -shm and
// -journal files itself, so each is checked before it does (absent or a
// regular file), as is every directory from the root down to the index's.
func (p Project) CheckIndex() error {
	d, err := OpenDir(p.Root, filepath.Dir(p.DB), false)
	if errors.Is(err, os.ErrNotExist) {
		return nil // SQLite says so itself, naming the file
	}
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer d.Close()
	base := filepath.Base(p.DB)
	for _, suffix := range []string{"", "-wal", "-shm", "-journal", ".lock"} {
		mode, ok, err := d.Lstat(base + suffix)
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if ok && !mode.IsRegular() {
			return fmt.Errorf("index: %w", NotRegular(filepath.Join(d.Path(), base+suffix), mode))
		}
	}
	return nil
}

// NotRegular is the refusal of the file at path, whose mode is not a
// regular file's (a link, a FIFO, a directory, a device).
func NotRegular(path string, mode os.FileMode) error {
	return &UnsafeError{Path: path, Why: modeKind(mode) + ", not a regular file"}
}

// modeKind names a file mode's type for an error.
func modeKind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
