package project_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/project"
)

// mkdirs creates each directory (relative to root) and returns root.
func mkdirs(tb testing.TB, root string, dirs ...string) string {
	tb.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// touch creates an empty file (relative to root).
func touch(tb testing.TB, root, rel string) {
	tb.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	const journal = ".claude/ceo-loop-decisions.jsonl"
	tests := []struct {
		name  string
		dirs  []string
		files []string
		links map[string]string // link -> target, relative to the root
		start string            // relative to the temporary root
		want  string            // relative to the temporary root; "" for not found
	}{
		{name: ".claude with the journal at the start", files: []string{journal}, start: ".", want: "."},
		{name: ".claude with the index", files: []string{".claude/orbit.db"}, start: ".", want: "."},
		{name: ".claude with the identity", files: []string{".claude/orbit-project.json"}, start: ".", want: "."},
		{name: ".orbit at the start", dirs: []string{".orbit"}, start: ".", want: "."},
		{name: "walk up from a subdirectory", dirs: []string{"src/pkg/deep"}, files: []string{journal}, start: "src/pkg/deep", want: "."},
		{name: "walk up to .orbit", dirs: []string{".orbit", "a/b"}, start: "a/b", want: "."},
		{name: "nearest wins", dirs: []string{"sub/x"}, files: []string{journal, "sub/" + journal}, start: "sub/x", want: "sub"},
		{name: ".orbit beside .claude", dirs: []string{".orbit", "a"}, files: []string{journal}, start: "a", want: "."},
		{name: "nested .orbit wins over outer .claude", dirs: []string{"inner/.orbit", "inner/a"}, files: []string{journal}, start: "inner/a", want: "inner"},
		{name: ".claude as a file does not count", dirs: []string{".orbit", "sub"}, files: []string{"sub/.claude"}, start: "sub", want: "."},
		{name: "a monorepo package's .claude/commands does not stop the walk", dirs: []string{"packages/web/.claude/commands", "packages/web/src"},
			files: []string{journal, "packages/web/.claude/settings.json"}, start: "packages/web/src", want: "."},
		{name: "an empty .claude is not a project", dirs: []string{".claude", "a"}, start: "a", want: ""},
		{name: "a state file alone is not a project", files: []string{".claude/ceo-loop-state.json"}, start: ".", want: ""},
		{name: "a .claude link does not count", dirs: []string{"real/.claude", "sub"}, files: []string{"real/" + journal},
			links: map[string]string{"sub/.claude": "../real/.claude"}, start: "sub", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			root := mkdirs(t, t.TempDir(), tt.dirs...)
			for _, f := range tt.files {
				touch(t, root, f)
			}
			for l, target := range tt.links {
				if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := project.Find(filepath.Join(root, tt.start))
			if tt.want == "" {
				if !errors.Is(err, project.ErrNotFound) {
					t.Errorf("Find(%s) = %s, %v; want ErrNotFound", tt.start, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Find(%s) error: %v", tt.start, err)
			}
			if want := filepath.Join(root, tt.want); got != want {
				t.Errorf("Find(%s) = %s; want %s", tt.start, got, want)
			}
		})
	}
}

// TestFindRelativeStart checks that a relative start directory is resolved
// against the working directory and the root returned is absolute.
func TestFindRelativeStart(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root := mkdirs(t, t.TempDir(), "a/b")
	touch(t, root, ".claude/orbit.db")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(root, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := project.Find(rel)
	if err != nil {
		t.Fatalf("Find(%s) error: %v", rel, err)
	}
	if got != root {
		t.Errorf("Find(%s) = %s; want absolute %s", rel, got, root)
	}
}

func TestFindNotFound(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	start := mkdirs(t, t.TempDir(), "x/y")
	start = filepath.Join(start, "x", "y")
	for d := filepath.Dir(start); d != filepath.Dir(d); d = filepath.Dir(d) {
		for _, marker := range []string{".claude", ".orbit"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				t.Fatalf("%s/%s above the temporary directory: cannot test the no-project case here", d, marker)
			}
		}
	}
	got, err := project.Find(start)
	if err == nil {
		t.Fatalf("Find(%s) = %s; want an error", start, got)
	}
	if !errors.Is(err, project.ErrNotFound) {
		t.Errorf("Find(%s) error = %v; want one wrapping ErrNotFound", start, err)
	}
	if !strings.Contains(err.Error(), start) {
		t.Errorf("Find(%s) error %q does not name the start directory", start, err)
	}
}

func TestFindHomeRule(t *testing.T) {
	tests := []struct {
		name      string
		files     []string // under the home directory
		homeSlash bool     // HOME written with a trailing slash
		homeLink  bool     // HOME is a symbolic link to the home directory
		wantHome  bool     // the home directory is the project
	}{
		{name: "Claude Code settings only", files: []string{".claude/settings.json"}, wantHome: false},
		{name: "decision journal", files: []string{".claude/ceo-loop-decisions.jsonl"}, wantHome: true},
		{name: "index", files: []string{".claude/orbit.db"}, wantHome: true},
		{name: "other seed file only", files: []string{".claude/ceo-loop-state.json"}, wantHome: false},
		{name: ".orbit always counts", files: []string{".orbit/config"}, wantHome: true},
		{name: "HOME with a trailing slash, settings only", files: []string{".claude/settings.json"}, homeSlash: true, wantHome: false},
		{name: "HOME through a symlink, settings only", files: []string{".claude/settings.json"}, homeLink: true, wantHome: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for _, f := range tt.files {
				touch(t, home, f)
			}
			h := home
			if tt.homeSlash {
				h += string(filepath.Separator)
			}
			if tt.homeLink {
				h = filepath.Join(t.TempDir(), "home-link")
				if err := os.Symlink(home, h); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("HOME", h)
			start := mkdirs(t, home, "src/project")
			start = filepath.Join(start, "src", "project")
			got, err := project.Find(start)
			switch {
			case tt.wantHome && err != nil:
				t.Errorf("Find(%s) error: %v; want %s", start, err, home)
			case tt.wantHome && got != home:
				t.Errorf("Find(%s) = %s; want %s", start, got, home)
			case !tt.wantHome && err == nil:
				t.Errorf("Find(%s) = %s; want ErrNotFound (a home .claude/ without orbit files is not a project)", start, got)
			case !tt.wantHome && !errors.Is(err, project.ErrNotFound):
				t.Errorf("Find(%s) error = %v; want ErrNotFound", start, err)
			}
		})
	}
}

func TestFindHomeBelowProject(t *testing.T) {
	// A project found below $HOME is found as usual, with or without orbit
	// files in it.
	home := t.TempDir()
	touch(t, home, ".claude/settings.json")
	t.Setenv("HOME", home)
	root := mkdirs(t, home, "work/src")
	touch(t, home, "work/.claude/ceo-loop-decisions.jsonl")
	root = filepath.Join(root, "work")
	got, err := project.Find(filepath.Join(root, "src"))
	if err != nil || got != root {
		t.Errorf("Find(work/src) = %s, %v; want %s", got, err, root)
	}
}

func TestNew(t *testing.T) {
	root := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		root   string
		db     string
		wantDB string
	}{
		{name: "default index", root: root, db: "", wantDB: filepath.Join(root, ".claude", "orbit.db")},
		{name: "explicit absolute index", root: root, db: "/var/tmp/other.db", wantDB: "/var/tmp/other.db"},
		{name: "explicit relative index", root: root, db: "idx/orbit.db", wantDB: filepath.Join(wd, "idx", "orbit.db")},
		{name: "unclean root", root: root + "/./sub/..", db: "", wantDB: filepath.Join(root, ".claude", "orbit.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := project.New(tt.root, tt.db)
			if err != nil {
				t.Fatalf("New(%q, %q) error: %v", tt.root, tt.db, err)
			}
			if p.Root != root {
				t.Errorf("New(%q, %q).Root = %s; want %s", tt.root, tt.db, p.Root, root)
			}
			if p.DB != tt.wantDB {
				t.Errorf("New(%q, %q).DB = %s; want %s", tt.root, tt.db, p.DB, tt.wantDB)
			}
			if got, want := p.Path(project.DecisionsFile), filepath.Join(root, ".claude", "ceo-loop-decisions.jsonl"); got != want {
				t.Errorf("Path(DecisionsFile) = %s; want %s", got, want)
			}
		})
	}
}
