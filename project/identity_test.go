package project

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func tempProject(tb testing.TB) Project {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	p, err := New(dir, "")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestEnsureIdentityIsStable: the first call creates an id, every later
// call (even racing ones) returns the same.
func TestEnsureIdentityIsStable(t *testing.T) {
	p := tempProject(t)
	if _, err := p.ReadIdentity(); !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("ReadIdentity before init = %v; want ErrNoIdentity", err)
	}
	now := time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)
	ids := make([]Identity, 8)
	created := make([]bool, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if ids[i], created[i], err = p.EnsureIdentity(now); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	for i, id := range ids {
		if id != ids[0] {
			t.Errorf("call %d got %+v; call 0 got %+v", i, id, ids[0])
		}
		if created[i] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d calls created the identity; want 1", n)
	}
	if err := CheckID(ids[0].ID); err != nil || ids[0].Name != filepath.Base(p.Root) {
		t.Errorf("identity %+v: %v", ids[0], err)
	}
	entries, _ := os.ReadDir(p.Path(".claude"))
	if len(entries) != 1 {
		t.Errorf(".claude holds %d files; want the identity alone (no temporary file left)", len(entries))
	}
}

func TestReadIdentityRefusesBadFiles(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":  "id: x",
		"bad id":    `{"id":"../etc"}`,
		"every":     `{"id":"*"}`,
		"empty id":  `{"id":""}`,
		"too large": `{"id":"a","name":"` + strings.Repeat("x", 5000) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := tempProject(t)
			if err := os.WriteFile(p.Path(IdentityFile), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := p.ReadIdentity()
			if err == nil || !strings.Contains(err.Error(), "orbit-project.json") {
				t.Errorf("ReadIdentity = %v; want an error naming the file", err)
			}
			if _, _, err := p.EnsureIdentity(time.Now()); err == nil {
				t.Error("EnsureIdentity replaced a bad identity file; it must never replace one")
			}
		})
	}
	p := tempProject(t)
	if err := os.Symlink("/etc/hostname", p.Path(IdentityFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReadIdentity(); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "a symbolic link") {
		t.Errorf("ReadIdentity through a symlink = %v; want refused", err)
	}
}

// TestIsName holds IsName to the regular expressions it replaced, on names
// at every edge: length, first character, case, punctuation.
func TestIsName(t *testing.T) {
	lower := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	any := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	names := []string{"", "a", "A", "0", "-a", ".a", "_a", "a-b.c_d", "Ab", "aB", "a b", "a/b", "a\n", "é", "a*", "*",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("Z", 64), "x" + strings.Repeat("-", 63)}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c)), "a"+string([]byte{byte(c)}))
	}
	for _, s := range names {
		if got, want := IsName(s, false), lower.MatchString(s); got != want {
			t.Errorf("IsName(%q, false) = %v; want %v", s, got, want)
		}
		if got, want := IsName(s, true), any.MatchString(s); got != want {
			t.Errorf("IsName(%q, true) = %v; want %v", s, got, want)
		}
	}
}
