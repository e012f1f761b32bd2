package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/project"
)

// Runs are the repetition counts of the suites.
type Runs struct {
	// Import is how many times each large import is timed.
	Import int
	// Small is how many times each fast command (sync, decide, jq) is timed.
	Small int
}

// Env is what the suites share: the binary under test, the peer tools, the
// journal cache, a scratch directory, and the projects and measurements one
// suite prepares and another reuses.
type Env struct {
	// Orbit is the binary under test, built with CGO_ENABLED=0.
	Orbit string
	// SQLite3, JQ, Grep and RG are the peer tools' paths, "" when not
	// installed.
	SQLite3, JQ, Grep, RG string
	// GoTool and Root are the go command and the module's root, for suites
	// that run the module's own tests (NewEnv leaves them empty; the caller
	// sets them).
	GoTool, Root string
	// Cache holds the synthetic journals between runs.
	Cache string
	// Work is the scratch directory, removed at the end.
	Work string
	// Sizes are the journal sizes in decisions, ascending.
	Sizes []int
	Runs  Runs
	// Reproduce is the command line that runs one suite with the same
	// sizes; the suite's name is appended.
	Reproduce string
	// Baseline is a git revision of orbit that the startup suite builds and
	// measures beside this tree ("": none).
	Baseline string
	Log      io.Writer

	journals map[int]string
	projects map[int]string
	// imports holds the timed `orbit import` runs by size, so that the
	// memory suite reads the peak RSS of the import suite's runs.
	imports map[int][]Sample
	// sqliteImports holds the sqlite3 loads at the default page size.
	sqliteImports map[int][]Sample
	seq           int
}

// NewEnv prepares an environment; Close removes its scratch directory.
func NewEnv(orbit, cache string, sizes []int, runs Runs, log io.Writer) (*Env, error) {
	cache, err := filepath.Abs(cache)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "orbit-bench-")
	if err != nil {
		return nil, err
	}
	sizes = slices.Clone(sizes)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	e := &Env{Orbit: orbit, Cache: cache, Work: work, Sizes: sizes, Runs: runs, Log: log,
		journals: map[int]string{}, projects: map[int]string{}, imports: map[int][]Sample{}, sqliteImports: map[int][]Sample{}}
	e.SQLite3, _ = exec.LookPath("sqlite3")
	e.JQ, _ = exec.LookPath("jq")
	e.Grep, _ = exec.LookPath("grep")
	e.RG, _ = exec.LookPath("rg")
	return e, nil
}

// Close removes the scratch directory.
func (e *Env) Close() error { return os.RemoveAll(e.Work) }

// Small and Large are the smallest and largest journal sizes.
func (e *Env) Small() int { return e.Sizes[0] }
func (e *Env) Large() int { return e.Sizes[len(e.Sizes)-1] }

// Logf prints a progress line.
func (e *Env) Logf(format string, args ...any) {
	fmt.Fprintf(e.Log, "orbit-bench: "+format+"\n", args...)
}

// MissingTool is the note a section carries when a peer tool is absent: the
// comparison is skipped, never silently.
func MissingTool(name string) string { return MissingPackage(name, name) }

// MissingPackage is MissingTool for a tool whose Debian package has another
// name (rg: ripgrep).
func MissingPackage(name, pkg string) string {
	return fmt.Sprintf("**%s is not installed, so this comparison was skipped.** On Debian or Ubuntu: `apt-get install %s` (package `%s`), then run the suite again.", name, pkg, pkg)
}

// Journal returns the cached synthetic journal of n decisions, generating it
// the first time.
func (e *Env) Journal(n int) (string, error) {
	if p, ok := e.journals[n]; ok {
		return p, nil
	}
	e.Logf("journal of %s decisions in %s", SizeLabel(n), e.Cache)
	start := time.Now()
	p, err := Journal(e.Cache, n)
	if err != nil {
		return "", err
	}
	if d := time.Since(start); d > time.Second {
		e.Logf("  ready in %s", d.Round(time.Millisecond))
	}
	// Read it once so that every timed run finds it in the page cache.
	if f, err := os.Open(p); err == nil {
		io.Copy(io.Discard, f)
		f.Close()
	}
	e.journals[n] = p
	return p, nil
}

// Dir returns a new empty directory in the scratch space.
func (e *Env) Dir(name string) (string, error) {
	e.seq++
	d := filepath.Join(e.Work, fmt.Sprintf("%s-%d", name, e.seq))
	return d, os.MkdirAll(d, 0o755)
}

// Command returns a command run in dir with the environment cleared of
// ORBIT_* overrides, so that orbit finds its project from dir as a hook does.
func (e *Env) Command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ORBIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// OrbitCmd returns `orbit args...` run in the project at dir.
func (e *Env) OrbitCmd(dir string, args ...string) *exec.Cmd {
	return e.Command(dir, e.Orbit, args...)
}

// NewProject runs `orbit init` in a new directory.
func (e *Env) NewProject(name string) (string, error) {
	dir, err := e.Dir(name)
	if err != nil {
		return "", err
	}
	if _, err := Measure(e.OrbitCmd(dir, "init")); err != nil {
		return "", err
	}
	return dir, nil
}

// JournalPath is the decision journal of the project at dir.
func JournalPath(dir string) string { return filepath.Join(dir, project.DecisionsFile) }

// IndexPath is the index of the project at dir.
func IndexPath(dir string) string { return filepath.Join(dir, project.IndexFile) }

// ImportOrbit times `orbit import` of the journal of n decisions into a fresh
// project. keep leaves the project in place and returns its directory;
// otherwise it is removed.
func (e *Env) ImportOrbit(n int, keep bool) (Sample, string, error) {
	return e.ImportWith(e.Orbit, n, keep)
}

// ImportWith is ImportOrbit with the orbit binary bin.
func (e *Env) ImportWith(bin string, n int, keep bool) (Sample, string, error) {
	src, err := e.Journal(n)
	if err != nil {
		return Sample{}, "", err
	}
	dir, err := e.NewProject("import-" + SizeLabel(n))
	if err != nil {
		return Sample{}, "", err
	}
	s, err := Measure(e.Command(dir, bin, "import", src))
	if err != nil {
		return s, "", err
	}
	want := fmt.Sprintf("%d records: %d appended", n, n)
	if !strings.Contains(string(s.Stdout), want) {
		return s, "", fmt.Errorf("orbit import %s: output lacks %q:\n%s", src, want, s.Stdout)
	}
	if s.IndexBytes, err = DBBytes(IndexPath(dir)); err != nil {
		return s, "", err
	}
	if !keep {
		return s, "", os.RemoveAll(dir)
	}
	return s, dir, nil
}

// DBBytes is the size on disk of an SQLite database: the file and its WAL.
func DBBytes(path string) (int64, error) {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		n += fi.Size()
	}
	return n, nil
}

// Project returns a project holding the journal of n decisions, imported
// once and shared by the suites that append to it.
func (e *Env) Project(ctx context.Context, n int) (string, error) {
	if d, ok := e.projects[n]; ok {
		return d, nil
	}
	e.Logf("preparing a project of %s decisions (orbit import)", SizeLabel(n))
	_, dir, err := e.ImportOrbit(n, true)
	if err != nil {
		return "", err
	}
	e.projects[n] = dir
	return dir, nil
}

// CopyFile copies src to dst.
func CopyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
