package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/project"
)

// extraCommands are commands only some builds have (`make man`'s).
var extraCommands []func(*Factory) *cobra.Command

func newCmdRoot(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "orbit <command>",
		Short: "The governance journal of autonomous agent loops",
		Long: `orbit records every decision an agent loop makes in an append-only journal
(.claude/ceo-loop-decisions.jsonl), learns later whether each was right, and
answers what the loop needs before its next decision.

The journal files are the truth; .claude/orbit.db is an index derived from
them, rebuilt whenever it is missing or unreadable.`,
		Example: `  orbit init                      # start a project here
  orbit import old-journal.jsonl  # bring in an existing journal
  orbit log --limit 10            # the latest decisions
  orbit show iter-6-2             # one decision, its outcome history and precedents
  orbit verify                    # journal and index agree?
  orbit demo                      # everything, on sample data`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
	}
	cmd.PersistentFlags().StringVar(&f.RootFlag, "root", "", "project root (default: nearest directory up holding .orbit/ or a .claude/ with orbit's files; env ORBIT_ROOT)")
	cmd.PersistentFlags().StringVar(&f.DBFlag, "db", "", "index path (default: <root>/.claude/orbit.db; env ORBIT_DB)")
	cmd.PersistentFlags().StringArrayVar(&f.SafeDirs, "safe-directory", nil, "trust this project root though another user owns it or everyone may write it (repeatable, * for all; env "+project.SafeDirectoryEnv+")")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &flagError{err: err} })
	cmd.SuggestionsMinimumDistance = 2
	cmd.AddCommand(
		newCmdInit(f, nil),
		newCmdDecide(f, nil),
		newCmdRetro(f, nil),
		newCmdShow(f, nil),
		newCmdVoid(f, nil),
		newCmdPolicy(f, nil),
		newCmdPrecedent(f, nil),
		newCmdTrust(f, nil),
		newCmdKnowledge(f),
		newCmdLoop(f),
		newCmdHook(f),
		newCmdPrime(f, nil),
		newCmdMCP(f, nil),
		newCmdDoctor(f, nil),
		newCmdServe(f, nil),
		newCmdRemote(f),
		newCmdPush(f, nil),
		newCmdStale(f, nil),
		newCmdReport(f),
		newCmdImport(f, nil),
		newCmdExport(f, nil),
		newCmdLog(f, nil),
		newCmdSync(f, nil),
		newCmdRebuild(f, nil),
		newCmdVerify(f, nil),
		newCmdMigrate(f),
		newCmdDemo(f, nil),
		newCmdVersion(f, nil),
	)
	for _, extra := range extraCommands {
		cmd.AddCommand(extra(f))
	}
	if f.IO != nil {
		// The completion commands take their writer when they are made.
		cmd.SetOut(f.IO.Out)
		cmd.SetErr(f.IO.ErrOut)
	}
	cmd.InitDefaultCompletionCmd()
	registerValueCompletions(cmd)
	requireSubcommands(cmd)
	return cmd
}

// requireSubcommands makes every command that groups subcommands refuse an
// unknown one, at every level of the tree: a usage error (exit 2) with
// "did you mean", nothing on stdout. Cobra's default for a group without a
// Run of its own is to print its help on stdout and exit 0, which, for a
// command registered as a hook (`orbit hook stp`), is unparseable output
// and a loop that dies silently. The group itself, run bare, still prints
// its help. The help command refuses an unknown topic the same way.
func requireSubcommands(cmd *cobra.Command) {
	if !cmd.HasSubCommands() {
		return
	}
	cmd.Args = unknownSubcommand
	if cmd.Run == nil && cmd.RunE == nil {
		cmd.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if cmd.Parent() == nil {
		cmd.SetHelpCommand(newCmdHelp())
	}
	for _, c := range cmd.Commands() {
		requireSubcommands(c)
	}
}

// unknownSubcommand is the Args of a command group: any argument is a
// subcommand it does not have.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return flagErrorf("%s", msg)
}

// version is the module version the binary was built from.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return flagErrorf("expected %s, got %d arguments", what, len(args))
		}
		return nil
	}
}

// noArgs refuses positional arguments with a usage error.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return flagErrorf("unexpected argument %q", args[0])
	}
	return nil
}

// oneOf checks a flag value against its allowed values.
func oneOf(flag, v string, allowed []string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return flagErrorf("--%s %q is not allowed (allowed: %s)", flag, v, strings.Join(allowed, ", "))
}
