package journal

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, content := range []string{`{"iteration":1}`, `{"iteration":2,"longer":true}`, ``} {
		if err := WriteFileAtomic("", path, []byte(content), 0o640); err != nil {
			t.Fatalf("WriteFileAtomic(%q): %v", content, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("file = %q; want %q", got, content)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("mode = %v; want 0640", fi.Mode().Perm())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries; want only the file (no temporary files left)", len(entries))
	}
}

func TestAtomicFileAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := CreateAtomic("", path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("before Commit the file = %q; want %q", got, "old")
	}
	a.Abort()
	if err := a.Commit(); err != nil {
		t.Errorf("Commit after Abort = %v; want a no-op", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("after Abort the file = %q; want %q", got, "old")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries after Abort; want 1", len(entries))
	}
}
