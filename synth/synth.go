// Package synth owns synthetic decision journals: realistic, varied,
// deterministic journals in seed 000's format for the demo, the tests and the
// benchmarks (1k to 1M decisions).
package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/trust"
)

// Options shape a journal.
type Options struct {
	// Decisions is how many decision lines to write.
	Decisions int
	// Seed makes the journal reproducible.
	Seed uint64
	// PerIteration is the mean number of decisions an iteration makes.
	PerIteration int
	// OutcomeRate is the share of decisions that later get an outcome,
	// carried in the retrograde field of a later decision line.
	OutcomeRate float64
	// Skill is the probability that a decision stated with confidence 1
	// proves correct; lower confidence proves correct less often.
	Skill float64
	// Start is the first decision's time.
	Start time.Time
}

// Defaults fills unset options.
func (o Options) withDefaults() Options {
	if o.PerIteration <= 0 {
		o.PerIteration = 12
	}
	if o.OutcomeRate == 0 {
		o.OutcomeRate = 0.3
	}
	if o.Skill == 0 {
		o.Skill = 0.92
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)
	}
	return o
}

// Generate writes opts.Decisions seed-format decision lines to w.
func Generate(w io.Writer, opts Options) error {
	opts = opts.withDefaults()
	g := newGen(opts)
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := 0; i < opts.Decisions; i++ {
		d := g.next()
		line, err := json.Marshal(d)
		if err != nil {
			return err
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Decisions returns n generated decisions.
func Decisions(opts Options) []journal.Decision {
	opts = opts.withDefaults()
	g := newGen(opts)
	out := make([]journal.Decision, opts.Decisions)
	for i := range out {
		out[i] = g.next()
	}
	return out
}

type pending struct {
	id      string
	correct bool
	iter    int64
}

type gen struct {
	opts    Options
	r       *rand.Rand
	iter    int64
	n       int
	left    int
	now     time.Time
	pending []pending
	// bound holds the slot values of the decision being made, so that its
	// input, reason and next action speak of the same things.
	bound map[string]string
}

func newGen(opts Options) *gen {
	return &gen{opts: opts, r: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), now: opts.Start, bound: map[string]string{}}
}

func (g *gen) next() journal.Decision {
	if g.left == 0 {
		g.iter++
		g.n = 0
		g.left = 1 + g.r.IntN(2*g.opts.PerIteration-1)
		g.now = g.now.Add(time.Duration(2+g.r.IntN(6)) * time.Minute)
	}
	g.left--
	g.n++
	g.now = g.now.Add(time.Duration(5+g.r.IntN(90)) * time.Second)

	cat := journal.Categories[g.r.IntN(len(journal.Categories))]
	t := topics[cat][g.r.IntN(len(topics[cat]))]
	clear(g.bound)
	input := g.fill(t.input)
	impact, reversible := t.impact, t.reversible
	if g.r.IntN(10) == 0 {
		impact = []string{"low", "medium", "high"}[g.r.IntN(3)]
	}
	depth := policy.Classify(cat, impact, reversible)
	tier, _ := policy.Tier(trust.Standard, impact, reversible)
	decision := "APPROVED"
	switch x := g.r.IntN(100); {
	case tier == "escalate" || (tier == "deep_think" && x < 15):
		decision = "NEEDS_REVIEW"
	case x < 8:
		decision = "REJECTED"
	}
	conf := 0.5 + 0.5*g.r.Float64()
	if depth == "trivial" {
		conf = 0.85 + 0.15*g.r.Float64()
	}
	conf = float64(int(conf*100)) / 100
	correct := g.r.Float64() < g.opts.Skill*conf+(1-conf)*0.35

	d := journal.Decision{
		ID:           fmt.Sprintf("iter-%d-%d", g.iter, g.n),
		Iteration:    g.iter,
		TS:           g.now.Format(time.RFC3339),
		Tier:         tier,
		Depth:        depth,
		Category:     cat,
		Input:        input,
		Decision:     decision,
		Reason:       g.fill(t.reasons[g.r.IntN(len(t.reasons))]),
		NextAction:   g.fill(t.next[g.r.IntN(len(t.next))]),
		Verification: "PENDING",
		Retrograde:   journal.Retrograde{Outcome: journal.OutcomeNA},
		Confidence:   &conf,
	}
	// A verdict on a decision from an earlier iteration, as INSPECT records.
	if len(g.pending) > 0 && g.pending[0].iter < g.iter && g.r.Float64() < 0.9 {
		p := g.pending[0]
		g.pending = g.pending[1:]
		prev := p.id
		d.Retrograde.PreviousID = &prev
		d.Retrograde.Outcome = journal.OutcomeIncorrect
		if p.correct {
			d.Retrograde.Outcome = journal.OutcomeCorrect
		}
	}
	if g.r.Float64() < g.opts.OutcomeRate {
		g.pending = append(g.pending, pending{id: d.ID, correct: correct, iter: g.iter})
	}
	return d
}

func (g *gen) fill(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		name := s[i+1 : i+j]
		v, ok := g.bound[name]
		if vals := slots[name]; !ok && len(vals) > 0 {
			v = vals[g.r.IntN(len(vals))]
			g.bound[name] = v
		} else if !ok {
			v = s[i : i+j+1]
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
}
