package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
)

type knowledgeImportOptions struct {
	f           *Factory
	Dir         string
	Tracks      string
	NoDecisions bool
	DryRun      bool
	JSON        jsonFlag
}

// knowledgeImportOutput is what `orbit knowledge import --json` prints.
type knowledgeImportOutput struct {
	Dir       string                    `json:"dir"`
	Files     []knowledge.FileSummary   `json:"files"`
	Problems  []knowledge.Problem       `json:"problems"`
	Decisions *knowledge.DecisionReport `json:"decisions"`
}

func newCmdKnowledgeImport(f *Factory, runF func(*knowledgeImportOptions) error) *cobra.Command {
	opts := &knowledgeImportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "import [DIR]",
		Short: "Index a knowledge directory and bring in the tracks' autonomous decisions",
		Long: `Index DIR/errors.json and DIR/patterns.md (DIR defaults to
conductor/knowledge/ under the project root) and keep them indexed: every
later command re-reads them when they change. A DIR other than the default
is remembered in .claude/orbit-knowledge.jsonl.

errors.json is read in every shape seen in the wild: the scaffold
{"version":1,"errors":[]}, the retrospective agent's template (id, pattern,
category, context, problem, solution, code_fix, occurrences, last_seen,
discovered_in), the loop-fixer's entries (id, pattern, solution,
discovered_in, last_seen) and the free-form {id, date, track, symptom,
resolution}. An entry without a pattern is matched by full text; so is one
whose regex is valid JavaScript that Go's RE2 cannot run (lookaround,
backreferences), with a warning naming the construct; an invalid regex, or
one that matches any text, is reported with its file:line and never used as
a regex.

Then the autonomous_decisions of every TRACKS/*/metadata.json (TRACKS
defaults to DIR/../tracks) are appended to the decision journal as decisions
conductor-<track>-<n>, so that precedent search and trust reports see them
(see the README for the mapping). Idempotent: decisions already in the
journal are skipped (exit 0), even when orbit's mapping changed since. A
type Conductor does not define is imported as scope/medium, with a warning
when it is appended. Imported decisions keep their own track: they are never
in the ORBIT loop's stale list.

Exit status 3 when a file could not be read, a regex is invalid or matches
any text, or a decision was rejected or conflicted.`,
		Example: `  orbit knowledge import
  orbit knowledge import ../other-repo/conductor/knowledge --no-decisions
  orbit knowledge import --tracks conductor/tracks --dry-run --json=decisions`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return flagErrorf("expected at most one DIR, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if opts.NoDecisions && cmd.Flags().Changed("tracks") {
				return flagErrorf("--tracks and --no-decisions cannot both be given")
			}
			if runF != nil {
				return runF(opts)
			}
			return knowledgeImportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Tracks, "tracks", "", "conductor's tracks directory (default: DIR/../tracks)")
	cmd.Flags().BoolVar(&opts.NoDecisions, "no-decisions", false, "index the knowledge files only")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "report the decisions that would be appended, append nothing (the knowledge files are indexed)")
	addJSONFlag(cmd, &opts.JSON, knowledgeImportOutput{})
	return cmd
}

func knowledgeImportRun(ctx context.Context, opts *knowledgeImportOptions) error {
	f := opts.f
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	k := knowledge.New(ix.Store, ix.Project)
	k.Now = f.Now
	dir := knowledge.DefaultDir
	if opts.Dir != "" {
		if dir, err = resolveDir(f, k, opts.Dir); err != nil {
			return err
		}
	}
	if fi, err := os.Stat(k.Abs(dir)); err != nil || !fi.IsDir() {
		if opts.Dir == "" {
			return fmt.Errorf("knowledge directory %s: not found under %s (pass DIR, or --root)", dir, ix.Project.Root)
		}
		return fmt.Errorf("knowledge directory %s: not a directory", opts.Dir)
	}
	srep, err := k.Register(ctx, dir)
	if !opts.JSON.on {
		printKnowledgeSync(f.IO.ErrOut, srep)
	}
	if err != nil {
		return err
	}
	var files []knowledge.FileSummary
	for _, name := range []string{knowledge.ErrorsFile, knowledge.PatternsFile} {
		s, err := k.Summarize(ctx, filepath.Join(dir, name))
		if err != nil {
			return err
		}
		files = append(files, s)
	}
	if !files[0].Found && !files[1].Found {
		return fmt.Errorf("knowledge directory %s: holds neither %s nor %s", dir, knowledge.ErrorsFile, knowledge.PatternsFile)
	}
	var drep *knowledge.DecisionReport
	tracks := ""
	if !opts.NoDecisions {
		tracks = filepath.Join(filepath.Dir(dir), "tracks")
		if opts.Tracks != "" {
			if tracks, err = resolveDir(f, k, opts.Tracks); err != nil {
				return err
			}
		}
		r, err := k.ImportDecisions(ctx, ix, tracks, opts.DryRun)
		printSyncReport(f.IO.ErrOut, r.Sync)
		if err != nil {
			return err
		}
		drep = &r
	}
	problems := append(append(append([]knowledge.Problem{}, srep.Rewritten...), srep.Broken...), srep.Problems...)
	if drep != nil {
		problems = append(problems, drep.Problems...)
	}
	var fail error
	if srep.Errors() > 0 || (drep != nil && drep.Failed()) {
		fail = &findingsError{msg: "knowledge import: some entries or decisions have problems (see above)"}
	}
	if opts.JSON.on {
		if err := opts.JSON.write(f.IO.Out, knowledgeImportOutput{dir, files, problems, drep}); err != nil {
			return err
		}
		if fail != nil {
			return &findingsError{}
		}
		return nil
	}
	if drep != nil {
		for _, p := range drep.Problems {
			fmt.Fprintln(f.IO.ErrOut, p.Error())
		}
	}
	for _, s := range files {
		switch {
		case !s.Found:
			fmt.Fprintf(f.IO.Out, "%s: not found\n", s.Path)
		case s.Error != "":
			fmt.Fprintf(f.IO.Out, "%s: unreadable, nothing indexed\n", s.Path)
		case s.Kind == "errors":
			fmt.Fprintf(f.IO.Out, "%s: %s, %d entries: %d with a regex, %d full-text only (no pattern), %d unusable regexes\n",
				s.Path, s.Shape, s.Entries, s.Regex, s.NoPattern, s.Unusable)
		default:
			fmt.Fprintf(f.IO.Out, "%s: %s, %d entries\n", s.Path, s.Shape, s.Entries)
		}
	}
	if drep != nil {
		verb := "appended"
		if opts.DryRun {
			verb = "would append"
		}
		t := drep.Totals()
		fmt.Fprintf(f.IO.Out, "%s: %s, %s: %d %s, %d already present, %s, %d rejected\n", tracks, count(len(drep.Tracks), "track", "tracks"),
			count(t.Decisions, "autonomous decision", "autonomous decisions"), t.Appended, verb, t.Skipped, count(t.Conflicts, "conflict", "conflicts"), t.Rejected)
	}
	return fail
}
