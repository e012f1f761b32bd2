package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/ceo"
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

// ProgressMarkdown writes seed 000's progress file. What the next iteration
// must see (queue status, next depth target, retrograde results, accuracy,
// the alert) comes first, inside the 30 lines the Stop hook re-feeds
// (gotcha 5).
func ProgressMarkdown(w io.Writer, p ceo.Progress) {
	maxIt := "?"
	if p.Loop.MaxIterations > 0 {
		maxIt = fmt.Sprint(p.Loop.MaxIterations)
	}
	started := p.Loop.StartedAt
	if started == "" {
		started = "-"
	}
	h := p.Trust
	fmt.Fprintf(w, "# CEO-LOOP Progress — Iteration %d of %s\n\n", p.Iteration, maxIt)
	fmt.Fprintf(w, "**Started**: %s | **Updated**: %s\n", started, p.Now.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "**Trust level**: %s | **Accuracy**: %s | last 20: %s | last 10: %s\n", h.Level, h.AccuracyText(), h.Last20.Text(), h.Last10.Text())
	fmt.Fprintf(w, "**Depth escalation counter**: %d\n", p.Loop.EscalationCount)
	if warn := h.Warning(); warn != "" {
		fmt.Fprintf(w, "\n%s\n", warn)
	}
	fmt.Fprintf(w, "\n## Queue Status\n")
	fmt.Fprintf(w, "- Remaining pending decisions: %d\n", p.Pending)
	next := p.NextDepth
	if next == "" {
		next = "none (queue empty)"
	}
	fmt.Fprintf(w, "- Next depth target: %s\n", next)
	fmt.Fprintf(w, "- Estimated iterations to completion: %d\n", estimate(p))
	for i, r := range p.Queue {
		if i == 3 {
			break
		}
		fmt.Fprintf(w, "- Next: %s (%s, %s impact)\n", text(r.Title), r.Category, r.Impact)
	}
	fmt.Fprintf(w, "\n## Retrograde Results\n")
	if len(p.Latest) == 0 {
		fmt.Fprintf(w, "- none recorded yet\n")
	}
	for _, e := range p.Latest {
		line := fmt.Sprintf("- %s: %s", e.DecisionID, e.Outcome)
		if e.Evidence != "" {
			line += " — " + text(e.Evidence)
		}
		fmt.Fprintln(w, truncate(line, 160))
	}
	fmt.Fprintf(w, "- Stale (PENDING > %d iterations): %d\n", ceo.DefaultStaleIterations, p.Stale)

	fmt.Fprintf(w, "\n## Iteration %d Summary\n", p.Iteration)
	it := p.ThisIter
	verdict := "all APPROVED"
	if it.TrivialRejected+it.TrivialReview > 0 {
		verdict = fmt.Sprintf("%d REJECTED, %d NEEDS_REVIEW", it.TrivialRejected, it.TrivialReview)
	}
	fmt.Fprintf(w, "- Decisions: %d (trivial batch: %d — %s)\n", it.Total, it.Trivial, verdict)
	if p.Focus != nil {
		fmt.Fprintf(w, "- Deep focus: %s (%s) — %s\n  Reason: %s\n", text(p.Focus.Input), p.Focus.Depth, p.Focus.Decision, text(p.Focus.Reason))
	} else {
		fmt.Fprintf(w, "- Deep focus: none\n")
	}

	s := p.Session
	fmt.Fprintf(w, "\n## Session Statistics\n")
	fmt.Fprintf(w, "- Total decisions this session: %d\n", s.Total)
	fmt.Fprintf(w, "- Auto-approved: %d\n", s.Auto)
	fmt.Fprintf(w, "- Deep decisions: %d\n", s.Deep)
	fmt.Fprintf(w, "- Escalated to human: %d\n", s.Escalated)
	fmt.Fprintf(w, "- Incorrect (retrograde): %d\n", s.Incorrect)
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
	scored := trust.NewWindow(int(s.Correct), int(s.Incorrect))
	acc := "n/a (no verified decisions)"
	if scored.N > 0 {
		acc = fmt.Sprintf("%.1f%% (%d/%d)", scored.Accuracy*100, scored.Correct, scored.N)
	}
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

// QueueResult prints what processing the queue did: the trivial items
// decided in one batch, and the deep focus left for the agent.
func QueueResult(w io.Writer, res ceo.QueueResult) {
	if len(res.Decided) == 0 && res.Focus == nil && len(res.AlreadyDecided) == 0 {
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
	if res.Focus == nil {
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
	fmt.Fprintf(w, "Queue: %d remaining (the deep focus among them).\n", res.Remaining)
}
