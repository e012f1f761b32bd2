package project

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Every file orbit opens under a project goes through this file: a checkout
// is untrusted input, and a symbolic link or a FIFO committed in it must not
// send orbit's appends outside the project or hang a hook.
//
// A path is opened from the root down, one directory at a time with
// openat(O_NOFOLLOW|O_DIRECTORY), so no directory between the root and the
// file can be a link, and the file itself with O_NOFOLLOW|O_NONBLOCK (a FIFO
// cannot block the open) then checked with fstat to be a regular file. A
// path outside the root (an --out file, a transcript) is checked the same
// way from its own directory: only its last component.

// ErrUnsafe is wrapped by every refusal to open a file that is a symbolic
// link, is below one, or is not a regular file.
var ErrUnsafe = errors.New("unsafe path")

// UnsafeError says which path was refused and why.
type UnsafeError struct {
	Path string
	Why  string
}

func (e *UnsafeError) Error() string { return fmt.Sprintf("refuse %s: %s", e.Path, e.Why) }

// Unwrap makes errors.Is(err, ErrUnsafe) true.
func (e *UnsafeError) Unwrap() error { return ErrUnsafe }

// Dir is a directory opened without following a link on the way from its
// root. Files are opened, created, renamed and removed relative to it, so
// a link put in place after the walk changes nothing.
type Dir struct {
	fd   int
	path string
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Close closes the directory.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// Sync makes the creations, renames and removals in the directory durable.
func (d *Dir) Sync() error {
	if err := unix.Fsync(d.fd); err != nil {
		return fmt.Errorf("sync directory %s: %w", d.path, err)
	}
	return nil
}

// split makes name absolute (relative names are under root) and, when it
// is under root, returns the components below the root; else inside is
// false and parts is the last component alone, below start, the
// directory of name. A relative name always means a file of the project:
// one that climbs out of root (../) is refused. An absolute one outside
// root is a path the user chose (an --out file).
func split(root, name string) (start string, parts []string, inside bool, err error) {
	if root, name, err = resolve(root, name); err != nil {
		return "", nil, false, err
	}
	if root != "" {
		if rel, rerr := filepath.Rel(root, name); rerr == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			if rel == "." {
				return root, nil, true, nil
			}
			return root, strings.Split(rel, string(filepath.Separator)), true, nil
		}
	}
	if filepath.Dir(name) == name {
		return name, nil, false, nil
	}
	return filepath.Dir(name), []string{filepath.Base(name)}, false, nil
}

// resolve makes root and name absolute. A relative name is relative to
// root, except one that already starts with a relative root (a path built
// as filepath.Join(root, rel)), which is relative to the working
// directory like root itself.
func resolve(root, name string) (absRoot, absName string, err error) {
	if root != "" {
		if absRoot, err = filepath.Abs(root); err != nil {
			return "", "", err
		}
		if !filepath.IsAbs(name) {
			r, n := filepath.Clean(root), filepath.Clean(name)
			if filepath.IsAbs(r) || (n != r && !strings.HasPrefix(n, r+string(filepath.Separator))) || r == "." {
				if n == ".." || strings.HasPrefix(n, "../") {
					return "", "", &UnsafeError{Path: name, Why: "the path leaves the project"}
				}
				name = filepath.Join(absRoot, n)
			}
		}
	}
	absName, err = filepath.Abs(name)
	return absRoot, absName, err
}

// OpenDir opens the directory dir (absolute, or relative to root) for files
// to be opened in it, refusing any link between root and dir. With create,
// missing directories are made (0755).
func OpenDir(root, dir string, create bool) (*Dir, error) {
	start, parts, inside, err := split(root, dir)
	if err != nil {
		return nil, err
	}
	if !inside {
		// Outside any project (an --out file's directory): the directory as
		// the user named it.
		start, parts = filepath.Join(append([]string{start}, parts...)...), nil
		if create {
			if err := os.MkdirAll(start, 0o755); err != nil {
				return nil, err
			}
		}
	}
	fd, err := openRetry(unix.AT_FDCWD, start, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: start, Err: err}
	}
	d := &Dir{fd: fd, path: start}
	for _, p := range parts {
		if err := d.descend(p, create); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// descend replaces d with its subdirectory name, made when create is set.
func (d *Dir) descend(name string, create bool) error {
	path := filepath.Join(d.path, name)
	if name == ".." {
		return &UnsafeError{Path: path, Why: "the path leaves the project"}
	}
	for {
		fd, err := openRetry(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			d.Close()
			d.fd, d.path = fd, path
			return nil
		}
		if errors.Is(err, unix.ENOENT) && create {
			if merr := unix.Mkdirat(d.fd, name, 0o755); merr != nil && !errors.Is(merr, unix.EEXIST) {
				return &os.PathError{Op: "mkdir", Path: path, Err: merr}
			}
			create = false // once: a race that removes it again is an error
			continue
		}
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return &UnsafeError{Path: path, Why: d.kind(name) + ", not a directory (orbit follows no link inside a project)"}
		}
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
}

// kind names what name is in d, for an error.
func (d *Dir) kind(name string) string {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "unreadable"
	}
	return kindOf(st.Mode)
}

func kindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFREG:
		return "a regular file"
	}
	return "not a regular file"
}

// Open opens the file name in d: never through a link, never anything but
// a regular file, and never blocking on the open (a FIFO would).
func (d *Dir) Open(name string, flag int, perm os.FileMode) (*os.File, error) {
	path := filepath.Join(d.path, name)
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, &UnsafeError{Path: path, Why: "not a file name"}
	}
	fd, err := openRetry(d.fd, name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, &UnsafeError{Path: path, Why: "a symbolic link (orbit follows no link inside a project)"}
	case errors.Is(err, unix.ENXIO), errors.Is(err, unix.EISDIR):
		// A FIFO with no reader opened for writing; a directory.
		return nil, &UnsafeError{Path: path, Why: d.kind(name) + ", not a regular file"}
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &UnsafeError{Path: path, Why: kindOf(st.Mode) + ", not a regular file"}
	}
	// Back to blocking I/O: O_NONBLOCK was only for the open.
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// CreateTemp creates a new file in d named prefix plus a random suffix,
// exclusively (O_EXCL: never an existing file or a link), and returns it.
func (d *Dir) CreateTemp(prefix string, perm os.FileMode) (*os.File, error) {
	var b [6]byte
	for range 100 {
		rand.Read(b[:])
		f, err := d.Open(prefix+hex.EncodeToString(b[:]), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err == nil {
			// The umask must not loosen or tighten what the caller asked.
			if err := f.Chmod(perm); err != nil {
				f.Close()
				d.Remove(filepath.Base(f.Name()))
				return nil, err
			}
		}
		return f, err
	}
	return nil, fmt.Errorf("create a temporary file in %s: too many collisions", d.path)
}

// Rename renames the file from to to, both in d. The file it replaces, if
// any, must be a regular file: a link or a FIFO in its place is refused
// rather than silently replaced.
func (d *Dir) Rename(from, to string) error {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, to, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
		return &UnsafeError{Path: filepath.Join(d.path, to), Why: kindOf(st.Mode) + ", not a regular file: not replaced"}
	case err != nil && !errors.Is(err, unix.ENOENT):
		return &os.PathError{Op: "stat", Path: filepath.Join(d.path, to), Err: err}
	}
	if err := unix.Renameat(d.fd, from, d.fd, to); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, from), New: filepath.Join(d.path, to), Err: err}
	}
	return nil
}

// Link makes to a new name of the file from, both in d; it fails (ErrExist)
// rather than replace anything at to.
func (d *Dir) Link(from, to string) error {
	if err := unix.Linkat(d.fd, from, d.fd, to, 0); err != nil {
		return &os.LinkError{Op: "link", Old: filepath.Join(d.path, from), New: filepath.Join(d.path, to), Err: err}
	}
	return nil
}

// Remove removes the file name from d (a link itself, never its target).
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// Lstat describes the entry name in d without following it; ok is false
// when there is none.
func (d *Dir) Lstat(name string) (mode os.FileMode, ok bool, err error) {
	var st unix.Stat_t
	err = unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, &os.PathError{Op: "stat", Path: filepath.Join(d.path, name), Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		mode = 0
	case unix.S_IFDIR:
		mode = os.ModeDir
	case unix.S_IFLNK:
		mode = os.ModeSymlink
	case unix.S_IFIFO:
		mode = os.ModeNamedPipe
	case unix.S_IFSOCK:
		mode = os.ModeSocket
	default:
		mode = os.ModeDevice
	}
	return mode | os.FileMode(st.Mode&0o777), true, nil
}

// OpenFile opens name (absolute, or relative to root) as os.OpenFile does,
// with the guarantees of Dir.Open and OpenDir: no link anywhere between
// root and the file, a regular file only, no blocking open. With O_CREATE
// the missing directories are made too. root may be "": then only the last
// component is checked.
func OpenFile(root, name string, flag int, perm os.FileMode) (*os.File, error) {
	start, parts, _, err := split(root, name)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, &UnsafeError{Path: name, Why: "not a file"}
	}
	dir := filepath.Join(append([]string{start}, parts[:len(parts)-1]...)...)
	d, err := OpenDir(start, dir, flag&os.O_CREATE != 0)
	var pe *os.PathError
	if errors.As(err, &pe) {
		// Name the file asked for, not the directory that failed.
		return nil, &os.PathError{Op: pe.Op, Path: filepath.Join(dir, parts[len(parts)-1]), Err: pe.Err}
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Open(parts[len(parts)-1], flag, perm)
}

// Open opens name for reading, as OpenFile.
func Open(root, name string) (*os.File, error) { return OpenFile(root, name, os.O_RDONLY, 0) }

// TooLargeError is a file, or a line of one, over the bound its reader
// sets: orbit never reads without one.
type TooLargeError struct {
	Path  string
	What  string // "file" or "line N"
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %s is over %s, the most orbit reads", e.Path, e.What, Size(e.Limit))
}

// Size renders a byte count for a message: 64 KiB, 16 MiB.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the whole of name (absolute, or relative to root), opened
// as Open does, refusing a file over max bytes.
func ReadFile(root, name string, max int64) ([]byte, error) {
	f, err := Open(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, max)
}

// ReadAll reads f to its end, refusing more than max bytes.
func ReadAll(f *os.File, max int64) ([]byte, error) {
	size := int64(512)
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		if fi.Size() > max {
			return nil, &TooLargeError{Path: f.Name(), What: "file", Limit: max}
		}
		size = fi.Size() + 1
	}
	size = min(size, max+1)
	buf := make([]byte, 0, size)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, &TooLargeError{Path: f.Name(), What: "file", Limit: max}
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// openRetry is openat, again on EINTR.
func openRetry(dirfd int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flag, perm)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// Abs is name made absolute as OpenFile resolves it: a relative name is
// under root. A name that cannot be resolved is returned as it is (the
// open then says why).
func Abs(root, name string) string {
	if root == "" {
		return name
	}
	if _, abs, err := resolve(root, name); err == nil {
		return abs
	}
	return name
}

// OpenRegular opens for reading a file the user named outside any project
// (an import, a transcript): links are followed, as the user may mean them,
// but the open never blocks (a FIFO) and anything but a regular file is
// refused.
func OpenRegular(path string) (*os.File, error) {
	f, err := OpenFile("", path, os.O_RDONLY, 0)
	var ue *UnsafeError
	if errors.As(err, &ue) && strings.HasPrefix(ue.Why, "a symbolic link") {
		target, lerr := filepath.EvalSymlinks(path)
		if lerr != nil {
			if _, serr := os.Stat(path); serr != nil {
				lerr = serr // a loop, a dangling link: the system's words
			}
			return nil, lerr
		}
		return OpenRegular(target)
	}
	return f, err
}

// ReadRegular reads the whole file at path into buf's storage (grown when
// too small) with plain system calls: the last component opened
// O_NOFOLLOW|O_NONBLOCK, fstat'd to be a regular file of at most limit
// bytes. It is for scans that read many files of directories they have
// checked once with OpenDir (a thousand loop records), where walking from
// the root for each file would cost more than the read.
func ReadRegular(path string, buf []byte, limit int64) ([]byte, error) {
	fd, err := openRetry(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, &UnsafeError{Path: path, Why: "a symbolic link (orbit follows no link inside a project)"}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &UnsafeError{Path: path, Why: kindOf(st.Mode) + ", not a regular file"}
	}
	if st.Size > limit {
		return nil, &TooLargeError{Path: path, What: "file", Limit: limit}
	}
	if int64(cap(buf)) < st.Size+1 {
		buf = make([]byte, 0, max(st.Size+1, 8192))
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{Path: path, What: "file", Limit: limit}
		}
	}
}
