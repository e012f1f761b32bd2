package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// DecisionBlock writes seed 000's decision struct for one decision.
func DecisionBlock(w io.Writer, r ceo.Result) {
	d := r.Decision
	title := "[CEO-LOOP] Decision on: " + text(d.Input)
	if !r.Written {
		title += "  (dry run: not recorded)"
	}
	rev := "yes"
	if !r.Reversible {
		rev = "no"
	}
	id := d.ID
	if id == "" {
		id = r.NextID + " if recorded now"
	}
	fmt.Fprintln(w, title)
	fmt.Fprintf(w, "├─ Id: %s | Iteration: %d | Depth: %s | Category: %s\n", id, d.Iteration, d.Depth, d.Category)
	fmt.Fprintf(w, "├─ Impact: %s | Reversible: %s | Tier: %s | Trust: %s\n", title1(r.Impact), rev, d.Tier, r.Level)
	fmt.Fprintf(w, "├─ Decision: %s\n", d.Decision)
	fmt.Fprintf(w, "├─ Reason: %s\n", text(d.Reason))
	if d.Retrograde.PreviousID != nil {
		fmt.Fprintf(w, "├─ Retrograde: %s %s\n", *d.Retrograde.PreviousID, d.Retrograde.Outcome)
	}
	next := d.NextAction
	if next == "" {
		next = "-"
	}
	fmt.Fprintf(w, "└─ Next Action: %s\n", text(next))
}

func title1(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ProgressLines is how many lines ProgressMarkdown writes at most: with
// the two lines that mark it in the file, orbit's part of the progress file
// ends within its first 30 lines, all the Stop hook of seed 000 re-feeds
// (gotcha 5).
const ProgressLines = 28

// ProgressMarkdown writes orbit's part of seed 000's progress file, at most
// ProgressLines lines: what the next iteration must see (queue status and
// next depth target, queue items that cannot be decided, retrograde
// results, accuracy, the alert) first, then the iteration's summary and
// the session's statistics; once the loop has stopped, the session
// summary in their place.
func ProgressMarkdown(w io.Writer, p ceo.Progress) {
	maxIt := "?"
	if p.Loop.MaxIterations > 0 {
		maxIt = fmt.Sprint(p.Loop.MaxIterations)
	}
	started := p.Loop.StartedAt
	switch {
	case started == "":
		started = "-"
	case p.Loop.StartedUnreadable:
		started = fmt.Sprintf("%q (not a time; orbit first saw the loop at %s)", started, p.Loop.FirstSeenAt)
	}
	h := p.Trust
	stopped := p.Loop.HasState && !p.Loop.Active && p.Loop.StopReason != ""
	title := fmt.Sprintf("# CEO-LOOP Progress — Iteration %d of %s", p.Iteration, maxIt)
	if stopped {
		title += fmt.Sprintf(" (finished: %s)", p.Loop.StopReason)
	}
	fmt.Fprintf(w, "%s\n\n", title)
	fmt.Fprintf(w, "**Started**: %s | **Updated**: %s\n", started, p.Now.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "**Trust level**: %s | **Accuracy**: %s | last 20: %s | last 10: %s\n", h.Level, h.AccuracyText(), h.Last20.Text(), h.Last10.Text())
	esc := fmt.Sprintf("**Depth escalation counter**: %d", p.Loop.EscalationCount)
	if p.Loop.EscalationCount >= ceo.EscalationLimit {
		esc += " — proactive mode: trivial decisions only for 3 iterations in a row"
	}
	fmt.Fprintln(w, esc)
	if warn := h.Warning(); warn != "" {
		fmt.Fprintf(w, "%s\n", strings.ReplaceAll(warn, "\n", " "))
	}
	fmt.Fprintf(w, "\n## Queue Status\n")
	pending := fmt.Sprintf("- Remaining pending decisions: %d", p.Pending)
	if p.QueueErr != "" {
		pending = "- Remaining pending decisions: unknown: " + truncate(text(p.QueueErr), 200)
	}
	if n := len(p.Invalid); n > 0 {
		pending += fmt.Sprintf(" (and %d that cannot be decided as written: %s)", n, truncate(text(p.Invalid[0].Error()), 200))
	}
	fmt.Fprintln(w, pending)
	next := p.NextDepth
	if next == "" {
		next = "none (queue empty)"
	}
	fmt.Fprintf(w, "- Next depth target: %s\n", next)
	fmt.Fprintf(w, "- Estimated iterations to completion: %d\n", estimate(p))
	if len(p.Queue) > 0 {
		r := p.Queue[0]
		line := fmt.Sprintf("- Next: %s (%s, %s impact)", text(r.Title), r.Category, r.Impact)
		if len(p.Queue) > 1 {
			line += fmt.Sprintf(" and %d more", len(p.Queue)-1)
		}
		fmt.Fprintln(w, truncate(line, 200))
	}
	fmt.Fprintf(w, "\n## Retrograde Results\n")
	if len(p.Latest) == 0 {
		fmt.Fprintf(w, "- none recorded yet\n")
	}
	for i, e := range p.Latest {
		if i == 3 {
			break
		}
		line := fmt.Sprintf("- %s: %s", e.DecisionID, e.Outcome)
		if e.Evidence != "" {
			line += " — " + text(e.Evidence)
		}
		fmt.Fprintln(w, truncate(line, 160))
	}
	fmt.Fprintf(w, "- Stale (PENDING > %d iterations): %d\n", ceo.DefaultStaleIterations, p.Stale)

	s := p.Session
	if stopped {
		fmt.Fprintf(w, "\n## Session Complete — ORBIT Loop Finished\n")
		dur := "unknown"
		if !p.Loop.Started.IsZero() {
			dur = fmt.Sprintf("%.0f minutes", p.Now.Sub(p.Loop.Started).Minutes())
		}
		fmt.Fprintf(w, "- Iterations: %d of %s | Duration: %s | Stopped: %s at %s\n", p.Iteration, maxIt, dur, p.Loop.StopReason, p.Loop.StoppedAt)
		fmt.Fprintf(w, "- Decisions made: %d (Auto-approved: %d | Deep: %d | Escalated: %d)\n", s.Total, s.Auto, s.Deep, s.Escalated)
		fmt.Fprintf(w, "- Decision accuracy this session: %s\n", sessionAccuracy(s))
		queue := "EMPTY"
		if p.Pending > 0 {
			queue = fmt.Sprintf("%d remaining", p.Pending)
		}
		fmt.Fprintf(w, "- Queue status: %s\n", queue)
		fmt.Fprintf(w, "- Next session: Re-run /forge:ceo-loop (or `orbit loop start`) when decisions accumulate.\n")
		return
	}
	fmt.Fprintf(w, "\n## Iteration %d Summary\n", p.Iteration)
	it := p.ThisIter
	verdict := "all APPROVED"
	if it.TrivialRejected+it.TrivialReview > 0 {
		verdict = fmt.Sprintf("%d REJECTED, %d NEEDS_REVIEW", it.TrivialRejected, it.TrivialReview)
	}
	fmt.Fprintf(w, "- Decisions: %d (trivial batch: %d — %s)\n", it.Total, it.Trivial, verdict)
	if p.Focus != nil {
		fmt.Fprintln(w, truncate(fmt.Sprintf("- Deep focus: %s (%s) — %s", text(p.Focus.Input), p.Focus.Depth, p.Focus.Decision), 240))
		fmt.Fprintln(w, truncate("  Reason: "+text(p.Focus.Reason), 240))
	} else {
		fmt.Fprintf(w, "- Deep focus: none\n")
	}
	fmt.Fprintf(w, "\n## Session Statistics\n")
	fmt.Fprintf(w, "- Total decisions this session: %d | Auto-approved (trivial): %d | Deep decisions: %d | Escalated to human: %d | Incorrect (retrograde): %d\n",
		s.Total, s.Auto, s.Deep, s.Escalated, s.Incorrect)
}

// sessionAccuracy is the accuracy of the session's decisions with an
// outcome, as the session summary says it.
func sessionAccuracy(s db.SessionStats) string {
	scored := trust.NewWindow(int(s.Correct), int(s.Incorrect))
	if scored.N == 0 {
		return "n/a (no verified decisions)"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", scored.Accuracy*100, scored.Correct, scored.N)
}

// estimate is how many iterations the queue needs: one deep item each, the
// trivial ones batched into the first.
func estimate(p ceo.Progress) int {
	deep := 0
	for _, r := range p.Queue {
		if ceo.DepthOf(r) != "trivial" {
			deep++
		}
	}
	if deep == 0 && p.Pending > 0 {
		return 1
	}
	return deep
}

// SessionSummary writes seed 000's "Session Complete" block.
func SessionSummary(w io.Writer, p ceo.Progress) {
	maxIt := "?"
	if p.Loop.MaxIterations > 0 {
		maxIt = fmt.Sprint(p.Loop.MaxIterations)
	}
	dur := "unknown"
	if !p.Loop.Started.IsZero() {
		dur = fmt.Sprintf("%.0f minutes", p.Now.Sub(p.Loop.Started).Minutes())
	}
	s := p.Session
	acc := sessionAccuracy(s)
	queue := "EMPTY"
	if p.Pending > 0 {
		queue = fmt.Sprintf("%d remaining", p.Pending)
	}
	fmt.Fprintf(w, "[CEO-LOOP] Session Complete — ORBIT Loop Finished\n\n")
	fmt.Fprintf(w, "Iterations: %d of %s\n", p.Iteration, maxIt)
	fmt.Fprintf(w, "Duration: %s\n", dur)
	fmt.Fprintf(w, "Decisions made: %d\n", s.Total)
	fmt.Fprintf(w, "  └─ Auto-approved: %d | Deep: %d | Escalated: %d\n", s.Auto, s.Deep, s.Escalated)
	fmt.Fprintf(w, "Decision accuracy: %s\n", acc)
	fmt.Fprintf(w, "Trust level: %s\n", p.Trust.Level)
	fmt.Fprintf(w, "Queue status: %s\n", queue)
	fmt.Fprintf(w, "Stale decisions (PENDING > %d iterations): %d\n", ceo.DefaultStaleIterations, p.Stale)
	fmt.Fprintf(w, "\nNext session: Re-run /forge:ceo-loop when decisions accumulate.\n")
}

// Decided prints a decision made and the past decisions most like it.
func Decided(w io.Writer, d ceo.Result) {
	DecisionBlock(w, d)
	if len(d.Precedents) > 0 {
		fmt.Fprintln(w, "Precedents (most similar past decisions; AVOID = proved INCORRECT):")
		for _, h := range d.Precedents {
			fmt.Fprintf(w, "  %s\n", text(h.Describe()))
		}
	}
}

// Retro prints an outcome recorded (or, in a dry run, that would be) and
// the trust it leaves.
func Retro(w io.Writer, res ceo.RetroResult, dryRun bool) {
	verb := "recorded"
	if dryRun {
		verb = "would record"
	}
	h := res.Trust
	fmt.Fprintf(w, "%s: %s %s (was %s)\n", res.DecisionID, verb, res.Outcome, res.Previous)
	fmt.Fprintln(w, h.Summary())
	if warn := h.Warning(); warn != "" {
		fmt.Fprintln(w, warn)
	}
}

// Void prints what voiding a decision (or taking a void back) did.
func Void(w io.Writer, res ceo.VoidResult, dryRun bool) {
	what := "voided"
	if !res.Void {
		what = "void taken back"
	}
	switch {
	case res.Written:
		fmt.Fprintf(w, "%s: %s (%s:%d)\n", Escape(res.DecisionID), what, res.File, res.Line)
	case dryRun && res.WasVoided != res.Void:
		fmt.Fprintf(w, "%s: would be %s\n", Escape(res.DecisionID), what)
	default:
		fmt.Fprintf(w, "%s: unchanged, nothing written\n", Escape(res.DecisionID))
	}
	h := res.Trust
	fmt.Fprintln(w, h.Summary())
	if warn := h.Warning(); warn != "" {
		fmt.Fprintln(w, warn)
	}
}

// QueueResult prints what processing the queue did: the trivial items
// decided in one batch, and the deep focus left for the agent.
func QueueResult(w io.Writer, res ceo.QueueResult) {
	if len(res.Decided) == 0 && res.Focus == nil && len(res.AlreadyDecided) == 0 {
		if n := len(res.Invalid); n > 0 {
			// Not empty: what it holds cannot be decided as it stands.
			fmt.Fprintf(w, "Nothing decided: the queue (%s) holds %d %s that cannot be decided as written; fix %s, then decide again.\n",
				project.PendingFile, n, journal.Plural(n, "item", "items"), journal.Plural(n, "it", "them"))
			return
		}
		fmt.Fprintf(w, "The queue (%s) is empty: nothing to decide. With nothing found by a proactive scan either, stop the loop.\n", project.PendingFile)
		return
	}
	if len(res.AlreadyDecided) > 0 {
		fmt.Fprintf(w, "Already in the journal, taken out of the queue: %s\n\n", strings.Join(res.AlreadyDecided, ", "))
	}
	if len(res.Decided) > 0 {
		fmt.Fprintf(w, "Decided in one batch (%d trivial, trust %s):\n\n", len(res.Decided), res.Level)
		for _, r := range res.Decided {
			DecisionBlock(w, r)
			fmt.Fprintln(w)
		}
	}
	invalid := ""
	if n := len(res.Invalid); n > 0 {
		invalid = fmt.Sprintf("; %d invalid %s left as written, to be fixed", n, journal.Plural(n, "item", "items"))
	}
	if res.Focus == nil {
		if invalid != "" {
			fmt.Fprintf(w, "Queue: nothing left to decide%s.\n", invalid)
			return
		}
		fmt.Fprintln(w, "Queue: empty.")
		return
	}
	r := res.Focus.Request
	fmt.Fprintf(w, "Deep focus (%s, %s): %s\n", res.Focus.Depth, res.Focus.Tier, r.Title)
	if r.Description != "" {
		fmt.Fprintf(w, "  %s\n", r.Description)
	}
	if r.Context != "" {
		fmt.Fprintf(w, "  Context: %s\n", r.Context)
	}
	id := r.ID
	if id == "" {
		id = "<id>"
	}
	fmt.Fprintf(w, "Decide it with: orbit decide --request %s --decision APPROVED|NEEDS_REVIEW|REJECTED --reason \"...\"\n", id)
	fmt.Fprintf(w, "Queue: %d remaining (the deep focus among them)%s.\n", res.Remaining, invalid)
}
