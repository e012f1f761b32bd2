package frameworks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
)

// ScanProject finds and reads, in place and read-only, the loops of every
// framework under root. A file that cannot be read is a Problem, never a
// crash; the loops are in framework order, then by id.
func ScanProject(root string, now time.Time) loop.Scan {
	var s loop.Scan
	scanCitadel(root, &s)
	scanCCW(root, &s)
	scanCavekit(root, now, &s)
	scanConductor(root, &s)
	scanOrbit(root, now, &s)
	for i := range s.Loops {
		v := &s.Loops[i]
		for _, l := range []*[]string{&v.Files, &v.Controls, &v.Warnings} {
			if *l == nil {
				*l = []string{}
			}
		}
		if v.Details == nil {
			v.Details = []loop.Detail{}
		}
	}
	if s.Problems == nil {
		s.Problems = []journal.Problem{}
	}
	order := map[string]int{}
	for i, f := range loop.Frameworks() {
		order[f] = i
	}
	slices.SortStableFunc(s.Loops, func(a, b loop.View) int {
		if d := order[a.Framework] - order[b.Framework]; d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return s
}

// problem adds the finding about the file at path that err is, or says:
// the file cannot be read as a loop.
func problem(s *loop.Scan, root string, path string, err error) {
	r := loop.Rel(root, path)
	var p journal.Problem
	if !errors.As(err, &p) {
		msg := strings.ReplaceAll(err.Error(), root+string(filepath.Separator), "")
		p = journal.Problem{Severity: journal.SevError, Code: journal.CodeUnreadable, Message: strings.TrimPrefix(msg, r+": ")}
	}
	p.File = r
	s.Problems = append(s.Problems, p)
}

// readEach reads the JSON files at paths and maps each with view, on as
// many goroutines as there are CPUs; the loops and problems are added in
// the order of paths. A file that has disappeared meanwhile is skipped.
func readEach(s *loop.Scan, root string, paths []string, view func(path string, o object) (loop.View, error)) {
	type result struct {
		v    loop.View
		ok   bool
		errs []error
	}
	res := make([]result, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One buffer per goroutine: a view copies what it keeps, so
			// the next file may reuse the bytes of the last.
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				data, err := readFile(paths[i], buf)
				var o object
				if err == nil {
					buf = data
					o, err = parseObject(paths[i], data)
				}
				switch {
				case errors.Is(err, os.ErrNotExist):
				case err != nil:
					res[i].errs = append(res[i].errs, err)
				default:
					v, err := view(paths[i], o)
					res[i].v, res[i].ok = v, true
					if err != nil {
						res[i].errs = append(res[i].errs, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	for i, r := range res {
		for _, err := range r.errs {
			problem(s, root, paths[i], err)
		}
		if r.ok {
			s.Loops = append(s.Loops, r.v)
		}
	}
}

// Scan reads every loop of the project (ScanProject) and records what
// changed since orbit last saw it (History.Observe); the problems of both
// are in the scan's Problems.
func Scan(ctx context.Context, h *loop.History, now time.Time) (loop.Scan, error) {
	s := ScanProject(h.Root, now)
	_, probs, err := h.Observe(ctx, s.Loops, now)
	s.Problems = append(s.Problems, probs...)
	return s, err
}

// scanOrbit adds the ORBIT loop's row, or the problem of its state file.
func scanOrbit(root string, now time.Time, s *loop.Scan) {
	v, ok, err := orbitloop.View(root, now)
	switch {
	case err != nil:
		problem(s, root, filepath.Join(root, project.StateFile), err)
	case ok:
		s.Loops = append(s.Loops, v)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// listDir lists dir, after checking that no directory from root down to it
// is a link (project.OpenDir): the files read from the listing are then
// only checked at their last component (readFile).
func listDir(root, dir string) ([]os.DirEntry, error) {
	d, err := project.OpenDir(root, dir, false)
	if err != nil {
		return nil, err
	}
	d.Close()
	return os.ReadDir(dir)
}

// identify sets the view's id from o's key, else from name (the record
// file's, or its directory's when dir), warning when the id is missing or
// differs from name.
func identify(v *loop.View, o object, key, name string, dir bool) {
	after, differs := "file", "file name"
	if dir {
		after, differs = "directory", "directory"
	}
	v.ID, _ = o.str(key)
	switch {
	case v.ID == "":
		v.ID = name
		v.Warnf("no %s: named after the %s", key, after)
	case v.ID != name:
		v.Warnf("%s %q differs from the %s %q", key, v.ID, differs, name)
	}
}
