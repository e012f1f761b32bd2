package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Machine describes where the figures were taken.
type Machine struct {
	CPUs     int
	CPUModel string
	MemTotal string
	Kernel   string
	Go       string
	SQLite3  string
	JQ       string
	Orbit    string // the commit the binary was built from
	Date     time.Time
	LoadAvg  string
}

// DescribeMachine reads the machine's description; root is the module root
// the binary was built from.
func DescribeMachine(ctx context.Context, root, goTool, sqlite3, jq string) Machine {
	m := Machine{
		CPUs:     runtime.NumCPU(),
		CPUModel: cpuinfo("model name"),
		MemTotal: meminfo("MemTotal"),
		Kernel:   firstLine(readFile("/proc/sys/kernel/osrelease")),
		Go:       firstLine(output(ctx, "", goTool, "version")),
		SQLite3:  "sqlite3 not installed",
		JQ:       "jq not installed",
		Orbit:    commit(ctx, root),
		Date:     time.Now(),
		LoadAvg:  LoadAvg(),
	}
	if sqlite3 != "" {
		// "3.40.1 2022-12-28 14:03:47 <source id>": keep version and date.
		f := strings.Fields(output(ctx, "", sqlite3, "--version"))
		m.SQLite3 = "sqlite3 " + strings.Join(f[:min(len(f), 2)], " ")
	}
	if jq != "" {
		m.JQ = firstLine(output(ctx, "", jq, "--version"))
	}
	return m
}

// Markdown renders the description as a bullet list.
func (m Machine) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Date: %s\n", m.Date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- CPU: %s, %d logical CPUs (`nproc`); memory %s; Linux %s\n", orUnknown(m.CPUModel), m.CPUs, orUnknown(m.MemTotal), orUnknown(m.Kernel))
	fmt.Fprintf(&b, "- Load average when the run started: %s\n", orUnknown(m.LoadAvg))
	fmt.Fprintf(&b, "- %s; orbit built with `CGO_ENABLED=0` from %s\n", orUnknown(m.Go), orUnknown(m.Orbit))
	fmt.Fprintf(&b, "- %s; %s\n", m.SQLite3, m.JQ)
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func cpuinfo(key string) string { return procField("/proc/cpuinfo", key) }

func meminfo(key string) string {
	v := procField("/proc/meminfo", key)
	var kb int64
	if _, err := fmt.Sscanf(v, "%d kB", &kb); err != nil {
		return v
	}
	return fmt.Sprintf("%.1f GB", float64(kb)/(1<<20))
}

// procField returns the value of the first "key : value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// LoadAvg is the 1, 5 and 15 minute load averages.
func LoadAvg() string {
	f := strings.Fields(readFile("/proc/loadavg"))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func output(ctx context.Context, dir, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// commit names the checked-out commit, marked when the tree has changes.
func commit(ctx context.Context, root string) string {
	rev := strings.TrimSpace(output(ctx, root, "git", "rev-parse", "--short", "HEAD"))
	if rev == "" {
		return ""
	}
	if strings.TrimSpace(output(ctx, root, "git", "status", "--porcelain", "--untracked-files=no")) != "" {
		rev += " plus uncommitted changes"
	}
	return "commit " + rev
}

// Build compiles the orbit binary from the module at root into dir, static
// (CGO_ENABLED=0) as it ships.
func Build(ctx context.Context, goTool, root, dir string) (string, error) {
	return BuildVariant(ctx, goTool, root, dir, "orbit", "")
}

// BuildVariant builds orbit from the module at root into dir/name with
// CGO_ENABLED=0, the build tags (comma-separated, may be empty) and env
// (extra KEY=VALUE settings, such as GOEXPERIMENT=jsonv2).
func BuildVariant(ctx context.Context, goTool, root, dir, name, tags string, env ...string) (string, error) {
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.CommandContext(ctx, goTool, append(args, "./cmd/orbit")...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build orbit %s (tags %q, %v): %w\n%s", name, tags, env, err, out)
	}
	return bin, nil
}

// BuildAt builds orbit as it was at the git revision rev of the repository
// at root (extracted with git archive into a scratch directory) into
// dir/name.
func BuildAt(ctx context.Context, goTool, root, dir, name, rev string) (string, error) {
	src, err := os.MkdirTemp(dir, "src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", rev)
	extract := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	extract.Stdin = pipe
	var stderr strings.Builder
	archive.Stderr, extract.Stderr = &stderr, &stderr
	if err := extract.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		extract.Wait()
		return "", fmt.Errorf("git archive %s: %w\n%s", rev, err, stderr.String())
	}
	if err := extract.Wait(); err != nil {
		return "", fmt.Errorf("extract %s: %w\n%s", rev, err, stderr.String())
	}
	return BuildVariant(ctx, goTool, src, dir, name, "")
}
