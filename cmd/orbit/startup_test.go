package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every orbit process, hooks included, runs the package initialisation of
// everything linked into the binary, whatever the command. These bound it
// (BENCHMARKS.md, "Start-up" has the times).
const (
	// initBudgetBytes bounds what all package initialisation allocates.
	initBudgetBytes = 512 << 10
	// ownInitBudgetBytes bounds what one of orbit's packages allocates at
	// initialisation: compile a regexp when it is first used, not there.
	ownInitBudgetBytes = 32 << 10
	// mandatedInitBytes bounds what the modules of mandatedInit allocate
	// at initialisation, counted apart from initBudgetBytes: tablewriter
	// v1.1.5 allocates about 720 KB (an 8,192-entry width cache in
	// pkg/twwidth, an error registry in olekukonko/errors), more than all
	// the rest of orbit's start-up; a new version that grows it shows here.
	mandatedInitBytes = 768 << 10
)

// mandatedInit are module path prefixes linked, whatever their start-up
// cost, because the project brief names them (BENCHMARKS.md, "Start-up"
// has what they cost): olekukonko/tablewriter draws the tables and brings
// its own olekukonko modules. Go runs every linked package's init in every
// process, so no lazy form of it exists short of a second binary.
var mandatedInit = []string{"github.com/olekukonko/"}

// unlinked are modules kept out of the binary for their initialisation
// cost, each replaced by a few lines of orbit's (tablewriter, dropped once
// for the same reason, is back as the brief's table renderer: see
// mandatedInit).
var unlinked = map[string]string{
	"gonum.org/v1/plot":                       "parsed its fonts at start-up (report/chart.go draws the trust charts)",
	"github.com/prometheus/client_golang":     "registered its collectors at start-up (server/metrics.go writes /metrics)",
	"github.com/blevesearch/go-porterstemmer": "was not FTS5's stemmer (precedent/porter.go is)",
}

// TestStartupInitWork builds orbit and runs `orbit hook stop` with
// GODEBUG=inittrace=1: the modules above are not linked, package
// initialisation allocates at most initBudgetBytes besides the mandated
// modules' (at most mandatedInitBytes), and none of orbit's own packages
// more than ownInitBudgetBytes (allocations, unlike times, do not depend
// on the machine's load).
func TestStartupInitWork(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the hook path is measured on Unix")
	}
	bin := filepath.Join(t.TempDir(), "orbit")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mods, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(mods), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "dep" {
			if why, ok := unlinked[f[1]]; ok {
				t.Errorf("orbit links %s again, which %s", f[1], why)
			}
		}
	}

	cmd := exec.Command(bin, "hook", "stop")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("orbit hook stop: %v\n%s", err, stderr.String())
	}
	type pkgInit struct {
		name  string
		bytes int
	}
	var inits []pkgInit
	total, mandated := 0, 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, T ms clock, N bytes, N allocs
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		if slices.ContainsFunc(mandatedInit, func(p string) bool { return strings.HasPrefix(f[1], p) }) {
			mandated += n
			continue
		}
		inits = append(inits, pkgInit{f[1], n})
		total += n
		if strings.HasPrefix(f[1], "github.com/orbit-loop/orbit/") && n > ownInitBudgetBytes {
			t.Errorf("%s allocates %d bytes at start-up; at most %d (compile regexps and build tables on first use)", f[1], n, ownInitBudgetBytes)
		}
	}
	if len(inits) == 0 {
		t.Fatalf("no inittrace lines in orbit's stderr:\n%s", stderr.String())
	}
	if total > initBudgetBytes {
		slices.SortFunc(inits, func(a, b pkgInit) int { return b.bytes - a.bytes })
		var top []string
		for _, p := range inits[:min(8, len(inits))] {
			top = append(top, fmt.Sprintf("%s %d", p.name, p.bytes))
		}
		t.Errorf("package initialisation allocates %d bytes in every orbit process; at most %d. The largest: %s", total, initBudgetBytes, strings.Join(top, ", "))
	}
	if mandated == 0 {
		t.Errorf("no package of %q initialises: is the table renderer still tablewriter? Update mandatedInit", mandatedInit)
	}
	if mandated > mandatedInitBytes {
		t.Errorf("the mandated modules %q allocate %d bytes at start-up; at most %d (measure the new version and say so in BENCHMARKS.md)", mandatedInit, mandated, mandatedInitBytes)
	}
	t.Logf("%d packages initialise, allocating %d bytes, and the mandated modules %d bytes", len(inits), total, mandated)
}
