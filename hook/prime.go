package hook

import (
	"context"
	"fmt"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/trust"
)

// MaxPrimeTokens bounds orbit prime's text, as EstimateTokens counts it.
const MaxPrimeTokens = 2000

// primeIntro says what orbit is, for an agent that lost its context.
const primeIntro = "orbit keeps this project's ORBIT loop: every decision goes into " + project.DecisionsFile +
	", outcomes are recorded later as events, and orbit's Stop hook starts each next iteration with a prompt like this one. This is the loop as of now."

// Prime is what an agent needs to go on with the active ORBIT loop in a
// new, resumed, cleared or compacted session: what orbit is, how to
// record, and the facts of the Stop hook's prompt as of now, built by the
// same code (iteration and limits, queue and next depth, trust and its
// alert, how to record, retrograde results since the iteration began,
// stale decisions, the top of the progress file), cut to MaxPrimeTokens
// least important first. It reads and changes nothing else: no lock is
// taken, no counter moves. It is "" when no ORBIT loop is active.
func Prime(ctx context.Context, ix *journal.Index, now time.Time) (string, error) {
	o, st, err := ceo.ReadLoopState(ix.Project.Root, project.StateFile)
	if err != nil || !o.Active {
		return "", err
	}
	h, err := trust.Current(ctx, ix.Store)
	if err != nil {
		return "", err
	}
	g, err := ReadGuide(ctx, ix, o.Iteration, h.Level, now)
	if err != nil {
		return "", err
	}
	// The lines rejected since the last Stop are told again: a session
	// that lost its context must still fix them.
	mark, _, _ := st.Int(findingsField)
	rejected, _, err := ix.Store.RejectedSince(ctx, mark, maxRejected)
	if err != nil {
		return "", err
	}
	secs, err := refeed(ctx, ix, feed{o: o, h: h, sinceNS: iterationStart(o, st), now: now, g: g, lead: leadContinue, rejected: rejected})
	if err != nil {
		return "", err
	}
	secs = append([]section{{priority: 9, lines: []string{primeIntro}, keep: 1}}, secs...)
	return fitSections(secs, func(text string) bool { return EstimateTokens(text) <= MaxPrimeTokens }), nil
}

// SessionStart runs Claude Code's SessionStart hook (sources startup,
// resume, clear and compact): while an ORBIT loop is active, it gives the
// session orbit prime's text as additional context, so that an agent
// whose conversation was compacted (or that starts afresh) knows where
// the loop stands and how to record. Outside an active loop it prints
// nothing. When another live session drives the loop, this session is
// only told so.
func SessionStart(ctx context.Context, env Env, in Input) Result {
	now := env.Now()
	r := Result{}
	logf, fail := reporter(&r, now, "SessionStart", in, "source="+orUnknown(in.Source))
	p, found, err := locate(env, in)
	r.Project = p.Root
	if err != nil {
		return fail(err)
	}
	if !found {
		return r
	}
	o, _, err := ceo.ReadLoopState(p.Root, project.StateFile)
	if err != nil {
		return fail(fmt.Errorf("%v; fix the state file or run `orbit loop stop`", err))
	}
	if !o.Active {
		return r
	}
	add := func(text string) Output {
		return Output{Specific: &SpecificOutput{HookEventName: "SessionStart", AdditionalContext: text}}
	}
	lk, err := orbitloop.ReadLock(p.Root)
	if err != nil {
		return fail(err)
	}
	if lk != nil && !lk.Stale(now) && lk.Owner != "session:"+orUnknown(in.SessionID) {
		logf("action=note lock-owner=%s", lk.Owner)
		r.Output = add(fmt.Sprintf("An ORBIT loop is active in this project (iteration %d), driven by %s (pid %d on %s); this session is not driving it.",
			o.Iteration, lk.Owner, lk.PID, lk.Host))
		return r
	}
	ix, err := env.Open(ctx, p)
	if err != nil {
		return fail(err)
	}
	text, err := Prime(ctx, ix, now)
	if err != nil {
		return fail(err)
	}
	if text == "" {
		return r
	}
	r.Output = add(text)
	logf("action=prime iteration=%d context_chars=%d", o.Iteration, len([]rune(text)))
	return r
}

// EstimateTokens approximates how many tokens a model makes of text: one
// per 3 bytes, rounded up. Claude's tokenizer is not public; for the
// English, JSON and punctuation orbit writes for agents, the tokenizers
// that are (Anthropic's published Claude tokenizer, OpenAI's cl100k and
// o200k) make fewer tokens than this (BENCHMARKS.md, section mcp, has the
// counts), so a budget met by this estimate is met by them.
func EstimateTokens(text string) int { return (len(text) + 2) / 3 }
