package orbitloop

import (
	"bytes"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
)

// WriteProgress writes the ORBIT loop's progress file
// (.claude/ceo-loop-progress.md) from p: what the next iteration must see
// in its first 30 lines, then the iteration and session statistics; with
// summary (a stop), seed 000's "Session Complete" block at its end. It is
// the one writer of the progress file (`orbit report progress --write` and
// every stop), atomically (temp file and rename).
func WriteProgress(ix *journal.Index, p ceo.Progress, summary bool) error {
	var b bytes.Buffer
	report.ProgressMarkdown(&b, p)
	if summary {
		b.WriteString("\n## Session Complete\n\n```\n")
		report.SessionSummary(&b, p)
		b.WriteString("```\n")
	}
	return journal.WriteFileAtomic(ix.Project.Root, project.ProgressFile, b.Bytes(), 0o644)
}
