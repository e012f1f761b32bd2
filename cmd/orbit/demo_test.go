package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDemo(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "demo")
	tests := []struct {
		name     string
		args     []string
		tty      bool
		wantKept string // directory the demo must leave behind ("" for none)
	}{
		{name: "temporary project, piped", args: []string{"demo"}},
		{name: "temporary project, terminal", args: []string{"demo"}, tty: true},
		{name: "--dir", args: []string{"demo", "--dir", dir}, wantKept: dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := orbit(t, env{tty: tt.tty}, tt.args...)
			if res.code != exitOK {
				t.Fatalf("demo: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
			for _, want := range []string{
				"same answers after the rebuild: yes",
				"byte-identical: yes",
				"$ orbit init\n",
				"$ orbit verify\n",
			} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("demo output does not contain %q:\n%s", want, res.stdout)
				}
			}
			if after, _ := os.Getwd(); after != wd {
				t.Errorf("demo left the working directory at %s; want %s", after, wd)
			}
			first := lines(res.stdout)[0]
			root, ok := strings.CutPrefix(first, "orbit demo: a temporary project in ")
			if !ok {
				t.Fatalf("first line = %q; want it to name the project", first)
			}
			_, statErr := os.Stat(root)
			switch {
			case tt.wantKept == "" && statErr == nil:
				t.Errorf("demo left its temporary project %s behind", root)
				os.RemoveAll(root)
			case tt.wantKept != "" && root != tt.wantKept:
				t.Errorf("demo --dir built its project in %s; want %s", root, tt.wantKept)
			case tt.wantKept != "" && !strings.Contains(res.stdout, "The project is kept in "+tt.wantKept):
				t.Errorf("demo --dir does not say where the project is kept")
			}
			if tt.wantKept != "" {
				if _, err := os.Stat(filepath.Join(tt.wantKept, journalRel)); err != nil {
					t.Errorf("demo --dir did not keep its journal: %v", err)
				}
			}
		})
	}
}

// TestDemoWording reads the demo's whole output for the slips a reader
// trips on: a noun that does not agree with 1, a negative zero.
func TestDemoWording(t *testing.T) {
	res := orbit(t, env{}, "demo")
	if res.code != exitOK {
		t.Fatalf("demo: exit %d\n%s", res.code, res.stderr)
	}
	out := res.stdout + res.stderr
	slip := regexp.MustCompile(`(^|[^0-9.,])[+]?1 (decisions|records|conflicts|warnings|problems|tracks|requests|minutes|lines|events|rejected lines|outcome events|new rejected lines|pending requests|entries|iterations)\b|-0\.0+\b`)
	for _, m := range slip.FindAllString(out, -1) {
		t.Errorf("demo output says %q", strings.TrimSpace(m))
	}
	if strings.Contains(out, "since a time") {
		t.Errorf("demo output says \"since a time\" instead of the time")
	}
	// The trend draws every iteration of its range: a verified one as a
	// block, one without a verified decision as a dot.
	trend := regexp.MustCompile(`(?m)^iterations (\d+)–(\d+)  ([▁▂▃▄▅▆▇█·]+)(  \(· an iteration without a verified decision\))?$`).FindStringSubmatch(out)
	if trend == nil {
		t.Fatalf("demo output has no trend line drawn one mark per iteration")
	}
	var from, to int
	fmt.Sscan(trend[1], &from)
	fmt.Sscan(trend[2], &to)
	if n := utf8.RuneCountInString(trend[3]); n != to-from+1 {
		t.Errorf("trend %q: %d marks for iterations %d–%d; want one per iteration", trend[0], n, from, to)
	}
	if strings.Contains(trend[3], "·") != (trend[4] != "") {
		t.Errorf("trend %q: the legend says what · means exactly when there is one", trend[0])
	}
}
