package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/orbit-loop/orbit/db"
)

// compactLine returns a record's text as one JSONL line: unchanged when it
// already is one (so exports give back the bytes that were read), compacted
// when it was pretty-printed over several lines.
func compactLine(raw string) string {
	// Two byte searches (vectorised), not ContainsAny's loop: an import
	// asks this of every line.
	if strings.IndexByte(raw, '\n') < 0 && strings.IndexByte(raw, '\r') < 0 {
		return raw
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return strings.NewReplacer("\r", "", "\n", " ").Replace(raw)
	}
	return buf.String()
}

// ExportJSONL writes every indexed decision matching f, in journal order, as
// the line it was read from: field order, spacing and unknown fields intact.
func ExportJSONL(ctx context.Context, store *db.Store, f db.DecisionFilter, w io.Writer) (int, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	n := 0
	err := store.EachDecision(ctx, f, func(d *db.DecisionRow) error {
		n++
		bw.WriteString(compactLine(d.Raw))
		return bw.WriteByte('\n')
	})
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}
