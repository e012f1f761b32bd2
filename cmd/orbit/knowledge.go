package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/knowledge"
)

func newCmdKnowledge(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "knowledge <command>",
		Short: "Conductor's error registry and patterns: matched, counted, kept honest",
		Long: `Index Conductor's knowledge layer: conductor/knowledge/errors.json,
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
