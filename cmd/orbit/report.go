package main

import (
	"github.com/spf13/cobra"
)

func newCmdReport(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Render the loop's progress file and session summary",
		Example: `  orbit report progress --write
  orbit report summary`,
		Args: noArgs,
	}
	cmd.AddCommand(newCmdReportProgress(f, nil), newCmdReportSummary(f, nil))
	return cmd
}

type reportOptions struct {
	f     *Factory
	Write bool
	JSON  jsonFlag
}
