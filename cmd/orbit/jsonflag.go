package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// jsonFlag is the --json flag every read command shares: `--json` prints
// every field, `--json=a,b` only those (unknown names are refused before the
// command runs).
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
		name = strings.TrimSpace(name)
		if !slices.Contains(j.allowed, name) {
			return fmt.Errorf("unknown JSON field %q (available: %s)", name, strings.Join(j.allowed, ", "))
		}
		j.fields = append(j.fields, name)
	}
	return nil
}

// addJSONFlag registers --json on cmd; allowed lists the field names of the
// objects it prints.
func addJSONFlag(cmd *cobra.Command, j *jsonFlag, allowed []string) {
	j.allowed = allowed
	cmd.Flags().Var(j, "json", "print JSON; --json=f1,f2 keeps only those fields ("+strings.Join(allowed, ", ")+")")
	cmd.Flags().Lookup("json").NoOptDefVal = "*"
}

// write prints v as indented JSON, keeping only the selected fields of the
// object (or of each object of an array).
func (j *jsonFlag) write(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	if len(j.fields) > 0 {
		if data, err = selectFields(data, j.fields); err != nil {
			return err
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// selectFields keeps the named fields, in the order named.
func selectFields(data []byte, fields []string) ([]byte, error) {
	pick := func(raw json.RawMessage) ([]byte, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return raw, nil
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f)
			b.Write(k)
			b.WriteByte(':')
			if v, ok := m[f]; ok {
				b.Write(v)
			} else {
				b.WriteString("null")
			}
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return pick(trimmed)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(trimmed, &items); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		p, err := pick(it)
		if err != nil {
			return nil, err
		}
		b.Write(p)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}
