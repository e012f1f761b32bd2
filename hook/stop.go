package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/queue"
	"github.com/orbit-loop/orbit/report"
)

// Env is what a hook run depends on.
type Env struct {
	Now  func() time.Time
	PID  int
	Host string
	// Getwd is used when the input has no cwd.
	Getwd func() (string, error)
	// ProjectDir is Claude Code's CLAUDE_PROJECT_DIR ("" when unset): the
	// walk to the project starts there rather than at the input's cwd.
	ProjectDir string
	// Owner refuses a project another user controls.
	Owner project.Owner
	// Open opens and syncs a project's index.
	Open func(ctx context.Context, p project.Project) (*journal.Index, error)
}

// Result is a hook run: the output to print and the line to log.
type Result struct {
	Output Output
	// Project is the project found ("" when none).
	Project string
	// Log is the line for .claude/orbit-hook.log.
	Log string
	// Err is a failure that was reported in Output (also for stderr).
	Err error
}

// Stop runs the ORBIT loop's Stop (or SubagentStop) hook.
func Stop(ctx context.Context, env Env, in Input) Result {
	now := env.Now()
	r := Result{}
	event := in.HookEventName
	if event == "" {
		event = "Stop"
	}
	logf, fail := reporter(&r, now, event, in, fmt.Sprintf("stop_hook_active=%t", in.StopHookActive))
	p, found, err := locate(env, in)
	r.Project = p.Root
	if err != nil {
		return fail(err)
	}
	if !found {
		// No project, or no loop was ever started in it: nothing to do,
		// nothing to log, unless a loop is active in a project enclosing
		// this one (a nested project stopped the walk): say so, never
		// end silently.
		if above := activeAbove(p.Root, env.Owner); above != "" {
			logf("action=allow loop-active-above root=%s", above)
			r.Output = Output{SystemMessage: fmt.Sprintf("orbit: no ORBIT loop in %s, but one is active in %s, which encloses it; this hook drives the nearer project. Run Claude Code from %s, or register the hook as `orbit --root %s hook stop`.", p.Root, above, above, above)}
		}
		return r
	}
	sess, err := orbitloop.Open(ctx, p.Root)
	if err != nil {
		return fail(err)
	}
	defer sess.Close()
	o, st := sess.Info, sess.State
	err = sess.ReadErr
	if err == nil && o.Active {
		err = o.CheckStart(now)
	}
	if err != nil {
		return fail(fmt.Errorf("%v; fix the state file or run `orbit loop stop` — the loop cannot go on with it", err))
	}
	if !o.HasState || !o.Active {
		// Nothing to drive here; but a loop active in a project enclosing
		// this one is not driven either: say so, never end silently.
		if above := activeAbove(p.Root, env.Owner); above != "" {
			logf("action=allow loop-active-above root=%s", above)
			r.Output = Output{SystemMessage: fmt.Sprintf("orbit: the ORBIT loop in %s is not active, but one is active in %s, which encloses it; this hook drives the nearer project. Run Claude Code from %s, or register the hook as `orbit --root %s hook stop`.", p.Root, above, above, above)}
			return r
		}
		if !o.HasState {
			logf("action=allow no-loop")
		} else {
			logf("action=allow inactive iteration=%d", o.Iteration)
		}
		return r
	}
	if want := o.HookEvent; event != want {
		// The loop is driven by the other event (a subagent finishing
		// inside an iteration is not the end of the iteration).
		logf("action=allow not-the-loop-event loop_event=%s", want)
		return r
	}
	owner := "session:" + orUnknown(in.SessionID)
	claim, err := orbitloop.Acquire(ctx, p.Root, owner, env.PID, env.Host, now)
	if err != nil {
		return fail(err)
	}
	if !claim.Held {
		other := claim.Other
		msg := fmt.Sprintf("orbit: this ORBIT loop belongs to %s (pid %d on %s, last heartbeat %s ago); this session is not driving it. Stop here, or take the loop over with `orbit loop stop` then `orbit loop start`.",
			other.Owner, other.PID, other.Host, now.Sub(other.HeartbeatAt).Round(time.Second))
		if claim.AlreadyTold {
			logf("action=allow lock-conflict owner=%s told-before", other.Owner)
			r.Output = Output{SystemMessage: msg}
			return r
		}
		logf("action=block lock-conflict owner=%s", other.Owner)
		r.Output = Output{Decision: "block", Reason: msg}
		return r
	}
	ix, err := env.Open(ctx, p)
	if err != nil {
		return fail(err)
	}
	notes := []string{}
	if claim.Stolen != "" {
		notes = append(notes, fmt.Sprintf("took over the loop from %s, whose heartbeat was older than %s", claim.Stolen, loop.StaleAfter))
	}

	// The same turn stopping twice (a retried hook) must not count twice,
	// nor get another answer: it is re-fed the same iteration, with no
	// teardown check (the first stop of the turn made those).
	digest := turnDigest(in)
	sameTurn := digest != "" && in.StopHookActive && str(st, "last_stop_session") == orUnknown(in.SessionID) && str(st, "last_stop_digest") == digest

	if o.BudgetTokens > 0 && in.TranscriptPath != "" {
		used, err := countTokens(st, in.TranscriptPath)
		if err != nil {
			notes = append(notes, "token count unavailable: "+err.Error())
		} else {
			o.TokensUsed = used
		}
	}

	// Counters the loop kept before orbit are adopted, never zeroed; a
	// started_at orbit cannot read gets a first sight.
	rec, err := ceo.Reconcile(ctx, ix, st, now)
	if err != nil {
		return fail(err)
	}
	notes = append(notes, rec.Notes...)
	h := rec.Trust
	if o.StartedUnreadable && o.Started.IsZero() {
		// Reconcile recorded orbit's first sight: the limit counts from it.
		o.FirstSeenAt = str(st, ceo.FirstSeenField)
		o.Started, _ = time.Parse(time.RFC3339, o.FirstSeenAt)
	}

	// The iteration that just ended began at the last stop (or the start).
	sinceNS := iterationStart(o, st)
	before, _, err := st.Int("last_stop_decisions")
	if err != nil {
		return fail(err)
	}
	// Seed 000's depth escalation counter, after the iteration that ended.
	escalation, err := ceo.EscalationCount(ctx, ix, o, o.Iteration)
	if err != nil {
		return fail(err)
	}
	if !sameTurn {
		o.EscalationCount = escalation
	}
	q, qerr := queue.Read(ix.Project.Root, project.PendingFile)
	if qerr != nil {
		// The loop goes on (the agent is told to fix the file); it is not
		// taken for an empty queue.
		notes = append(notes, qerr.Error())
	}
	cause, detail, proactive := "", "", false
	if !sameTurn {
		if cause, detail, err = teardownCause(ctx, ix, o, in, before, q, qerr, now); err != nil {
			return fail(err)
		}
		// Seed 000's depth escalation rule: with the counter at 3 and the
		// queue empty, a proactive governance scan comes before the loop
		// is marked done, once per loop.
		if scanned, _, _ := st.Int(proactiveField); cause == "no-active-work" && o.EscalationCount >= ceo.EscalationLimit && scanned < max(o.FirstIteration, 1) {
			cause, detail, proactive = "", "", true
		}
	}
	if cause != "" {
		stopped, err := sess.Stop(ctx, ix, orbitloop.StopOptions{Reason: cause, Detail: detail, Owner: owner}, now)
		if err != nil {
			return fail(err)
		}
		notes = append(notes, stopped.Notes...)
		msg := fmt.Sprintf("orbit: ORBIT loop finished after iteration %d: %s (%s). Session summary in %s.", o.Iteration, cause, detail, project.ProgressFile)
		if rej := rejectedText(ctx, ix, st); rej != "" {
			notes = append(notes, rej)
		}
		if len(notes) > 0 {
			msg += " Note: " + strings.Join(notes, "; ")
		}
		logf("action=teardown cause=%s iteration=%d detail=%q", cause, o.Iteration, detail)
		r.Output = Output{SystemMessage: msg}
		return r
	}

	next := o.Iteration + 1
	if sameTurn {
		next = o.Iteration
	} else if last, err := ix.Store.MaxIteration(ctx); err != nil {
		return fail(err)
	} else if next < last {
		// The state's iteration went back (a loop restarted outside orbit,
		// from an initial state at 0): numbers never restart, so that ids
		// and summaries never mix two loops.
		notes = append(notes, fmt.Sprintf("iteration %d in %s is behind the journal's %d: the loop goes on at iteration %d", o.Iteration, project.StateFile, last, last+1))
		next = last + 1
	}
	counts, err := ix.Store.Counts(ctx)
	if err != nil {
		return fail(err)
	}
	mark, _, err := st.Int(findingsField)
	if err != nil {
		return fail(err)
	}
	rejected, newMark, err := ix.Store.RejectedSince(ctx, mark, maxRejected)
	if err != nil {
		return fail(err)
	}
	sets := []struct {
		k string
		v any
	}{
		{"iteration", next},
		{"depth_escalation_counter", o.EscalationCount},
		{"last_stop_decisions", counts.Decisions},
		{"last_stop_session", orUnknown(in.SessionID)},
		{"last_stop_digest", digest},
		{"last_stop_at", now.UTC().Format(time.RFC3339Nano)},
		{findingsField, newMark},
	}
	if sameTurn {
		// The same turn again: the lines it was told about are told again.
		sets = sets[:len(sets)-1]
	}
	if proactive {
		sets = append(sets, struct {
			k string
			v any
		}{proactiveField, next})
	}
	for _, kv := range sets {
		if err := st.Set(kv.k, kv.v); err != nil {
			return fail(err)
		}
	}
	if err := st.Write(); err != nil {
		return fail(err)
	}
	o.Iteration = next
	// The progress file shows the loop as of this Stop, before the prompt
	// quotes it (orbit's part only; the agent's lines are kept).
	if p, err := ceo.GatherProgress(ctx, ix, now); err != nil {
		return fail(err)
	} else if w, err := orbitloop.WriteProgress(ctx, ix, p); err != nil {
		notes = append(notes, "progress file not written: "+err.Error())
	} else if n := w.Note(); n != "" {
		notes = append(notes, n)
	}
	g, err := ReadGuide(ctx, ix, next, h.Level, now)
	if err != nil {
		return fail(err)
	}
	secs, err := refeed(ctx, ix, feed{o: o, h: h, sinceNS: sinceNS, now: now, g: g, lead: leadNext, rejected: rejected, proactive: proactive})
	if err != nil {
		return fail(err)
	}
	out := Output{Decision: "block"}
	if len(rejected) > 0 {
		notes = append(notes, rejectedSummary(rejected))
	}
	if h.Alert {
		// Seed 000: below 60% over the last 10, surface it to the human
		// now (the systemMessage is what the person watching sees).
		notes = append(notes, strings.ReplaceAll(h.AlertText(), "\n", " "))
	}
	if len(notes) > 0 {
		out.SystemMessage = "orbit: " + strings.Join(notes, "; ")
	}
	out = fit(out, secs)
	logf("action=block iteration=%d same_turn=%t rejected=%d reason_chars=%d", next, sameTurn, len(rejected), len([]rune(out.Reason)))
	r.Output = out
	return r
}

// State fields the Stop hook keeps: the highest finding seq it has told the
// agent about, and the iteration it asked for the proactive scan of seed
// 000's depth escalation rule.
const (
	findingsField  = "last_stop_finding"
	proactiveField = "proactive_scan_iteration"
)

// maxRejected bounds the rejected lines one prompt lists.
const maxRejected = 20

// rejectedSummary is the rejected lines in one sentence, for the
// systemMessage.
func rejectedSummary(rejected []db.LocatedFinding) string {
	parts := make([]string, 0, len(rejected))
	for _, f := range rejected {
		parts = append(parts, rejectedLine(f))
	}
	return fmt.Sprintf("%d %s rejected since the last iteration (kept in the file, not counted): %s",
		len(rejected), journal.Plural(len(rejected), "line", "lines"), strings.Join(parts, " | "))
}

// rejectedLine is one rejected line: file:line: reason.
func rejectedLine(f db.LocatedFinding) string {
	return cut(oneLine(fmt.Sprintf("%s:%d: %s", f.Path, f.Line, f.Message)), 300)
}

// rejectedText is the lines rejected since the last Stop, for a teardown's
// message ("" when none, or they cannot be read).
func rejectedText(ctx context.Context, ix *journal.Index, st *loop.State) string {
	mark, _, _ := st.Int(findingsField)
	rejected, _, err := ix.Store.RejectedSince(ctx, mark, maxRejected)
	if err != nil || len(rejected) == 0 {
		return ""
	}
	return rejectedSummary(rejected)
}

// reporter returns how a hook run logs its line (logf sets r.Log, after
// the time, the event, the session and extra) and reports a failure (fail
// puts it in r as a systemMessage and a log line, and returns r).
func reporter(r *Result, now time.Time, event string, in Input, extra string) (logf func(format string, args ...any), fail func(err error) Result) {
	logf = func(format string, args ...any) {
		r.Log = fmt.Sprintf("%s %s session=%s %s ", now.UTC().Format(time.RFC3339), event, orUnknown(in.SessionID), extra) + fmt.Sprintf(format, args...)
	}
	fail = func(err error) Result {
		r.Err = err
		r.Output = Output{SystemMessage: "orbit hook: " + err.Error()}
		logf("error=%q", err.Error())
		return *r
	}
	return logf, fail
}

// locate finds the project of a hook's input (its cwd, else the hook's own
// working directory) and whether an ORBIT loop was ever started there.
// Without a project, p is zero.
func locate(env Env, in Input) (p project.Project, found bool, err error) {
	cwd := in.CWD
	if env.ProjectDir != "" {
		cwd = env.ProjectDir
	}
	if cwd == "" {
		wd, err := env.Getwd()
		if err != nil {
			return p, false, fmt.Errorf("no cwd in the hook input and none of its own: %w", err)
		}
		cwd = wd
	}
	root, err := project.Find(cwd)
	if err != nil {
		return p, false, nil
	}
	if err := env.Owner.Check(root); err != nil {
		// Nothing is written there, the log included.
		return project.Project{}, false, err
	}
	if p, err = project.New(root, ""); err != nil {
		return p, false, err
	}
	if _, err := os.Lstat(p.Path(project.StateFile)); errors.Is(err, os.ErrNotExist) {
		return p, false, nil
	}
	return p, true, nil
}

// activeAbove is the nearest project enclosing root whose ORBIT loop is
// active ("" when none, or root is "").
func activeAbove(root string, owner project.Owner) string {
	for root != "" && filepath.Dir(root) != root {
		r, err := project.Find(filepath.Dir(root))
		if err != nil {
			return ""
		}
		if owner.Check(r) == nil {
			if o, _, err := ceo.ReadLoopState(r, project.StateFile); err == nil && o.Active {
				return r
			}
		}
		root = r
	}
	return ""
}

// iterationStart is when the current iteration began, in Unix
// nanoseconds truncated to the second: the last stop, else the loop's
// start (0 when neither is known).
func iterationStart(o ceo.LoopInfo, st *loop.State) int64 {
	since := o.Started
	if t, err := time.Parse(time.RFC3339Nano, str(st, "last_stop_at")); err == nil {
		since = t
	}
	if since.IsZero() {
		return 0
	}
	return since.Truncate(time.Second).UnixNano()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func str(st *loop.State, key string) string {
	v, _, _ := st.String(key)
	return v
}

// turnDigest identifies the turn that stopped: the size its transcript
// had reached, and its last message. "" without a readable transcript:
// every stop then counts as a turn of its own (two turns may well end with
// the same message, and an iteration that never advances is worse than a
// retried hook counted twice).
func turnDigest(in Input) string {
	if in.TranscriptPath == "" {
		return ""
	}
	fi, err := os.Stat(in.TranscriptPath)
	if err != nil {
		return ""
	}
	size := fi.Size()
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", size, in.LastAssistantMessage)))
	return hex.EncodeToString(sum[:8])
}

// teardownCause says why the loop must stop now, in the shared stop
// vocabulary, or "" to go on. A queue that cannot be read, or holds items
// that cannot be decided as they are, is not empty: the loop goes on, and
// the prompt says what to fix.
func teardownCause(ctx context.Context, ix *journal.Index, o ceo.LoopInfo, in Input, decisionsBefore int64, q *queue.Queue, qerr error, now time.Time) (cause, detail string, err error) {
	if sentinelSeen(o.Sentinel, in) {
		return "done", "the completion sentinel was written", nil
	}
	if o.MaxIterations > 0 && o.Iteration >= o.MaxIterations {
		return "budget-exhausted", fmt.Sprintf("iteration %d of %d", o.Iteration, o.MaxIterations), nil
	}
	if d := o.Deadline(); !d.IsZero() && !now.Before(d) {
		return "budget-exhausted", fmt.Sprintf("time limit of %d minutes passed", o.TimeLimitMinutes), nil
	}
	if o.BudgetTokens > 0 && o.TokensUsed >= o.BudgetTokens {
		return "budget-exhausted", fmt.Sprintf("%d of %d tokens used", o.TokensUsed, o.BudgetTokens), nil
	}
	if qerr == nil && len(q.Requests) == 0 && len(q.Invalid) == 0 {
		// The journal's size at the last stop (or the start) says whether
		// the iteration recorded anything, whatever its lines' ts.
		c, err := ix.Store.Counts(ctx)
		if err != nil {
			return "", "", err
		}
		if c.Decisions <= decisionsBefore {
			return "no-active-work", "the queue is empty and the iteration recorded no decision", nil
		}
	}
	return "", "", nil
}

// sentinelSeen looks for the completion sentinel in the last assistant
// message, then in the assistant messages at the end of the transcript
// (which may lag the turn). The re-fed prompt never quotes the sentinel, and
// only assistant lines are read, so the prompt cannot end the loop.
func sentinelSeen(sentinel string, in Input) bool {
	if sentinel == "" {
		return false
	}
	if strings.Contains(in.LastAssistantMessage, sentinel) {
		return true
	}
	if in.LastAssistantMessage != "" || in.TranscriptPath == "" {
		return false
	}
	return transcriptTailHas(in.TranscriptPath, sentinel)
}

// AppendLog appends one line to the project's hook log, opened as every
// file under the project is (a link in its place is refused, never
// followed). The line is escaped (report.EscapeLog): whatever text from
// the input or the project it quotes, it holds no control character and
// nothing a shell would run.
func AppendLog(root, line string) error {
	if root == "" || line == "" {
		return nil
	}
	f, err := project.OpenFile(root, project.HookLogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("hook log: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(report.EscapeLog(line) + "\n"); err != nil {
		return fmt.Errorf("hook log %s: %w", f.Name(), err)
	}
	return nil
}
