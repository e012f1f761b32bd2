package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/journal"
)

type verifyOptions struct {
	f    *Factory
	JSON jsonFlag
	All  bool
}

// verifyOutput is what `orbit verify --json` prints.
type verifyOutput struct {
	OK       bool                `json:"ok"`
	Files    []journal.FileCheck `json:"files"`
	Findings []journal.Problem   `json:"findings"`
}

func newCmdVerify(f *Factory, runF func(*verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{f: f}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check that the journal files and the index agree",
		Long: `Read every journal file in full (the decision and retrograde journals, orbit's
loop events and knowledge journals) and compare it with the index, line by line:
the same records with the same bytes in the same order (the append-only
promise), rejected lines, duplicate ids, torn last lines, and lines not yet
synced. Each finding is named by file:line. The journal files are never
changed; when a file's past has changed, verify marks it in the index so
that the next sync compares it in full and rebuilds it.

Exit status 0 when journal and index agree (warnings and torn fragments
allowed), 3 when there is any other finding.`,
		Example: `  orbit verify
  orbit verify --all          # list every warning, not the first 20
  orbit verify --json=ok,findings`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return verifyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "list every warning")
	addJSONFlag(cmd, &opts.JSON, verifyOutput{})
	return cmd
}

// maxWarnings bounds the warnings verify lists without --all.
const maxWarnings = 20

func verifyRun(ctx context.Context, opts *verifyOptions) error {
	f := opts.f
	// No sync first: a sync would rebuild a rewritten file and hide it.
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	rep, err := ix.Verify(ctx)
	if err != nil {
		return err
	}
	problems := 0
	for _, p := range rep.Findings {
		if !p.Benign() {
			problems++
		}
	}
	fail := func() error {
		if problems == 0 {
			return nil
		}
		return &findingsError{msg: fmt.Sprintf("verify: %d %s", problems, journal.Plural(problems, "problem", "problems"))}
	}
	if opts.JSON.on {
		findings := rep.Findings
		if findings == nil {
			findings = []journal.Problem{}
		}
		if err := opts.JSON.write(f.IO.Out, verifyOutput{rep.OK(), rep.Files, findings}); err != nil {
			return err
		}
		return fail()
	}
	out := f.IO.Out
	for _, fc := range rep.Files {
		fmt.Fprintf(out, "%s: %d records, %d indexed, %d rejected lines", fc.Path, fc.Records, fc.Indexed, fc.Rejected)
		if fc.Unsynced > 0 {
			fmt.Fprintf(out, ", %d not yet synced", fc.Unsynced)
		}
		fmt.Fprintln(out)
	}
	var warns []journal.Problem
	for _, p := range rep.Findings {
		if p.Severity == journal.SevWarning {
			warns = append(warns, p)
			continue
		}
		fmt.Fprintln(out, p.Error())
	}
	for i, p := range warns {
		if i == maxWarnings && !opts.All {
			fmt.Fprintf(out, "... and %d more warnings: %s (--all lists them)\n", len(warns)-maxWarnings, countByCode(warns[maxWarnings:]))
			break
		}
		fmt.Fprintln(out, p.Error())
	}
	if problems == 0 {
		fmt.Fprintf(out, "verify: journal and index agree (%d %s)\n", len(warns), journal.Plural(len(warns), "warning", "warnings"))
	}
	return fail()
}

// countByCode summarises problems as "code: n, code: n".
func countByCode(ps []journal.Problem) string {
	n := map[string]int{}
	for _, p := range ps {
		n[p.Code]++
	}
	codes := make([]string, 0, len(n))
	for c := range n {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s: %d", c, n[c])
	}
	return strings.Join(parts, ", ")
}
