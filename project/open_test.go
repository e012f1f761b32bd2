package project_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/project"
)

// victim is a file outside the project that a hostile checkout aims at.
func victim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(p, []byte("# the user's own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func unchanged(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s changed: %q; want %q", path, got, want)
	}
}

func wantUnsafe(t *testing.T, err error, why string) {
	t.Helper()
	if !errors.Is(err, project.ErrUnsafe) {
		t.Fatalf("error = %v; want a refusal (ErrUnsafe)", err)
	}
	if !strings.Contains(err.Error(), why) {
		t.Errorf("error %q does not say %q", err, why)
	}
}

func TestOpenFileRefusesLinks(t *testing.T) {
	const append = os.O_WRONLY | os.O_APPEND | os.O_CREATE
	tests := []struct {
		name  string
		setup func(t *testing.T, root, target string)
		open  string
		why   string
	}{
		{name: "the file is a link", open: ".claude/orbit-hook.log", why: "a symbolic link",
			setup: func(t *testing.T, root, target string) { link(t, target, root, ".claude/orbit-hook.log") }},
		{name: ".claude is a link", open: ".claude/bashrc", why: "a symbolic link, not a directory",
			setup: func(t *testing.T, root, target string) {
				os.Remove(filepath.Join(root, ".claude"))
				link(t, filepath.Dir(target), root, ".claude")
			}},
		{name: "a deeper directory is a link", open: "conductor/knowledge/bashrc", why: "a symbolic link, not a directory",
			setup: func(t *testing.T, root, target string) {
				mkdir(t, root, "conductor")
				link(t, filepath.Dir(target), root, "conductor/knowledge")
			}},
		{name: "a relative path climbing out", open: "../x/bashrc", why: "leaves the project",
			setup: func(t *testing.T, root, target string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mkdir(t, root, ".claude")
			target := victim(t)
			tt.setup(t, root, target)
			f, err := project.OpenFile(root, tt.open, append, 0o644)
			if err == nil {
				f.WriteString("$(touch /tmp/x)\n")
				f.Close()
			}
			wantUnsafe(t, err, tt.why)
			unchanged(t, target, "# the user's own\n")
			// The absolute form of the same path is refused too.
			if !strings.HasPrefix(tt.open, "..") {
				_, err = project.OpenFile(root, filepath.Join(root, tt.open), append, 0o644)
				wantUnsafe(t, err, tt.why)
			}
		})
	}
}

func TestOpenFileNonRegular(t *testing.T) {
	root := t.TempDir()
	mkdir(t, root, ".claude/dir")
	if err := syscall.Mkfifo(filepath.Join(root, ".claude/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, open string
		flag       int
		why        string
	}{
		{"a FIFO read", ".claude/fifo", os.O_RDONLY, "a FIFO, not a regular file"},
		{"a FIFO appended to", ".claude/fifo", os.O_WRONLY | os.O_APPEND | os.O_CREATE, "a FIFO, not a regular file"},
		{"a directory read", ".claude/dir", os.O_RDONLY, "a directory, not a regular file"},
		{"a directory appended to", ".claude/dir", os.O_WRONLY | os.O_APPEND, "a directory, not a regular file"},
		{"a device outside the project", "/dev/zero", os.O_RDONLY, "a device, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				f, err := project.OpenFile(root, tt.open, tt.flag, 0o644)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				wantUnsafe(t, err, tt.why)
			case <-time.After(10 * time.Second):
				t.Fatal("the open blocked")
			}
		})
	}
}

func TestOpenFileCreates(t *testing.T) {
	root := t.TempDir()
	f, err := project.OpenFile(root, ".planning/loops/a.json", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, ".planning/loops/a.json"); f.Name() != want {
		t.Errorf("Name() = %s; want %s", f.Name(), want)
	}
	f.Close()
	if fi, err := os.Lstat(filepath.Join(root, ".planning/loops/a.json")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("created file: %v, %v", fi, err)
	}
	// Without O_CREATE, a missing directory is not made.
	_, err = project.OpenFile(root, "missing/a.json", os.O_RDONLY, 0)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(root, "missing/a.json")) {
		t.Errorf("error = %v; want not-exist naming the file", err)
	}
	if _, err := os.Stat(filepath.Join(root, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing/ was made by a read")
	}
}

// TestOpenFileOutsideRoot: a path the user chose outside the project (an
// --out file) may sit below a link; only its last component is checked.
func TestOpenFileOutsideRoot(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	mkdir(t, other, "real")
	link(t, filepath.Join(other, "real"), other, "via")
	f, err := project.OpenFile(root, filepath.Join(other, "via", "out.jsonl"), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("OpenFile outside the root, below a link: %v", err)
	}
	f.Close()
	target := victim(t)
	link(t, target, other, "out-link")
	_, err = project.OpenFile(root, filepath.Join(other, "out-link"), os.O_WRONLY|os.O_APPEND, 0o644)
	wantUnsafe(t, err, "a symbolic link")
	// OpenRegular follows a link the user named, to a regular file only.
	r, err := project.OpenRegular(filepath.Join(other, "out-link"))
	if err != nil {
		t.Errorf("OpenRegular(link to a file): %v", err)
	} else {
		r.Close()
	}
	link(t, "/dev/zero", other, "zero")
	_, err = project.OpenRegular(filepath.Join(other, "zero"))
	wantUnsafe(t, err, "a device")
}

func TestReadFileBounded(t *testing.T) {
	root := t.TempDir()
	write(t, root, "big", strings.Repeat("x", 1000))
	if data, err := project.ReadFile(root, "big", 1000); err != nil || len(data) != 1000 {
		t.Errorf("ReadFile at the bound = %d bytes, %v; want 1000", len(data), err)
	}
	_, err := project.ReadFile(root, "big", 999)
	var tl *project.TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "over 999 bytes") {
		t.Errorf("ReadFile over the bound: %v; want TooLargeError", err)
	}
	write(t, root, "empty", "")
	if data, err := project.ReadFile(root, "empty", 10); err != nil || len(data) != 0 {
		t.Errorf("ReadFile(empty) = %q, %v", data, err)
	}
}

func TestDirRenameRefusesNonRegularTarget(t *testing.T) {
	root := t.TempDir()
	target := victim(t)
	link(t, target, root, "state.json")
	d, err := project.OpenDir(root, root, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tmp, err := d.CreateTemp(".state.json.tmp-", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	tmp.WriteString("{}")
	tmp.Close()
	err = d.Rename(filepath.Base(tmp.Name()), "state.json")
	wantUnsafe(t, err, "a symbolic link, not a regular file: not replaced")
	if fi, err := os.Lstat(filepath.Join(root, "state.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}
	unchanged(t, target, "# the user's own\n")
	// A regular target is replaced.
	write(t, root, "plain.json", "old")
	if err := d.Rename(filepath.Base(tmp.Name()), "plain.json"); err != nil {
		t.Fatal(err)
	}
	unchanged(t, filepath.Join(root, "plain.json"), "{}")
}

func TestCheckIndex(t *testing.T) {
	for _, suffix := range []string{"", "-wal", "-shm", ".lock"} {
		t.Run("orbit.db"+suffix, func(t *testing.T) {
			root := t.TempDir()
			mkdir(t, root, ".claude")
			link(t, victim(t), root, ".claude/orbit.db"+suffix)
			p, err := project.New(root, "")
			if err != nil {
				t.Fatal(err)
			}
			wantUnsafe(t, p.CheckIndex(), "a symbolic link")
		})
	}
	root := t.TempDir()
	mkdir(t, root, ".claude")
	p, _ := project.New(root, "")
	if err := p.CheckIndex(); err != nil {
		t.Errorf("CheckIndex with no index yet: %v", err)
	}
}

func mkdir(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, root, rel string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, root, rel, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, rel), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
