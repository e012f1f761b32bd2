package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
)

type syncOptions struct {
	f    *Factory
	JSON jsonFlag
}

// syncResult is what `orbit sync --json` and `orbit rebuild --json` print.
type syncResult struct {
	Decisions int `json:"decisions_added"`
	Events    int `json:"events_added"`
	// Added counts the records added from each kind of file, every kind
	// followed named.
	Added     map[string]int    `json:"records_added"`
	Problems  []journal.Problem `json:"problems"`
	Rewritten []journal.Problem `json:"rewritten"`
	Recovered []string          `json:"recovered_files"`
	Index     db.Counts         `json:"index"`
}

func newCmdSync(f *Factory, runF func(*syncOptions) error) *cobra.Command {
	opts := &syncOptions{f: f}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Bring the index up to date with the journal files",
		Long: `Read what was appended to the journal files since the last sync and index it:
the decision and retrograde journals, and orbit's own loop events and
knowledge journals. An unchanged file costs one stat; a grown one, only its
new bytes. Every command syncs first, so this is rarely needed by hand: use
it after appending lines with other tools, or to see what a sync finds.

A file whose past changed (edited, truncated, replaced) is reported with its
first differing line, the records the index held from there on are saved to
.claude/orbit-recovered-*.jsonl, and the index is rebuilt from the file.`,
		Example: `  echo '{"id":"iter-9-1",...}' >> .claude/ceo-loop-decisions.jsonl && orbit sync
  orbit sync --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return syncRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, syncResult{})
	return cmd
}

func syncRun(ctx context.Context, opts *syncOptions) error {
	f := opts.f
	ix, err := f.Index(ctx)
	if err != nil {
		return err
	}
	rep, err := ix.Sync(ctx, journal.SyncOptions{Progress: f.progress("sync")})
	if !opts.JSON.on {
		printSyncReport(f.IO.ErrOut, rep)
	}
	if err != nil {
		return err
	}
	return printSyncResult(ctx, f, ix, rep, &opts.JSON, "synced")
}

func printSyncResult(ctx context.Context, f *Factory, ix *journal.Index, rep journal.SyncReport, j *jsonFlag, verb string) error {
	counts, err := ix.Store.Counts(ctx)
	if err != nil {
		return err
	}
	if j.on {
		res := syncResult{Decisions: rep.Decisions, Events: rep.Events, Added: map[string]int{}, Problems: rep.Problems, Rewritten: rep.Rewritten,
			Recovered: rep.Recovered, Index: counts}
		for _, spec := range ix.Files {
			res.Added[spec.Kind.Name()] = rep.Added[spec.Kind.Name()]
		}
		if res.Problems == nil {
			res.Problems = []journal.Problem{}
		}
		if res.Rewritten == nil {
			res.Rewritten = []journal.Problem{}
		}
		if res.Recovered == nil {
			res.Recovered = []string{}
		}
		return j.write(f.IO.Out, res)
	}
	others := ""
	for _, spec := range ix.Files {
		if k := spec.Kind.Name(); k != journal.KindDecisions && k != journal.KindRetro && rep.Added[k] > 0 {
			others += fmt.Sprintf(", +%d %s records", rep.Added[k], k)
		}
	}
	fmt.Fprintf(f.IO.Out, "%s: +%s, +%s%s, %s\n", verb, count(rep.Decisions, "decision", "decisions"),
		count(rep.Events, "outcome event", "outcome events"), others, count(rep.Errors(), "new rejected line", "new rejected lines"))
	fmt.Fprintf(f.IO.Out, "index: %s, %s, %s, %s\n", count(counts.Decisions, "decision", "decisions"),
		count(counts.Events, "outcome event", "outcome events"), count(counts.Rejected, "rejected line", "rejected lines"),
		count(counts.Warnings, "warning", "warnings"))
	return nil
}
