//go:build reliability

package reliability

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var (
	mdFlag    = flag.String("md", "", "write the results to this file (`make reliability` passes RELIABILITY.md)")
	scaleFlag = flag.Float64("scale", 1, "multiply the attack counts (0.05 for a quick pass while working on the suite)")
	fuzzFlag  = flag.Duration("fuzzfor", 30*time.Second, "how long each fuzz target runs")
	binFlag   = flag.String("bin", "", "attack this orbit binary instead of building one (while working on the suite)")
)

// orbitBin is the binary under attack, built once per run.
var orbitBin string

// moduleRoot is the repository root (the tests run in reliability/).
const moduleRoot = ".."

func TestMain(m *testing.M) {
	flag.Parse()
	start := time.Now()
	dir, err := os.MkdirTemp("", "orbit-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// World-readable: one hostile case runs orbit as another user.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	orbitBin = filepath.Join(dir, "orbit")
	if *binFlag != "" {
		if err := copyFile(*binFlag, orbitBin); err != nil || os.Chmod(orbitBin, 0o755) != nil {
			fmt.Fprintf(os.Stderr, "copy %s: %v\n", *binFlag, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	} else {
		// The tag changes nothing in orbit (only this package uses it), but
		// lets the build reuse what compiling these tests just compiled.
		build := exec.Command(goTool(), "build", "-tags", "reliability", "-o", orbitBin, "./cmd/orbit")
		build.Dir = moduleRoot
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build orbit: %v\n%s", err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	if *mdFlag != "" {
		if err := writeReport(*mdFlag, time.Since(start), code == 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		} else {
			fmt.Printf("wrote %s\n", *mdFlag)
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// scaled multiplies an attack count by -scale, keeping at least min.
func scaled(n, min int) int {
	v := int(float64(n) * *scaleFlag)
	if v < min {
		return min
	}
	return v
}

// envWithout returns the environment without orbit's own variables, so that
// the caller's ORBIT_ROOT or ORBIT_DB never points the binary elsewhere.
func envWithout() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ORBIT_") {
			env = append(env, kv)
		}
	}
	return env
}
