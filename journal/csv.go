package journal

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// csvFields are the CSV columns `orbit export --format csv` writes that are
// journal fields, in the line's order; a nested field is parent.child. The
// derived columns (outcome, outcome_ts, evidence, voided, void_reason, line) are not the line's
// and are not read back.
var csvFields = []string{"id", "iteration", "ts", "tier", "depth", "category", "input", "decision", "reason", "next_action",
	"verification", "retrograde.previous_id", "retrograde.outcome", "confidence", "requestor", "context", "request_id"}

// csvLines turns a CSV export back into JSONL, one record a line, in the
// journal's field order: what `orbit import` reads from a .csv file. Line n
// of the output is the record that starts on line n of the CSV when no cell
// spans lines (a blank line stands for the header), so that problems name
// the CSV's line. An empty cell is an absent field; a number column whose
// cell is not a number is written as a string, for the record's check to
// refuse with its line.
func csvLines(r io.Reader, path string) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeCSVLines(r, pw, path))
	}()
	return pr
}

func writeCSVLines(r io.Reader, w io.Writer, path string) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")] = i
	}
	if _, ok := col["id"]; !ok {
		return fmt.Errorf("%s:1: not a decision CSV: no id column (want the header `orbit export --format csv` writes)", path)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("\n")
	line := 1
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		start, _ := cr.FieldPos(0)
		for ; line < start-1; line++ {
			bw.WriteString("\n")
		}
		cell := func(name string) (string, bool) {
			i, ok := col[name]
			if !ok || i >= len(rec) || rec[i] == "" {
				return "", false
			}
			return rec[i], true
		}
		var b strings.Builder
		b.WriteByte('{')
		n := 0
		put := func(key, raw string) {
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			b.WriteString(strconv.Quote(key) + ":" + raw)
		}
		retro := false
		for _, name := range csvFields {
			parent, _, nested := strings.Cut(name, ".")
			if nested {
				if retro {
					continue
				}
				retro = true
				prev, hasPrev := cell(parent + ".previous_id")
				out, hasOut := cell(parent + ".outcome")
				if !hasPrev && !hasOut {
					continue
				}
				p := "null"
				if hasPrev {
					p = jsonString(prev)
				}
				o := ""
				if hasOut {
					o = `,"outcome":` + jsonString(out)
				}
				put(parent, `{"previous_id":`+p+o+`}`)
				continue
			}
			v, ok := cell(name)
			if !ok {
				continue
			}
			switch name {
			case "iteration", "confidence":
				if _, err := strconv.ParseFloat(v, 64); err == nil {
					put(name, v)
					continue
				}
			}
			put(name, jsonString(v))
		}
		b.WriteByte('}')
		bw.WriteString(b.String())
		bw.WriteString("\n")
		line++
	}
	return bw.Flush()
}

func jsonString(s string) string {
	b, _ := Marshal(s)
	return strings.TrimSuffix(string(b), "\n")
}
