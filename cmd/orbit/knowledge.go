package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/report"
)

func newCmdKnowledge(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "knowledge <command>",
		Short: "Conductor's error registry and patterns: matched, counted, kept honest",
		Long: `Index conductor's knowledge layer (seed 004): conductor/knowledge/errors.json,
the registry of known errors (a regex and its solution), and
conductor/knowledge/patterns.md, the pattern library. Every shape of
errors.json found in the wild is read, and patterns.md's "### Name" sections
and free-form bullet lists alike.

The files stay the truth: they are re-read when they change. What orbit
learns about them (each match, each export) goes to its own append-only
.claude/orbit-knowledge.jsonl, so the index can always be rebuilt.`,
		Example: `  orbit knowledge import                      # index conductor/knowledge/ and the tracks' decisions
  orbit knowledge match "Cannot find module 'react'"
  orbit knowledge add --pattern "Cannot find module '(.+)'" --solution "npm install the module"
  orbit knowledge stats
  orbit knowledge export                      # write the match counts back to errors.json`,
	}
	cmd.AddCommand(
		newCmdKnowledgeImport(f, nil),
		newCmdKnowledgeMatch(f, nil),
		newCmdKnowledgeAdd(f, nil),
		newCmdKnowledgeExport(f, nil),
		newCmdKnowledgeList(f, nil),
		newCmdKnowledgeStats(f, nil),
	)
	return cmd
}

// knowledgeIndex opens the index for the knowledge commands (without a
// sync of the decision journal, which they do not read).
func knowledgeIndex(ctx context.Context, f *Factory) (*knowledge.Index, error) {
	ix, err := f.Index(ctx)
	if err != nil {
		return nil, err
	}
	k := knowledge.New(ix.Store, ix.Project)
	k.Now = f.Now
	return k, nil
}

// knowledgeSynced opens the index and syncs the knowledge files, reporting
// on stderr what the sync found.
func knowledgeSynced(ctx context.Context, f *Factory) (*knowledge.Index, error) {
	k, err := knowledgeIndex(ctx, f)
	if err != nil {
		return nil, err
	}
	rep, err := k.Sync(ctx)
	printKnowledgeSync(f.IO.ErrOut, rep)
	return k, err
}

// printKnowledgeSync tells, once, what a knowledge sync found: files that
// cannot be read (every time), a rewritten journal, and the remarks about
// files re-read (up to a bound).
func printKnowledgeSync(w io.Writer, rep knowledge.SyncReport) {
	for _, p := range rep.Rewritten {
		fmt.Fprintf(w, "orbit: %s\n", p.Error())
	}
	for _, p := range rep.Broken {
		fmt.Fprintf(w, "orbit: %s; its entries are not indexed\n", p.Error())
	}
	var errs, warns []knowledge.Problem
	for _, p := range rep.Problems {
		if p.Severity == knowledge.SevError {
			errs = append(errs, p)
		} else {
			warns = append(warns, p)
		}
	}
	printErrors(w, errs, "", "(`orbit knowledge list --unusable` lists them)")
	printFirstWarning(w, warns, "")
}

// resolveDir names a directory given on the command line (relative to the
// working directory) as the index stores it.
func resolveDir(f *Factory, k *knowledge.Index, arg string) (string, error) {
	if filepath.IsAbs(arg) {
		return k.Rel(arg), nil
	}
	wd, err := f.Getwd()
	if err != nil {
		return "", err
	}
	return k.Rel(filepath.Join(wd, arg)), nil
}

// --- import ---

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
	Files     []knowledgeFileSummary    `json:"files"`
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
resolution}. An entry without a pattern is matched by full text; an invalid
regex, or one that matches any text, is reported with its file:line and
never used as a regex.

Then the autonomous_decisions of every TRACKS/*/metadata.json (TRACKS
defaults to DIR/../tracks) are appended to the decision journal as decisions
conductor-<track>-<n>, so that precedent search and trust reports see them
(see the README for the mapping). Idempotent: decisions already in the
journal are skipped.

Exit status 3 when a file could not be read, a regex is unusable, or a
decision was rejected or conflicted.`,
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

// knowledgeFileSummary is one knowledge file of the imported directory.
type knowledgeFileSummary struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"`
	Found     bool   `json:"found"`
	Shape     string `json:"shape"`
	Entries   int    `json:"entries"`
	Regex     int    `json:"regex"`
	NoPattern int    `json:"no_pattern"`
	Unusable  int    `json:"unusable"`
	Error     string `json:"error,omitempty"`
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
	var files []knowledgeFileSummary
	for _, name := range []string{knowledge.ErrorsFile, knowledge.PatternsFile} {
		s, err := summarizeFile(ctx, k, filepath.Join(dir, name))
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
		var n, app, skip, conf, rej int
		for _, t := range drep.Tracks {
			n += t.Decisions
			app += t.Appended
			skip += t.Skipped
			conf += t.Conflicts
			rej += t.Rejected
		}
		fmt.Fprintf(f.IO.Out, "%s: %d tracks, %d autonomous decisions: %d %s, %d already present, %d conflicts, %d rejected\n",
			tracks, len(drep.Tracks), n, app, verb, skip, conf, rej)
	}
	return fail
}

func summarizeFile(ctx context.Context, k *knowledge.Index, path string) (knowledgeFileSummary, error) {
	s := knowledgeFileSummary{Path: path, Kind: "patterns"}
	if strings.HasSuffix(path, knowledge.ErrorsFile) {
		s.Kind = "errors"
	}
	if _, err := os.Stat(k.Abs(path)); err != nil {
		return s, nil
	}
	s.Found = true
	st, err := k.Stats(ctx)
	if err != nil {
		return s, err
	}
	for _, fs := range st.Files {
		if fs.Path == path {
			s.Shape, s.Error = fs.Shape, fs.Error
		}
	}
	rs, err := k.List(ctx, knowledge.Filter{File: path})
	if err != nil {
		return s, err
	}
	for _, r := range rs {
		s.Entries++
		if r.Kind != knowledge.KindError {
			continue
		}
		switch r.PatternState {
		case knowledge.StateOK:
			s.Regex++
		case knowledge.StateNone:
			s.NoPattern++
		default:
			s.Unusable++
		}
	}
	return s, nil
}

// --- match ---

type knowledgeMatchOptions struct {
	f        *Factory
	Text     string
	Stdin    bool
	K        int
	NoRecord bool
	JSON     jsonFlag
}

func newCmdKnowledgeMatch(f *Factory, runF func(*knowledgeMatchOptions) error) *cobra.Command {
	opts := &knowledgeMatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   `match ["ERROR TEXT" | -]`,
		Short: "The known solutions for an error, best first",
		Long: `Find the known solutions for an error text (an argument, or stdin when the
argument is "-" or absent). First the entries whose regex matches the text,
compiled as the seed's lookup does (case-insensitive) but with Go's RE2, so
that no pattern can take more than linear time: the most specific regex
first (the most literal characters it requires), then the most seen, then file
order. Then, for entries without a usable regex (and patterns.md entries),
full-text relevance (bm25) of their symptom, problem and solution.

Each regex match is recorded in .claude/orbit-knowledge.jsonl and counts as
an occurrence of the entry (` + "`orbit knowledge export`" + ` writes the counts back to
errors.json); --no-record looks without counting.`,
		Example: `  orbit knowledge match "Error: Cannot find module 'react-dom/client'"
  npm run build 2>&1 | tail -20 | orbit knowledge match -k 3
  orbit knowledge match --json=id,solution,code_fix "$ERROR" --no-record`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return flagErrorf(`expected one ERROR TEXT (quote it) or "-", got %d arguments`, len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.K < 1 || opts.K > knowledge.MaxK {
				return flagErrorf("-k %d: must be between 1 and %d", opts.K, knowledge.MaxK)
			}
			if len(args) == 0 || args[0] == "-" {
				if len(args) == 0 && f.IO.InTTY {
					return flagErrorf(`give the ERROR TEXT as an argument, or pipe it to stdin`)
				}
				opts.Stdin = true
			} else {
				opts.Text = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return knowledgeMatchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.K, "k", "k", 5, "how many solutions")
	cmd.Flags().BoolVar(&opts.NoRecord, "no-record", false, "do not count the matches as occurrences")
	addJSONFlag(cmd, &opts.JSON, []knowledge.Match{})
	return cmd
}

func knowledgeMatchRun(ctx context.Context, opts *knowledgeMatchOptions) error {
	f := opts.f
	text := opts.Text
	if opts.Stdin {
		data, err := io.ReadAll(io.LimitReader(f.IO.In, knowledge.MaxTextBytes))
		if err != nil {
			return fmt.Errorf("read the error text from stdin: %w", err)
		}
		text = string(data)
	}
	if err := knowledge.CheckMatch(text, knowledge.MatchOptions{K: opts.K}); err != nil {
		return &flagError{err: err}
	}
	k, err := knowledgeSynced(ctx, f)
	if err != nil {
		return err
	}
	ms, err := k.Match(ctx, text, knowledge.MatchOptions{K: opts.K, Record: !opts.NoRecord})
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []knowledge.Match{}
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, ms)
	}
	if len(ms) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no known solution")
		return nil
	}
	t := &report.Table{Header: []string{"#", "MATCH", "SCORE", "ID", "WHERE", "SEEN", "SOLUTION"}}
	for _, m := range ms {
		t.Append(strconv.Itoa(m.Rank), m.Via, strconv.FormatFloat(m.Score, 'f', 2, 64), m.Key, fmt.Sprintf("%s:%d", m.File, m.Line),
			strconv.FormatInt(m.Occurrences, 10), m.Solution)
	}
	if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
		return err
	}
	if f.IO.OutTTY {
		for _, m := range ms {
			if strings.TrimSpace(m.CodeFix) != "" {
				fmt.Fprintf(f.IO.Out, "%s code fix:\n%s\n", m.Key, strings.TrimRight(m.CodeFix, "\n"))
			}
		}
	}
	return nil
}

// --- add ---

type knowledgeAddOptions struct {
	f    *Factory
	Dir  string
	Req  knowledge.AddRequest
	JSON jsonFlag
}

func newCmdKnowledgeAdd(f *Factory, runF func(*knowledgeAddOptions) error) *cobra.Command {
	opts := &knowledgeAddOptions{f: f}
	cmd := &cobra.Command{
		Use:   "add --pattern REGEX --solution TEXT",
		Short: "Add a known error to errors.json, in the file's own shape",
		Long: `Append an entry to errors.json (of --dir, default conductor/knowledge/) with
the next id (err-NNN after the highest in the file), laid out in the file's
own shape (the template's fields, the loop-fixer's, or the free-form
{id, date, track, symptom, resolution} with the pattern added) and
indentation. The rewrite is atomic and leaves every other byte as it was;
a missing file is created as the retrospective template.

Refused (exit 2, nothing written): a regex RE2 cannot compile (lookaround,
backreferences), one that matches any text, and a pattern the file already
holds (compared case-insensitively, as patterns match).`,
		Example: `  orbit knowledge add --pattern "Cannot find module '(.+)'" --solution "Install the missing module" \
      --code-fix "npm install <module>" --category node --track auth-flow_20260115
  orbit knowledge add --pattern "NEXT_REDIRECT" --solution "Re-throw NEXT_REDIRECT from catch blocks" --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("pattern") {
				return flagErrorf("--pattern is required")
			}
			if !cmd.Flags().Changed("solution") {
				return flagErrorf("--solution is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return knowledgeAddRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Req.Pattern, "pattern", "", "the regex that recognises the error (RE2, case-insensitive)")
	cmd.Flags().StringVar(&opts.Req.Solution, "solution", "", "how to fix it")
	cmd.Flags().StringVar(&opts.Req.CodeFix, "code-fix", "", "a code snippet of the fix")
	cmd.Flags().StringVar(&opts.Req.Category, "category", "", "e.g. typescript, react, supabase")
	cmd.Flags().StringVar(&opts.Req.Track, "track", "", "the track it was discovered in")
	cmd.Flags().StringVar(&opts.Req.Problem, "problem", "", "what causes the error")
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "knowledge directory (default: conductor/knowledge)")
	addJSONFlag(cmd, &opts.JSON, knowledge.Added{})
	return cmd
}

func knowledgeAddRun(ctx context.Context, opts *knowledgeAddOptions) error {
	f := opts.f
	k, err := knowledgeIndex(ctx, f)
	if err != nil {
		return err
	}
	req := opts.Req
	if opts.Dir != "" {
		if req.Dir, err = resolveDir(f, k, opts.Dir); err != nil {
			return err
		}
	}
	added, err := k.Add(ctx, req)
	var re *knowledge.RequestError
	if errors.As(err, &re) {
		return flagErrorf("%s", re.Msg)
	}
	printKnowledgeSync(f.IO.ErrOut, added.Sync)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, added)
	}
	verb := "added"
	if added.Created {
		verb = "created the registry with"
	}
	fmt.Fprintf(f.IO.Out, "%s %s at %s:%d (%s shape)\n", verb, added.ID, added.File, added.Line, added.Shape)
	return nil
}

// --- export ---

type knowledgeExportOptions struct {
	f      *Factory
	DryRun bool
	JSON   jsonFlag
}

func newCmdKnowledgeExport(f *Factory, runF func(*knowledgeExportOptions) error) *cobra.Command {
	opts := &knowledgeExportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the match counts back to errors.json (occurrences, last_seen)",
		Long: `Write the matches recorded since the last export into each indexed
errors.json: an entry's occurrences grows by its matches and last_seen
becomes the day of the latest. errors.json is the one file orbit rewrites
(seed 004 treats it as a registry): atomically, changing only those values
(a missing field is added after the entry's last one, laid out like it), so
every other field, the key order, the indentation and the file's shape stay.
The file as it was is kept beside it as errors.json.bak. A file without new
matches is not touched: byte-identical.`,
		Example: `  orbit knowledge export
  orbit knowledge export --dry-run
  orbit knowledge export --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return knowledgeExportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would change, write nothing")
	addJSONFlag(cmd, &opts.JSON, knowledge.ExportReport{})
	return cmd
}

func knowledgeExportRun(ctx context.Context, opts *knowledgeExportOptions) error {
	f := opts.f
	k, err := knowledgeIndex(ctx, f)
	if err != nil {
		return err
	}
	rep, err := k.Export(ctx, knowledge.ExportOptions{DryRun: opts.DryRun})
	printKnowledgeSync(f.IO.ErrOut, rep.Sync)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, rep)
	}
	if len(rep.Files) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no errors.json indexed (run `orbit knowledge import`)")
		return nil
	}
	for _, ef := range rep.Files {
		switch {
		case ef.Error != "":
			fmt.Fprintf(f.IO.Out, "%s: not exported: the file cannot be read (its matches wait for the next export)\n", ef.Path)
		case ef.Hits == 0 && ef.Orphans == 0:
			fmt.Fprintf(f.IO.Out, "%s: unchanged (no matches since the last export)\n", ef.Path)
		case opts.DryRun:
			fmt.Fprintf(f.IO.Out, "%s: would update %d entries with %d matches\n", ef.Path, ef.Updated, ef.Hits)
		case ef.Unchanged:
			fmt.Fprintf(f.IO.Out, "%s: unchanged\n", ef.Path)
		default:
			fmt.Fprintf(f.IO.Out, "%s: updated %d entries with %d matches (backup: %s)\n", ef.Path, ef.Updated, ef.Hits, ef.Backup)
		}
		if ef.Orphans > 0 {
			fmt.Fprintf(f.IO.ErrOut, "orbit: %s: %d matches of entries no longer in the file were dropped\n", ef.Path, ef.Orphans)
		}
	}
	return nil
}

// --- list ---

type knowledgeListOptions struct {
	f            *Factory
	Kind         string
	Unusable     bool
	NeverMatched bool
	JSON         jsonFlag
}

func newCmdKnowledgeList(f *Factory, runF func(*knowledgeListOptions) error) *cobra.Command {
	opts := &knowledgeListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the indexed known errors and patterns",
		Long: `List the entries of the indexed knowledge files in file order: their id,
where they are, whether their regex is usable (ok; none: full-text only;
invalid; matches_all), how often they were seen (the file's occurrences
plus the matches recorded since the last export) and their solution.`,
		Example: `  orbit knowledge list
  orbit knowledge list --kind error --unusable
  orbit knowledge list --never-matched --json=id,file,line,pattern`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("kind", opts.Kind, []string{knowledge.KindError, knowledge.KindPattern}); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return knowledgeListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Kind, "kind", "", "only error (errors.json) or pattern (patterns.md) entries")
	cmd.Flags().BoolVar(&opts.Unusable, "unusable", false, "only error entries without a usable regex")
	cmd.Flags().BoolVar(&opts.NeverMatched, "never-matched", false, "only error entries orbit never matched")
	addJSONFlag(cmd, &opts.JSON, []knowledge.Record{})
	return cmd
}

func knowledgeListRun(ctx context.Context, opts *knowledgeListOptions) error {
	f := opts.f
	k, err := knowledgeSynced(ctx, f)
	if err != nil {
		return err
	}
	rs, err := k.List(ctx, knowledge.Filter{Kind: opts.Kind, Unusable: opts.Unusable, NeverMatched: opts.NeverMatched})
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []knowledge.Record{}
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, rs)
	}
	if len(rs) == 0 {
		if f.IO.OutTTY {
			fmt.Fprintln(f.IO.Out, "no entries")
		}
		return nil
	}
	t := &report.Table{Header: []string{"ID", "WHERE", "KIND", "REGEX", "SEEN", "LAST SEEN", "PATTERN / NAME", "SOLUTION"}}
	for _, r := range rs {
		what := r.Pattern
		if what == "" {
			what = r.Name
		}
		t.Append(r.Key, fmt.Sprintf("%s:%d", r.File, r.Line), r.Kind, r.PatternState, strconv.FormatInt(r.Occurrences, 10), r.LastSeen, what, r.Solution)
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}

// --- stats ---

type knowledgeStatsOptions struct {
	f    *Factory
	JSON jsonFlag
}

func newCmdKnowledgeStats(f *Factory, runF func(*knowledgeStatsOptions) error) *cobra.Command {
	opts := &knowledgeStatsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "How much the knowledge is used, and which entries cannot work",
		Long: `Summarise the indexed knowledge: entries per kind, error entries with a
usable regex, without a pattern (full-text only), with an invalid regex or
one that matches any text; matches recorded (and not exported yet); the
entries never matched, the unusable ones with their file:line and why, and
the most matched.`,
		Example: `  orbit knowledge stats
  orbit knowledge stats --json=never_matched,unusable`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return knowledgeStatsRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, knowledge.Stats{})
	return cmd
}

func knowledgeStatsRun(ctx context.Context, opts *knowledgeStatsOptions) error {
	f := opts.f
	k, err := knowledgeSynced(ctx, f)
	if err != nil {
		return err
	}
	s, err := k.Stats(ctx)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		return opts.JSON.write(f.IO.Out, s)
	}
	n := func(v int) string { return strconv.Itoa(v) }
	t := &report.Table{Header: []string{"FIGURE", "VALUE"}}
	t.Append("entries", n(s.Entries))
	t.Append("error entries", n(s.Errors))
	t.Append("pattern entries", n(s.Patterns))
	t.Append("errors with a usable regex", n(s.Regex))
	t.Append("errors without a pattern (full-text only)", n(s.NoPattern))
	t.Append("errors with an invalid regex", n(s.Invalid))
	t.Append("errors whose regex matches any text", n(s.MatchesAll))
	t.Append("matches recorded", strconv.FormatInt(s.Hits, 10))
	t.Append("matches not exported yet", strconv.FormatInt(s.Pending, 10))
	t.Append("occurrences (files + not exported)", strconv.FormatInt(s.Occurrences, 10))
	t.Append("errors never matched", n(len(s.NeverMatched)))
	if err := t.Render(f.IO.Out, f.IO.OutTTY); err != nil {
		return err
	}
	if !f.IO.OutTTY {
		return nil
	}
	if len(s.Unusable) > 0 {
		fmt.Fprintln(f.IO.Out, "\nNo usable regex:")
		u := &report.Table{Header: []string{"ID", "WHERE", "STATE", "WHY"}, MaxCell: 100}
		for _, b := range s.Unusable {
			u.Append(b.ID, fmt.Sprintf("%s:%d", b.File, b.Line), b.State, b.Why)
		}
		if err := u.Render(f.IO.Out, true); err != nil {
			return err
		}
	}
	if len(s.Top) > 0 {
		fmt.Fprintln(f.IO.Out, "\nMost matched:")
		u := &report.Table{Header: []string{"ID", "WHERE", "MATCHES", "OCCURRENCES"}}
		for _, b := range s.Top {
			u.Append(b.ID, fmt.Sprintf("%s:%d", b.File, b.Line), strconv.FormatInt(b.Hits, 10), strconv.FormatInt(b.Occurrences, 10))
		}
		if err := u.Render(f.IO.Out, true); err != nil {
			return err
		}
	}
	var broken []string
	for _, fs := range s.Files {
		if fs.Error != "" {
			broken = append(broken, fs.Error)
		}
	}
	for _, b := range broken {
		fmt.Fprintf(f.IO.Out, "\nunreadable: %s\n", b)
	}
	return nil
}
