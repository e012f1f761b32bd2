package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/trust"
)

// tools are the server's tools, in the order a client lists them; their
// names are the ones the Stop hook's prompt tells the agent of.
var tools = []tool{
	{name: hook.ToolDecide, run: runDecide, schema: decideSchema,
		desc: "Record a decision (orbit decide): depth classified, tier from impact x reversibility at the current trust level; auto_approve defaults to APPROVED, escalate to NEEDS_REVIEW, other tiers need decision and reason. request: decide that queued item instead (its fields come from the queue)."},
	{name: hook.ToolRetro, run: runRetro, schema: retroSchema,
		desc: "Record whether an earlier decision proved right (orbit retro), as an outcome event."},
	{name: toolVoid, run: runVoid, schema: voidSchema,
		desc: "Void a decision recorded by mistake (orbit void), as an event: it stays in the journal, out of trust, precedents and stale; evidence says why; undo takes a void back."},
	{name: hook.ToolQueue, run: runQueue, schema: queueSchema,
		desc: "The pending queue: list it; process: decide every trivial item in one batch and name the deep focus (orbit decide --queue)."},
	{name: hook.ToolPrecedent, run: runPrecedent, schema: precedentSchema,
		desc: "The past decisions most like query, with outcomes (orbit precedent); avoid marks those proved INCORRECT."},
	{name: hook.ToolTrust, run: runTrust, schema: trustSchema,
		desc: "Accuracy, trust level, alert and calibration (orbit trust)."},
	{name: hook.ToolStale, run: runStale, schema: staleSchema,
		desc: "Decisions still PENDING more than iterations after they were made (orbit stale)."},
	{name: hook.ToolLoopStatus, run: runLoopStatus, schema: object{},
		desc: "The ORBIT loop's state, limits and lock (orbit loop status)."},
	{name: hook.ToolKnowledgeMatch, run: runKnowledgeMatch, schema: knowledgeSchema,
		desc: "Known solutions for an error text (orbit knowledge match); a regex match counts as an occurrence unless no_record."},
}

// --- decide ---

type decideArgs struct {
	Title      string   `json:"title"`
	Category   string   `json:"category"`
	Impact     string   `json:"impact"`
	Reversible *bool    `json:"reversible"`
	Decision   string   `json:"decision"`
	Reason     string   `json:"reason"`
	NextAction string   `json:"next_action"`
	Confidence *float64 `json:"confidence"`
	Depth      string   `json:"depth"`
	Iteration  *int64   `json:"iteration"`
	Requestor  string   `json:"requestor"`
	Context    string   `json:"context"`
	Retro      string   `json:"retro"`
	Request    string   `json:"request"`
	DryRun     bool     `json:"dry_run"`
}

var decideSchema = object{props: []prop{
	{name: "title", typ: "string"},
	{name: "category", typ: "string", enum: journal.Categories},
	{name: "impact", typ: "string", enum: policy.Impacts},
	{name: "reversible", typ: "boolean"},
	{name: "decision", typ: "string", enum: journal.DecisionValues},
	{name: "reason", typ: "string"},
	{name: "next_action", typ: "string"},
	{name: "confidence", typ: "number", min: ptr(0), max: ptr(1)},
	{name: "depth", typ: "string", enum: journal.Depths, desc: "default: classified"},
	{name: "iteration", typ: "integer", desc: "default: the loop's"},
	{name: "requestor", typ: "string"},
	{name: "context", typ: "string"},
	{name: "retro", typ: "string", desc: "ID=CORRECT|INCORRECT: verdict on an earlier decision"},
	{name: "request", typ: "string", desc: "queued request id"},
	{name: "dry_run", typ: "boolean"},
}}

func runDecide(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a decideArgs
	if err := decode(raw, &a, decideSchema); err != nil {
		return result{}, err
	}
	in := ceo.Input{
		Title: a.Title, Category: a.Category, Impact: a.Impact, Reversible: a.Reversible, Depth: a.Depth,
		Decision: a.Decision, Reason: a.Reason, NextAction: a.NextAction, Confidence: a.Confidence,
		Iteration: a.Iteration, Requestor: a.Requestor, Context: a.Context,
	}
	if a.Retro != "" {
		ref, err := ceo.ParseRetroRef(a.Retro)
		if err != nil {
			return result{}, err
		}
		in.Retro = ref
	}
	// No sync here, as for orbit decide: the decision is recorded under
	// the journal's lock, after a sync there.
	ix, err := h.opts.Index(ctx)
	if err != nil {
		return result{}, err
	}
	opts := ceo.Options{DryRun: a.DryRun, Now: h.opts.Now}
	var res ceo.Result
	if a.Request != "" {
		res, err = ceo.DecideRequest(ctx, ix, a.Request, in, opts)
	} else {
		res, err = ceo.Decide(ctx, ix, in, opts)
	}
	if err != nil {
		return result{}, err
	}
	if err := ceo.Similar(ctx, ix, &res, ceo.DefaultPrecedents); err != nil {
		return result{}, err
	}
	var b strings.Builder
	report.Decided(&b, res)
	warn(&b, res.Warnings)
	return result{value: res, text: b.String()}, nil
}

func warn(b *strings.Builder, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(b, "warning: %s\n", w)
	}
}

// --- retro ---

type retroArgs struct {
	ID       string `json:"id"`
	Outcome  string `json:"outcome"`
	Evidence string `json:"evidence"`
	DryRun   bool   `json:"dry_run"`
}

var retroSchema = object{props: []prop{
	{name: "id", typ: "string", desc: "the decision's id"},
	{name: "outcome", typ: "string", enum: []string{journal.OutcomeCorrect, journal.OutcomeIncorrect, journal.OutcomePending}, desc: "PENDING takes an earlier verdict back (evidence says why)"},
	{name: "evidence", typ: "string"},
	{name: "dry_run", typ: "boolean"},
}, required: []string{"id", "outcome"}}

func runRetro(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a retroArgs
	if err := decode(raw, &a, retroSchema); err != nil {
		return result{}, err
	}
	if _, err := ceo.ParseRetroOutcome(a.Outcome); err != nil {
		return result{}, err
	}
	ix, err := h.opts.Synced(ctx)
	if err != nil {
		return result{}, err
	}
	res, err := ceo.Retro(ctx, ix, a.ID, a.Outcome, a.Evidence, ceo.Options{DryRun: a.DryRun, Now: h.opts.Now})
	if err != nil {
		return result{}, err
	}
	var b strings.Builder
	report.Retro(&b, res, a.DryRun)
	warn(&b, res.Warnings)
	return result{value: res, text: b.String()}, nil
}

// --- void ---

// toolVoid is not in the Stop hook's prompt: voiding corrects a mistake, it
// is no step of the loop.
const toolVoid = "void"

type voidArgs struct {
	ID       string `json:"id"`
	Evidence string `json:"evidence"`
	Undo     bool   `json:"undo"`
	DryRun   bool   `json:"dry_run"`
}

var voidSchema = object{props: []prop{
	{name: "id", typ: "string", desc: "the decision's id"},
	{name: "evidence", typ: "string", desc: "why the decision was recorded by mistake"},
	{name: "undo", typ: "boolean", desc: "take a void back"},
	{name: "dry_run", typ: "boolean"},
}, required: []string{"id", "evidence"}}

func runVoid(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a voidArgs
	if err := decode(raw, &a, voidSchema); err != nil {
		return result{}, err
	}
	ix, err := h.opts.Synced(ctx)
	if err != nil {
		return result{}, err
	}
	res, err := ceo.Void(ctx, ix, a.ID, a.Evidence, a.Undo, ceo.Options{DryRun: a.DryRun, Now: h.opts.Now})
	if err != nil {
		return result{}, err
	}
	var b strings.Builder
	report.Void(&b, res, a.DryRun)
	warn(&b, res.Warnings)
	return result{value: res, text: b.String()}, nil
}

// --- queue ---

type queueArgs struct {
	Process bool `json:"process"`
	DryRun  bool `json:"dry_run"`
}

var queueSchema = object{props: []prop{
	{name: "process", typ: "boolean"},
	{name: "dry_run", typ: "boolean"},
}}

func runQueue(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a queueArgs
	if err := decode(raw, &a, queueSchema); err != nil {
		return result{}, err
	}
	if !a.Process {
		if a.DryRun {
			return result{}, errors.New("dry_run goes with process: listing the queue writes nothing")
		}
		ix, err := h.opts.Synced(ctx)
		if err != nil {
			return result{}, err
		}
		p, err := ceo.ReadPending(ctx, ix)
		if err != nil {
			return result{}, err
		}
		v := p.View()
		var b strings.Builder
		if len(v.Pending) == 0 {
			b.WriteString("Queue: empty.\n")
		} else {
			fmt.Fprintf(&b, "Queue: %d pending; next depth target: %s.\n", len(v.Pending), v.NextDepth)
			for _, q := range v.Pending {
				fmt.Fprintf(&b, "  %s: %s (%s, %s impact, %s)\n", q.ID, oneLine(q.Title), q.Category, q.Impact, q.Depth)
			}
		}
		return result{value: v, text: b.String()}, nil
	}
	ix, err := h.opts.Index(ctx)
	if err != nil {
		return result{}, err
	}
	res, err := ceo.ProcessQueue(ctx, ix, ceo.Options{DryRun: a.DryRun, Now: h.opts.Now})
	if err != nil {
		return result{}, err
	}
	var b strings.Builder
	report.QueueResult(&b, res)
	warn(&b, res.Warnings)
	return result{value: res, text: b.String()}, nil
}

// --- precedent ---

type precedentArgs struct {
	Query    string `json:"query"`
	Category string `json:"category"`
	K        int    `json:"k"`
}

var precedentSchema = object{props: []prop{
	{name: "query", typ: "string"},
	{name: "category", typ: "string", enum: journal.Categories, desc: "boost this category"},
	{name: "k", typ: "integer", desc: "default 3"},
}, required: []string{"query"}}

func runPrecedent(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a precedentArgs
	if err := decode(raw, &a, precedentSchema); err != nil {
		return result{}, err
	}
	opts := precedent.Options{K: a.K, Category: a.Category}
	if err := opts.Check(); err != nil {
		return result{}, err
	}
	ix, err := h.opts.Synced(ctx)
	if err != nil {
		return result{}, err
	}
	hits, err := precedent.Search(ctx, ix.Store, a.Query, opts)
	if err != nil {
		return result{}, err
	}
	if hits == nil {
		hits = []precedent.Hit{}
	}
	var b strings.Builder
	if len(hits) == 0 {
		b.WriteString("no similar past decisions\n")
	}
	for _, hit := range hits {
		fmt.Fprintf(&b, "%s\n", hit.Describe())
	}
	return result{value: hits, text: b.String()}, nil
}

// --- trust ---

type trustArgs struct {
	Category string   `json:"category"`
	Window   int      `json:"window"`
	Fields   []string `json:"fields"`
}

var trustSchema = object{props: []prop{
	{name: "category", typ: "string", enum: journal.Categories},
	{name: "window", typ: "integer", desc: "only the last N scored"},
	{name: "fields", typ: "array", items: "string", desc: "keep only these, e.g. level, alert, last20"},
}}

func runTrust(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a trustArgs
	if err := decode(raw, &a, trustSchema); err != nil {
		return result{}, err
	}
	filter := trust.Filter{Category: a.Category, Window: a.Window}
	if err := filter.Check(); err != nil {
		return result{}, err
	}
	if err := report.CheckFields(a.Fields, report.Fields(trust.Report{})); err != nil {
		return result{}, err
	}
	ix, err := h.opts.Synced(ctx)
	if err != nil {
		return result{}, err
	}
	r, err := trust.Load(ctx, ix.Store, trust.Options{Filter: filter})
	if err != nil {
		return result{}, err
	}
	hl := trust.Headline{Correct: r.Correct, Incorrect: r.Incorrect, Accuracy: r.Accuracy, Level: r.Level, Alert: r.Alert,
		Last20: trust.NewWindow(r.Last20.Correct, r.Last20.Incorrect), Last10: trust.NewWindow(r.Last10.Correct, r.Last10.Incorrect)}
	text := hl.Summary() + "\n"
	if r.Alert {
		text += r.AlertText + "\n"
	}
	return result{value: r, text: text, fields: a.Fields}, nil
}

// --- stale ---

type staleArgs struct {
	Iterations *int64 `json:"iterations"`
	Limit      *int   `json:"limit"`
}

var staleSchema = object{props: []prop{
	{name: "iterations", typ: "integer", desc: "default 2"},
	{name: "limit", typ: "integer", desc: "default 50; 0: all"},
}}

func runStale(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a staleArgs
	if err := decode(raw, &a, staleSchema); err != nil {
		return result{}, err
	}
	opts := ceo.StaleOptions{Iterations: ceo.DefaultStaleIterations, Limit: ceo.DefaultStaleLimit}
	if a.Iterations != nil {
		opts.Iterations = *a.Iterations
	}
	if a.Limit != nil {
		opts.Limit = *a.Limit
	}
	if err := opts.Check(); err != nil {
		return result{}, err
	}
	if opts.Limit == 0 {
		opts.Cap = math.MaxInt64 // listing all: count them all
	}
	ix, err := h.opts.Synced(ctx)
	if err != nil {
		return result{}, err
	}
	rep, err := ceo.StaleDecisions(ctx, ix, opts, h.opts.Now())
	if err != nil {
		return result{}, err
	}
	var b strings.Builder
	total := fmt.Sprint(rep.Total)
	if rep.AtLeast {
		total = "at least " + total
	}
	fmt.Fprintf(&b, "current iteration %d; %s decisions PENDING more than %d iterations after they were made\n", rep.Current, total, opts.Iterations)
	for _, d := range rep.Decisions {
		fmt.Fprintf(&b, "  %s (iter %d): %s\n", d.ID, d.Iteration, oneLine(d.Input))
	}
	return result{value: rep.Decisions, text: b.String()}, nil
}

// --- loop_status ---

func runLoopStatus(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a struct{}
	if err := decode(raw, &a, object{}); err != nil {
		return result{}, err
	}
	p, err := h.opts.Project()
	if err != nil {
		return result{}, err
	}
	s, err := orbitloop.ReadStatus(p.Root)
	if err != nil {
		return result{}, err
	}
	var text string
	switch {
	case !s.HasState:
		text = "no ORBIT loop (orbit loop start starts one)"
	case s.Active:
		text = fmt.Sprintf("ORBIT loop: active, iteration %d of %d, trust %s", s.Iteration, s.MaxIterations, s.TrustLevel)
	default:
		text = fmt.Sprintf("ORBIT loop: stopped (%s) at iteration %d", s.StopReason, s.Iteration)
	}
	switch {
	case s.LockErr != nil:
		text += "; lock: " + s.LockErr.Error()
	case s.Lock != nil:
		text += "; lock held by " + s.Lock.Owner
	}
	return result{value: s, text: text}, nil
}

// --- knowledge_match ---

type knowledgeArgs struct {
	Text     string `json:"text"`
	K        int    `json:"k"`
	NoRecord bool   `json:"no_record"`
}

var knowledgeSchema = object{props: []prop{
	{name: "text", typ: "string", desc: "the error"},
	{name: "k", typ: "integer", desc: "default 5"},
	{name: "no_record", typ: "boolean"},
}, required: []string{"text"}}

func runKnowledgeMatch(ctx context.Context, h *handlers, raw json.RawMessage) (result, error) {
	var a knowledgeArgs
	if err := decode(raw, &a, knowledgeSchema); err != nil {
		return result{}, err
	}
	opts := knowledge.MatchOptions{K: a.K, Record: !a.NoRecord}
	if err := knowledge.CheckMatch(a.Text, opts); err != nil {
		return result{}, err
	}
	k, err := h.opts.Knowledge(ctx)
	if err != nil {
		return result{}, err
	}
	ms, err := k.Match(ctx, a.Text, opts)
	if err != nil {
		return result{}, err
	}
	if ms == nil {
		ms = []knowledge.Match{}
	}
	var b strings.Builder
	if len(ms) == 0 {
		b.WriteString("no known solution\n")
	}
	for _, m := range ms {
		fmt.Fprintf(&b, "%d. %s (%s:%d, %s): %s\n", m.Rank, m.Key, m.File, m.Line, m.Via, oneLine(m.Solution))
	}
	return result{value: ms, text: b.String()}, nil
}
