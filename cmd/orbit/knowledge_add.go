package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
)

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
