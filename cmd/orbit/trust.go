package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/trust"
)

type trustOptions struct {
	f        *Factory
	Format   string
	Since    string
	Category string
	Window   int
	Bins     int
	Chart    string
	JSON     jsonFlag
}

func newCmdTrust(f *Factory, runF func(*trustOptions) error) *cobra.Command {
	opts := &trustOptions{f: f}
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "How accurate the loop has been, and whether its confidence means anything",
		Long: `Report the loop's accuracy over its scored decisions (current outcome CORRECT
or INCORRECT; the latest outcome event wins), the last 20 and last 10, the
trust level and the alert of the ORBIT CEO loop's rules, broken down by category, tier,
depth and requestor, and per iteration as a trend.

Calibration: how well stated confidence predicts the outcome. Brier score and
its reliability / resolution / uncertainty decomposition, the expected
calibration error over --bins confidence bins, and a reliability table. Every
accuracy has its 95% Wilson interval, so a figure that rests on 4 decisions
shows it.

Without a filter the report reads only derived totals the index keeps up to
date, whatever the size of the journal. --chart draws accuracy over
iterations against the 80%/90% thresholds and the reliability diagram.`,
		Example: `  orbit trust
  orbit trust --json=level,alert,last20
  orbit trust --category architecture --since 2026-03-01
  orbit trust --window 100 --bins 5 --format md
  orbit trust --chart trust.svg`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("format", opts.Format, []string{"text", "md"}); err != nil {
				return err
			}
			if err := oneOf("category", opts.Category, journal.Categories); err != nil {
				return err
			}
			if opts.Window < 0 {
				return flagErrorf("--window %d: must be 0 (all) or more", opts.Window)
			}
			if opts.Bins < 1 || opts.Bins > 100 {
				return flagErrorf("--bins %d: must be between 1 and 100", opts.Bins)
			}
			if opts.Chart != "" && !slices.Contains(report.ChartFormats, strings.ToLower(filepath.Ext(opts.Chart))) {
				return flagErrorf("--chart %s: want a file ending in %s", opts.Chart, strings.Join(report.ChartFormats, " or "))
			}
			if _, err := parseSince(opts.Since, f.Now()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return trustRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "text or md")
	cmd.Flags().StringVar(&opts.Since, "since", "", "only decisions at or after this time: RFC 3339, a date (2006-01-02, midnight UTC), or a duration ago (72h, 7d, 2w)")
	cmd.Flags().StringVar(&opts.Category, "category", "", "only this category")
	cmd.Flags().IntVar(&opts.Window, "window", 0, "only the last N scored decisions")
	cmd.Flags().IntVar(&opts.Bins, "bins", 10, "confidence bins for calibration")
	cmd.Flags().StringVar(&opts.Chart, "chart", "", "also draw the charts to this .svg or .png file")
	addJSONFlag(cmd, &opts.JSON, trust.Report{})
	return cmd
}

// parseSince reads --since: RFC 3339, a date (YYYY-MM-DD, UTC), or a
// duration before now. "" is no limit (0).
func parseSince(s string, now time.Time) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixNano(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UnixNano(), nil
	}
	if d, err := parseDuration(s); err == nil && d > 0 {
		return now.Add(-d).UnixNano(), nil
	}
	return 0, flagErrorf("--since %q: want an RFC 3339 time, a date (2006-01-02, UTC) or a duration ago (72h, 7d, 2w)", s)
}

func trustRun(ctx context.Context, opts *trustOptions) error {
	f := opts.f
	ix, err := f.Synced(ctx)
	if err != nil {
		return err
	}
	since, _ := parseSince(opts.Since, f.Now())
	r, err := trust.Load(ctx, ix.Store, trust.Options{Filter: trust.Filter{SinceNS: since, Category: opts.Category, Window: opts.Window}, Bins: opts.Bins})
	if err != nil {
		return err
	}
	if opts.Chart != "" {
		out, err := createOutput(ix.Project.Root, opts.Chart)
		if err != nil {
			return err
		}
		defer out.Abort()
		if err := report.TrustChart(out, opts.Chart, r); err != nil {
			return err
		}
		if err := out.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %s\n", opts.Chart)
	}
	switch {
	case opts.JSON.on:
		return opts.JSON.write(f.IO.Out, r)
	case opts.Format == "md":
		return report.TrustMarkdown(f.IO.Out, r)
	default:
		return report.TrustText(f.IO.Out, r, f.IO.OutTTY)
	}
}
