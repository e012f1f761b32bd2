package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/remote"
	"github.com/orbit-loop/orbit/report"
)

type pushOptions struct {
	f         *Factory
	Remote    string
	TokenFile string
	Watch     bool
	Interval  time.Duration
	Batch     int64
	JSON      jsonFlag
}

func newCmdPush(f *Factory, runF func(*pushOptions) error) *cobra.Command {
	opts := &pushOptions{f: f}
	cmd := &cobra.Command{
		Use:   "push [REMOTE]",
		Short: "Ship the journals' new lines to a hub",
		Long: `Ship every journal line appended since the hub last acknowledged it: the
decision journal, the retrograde journal, the loop event journal and the
knowledge journal, each from the byte offset the hub holds, in batches the
hub stores in one transaction each. A repeated or interrupted push never
stores a line twice nor loses one. What stays on this machine: the state
file, the pending queue, the progress file, the index, settings.

REMOTE is a name from orbit remote list (optional when there is one). The
token comes from --token-file (mode 0600), else ORBIT_TOKEN, else the
remote's own --token-file; never from the command line.

A journal whose past changed since it was pushed (a line edited, the file
cut shorter or replaced) is held back and reported (exit status 3): restore
its past to push it again. A last line still being written waits.

With --watch, it pushes again whenever a journal grows, until interrupted;
a hub that is down is retried with backoff. Hooks never push, so a hub that
is down never slows or fails one.`,
		Example: `  orbit push
  orbit push hub --token-file ~/.config/orbit/hub.token
  ORBIT_TOKEN=… orbit push --watch
  orbit push --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return flagErrorf("expected at most one REMOTE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Remote = args[0]
			}
			if opts.Batch < 1024 || opts.Batch > hub.MaxBatch {
				return flagErrorf("--batch-bytes %d: must be from 1024 to %d", opts.Batch, hub.MaxBatch)
			}
			if opts.Interval < 100*time.Millisecond {
				return flagErrorf("--interval %s: must be at least 100ms", opts.Interval)
			}
			if runF != nil {
				return runF(opts)
			}
			return pushRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.TokenFile, "token-file", "", "read the token from this file (mode 0600); else ORBIT_TOKEN")
	cmd.Flags().BoolVar(&opts.Watch, "watch", false, "keep pushing as the journals grow, until interrupted")
	cmd.Flags().DurationVar(&opts.Interval, "interval", 2*time.Second, "with --watch, how often to look for new lines")
	cmd.Flags().Int64Var(&opts.Batch, "batch-bytes", 1<<20, "how many bytes of whole lines one batch carries (the hub stores each in one transaction)")
	addJSONFlag(cmd, &opts.JSON, []string{"project", "remote", "files"})
	return cmd
}

// pushTarget is what a push needs, found once.
type pushTarget struct {
	proj   project.Project
	id     project.Identity
	remote remote.Remote
	client *remote.Client
}

func pushTargetOf(f *Factory, name, tokenFile string) (pushTarget, error) {
	var t pushTarget
	var err error
	if t.proj, err = f.Project(); err != nil {
		return t, err
	}
	if t.id, err = t.proj.ReadIdentity(); err != nil {
		return t, err
	}
	if t.remote, err = remote.Get(t.proj, name); err != nil {
		return t, err
	}
	tok, err := remote.Token(t.remote, tokenFile, f.Getenv)
	if err != nil {
		return t, err
	}
	t.client = remote.NewClient(t.remote.URL, tok)
	return t, nil
}

func pushRun(ctx context.Context, opts *pushOptions) error {
	f := opts.f
	t, err := pushTargetOf(f, opts.Remote, opts.TokenFile)
	if err != nil {
		return err
	}
	if opts.Watch {
		return pushWatch(ctx, opts, t)
	}
	rep, err := pushOnce(ctx, f, t, opts.Batch)
	if err != nil {
		return err
	}
	if opts.JSON.on {
		if err := opts.JSON.write(f.IO.Out, rep); err != nil {
			return err
		}
	} else if err := renderPush(f, rep); err != nil {
		return err
	}
	if held := rep.Held(); len(held) > 0 {
		for _, h := range held {
			fmt.Fprintf(f.IO.ErrOut, "orbit: %s not pushed: %s\n", h.Path, h.Held)
		}
		return &findingsError{}
	}
	return nil
}

// pushOnce syncs the local index first, so that a journal whose past the
// follower finds rewritten now is held back, then pushes.
func pushOnce(ctx context.Context, f *Factory, t pushTarget, batch int64) (remote.Report, error) {
	skip := map[string]string{}
	ix, err := f.Index(ctx)
	if err != nil {
		return remote.Report{}, err
	}
	srep, err := ix.Sync(ctx, journal.SyncOptions{})
	printSyncReport(f.IO.ErrOut, srep)
	if err != nil {
		return remote.Report{}, err
	}
	for _, p := range srep.Rewritten {
		for _, j := range hub.Journals {
			if j.Path == p.File {
				skip[j.Kind] = "its past was rewritten (" + p.Message + "); push it once it is restored"
			}
		}
	}
	rep, err := remote.Push(ctx, t.client, t.proj, t.id, remote.PushOptions{Skip: skip, BatchBytes: batch})
	rep.Remote = t.remote.Name
	if err != nil {
		return rep, fmt.Errorf("push to %s (%s): %w", t.remote.Name, t.remote.URL, err)
	}
	return rep, nil
}

func renderPush(f *Factory, rep remote.Report) error {
	t := &report.Table{Header: []string{"FILE", "LINES", "BYTES", "DECISIONS", "OUTCOMES", "REJECTED", "HUB HOLDS", "NOTE"}}
	for _, fr := range rep.Files {
		note := ""
		switch {
		case fr.Held != "":
			note = "held back"
		case fr.Pending:
			note = "last line still being written"
		}
		t.Append(fr.Path, strconv.Itoa(fr.Chunks), strconv.FormatInt(fr.Bytes, 10), strconv.Itoa(fr.Decisions), strconv.Itoa(fr.Events),
			strconv.Itoa(fr.Rejected), strconv.FormatInt(fr.Offset, 10), note)
	}
	return t.Render(f.IO.Out, f.IO.OutTTY)
}

// pushWatch pushes whenever a journal may have grown, until ctx is done.
// A hub that does not answer is retried with backoff (said once per
// outage); held journals are said once until they change.
func pushWatch(ctx context.Context, opts *pushOptions, t pushTarget) error {
	f := opts.f
	wait := opts.Interval
	down := false
	said := map[string]string{}
	fmt.Fprintf(f.IO.ErrOut, "orbit push --watch: %s to %s (%s); Ctrl-C to stop\n", t.id.ID, t.remote.Name, t.remote.URL)
	var last string // the journals' sizes and times at the last complete push
	for {
		sig := journalsSignature(t.proj)
		if sig == last && !down {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			continue
		}
		rep, err := pushOnce(ctx, f, t, opts.Batch)
		switch {
		case errors.Is(err, context.Canceled) || ctx.Err() != nil:
			return nil
		case err != nil && remote.IsUnreachable(err):
			if !down {
				fmt.Fprintf(f.IO.ErrOut, "orbit: %v; retrying\n", err)
			}
			down = true
			wait = min(wait*2, time.Minute)
		case err != nil:
			return err
		default:
			if down {
				fmt.Fprintf(f.IO.ErrOut, "orbit push --watch: %s answers again\n", t.remote.URL)
			}
			down, wait, last = false, opts.Interval, sig
			for _, fr := range rep.Files {
				if fr.Chunks > 0 {
					fmt.Fprintf(f.IO.Out, "%s\t%s\t+%d lines\t%d bytes on the hub\n", f.Now().UTC().Format(time.RFC3339), fr.Path, fr.Chunks, fr.Offset)
				}
				if fr.Held != "" && said[fr.Kind] != fr.Held {
					fmt.Fprintf(f.IO.ErrOut, "orbit: %s not pushed: %s\n", fr.Path, fr.Held)
				}
				said[fr.Kind] = fr.Held
				if fr.Pending {
					last = "" // look again: the line will be completed
				}
			}
		}
		f.Close()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// journalsSignature says how big and how recent each journal is: when it
// has not changed, there is nothing to push.
func journalsSignature(p project.Project) string {
	var b []byte
	for _, j := range hub.Journals {
		if fi, err := os.Lstat(p.Path(j.Path)); err == nil {
			b = fmt.Appendf(b, "%s:%d:%d;", j.Kind, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return string(b)
}
