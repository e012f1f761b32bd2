package main

import (
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/report"
)

// jsonFlag is the --json flag every read command shares: `--json` prints
// every field, `--json=a,b` or `--json a,b` only those. The names allowed
// are the fields of the types the command prints (report.Fields), so the
// list cannot drift from the output; an unknown name is refused before the
// command runs.
type jsonFlag struct {
	on      bool
	fields  []string
	allowed []string
}

func (j *jsonFlag) String() string { return strings.Join(j.fields, ",") }
func (j *jsonFlag) Type() string   { return "fields" }

func (j *jsonFlag) Set(v string) error {
	j.on = true
	j.fields = nil
	if v == "" || v == "*" {
		return nil
	}
	for _, name := range strings.Split(v, ",") {
		j.fields = append(j.fields, strings.TrimSpace(name))
	}
	return report.CheckFields(j.fields, j.allowed)
}

// addJSONFlag registers --json on cmd. printed are (zero) values of what the
// command prints, one per mode that prints something else (a list prints
// its element's fields).
func addJSONFlag(cmd *cobra.Command, j *jsonFlag, printed ...any) {
	for _, v := range printed {
		for _, name := range report.Fields(v) {
			if !slices.Contains(j.allowed, name) {
				j.allowed = append(j.allowed, name)
			}
		}
	}
	cmd.Flags().Var(j, "json", "print JSON; --json FIELDS or --json=FIELDS keeps only those fields ("+strings.Join(j.allowed, ", ")+")")
	cmd.Flags().Lookup("json").NoOptDefVal = "*"
}

// write prints v in its JSON form (report.WriteJSON), keeping only the
// selected fields; a field that what is printed does not have (another
// mode's) is a usage error.
func (j *jsonFlag) write(w io.Writer, v any) error {
	if have := report.Fields(v); have != nil {
		for _, f := range j.fields {
			if !slices.Contains(have, f) {
				return flagErrorf("--json: %q is not a field of what this prints (fields: %s)", f, strings.Join(have, ", "))
			}
		}
	}
	return report.WriteJSON(w, v, j.fields)
}

// fieldList is what a --json value looks like: names joined by commas.
var fieldList = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*$`)

// joinJSONFields rewrites gh's form `--json a,b` to `--json=a,b` for the
// command args name, so that a bare --json (every field) still works:
// the word after --json is taken as fields when it names only fields of
// that command, or is a comma-separated list of names.
func joinJSONFields(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return args
	}
	fl := cmd.Flags().Lookup("json")
	if fl == nil {
		return args
	}
	j, ok := fl.Value.(*jsonFlag)
	if !ok {
		return args
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--json" && i+1 < len(args) && fieldList.MatchString(args[i+1]) {
			names := strings.Split(args[i+1], ",")
			known := !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(j.allowed, n) })
			if known || len(names) > 1 {
				out = append(out, "--json="+args[i+1])
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}
