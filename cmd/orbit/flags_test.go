package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// parse runs cmd on args with its output discarded and returns the error
// RunE (or cobra) returned.
func parse(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	// As the root does for every command.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &flagError{err: err} })
	return cmd.Execute()
}

// isUsage reports whether err maps to the usage exit code.
func isUsage(err error) bool {
	var fe *flagError
	return errors.As(err, &fe)
}

// checkParseErr checks a parse outcome against a wanted usage error
// (wantErr is a substring of it; "" for none).
func checkParseErr(t *testing.T, args []string, err error, wantErr string) bool {
	t.Helper()
	if wantErr == "" {
		if err != nil {
			t.Fatalf("parse %q: %v; want no error", args, err)
		}
		return true
	}
	if err == nil {
		t.Fatalf("parse %q succeeded; want a usage error containing %q", args, wantErr)
	}
	if !isUsage(err) {
		t.Errorf("parse %q error %v is not a usage error", args, err)
	}
	if !strings.Contains(err.Error(), wantErr) {
		t.Errorf("parse %q error = %q; want it to contain %q", args, err, wantErr)
	}
	return false
}

func TestLogFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantLimit  int
		wantCat    string
		wantOut    string
		wantJSON   bool
		wantFields []string
		wantErr    string
	}{
		{name: "defaults", args: nil, wantLimit: 20},
		{name: "limit", args: []string{"--limit", "5"}, wantLimit: 5},
		{name: "limit shorthand", args: []string{"-n", "3"}, wantLimit: 3},
		{name: "limit 0 is all", args: []string{"--limit", "0"}, wantLimit: 0},
		{name: "negative limit", args: []string{"--limit", "-1"}, wantErr: "--limit -1"},
		{name: "limit not a number", args: []string{"--limit", "ten"}, wantErr: "invalid argument"},
		{name: "category", args: []string{"--category", "architecture"}, wantLimit: 20, wantCat: "architecture"},
		{name: "unknown category", args: []string{"--category", "bogus"}, wantErr: `--category "bogus" is not allowed (allowed: feature, architecture, quality, scope, deploy)`},
		{name: "outcome", args: []string{"--outcome", "INCORRECT"}, wantLimit: 20, wantOut: "INCORRECT"},
		{name: "outcome N/A", args: []string{"--outcome", "N/A"}, wantLimit: 20, wantOut: "N/A"},
		{name: "outcome in any case", args: []string{"--outcome", "correct"}, wantLimit: 20, wantOut: "CORRECT"},
		{name: "misspelt outcome", args: []string{"--outcome", "corect"}, wantErr: `--outcome "corect" is not allowed (allowed: CORRECT, INCORRECT, PENDING, N/A); did you mean "CORRECT"?`},
		{name: "json all fields", args: []string{"--json"}, wantLimit: 20, wantJSON: true},
		{name: "json fields", args: []string{"--json=id,outcome"}, wantLimit: 20, wantJSON: true, wantFields: []string{"id", "outcome"}},
		{name: "json fields with spaces", args: []string{"--json=id, input"}, wantLimit: 20, wantJSON: true, wantFields: []string{"id", "input"}},
		{name: "json unknown field", args: []string{"--json=bogus"}, wantErr: `unknown JSON field "bogus" (available: id, iteration`},
		{name: "positional argument", args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *logOptions
			cmd := newCmdLog(&Factory{}, func(o *logOptions) error { got = o; return nil })
			if !checkParseErr(t, tt.args, parse(cmd, tt.args...), tt.wantErr) {
				if got != nil {
					t.Errorf("parse %q ran the command despite the usage error", tt.args)
				}
				return
			}
			if got.Limit != tt.wantLimit || got.Filter.Category != tt.wantCat || got.Filter.Outcome != tt.wantOut {
				t.Errorf("parse %q = limit %d, category %q, outcome %q; want %d, %q, %q",
					tt.args, got.Limit, got.Filter.Category, got.Filter.Outcome, tt.wantLimit, tt.wantCat, tt.wantOut)
			}
			if got.JSON.on != tt.wantJSON || !slices.Equal(got.JSON.fields, tt.wantFields) {
				t.Errorf("parse %q: json = %v %q; want %v %q", tt.args, got.JSON.on, got.JSON.fields, tt.wantJSON, tt.wantFields)
			}
		})
	}
}

func TestExportFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantFormat string
		wantOut    string
		wantCat    string
		wantErr    string
	}{
		{name: "defaults", wantFormat: "jsonl"},
		{name: "csv to a file", args: []string{"--format", "csv", "--out", "d.csv"}, wantFormat: "csv", wantOut: "d.csv"},
		{name: "out shorthand", args: []string{"-o", "x.md", "--format", "md"}, wantFormat: "md", wantOut: "x.md"},
		{name: "category", args: []string{"--category", "deploy"}, wantFormat: "jsonl", wantCat: "deploy"},
		{name: "unknown format", args: []string{"--format", "xml"}, wantErr: `--format "xml" is not allowed (allowed: jsonl, csv, md)`},
		{name: "unknown category", args: []string{"--category", "ops"}, wantErr: `--category "ops" is not allowed`},
		{name: "positional argument", args: []string{"out.jsonl"}, wantErr: `unexpected argument "out.jsonl"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *exportOptions
			cmd := newCmdExport(&Factory{}, func(o *exportOptions) error { got = o; return nil })
			if !checkParseErr(t, tt.args, parse(cmd, tt.args...), tt.wantErr) {
				return
			}
			if got.Format != tt.wantFormat || got.Out != tt.wantOut || got.Category != tt.wantCat {
				t.Errorf("parse %q = format %q, out %q, category %q; want %q, %q, %q",
					tt.args, got.Format, got.Out, got.Category, tt.wantFormat, tt.wantOut, tt.wantCat)
			}
		})
	}
}

func TestImportFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantFiles  []string
		wantDry    bool
		wantJSON   bool
		wantFields []string
		wantErr    string
	}{
		{name: "one file", args: []string{"a.jsonl"}, wantFiles: []string{"a.jsonl"}},
		{name: "several files, dry run", args: []string{"a.jsonl", "--dry-run", "b.jsonl"}, wantFiles: []string{"a.jsonl", "b.jsonl"}, wantDry: true},
		{name: "json", args: []string{"a.jsonl", "--json"}, wantFiles: []string{"a.jsonl"}, wantJSON: true},
		{name: "json fields", args: []string{"--json=files,problems", "a.jsonl"}, wantFiles: []string{"a.jsonl"}, wantJSON: true, wantFields: []string{"files", "problems"}},
		{name: "json unknown field", args: []string{"--json=records", "a.jsonl"}, wantErr: `unknown JSON field "records" (available: dry_run, files, problems)`},
		{name: "no file", args: nil, wantErr: "import needs at least one FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *importOptions
			cmd := newCmdImport(&Factory{}, func(o *importOptions) error { got = o; return nil })
			if !checkParseErr(t, tt.args, parse(cmd, tt.args...), tt.wantErr) {
				return
			}
			if !slices.Equal(got.Files, tt.wantFiles) || got.DryRun != tt.wantDry {
				t.Errorf("parse %q = files %q, dry-run %v; want %q, %v", tt.args, got.Files, got.DryRun, tt.wantFiles, tt.wantDry)
			}
			if got.JSON.on != tt.wantJSON || !slices.Equal(got.JSON.fields, tt.wantFields) {
				t.Errorf("parse %q: json = %v %q; want %v %q", tt.args, got.JSON.on, got.JSON.fields, tt.wantJSON, tt.wantFields)
			}
		})
	}
}

func TestInitFlags(t *testing.T) {
	tests := []struct {
		name    string
		root    string // --root
		envRoot string // ORBIT_ROOT
		args    []string
		wantDir string
		wantErr string
	}{
		{name: "working directory", wantDir: "/work/dir"},
		{name: "ORBIT_ROOT", envRoot: "/env/root", wantDir: "/env/root"},
		{name: "--root beats ORBIT_ROOT", root: "/flag/root", envRoot: "/env/root", wantDir: "/flag/root"},
		{name: "positional argument", args: []string{"here"}, wantErr: `unexpected argument "here"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Factory{
				RootFlag: tt.root,
				Getenv: func(k string) string {
					if k == "ORBIT_ROOT" {
						return tt.envRoot
					}
					return ""
				},
				Getwd: func() (string, error) { return "/work/dir", nil },
			}
			var got *initOptions
			cmd := newCmdInit(f, func(o *initOptions) error { got = o; return nil })
			if !checkParseErr(t, tt.args, parse(cmd, tt.args...), tt.wantErr) {
				return
			}
			if got.Dir != tt.wantDir {
				t.Errorf("init Dir = %q; want %q", got.Dir, tt.wantDir)
			}
		})
	}
}

func TestVerifyFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantAll    bool
		wantJSON   bool
		wantFields []string
		wantErr    string
	}{
		{name: "defaults"},
		{name: "all", args: []string{"--all"}, wantAll: true},
		{name: "json fields", args: []string{"--json=ok,findings"}, wantJSON: true, wantFields: []string{"ok", "findings"}},
		{name: "json unknown field", args: []string{"--json=problems"}, wantErr: `unknown JSON field "problems" (available: ok, files, findings)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *verifyOptions
			cmd := newCmdVerify(&Factory{}, func(o *verifyOptions) error { got = o; return nil })
			if !checkParseErr(t, tt.args, parse(cmd, tt.args...), tt.wantErr) {
				return
			}
			if got.All != tt.wantAll || got.JSON.on != tt.wantJSON || !slices.Equal(got.JSON.fields, tt.wantFields) {
				t.Errorf("parse %q = all %v, json %v %q; want %v, %v %q", tt.args, got.All, got.JSON.on, got.JSON.fields, tt.wantAll, tt.wantJSON, tt.wantFields)
			}
		})
	}
}

// TestJSONOnlyFlags covers the commands whose only flag is --json.
func TestJSONOnlyFlags(t *testing.T) {
	type cmdCase struct {
		name    string
		newCmd  func(ran *bool, j **jsonFlag) *cobra.Command
		allowed string
	}
	cmds := []cmdCase{
		{name: "sync", allowed: "decisions_added", newCmd: func(ran *bool, j **jsonFlag) *cobra.Command {
			return newCmdSync(&Factory{}, func(o *syncOptions) error { *ran, *j = true, &o.JSON; return nil })
		}},
		{name: "rebuild", allowed: "decisions_added", newCmd: func(ran *bool, j **jsonFlag) *cobra.Command {
			return newCmdRebuild(&Factory{}, func(o *rebuildOptions) error { *ran, *j = true, &o.JSON; return nil })
		}},
		{name: "migrate status", allowed: "index_version", newCmd: func(ran *bool, j **jsonFlag) *cobra.Command {
			return newCmdMigrateStatus(&Factory{}, func(o *migrateOptions) error { *ran, *j = true, &o.JSON; return nil })
		}},
	}
	tests := []struct {
		name       string
		args       []string
		wantJSON   bool
		wantFields func(allowed string) []string
		wantErr    string
	}{
		{name: "no flags"},
		{name: "json", args: []string{"--json"}, wantJSON: true},
		{name: "json one field", args: []string{"--json=ALLOWED"}, wantJSON: true, wantFields: func(a string) []string { return []string{a} }},
		{name: "json unknown field", args: []string{"--json=nope"}, wantErr: `unknown JSON field "nope"`},
		{name: "positional argument", args: []string{"x"}, wantErr: `unexpected argument "x"`},
	}
	for _, c := range cmds {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				var ran bool
				var j *jsonFlag
				args := make([]string, len(tt.args))
				for i, a := range tt.args {
					args[i] = strings.ReplaceAll(a, "ALLOWED", c.allowed)
				}
				if !checkParseErr(t, args, parse(c.newCmd(&ran, &j), args...), tt.wantErr) {
					if ran {
						t.Errorf("parse %q ran the command despite the usage error", args)
					}
					return
				}
				var want []string
				if tt.wantFields != nil {
					want = tt.wantFields(c.allowed)
				}
				if !ran || j.on != tt.wantJSON || !slices.Equal(j.fields, want) {
					t.Errorf("parse %q: ran %v, json %v %q; want ran, json %v %q", args, ran, j.on, j.fields, tt.wantJSON, want)
				}
			})
		}
	}
}

func TestDemoFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantKeep bool
		wantDir  string
		wantErr  string
	}{
		{name: "defaults"},
		{name: "keep", args: []string{"--keep"}, wantKeep: true},
		{name: "dir", args: []string{"--dir", "/tmp/demo"}, wantDir: "/tmp/demo"},
		{name: "positional argument", args: []string{"now"}, wantErr: `unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *demoOptions
			cmd := newCmdDemo(&Factory{}, func(o *demoOptions) error { got = o; return nil })
			if !checkParseErr(t, tt.args, parse(cmd, tt.args...), tt.wantErr) {
				return
			}
			if got.Keep != tt.wantKeep || got.Dir != tt.wantDir {
				t.Errorf("parse %q = keep %v, dir %q; want %v, %q", tt.args, got.Keep, got.Dir, tt.wantKeep, tt.wantDir)
			}
		})
	}
}
