package journal

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/orbit-loop/orbit/flock"
)

func appendOnce(tb testing.TB, path, data string) {
	tb.Helper()
	a, err := OpenAppender("", path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := a.Append([]byte(data)); err != nil {
		a.Close()
		tb.Fatalf("Append(%q): %v", data, err)
	}
	if err := a.Close(); err != nil {
		tb.Fatal(err)
	}
}

func TestAppend(t *testing.T) {
	tests := []struct {
		name   string
		before string // "" and absent differ: see exists
		exists bool
		data   string
		want   string
	}{
		{"creates the file", "", false, lineA + "\n", lineA + "\n"},
		{"empty file", "", true, lineA + "\n", lineA + "\n"},
		{"after whole lines", lineA + "\n", true, lineB + "\n", lineA + "\n" + lineB + "\n"},
		{"several lines in one call", lineA + "\n", true, lineB + "\n" + lineA + "\n", lineA + "\n" + lineB + "\n" + lineA + "\n"},
		{"after a torn fragment", lineA + "\n" + `{"id":"b","iter`, true, lineB + "\n", lineA + "\n" + `{"id":"b","iter` + "\n" + lineB + "\n"},
		{"after a CR", lineA + "\r", true, lineB + "\n", lineA + "\r\n" + lineB + "\n"},
		{"nothing", lineA + "\n", true, "", lineA + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".claude", "decisions.jsonl")
			if tt.exists {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			appendOnce(t, path, tt.data)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("after Append(%q) to %q the file holds %q; want %q", tt.data, tt.before, got, tt.want)
			}
		})
	}
}

func TestAppendRefusesPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	if err := os.WriteFile(path, []byte(lineA+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := OpenAppender("", path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, data := range []string{lineB, lineB + "\n" + lineA, "\n" + lineB} {
		err := a.Append([]byte(data))
		if err == nil || !strings.Contains(err.Error(), "does not end with a newline") || !strings.Contains(err.Error(), path) {
			t.Errorf("Append(%q) = %v; want an error naming %s and the missing newline", data, err, path)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != lineA+"\n" {
		t.Errorf("file = %q after refused appends; want it unchanged", got)
	}
}

func TestAppenderHoldsLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	a, err := OpenAppender("", path)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ok, err := flock.TryLock(other); err != nil || ok {
		t.Fatalf("TryLock while an Appender is open = %v, %v; want false", ok, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, err := flock.TryLock(other); err != nil || !ok {
		t.Fatalf("TryLock after Close = %v, %v; want true", ok, err)
	}
}

// appendedLine is the line appender w writes as its i-th: long enough that a
// torn or interleaved write would show.
func appendedLine(w, i int) string {
	return fmt.Sprintf(`{"writer":%d,"seq":%d,"pad":%q}`, w, i, strings.Repeat(strconv.Itoa(w), 200+w*37)) + "\n"
}

var appendedRE = regexp.MustCompile(`^\{"writer":(\d+),"seq":(\d+),"pad":"(\d+)"\}$`)

// checkAppended checks that path holds exactly writers x n whole lines, each
// writer's in order.
func checkAppended(t *testing.T, path string, writers, n int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("file does not end with a newline")
	}
	next := make([]int, writers)
	ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range ls {
		m := appendedRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %d is not a whole appended line: %.120q", i+1, l)
		}
		w, _ := strconv.Atoi(m[1])
		seq, _ := strconv.Atoi(m[2])
		if w >= writers || l+"\n" != appendedLine(w, seq) {
			t.Fatalf("line %d = %.120q; not what writer %d wrote", i+1, l, w)
		}
		if seq != next[w] {
			t.Fatalf("line %d: writer %d seq %d; want %d (lines lost, repeated or reordered)", i+1, w, seq, next[w])
		}
		next[w]++
	}
	if len(ls) != writers*n {
		t.Fatalf("file has %d lines; want %d", len(ls), writers*n)
	}
}

func TestAppendConcurrentGoroutines(t *testing.T) {
	const writers, n = 8, 200
	path := filepath.Join(t.TempDir(), "j.jsonl")
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				a, err := OpenAppender("", path)
				if err != nil {
					errs <- err
					return
				}
				err = a.Append([]byte(appendedLine(w, i)))
				if cerr := a.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkAppended(t, path, writers, n)
}

// TestHelperProcess is not a test: TestAppendConcurrentProcesses runs the
// test binary with ORBIT_APPEND_HELPER set to make it an appending process.
func TestHelperProcess(t *testing.T) {
	spec := os.Getenv("ORBIT_APPEND_HELPER")
	if spec == "" {
		return
	}
	var path string
	var w, n int
	if _, err := fmt.Sscanf(spec, "%d %d %s", &w, &n, &path); err != nil {
		fmt.Fprintln(os.Stderr, "bad ORBIT_APPEND_HELPER:", spec)
		os.Exit(2)
	}
	a, err := OpenAppender("", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i := range n {
		// Release the lock between appends so that the processes interleave.
		if i > 0 {
			if a, err = OpenAppender("", path); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		if err := a.Append([]byte(appendedLine(w, i))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := a.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

func TestAppendConcurrentProcesses(t *testing.T) {
	const procs, n = 4, 200
	path := filepath.Join(t.TempDir(), "j.jsonl")
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*strings.Builder, procs)
	for w := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("ORBIT_APPEND_HELPER=%d %d %s", w, n, path))
		outs[w] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[w], outs[w]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("appending process %d: %v\n%s", w, err, outs[w])
		}
	}
	checkAppended(t, path, procs, n)
}
