package precedent

// The precedent evaluation corpus: testdata/precedent/topics.json is written
// by hand; journal.jsonl, queries.jsonl and labels.jsonl are generated from it
// by this file, deterministically, with
//
//	go test ./precedent -run TestCorpus -update
//
// Without -update, TestCorpus regenerates the files in memory, fails if the
// committed ones differ, and checks the corpus's invariants.
// TestCorpusBaselines logs recall@3 and MRR of the seed's grep baselines.
// Every identifier here starts with "corpus" so that the file can sit next
// to the package's own code and tests.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/orbit-loop/orbit/internal/golden"
	"github.com/orbit-loop/orbit/internal/precedenteval"
	"github.com/orbit-loop/orbit/journal"
)

// corpusUpdating: with -update (internal/golden's flag) the generated
// corpus files are rewritten (testdata/precedent: journal.jsonl,
// queries.jsonl, labels.jsonl).
func corpusUpdating() bool { return golden.Updating() }

const (
	corpusDir        = "../testdata/precedent"
	corpusDecisions  = 1500 // journal lines
	corpusIterations = 120
	corpusAsOf       = 40  // queries asked part-way through the journal
	corpusEarlyLines = 100 // "early" topics occur only in these first lines
	corpusTailLines  = 50  // the seed's `tail -50`
	corpusMaxPerTop  = 40
	corpusMinPerTop  = 3
	corpusVerdictP   = 0.31 // share of lines carrying a retrograde verdict
	corpusSeed1      = 0x0b17
	corpusSeed2      = 2026
)

var (
	corpusKinds   = []string{"paraphrase", "question", "fragment", "sentence", "cross-category", "near-miss-probe", "failed-precedent"}
	corpusImpacts = []string{"low", "medium", "high"}
	corpusEras    = []string{"", "early", "mid", "late"}
	corpusTracks  = []string{"", "mixed", "poor"}
	corpusIDRE    = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	corpusLineRE  = regexp.MustCompile(`^iter-(\d+)-(\d+)$`)
	// {a|b|c} in a topic's text is replaced by one of a, b, c.
	corpusAltRE = regexp.MustCompile(`\{([^{}|]*(?:\|[^{}|]*)+)\}`)
)

// corpusTopic is one entry of topics.json.
type corpusTopic struct {
	Topic      string `json:"topic"`
	Category   string `json:"category"`
	Impact     string `json:"impact"`
	Reversible bool   `json:"reversible"`
	// Era places the topic in the journal: "early" (only in the first
	// corpusEarlyLines lines), "mid", "late", or "" (a random span).
	Era string `json:"era,omitempty"`
	// TrackRecord is how its decisions turn out: "" (mostly CORRECT),
	// "mixed" or "poor" (a bad recurring idea: mostly INCORRECT, and
	// rejected once the loop has seen it fail).
	TrackRecord string `json:"track_record,omitempty"`
	// Related topics are relevant to this topic's queries; NearMissOf
	// topics share words with it but are not.
	Related           []string           `json:"related,omitempty"`
	NearMissOf        []string           `json:"near_miss_of,omitempty"`
	Phrasings         []string           `json:"phrasings"`
	Reasons           []string           `json:"reasons"`
	RejectReasons     []string           `json:"reject_reasons,omitempty"`
	NextActions       []string           `json:"next_actions"`
	RejectNextActions []string           `json:"reject_next_actions,omitempty"`
	Queries           []corpusTopicQuery `json:"queries"`
}

type corpusTopicQuery struct {
	Q    string `json:"q"`
	Kind string `json:"kind"`
}

// corpusLine is a journal line in seed 000's field order.
type corpusLine struct {
	ID           string           `json:"id"`
	Iteration    int              `json:"iteration"`
	TS           string           `json:"ts"`
	Tier         string           `json:"tier"`
	Depth        string           `json:"depth"`
	Category     string           `json:"category"`
	Input        string           `json:"input"`
	Decision     string           `json:"decision"`
	Reason       string           `json:"reason"`
	NextAction   string           `json:"next_action"`
	Verification string           `json:"verification"`
	Retrograde   corpusRetrograde `json:"retrograde"`
	Confidence   float64          `json:"confidence"`
}

type corpusRetrograde struct {
	PreviousID *string `json:"previous_id"`
	Outcome    string  `json:"outcome"`
}

// corpusQuery is one line of queries.jsonl.
type corpusQuery = precedenteval.Query

// corpusEvent is a verdict: line Line says decision Target was Outcome.
type corpusEvent struct {
	Line, Target int
	Outcome      string
}

type corpus struct {
	topics    []corpusTopic
	topicIdx  map[string]int
	lines     []corpusLine
	lineTopic []int // index into topics, per line
	events    []corpusEvent
	queries   []corpusQuery
	journal   []byte
	queryFile []byte
	labelFile []byte
}

// corpusLabel is one line of labels.jsonl: the topic each journal decision
// was written from and its outcome at the journal's end, for error
// analysis. A ranker under evaluation must not read it.
type corpusLabel struct {
	ID      string `json:"id"`
	Topic   string `json:"topic"`
	Outcome string `json:"outcome"`
}

func corpusLoadTopics(t testing.TB) []corpusTopic {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, "topics.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var topics []corpusTopic
	if err := dec.Decode(&topics); err != nil {
		t.Fatalf("topics.json: %v", err)
	}
	return topics
}

// corpusCheckTopics returns what is wrong with the catalogue.
func corpusCheckTopics(topics []corpusTopic) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	idx := map[string]int{}
	for i, t := range topics {
		if !corpusIDRE.MatchString(t.Topic) {
			bad("topic %q: id is not lower-case-with-dashes", t.Topic)
		}
		if _, dup := idx[t.Topic]; dup {
			bad("topic %q: duplicate id", t.Topic)
		}
		idx[t.Topic] = i
	}
	owner := map[string]string{} // normalized text -> topic
	own := func(topic, what, s string) {
		if strings.TrimSpace(s) == "" {
			bad("topic %s: empty %s", topic, what)
			return
		}
		if strings.Count(s, "{") != strings.Count(s, "}") {
			bad("topic %s: unbalanced braces in %s %q", topic, what, s)
		}
		k := strings.ToLower(strings.TrimSpace(s))
		if o, ok := owner[k]; ok && o != topic {
			bad("topic %s: %s %q is copied from topic %s", topic, what, s, o)
		}
		owner[k] = topic
	}
	for _, t := range topics {
		n := t.Topic
		if !slices.Contains(journal.Categories, t.Category) {
			bad("topic %s: category %q", n, t.Category)
		}
		if !slices.Contains(corpusImpacts, t.Impact) {
			bad("topic %s: impact %q", n, t.Impact)
		}
		if !slices.Contains(corpusEras, t.Era) {
			bad("topic %s: era %q", n, t.Era)
		}
		if !slices.Contains(corpusTracks, t.TrackRecord) {
			bad("topic %s: track_record %q", n, t.TrackRecord)
		}
		if t.TrackRecord != "" && len(t.RejectReasons) == 0 {
			bad("topic %s: a %s track record needs reject_reasons", n, t.TrackRecord)
		}
		if l := len(t.Phrasings); l < 4 || l > 6 {
			bad("topic %s: %d phrasings; want 4-6", n, l)
		}
		if l := len(t.Reasons); l < 3 || l > 5 {
			bad("topic %s: %d reasons; want 3-5", n, l)
		}
		if l := len(t.NextActions); l < 2 || l > 4 {
			bad("topic %s: %d next_actions; want 2-4", n, l)
		}
		if len(t.Queries) < 4 {
			bad("topic %s: %d queries; want at least 4", n, len(t.Queries))
		}
		for _, s := range t.Phrasings {
			own(n, "phrasing", s)
		}
		for _, s := range t.Reasons {
			own(n, "reason", s)
		}
		for _, s := range t.RejectReasons {
			own(n, "reject reason", s)
		}
		for _, s := range t.NextActions {
			own(n, "next action", s)
		}
		for _, s := range t.RejectNextActions {
			own(n, "reject next action", s)
		}
		for _, q := range t.Queries {
			own(n, "query", q.Q)
			if !slices.Contains(corpusKinds, q.Kind) {
				bad("topic %s: query %q: kind %q", n, q.Q, q.Kind)
			}
			if q.Kind == "failed-precedent" && t.TrackRecord == "" {
				bad("topic %s: failed-precedent %q but the topic has no track_record: its ideas rarely failed", n, q.Q)
			}
			if q.Kind == "near-miss-probe" && len(t.NearMissOf) == 0 {
				bad("topic %s: near-miss-probe %q but the topic has no near_miss_of", n, q.Q)
			}
			if q.Kind == "cross-category" && !slices.ContainsFunc(t.Related, func(r string) bool {
				i, ok := idx[r]
				return ok && topics[i].Category != t.Category
			}) {
				bad("topic %s: cross-category query %q but no related topic of another category", n, q.Q)
			}
		}
		for _, rel := range [][]string{t.Related, t.NearMissOf} {
			for _, r := range rel {
				if _, ok := idx[r]; !ok || r == n {
					bad("topic %s: relation to %q: no such other topic", n, r)
				}
			}
		}
		for _, r := range t.Related {
			if i, ok := idx[r]; ok && !slices.Contains(topics[i].Related, n) {
				bad("topic %s: related %s, but %s does not list it back", n, r, r)
			}
			if slices.Contains(t.NearMissOf, r) {
				bad("topic %s: %s is both related and a near miss", n, r)
			}
		}
		for _, r := range t.NearMissOf {
			if i, ok := idx[r]; ok && !slices.Contains(topics[i].NearMissOf, n) {
				bad("topic %s: near miss of %s, but %s does not list it back", n, r, r)
			}
		}
	}
	// A query must not simply repeat one of its topic's phrasings.
	for _, t := range topics {
		for _, q := range t.Queries {
			for _, p := range t.Phrasings {
				if strings.EqualFold(strings.TrimSpace(q.Q), strings.TrimSpace(p)) {
					bad("topic %s: query %q repeats a phrasing", t.Topic, q.Q)
				}
			}
		}
	}
	return errs
}

func corpusExpand(rng *rand.Rand, s string) string {
	return corpusAltRE.ReplaceAllStringFunc(s, func(m string) string {
		alts := strings.Split(m[1:len(m)-1], "|")
		return alts[rng.IntN(len(alts))]
	})
}

func corpusPick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// corpusTiers are the tiers the seed's impact x reversibility matrix allows.
func corpusTiers(t *corpusTopic) []string {
	switch {
	case t.Impact == "low" && t.Reversible:
		return []string{"auto_approve"}
	case t.Impact == "high" && !t.Reversible:
		return []string{"deep_think", "escalate"}
	case t.Impact == "medium" && !t.Reversible:
		return []string{"deep_think"}
	default: // low/irreversible, medium/reversible, high/reversible
		return []string{"quick_review"}
	}
}

// corpusDepth follows the seed's depth table: low impact is trivial (light
// for a feature), medium is light for features and quality and medium
// otherwise, high is heavy when irreversible.
func corpusDepth(t *corpusTopic) string {
	switch t.Impact {
	case "low":
		if t.Category == "feature" {
			return "light"
		}
		return "trivial"
	case "medium":
		if t.Category == "feature" || t.Category == "quality" {
			return "light"
		}
		return "medium"
	}
	if t.Reversible {
		return "medium"
	}
	return "heavy"
}

var corpusDepthRank = map[string]int{"trivial": 0, "light": 1, "medium": 2, "heavy": 3}

var (
	corpusReviewTails = []string{
		"Needs the owner's sign-off before anything ships.",
		"Escalating: impact is high and the trade-off is a business call.",
		"Flagging for human review, the numbers are not conclusive yet.",
	}
	corpusTails = []string{
		"Low risk.",
		"Vision alignment 90/100.",
		"Aligned with the quarter's plan.",
		"Checked against the quality gates, all green.",
	}
	corpusReviewNext = []string{
		"Escalate to the owner with the options written up.",
		"Write the trade-offs into the progress file and wait for review.",
	}
	corpusRejectNext = []string{
		"Close the request and link the precedent.",
		"Reply to the requester with the reason; revisit next quarter.",
		"Log it in the progress file, no work scheduled.",
	}
)

// corpusConfidence is the confidence range of each tier.
var corpusConfidence = map[string][2]float64{
	"auto_approve": {0.90, 0.99},
	"quick_review": {0.74, 0.93},
	"deep_think":   {0.60, 0.86},
	"escalate":     {0.50, 0.72},
}

func corpusRound2(x float64) float64 { return math.Round(x*100) / 100 }

// corpusGenerate builds the journal and the queries from the topics.
func corpusGenerate(topics []corpusTopic) *corpus {
	rng := rand.New(rand.NewPCG(corpusSeed1, corpusSeed2))
	c := &corpus{topics: topics, topicIdx: map[string]int{}}
	for i, t := range topics {
		c.topicIdx[t.Topic] = i
	}

	// How often each topic occurs: uneven, 3-40 times, summing to
	// corpusDecisions. Early topics occur a few times only; topics with a
	// track record at least 10 or 14 times, so that the record shows.
	counts := make([]int, len(topics))
	minOf := func(i int) int {
		switch {
		case topics[i].Era == "early":
			return corpusMinPerTop
		case topics[i].TrackRecord == "poor":
			return 14
		case topics[i].TrackRecord != "":
			return 10
		}
		return 4
	}
	maxOf := func(i int) int {
		if topics[i].Era == "early" {
			return 6
		}
		return corpusMaxPerTop
	}
	var flexible []int
	rest := corpusDecisions
	raw := make([]float64, len(topics))
	rawSum := 0.0
	for i, t := range topics {
		if t.Era == "early" {
			counts[i] = corpusMinPerTop + rng.IntN(4)
			rest -= counts[i]
			continue
		}
		flexible = append(flexible, i)
		raw[i] = 4 + 36*math.Pow(rng.Float64(), 1.3)
		rawSum += raw[i]
	}
	total := 0
	for _, i := range flexible {
		counts[i] = min(max(int(math.Round(raw[i]*float64(rest)/rawSum)), minOf(i)), maxOf(i))
		total += counts[i]
	}
	for total != rest {
		i := flexible[rng.IntN(len(flexible))]
		switch {
		case total < rest && counts[i] < maxOf(i):
			counts[i]++
			total++
		case total > rest && counts[i] > minOf(i):
			counts[i]--
			total--
		}
	}

	// Where in the journal each occurrence falls (0..1): uniformly over the
	// topic's span, or in one of a few bursts.
	type occ struct {
		pos   float64
		topic int
	}
	var occs []occ
	for i, t := range topics {
		var lo, hi float64
		switch t.Era {
		case "early":
			lo, hi = 0, 0.035
		case "mid":
			lo, hi = 0.25+0.1*rng.Float64(), 0.7+0.1*rng.Float64()
		case "late":
			lo, hi = 0.6+0.12*rng.Float64(), 1
		default:
			lo = 0.5 * rng.Float64()
			hi = lo + 0.35 + rng.Float64()*(1-lo-0.35)
		}
		if t.TrackRecord != "" {
			// Its record must have time to show before the end.
			lo, hi = 0.85*lo, 0.85*hi
		}
		bursts := make([]float64, 1+rng.IntN(3))
		for b := range bursts {
			bursts[b] = lo + rng.Float64()*(hi-lo)
		}
		for range counts[i] {
			p := lo + rng.Float64()*(hi-lo)
			if rng.Float64() < 0.5 {
				p = corpusPick(rng, bursts) + rng.NormFloat64()*0.04*(hi-lo)
			}
			p = min(max(p, lo), math.Nextafter(hi, lo))
			occs = append(occs, occ{p, i})
		}
	}
	sort.SliceStable(occs, func(a, b int) bool { return occs[a].pos < occs[b].pos })

	// Iteration sizes, summing to corpusDecisions.
	sizes := make([]int, corpusIterations)
	sum := 0
	for j := range sizes {
		sizes[j] = 6 + rng.IntN(14)
		sum += sizes[j]
	}
	for sum != corpusDecisions {
		j := rng.IntN(corpusIterations)
		switch {
		case sum < corpusDecisions && sizes[j] < 24:
			sizes[j]++
			sum++
		case sum > corpusDecisions && sizes[j] > 3:
			sizes[j]--
			sum--
		}
	}

	// Lay the lines out: iteration by iteration, trivial decisions first
	// (the batch), then the deeper ones; ids and timestamps.
	clock := time.Date(2026, 2, 2, 8, 40, 0, 0, time.UTC)
	k := 0
	for j, size := range sizes {
		it := j + 1
		batch := append([]occ(nil), occs[k:k+size]...)
		k += size
		sort.SliceStable(batch, func(a, b int) bool {
			return corpusDepthRank[corpusDepth(&topics[batch[a].topic])] < corpusDepthRank[corpusDepth(&topics[batch[b].topic])]
		})
		switch {
		case j == 0:
		case rng.IntN(8) == 0: // a new session, a day or two later
			clock = clock.Add(time.Duration(14+rng.IntN(50)) * time.Hour)
		default:
			clock = clock.Add(time.Duration(6+rng.IntN(20)) * time.Minute)
		}
		for n, o := range batch {
			clock = clock.Add(time.Duration(20+rng.IntN(130)) * time.Second)
			c.lines = append(c.lines, corpusLine{
				ID:           fmt.Sprintf("iter-%d-%d", it, n+1),
				Iteration:    it,
				TS:           clock.Format(time.RFC3339),
				Category:     topics[o.topic].Category,
				Verification: "PENDING",
				Retrograde:   corpusRetrograde{Outcome: journal.OutcomeNA},
			})
			c.lineTopic = append(c.lineTopic, o.topic)
		}
	}

	// Write each decision in order, knowing the verdicts given so far.
	outcome := make([]string, len(c.lines)) // current outcome per line
	seen := make([][]int, len(topics))      // earlier lines per topic
	for l := range c.lines {
		ln := &c.lines[l]
		ti := c.lineTopic[l]
		t := &topics[ti]
		var knownBad, knownGood []int // earlier approvals proved wrong, right
		for _, p := range seen[ti] {
			if c.lines[p].Decision != "APPROVED" {
				continue
			}
			switch outcome[p] {
			case journal.OutcomeIncorrect:
				knownBad = append(knownBad, p)
			case journal.OutcomeCorrect:
				knownGood = append(knownGood, p)
			}
		}
		tiers := corpusTiers(t)
		ln.Tier = tiers[0]
		if len(tiers) > 1 && rng.Float64() < 0.3 {
			ln.Tier = tiers[1]
		}
		ln.Depth = corpusDepth(t)

		dec := "APPROVED"
		rejectOnPrecedent := false
		switch {
		// A loop that finds the failed precedent rejects the idea again;
		// often it does not find it (the seed only greps tail -50).
		case len(knownBad) > 0 && t.TrackRecord == "poor" && rng.Float64() < 0.35,
			len(knownBad) > 0 && t.TrackRecord == "mixed" && rng.Float64() < 0.3:
			dec, rejectOnPrecedent = "REJECTED", true
		case ln.Tier == "escalate" && rng.Float64() < 0.55:
			dec = "NEEDS_REVIEW"
		case len(t.RejectReasons) > 0 && t.TrackRecord != "poor" && rng.Float64() < 0.06:
			dec = "REJECTED"
		case ln.Tier == "deep_think" && rng.Float64() < 0.06:
			dec = "NEEDS_REVIEW"
		}
		ln.Decision = dec
		ln.Input = corpusExpand(rng, corpusPick(rng, t.Phrasings))

		switch dec {
		case "REJECTED":
			r := corpusExpand(rng, corpusPick(rng, t.RejectReasons))
			if rejectOnPrecedent && rng.Float64() < 0.6 {
				r = fmt.Sprintf("Precedent %s was INCORRECT. %s", c.lines[knownBad[len(knownBad)-1]].ID, r)
			}
			ln.Reason = r
			if len(t.RejectNextActions) > 0 && rng.Float64() < 0.7 {
				ln.NextAction = corpusExpand(rng, corpusPick(rng, t.RejectNextActions))
			} else {
				ln.NextAction = corpusPick(rng, corpusRejectNext)
			}
		default:
			i := rng.IntN(len(t.Reasons))
			r := corpusExpand(rng, t.Reasons[i])
			if rng.Float64() < 0.25 {
				j := (i + 1 + rng.IntN(len(t.Reasons)-1)) % len(t.Reasons)
				r += " " + corpusExpand(rng, t.Reasons[j])
			}
			if len(knownGood) > 0 && rng.Float64() < 0.15 {
				r += fmt.Sprintf(" Precedent: %s (CORRECT).", c.lines[corpusPick(rng, knownGood)].ID)
			}
			switch {
			case dec == "NEEDS_REVIEW":
				r += " " + corpusPick(rng, corpusReviewTails)
			case rng.Float64() < 0.08:
				r += " " + corpusPick(rng, corpusTails)
			}
			ln.Reason = r
			if dec == "NEEDS_REVIEW" && rng.Float64() < 0.6 {
				ln.NextAction = corpusPick(rng, corpusReviewNext)
			} else {
				ln.NextAction = corpusExpand(rng, corpusPick(rng, t.NextActions))
			}
		}

		lo, hi := corpusConfidence[ln.Tier][0], corpusConfidence[ln.Tier][1]
		if rejectOnPrecedent {
			lo, hi = 0.80, 0.95
		}
		ln.Confidence = corpusRound2(lo + rng.Float64()*(hi-lo))

		// Retrograde: a verdict on a decision of the last three
		// iterations that has none yet, or now and then a later verdict
		// that overturns an older one (never on a bad recurring idea).
		if rng.Float64() < corpusVerdictP {
			target, verdict := -1, ""
			if rng.Float64() < 0.05 {
				var cands []int
				for p := 0; p < l; p++ {
					d := ln.Iteration - c.lines[p].Iteration
					if d >= 4 && d <= 15 && outcome[p] != "" && topics[c.lineTopic[p]].TrackRecord != "poor" {
						cands = append(cands, p)
					}
				}
				if len(cands) > 0 {
					target = corpusPick(rng, cands)
					verdict = journal.OutcomeIncorrect
					if outcome[target] == journal.OutcomeIncorrect {
						verdict = journal.OutcomeCorrect
					}
				}
			}
			if target < 0 {
				var cands []int
				var weights []float64
				wsum := 0.0
				for p := 0; p < l; p++ {
					d := ln.Iteration - c.lines[p].Iteration
					if d < 1 || d > 3 || outcome[p] != "" {
						continue
					}
					// The loop checks up on risky approvals more than
					// on rejections.
					w := 1.0
					switch {
					case c.lines[p].Decision == "REJECTED":
						w = 0.5
					case topics[c.lineTopic[p]].TrackRecord != "":
						w = 3
					}
					cands = append(cands, p)
					weights = append(weights, w)
					wsum += w
				}
				if len(cands) > 0 {
					x := rng.Float64() * wsum
					target = cands[len(cands)-1]
					for i, w := range weights {
						if x < w {
							target = cands[i]
							break
						}
						x -= w
					}
					verdict = corpusVerdict(rng, &topics[c.lineTopic[target]], c.lines[target].Decision)
				}
			}
			if target >= 0 {
				id := c.lines[target].ID
				ln.Retrograde = corpusRetrograde{PreviousID: &id, Outcome: verdict}
				outcome[target] = verdict
				c.events = append(c.events, corpusEvent{Line: l, Target: target, Outcome: verdict})
			}
		}
		seen[ti] = append(seen[ti], l)
	}

	// Queries: every decision of the topic and of its related topics is
	// relevant; those whose outcome is INCORRECT are to be avoided.
	relevantTopics := func(ti int) map[int]bool {
		set := map[int]bool{ti: true}
		for _, r := range topics[ti].Related {
			set[c.topicIdx[r]] = true
		}
		return set
	}
	type regular struct {
		topic int
		q     corpusTopicQuery
	}
	var regs []regular
	for ti, t := range topics {
		for _, q := range t.Queries {
			regs = append(regs, regular{ti, q})
		}
	}
	for n, r := range regs {
		c.queries = append(c.queries, c.query(fmt.Sprintf("q%03d", n+1), topics[r.topic], r.q, relevantTopics(r.topic), len(c.lines)))
	}
	order := rng.Perm(len(regs))
	made := 0
	for _, n := range order {
		if made == corpusAsOf {
			break
		}
		r := regs[n]
		set := relevantTopics(r.topic)
		var rel []int
		for l, ti := range c.lineTopic {
			if set[ti] {
				rel = append(rel, l)
			}
		}
		if len(rel) < 3 || rel[len(rel)-1]-rel[0] < 30 {
			continue
		}
		// First asOf lines exist: at least the first relevant one, never
		// the last.
		asOf := rel[0] + 1 + rng.IntN(rel[len(rel)-1]-rel[0])
		made++
		q := c.query(fmt.Sprintf("a%03d", made), topics[r.topic], r.q, set, asOf)
		q.AsOfLine = asOf
		c.queries = append(c.queries, q)
	}

	c.journal = corpusJSONL(c.lines)
	c.queryFile = corpusJSONL(c.queries)
	labels := make([]corpusLabel, len(c.lines))
	for l, ln := range c.lines {
		labels[l] = corpusLabel{ID: ln.ID, Topic: topics[c.lineTopic[l]].Topic, Outcome: c.outcomeAsOf(l, len(c.lines))}
		if labels[l].Outcome == "" {
			labels[l].Outcome = journal.OutcomeNA
		}
	}
	c.labelFile = corpusJSONL(labels)
	return c
}

// corpusVerdict decides how a decision of topic t turned out.
func corpusVerdict(rng *rand.Rand, t *corpusTopic, decision string) string {
	pIncorrect := map[string]map[string]float64{
		"APPROVED":     {"": 0.07, "mixed": 0.45, "poor": 0.92},
		"NEEDS_REVIEW": {"": 0.15, "mixed": 0.4, "poor": 0.9},
		"REJECTED":     {"": 0.4, "mixed": 0.25, "poor": 0.08},
	}[decision][t.TrackRecord]
	if rng.Float64() < pIncorrect {
		return journal.OutcomeIncorrect
	}
	return journal.OutcomeCorrect
}

// outcomeAsOf is decision l's outcome when only the first asOf lines exist.
func (c *corpus) outcomeAsOf(l, asOf int) string {
	out := ""
	for _, e := range c.events {
		if e.Line >= asOf {
			break
		}
		if e.Target == l {
			out = e.Outcome
		}
	}
	return out
}

func (c *corpus) query(id string, t corpusTopic, q corpusTopicQuery, set map[int]bool, asOf int) corpusQuery {
	out := corpusQuery{ID: id, Query: q.Q, Category: t.Category, Topic: t.Topic, Kind: q.Kind, Relevant: []string{}, Avoid: []string{}}
	for l := 0; l < asOf; l++ {
		if !set[c.lineTopic[l]] {
			continue
		}
		out.Relevant = append(out.Relevant, c.lines[l].ID)
		if c.outcomeAsOf(l, asOf) == journal.OutcomeIncorrect {
			out.Avoid = append(out.Avoid, c.lines[l].ID)
		}
	}
	return out
}

func corpusJSONL[T any](xs []T) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			panic(err)
		}
	}
	return b.Bytes()
}

func TestCorpus(t *testing.T) {
	topics := corpusLoadTopics(t)
	if errs := corpusCheckTopics(topics); len(errs) > 0 {
		t.Fatalf("topics.json: %d problems:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	c := corpusGenerate(topics)

	files := []struct {
		name string
		data []byte
	}{{"journal.jsonl", c.journal}, {"queries.jsonl", c.queryFile}, {"labels.jsonl", c.labelFile}}
	for _, f := range files {
		path := filepath.Join(corpusDir, f.name)
		if corpusUpdating() {
			if err := os.WriteFile(path, f.data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		disk, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (generate it: go test ./precedent -run TestCorpus -update)", err)
		}
		if !bytes.Equal(disk, f.data) {
			a, b := strings.Split(string(disk), "\n"), strings.Split(string(f.data), "\n")
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Errorf("%s does not match its generator (first difference at line %d); run: go test ./precedent -run TestCorpus -update", path, i+1)
		}
	}

	t.Run("journal", func(t *testing.T) { corpusCheckJournal(t, c) })
	t.Run("queries", func(t *testing.T) { corpusCheckQueries(t, c) })

	kinds := map[string]int{}
	asOf := 0
	for _, q := range c.queries {
		if q.AsOfLine > 0 {
			asOf++
		} else {
			kinds[q.Kind]++
		}
	}
	t.Logf("%d topics, %d decisions in %d iterations, %d verdicts; %d queries %v + %d as_of",
		len(topics), len(c.lines), c.lines[len(c.lines)-1].Iteration, len(c.events), len(c.queries)-asOf, kinds, asOf)
}

func corpusCheckJournal(t *testing.T, c *corpus) {
	if len(c.lines) != corpusDecisions {
		t.Errorf("%d journal lines; want %d", len(c.lines), corpusDecisions)
	}
	ids := map[string]int{}
	perTopic := make([][]int, len(c.topics))
	var prevTS time.Time
	prevIter, prevN := 0, 0
	verdicts, approved := 0, 0
	for l, raw := range bytes.Split(bytes.TrimSuffix(c.journal, []byte("\n")), []byte("\n")) {
		p, warns, bad := journal.ParseDecision(raw)
		if bad != nil {
			t.Fatalf("journal line %d rejected by journal.ParseDecision: %+v", l+1, *bad)
		}
		if len(warns) > 0 {
			t.Errorf("journal line %d: journal.ParseDecision warns: %+v", l+1, warns)
		}
		d := p.Decision
		ln := c.lines[l]
		if d.ID != ln.ID || d.Input != ln.Input {
			t.Fatalf("journal line %d is %s, in memory %s", l+1, d.ID, ln.ID)
		}
		if prev, dup := ids[d.ID]; dup {
			t.Errorf("journal line %d: id %s already on line %d", l+1, d.ID, prev+1)
		}
		ids[d.ID] = l
		m := corpusLineRE.FindStringSubmatch(d.ID)
		if m == nil {
			t.Fatalf("journal line %d: id %q is not iter-N-M", l+1, d.ID)
		}
		it, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if int64(it) != d.Iteration {
			t.Errorf("journal line %d: id %s, iteration %d", l+1, d.ID, d.Iteration)
		}
		switch {
		case it == prevIter && n == prevN+1, it == prevIter+1 && n == 1:
		default:
			t.Errorf("journal line %d: id %s follows iter-%d-%d", l+1, d.ID, prevIter, prevN)
		}
		prevIter, prevN = it, n
		if p.TSTime.IsZero() || !p.TSTime.After(prevTS) {
			t.Errorf("journal line %d: ts %q is not an RFC 3339 time after the previous line's", l+1, d.TS)
		}
		prevTS = p.TSTime
		tp := &c.topics[c.lineTopic[l]]
		perTopic[c.lineTopic[l]] = append(perTopic[c.lineTopic[l]], l)
		if d.Category != tp.Category {
			t.Errorf("journal line %d: category %s; topic %s is %s", l+1, d.Category, tp.Topic, tp.Category)
		}
		if !slices.Contains(corpusTiers(tp), d.Tier) || d.Depth != corpusDepth(tp) {
			t.Errorf("journal line %d: tier %s depth %s do not fit impact %s reversible %v", l+1, d.Tier, d.Depth, tp.Impact, tp.Reversible)
		}
		if d.Confidence == nil || *d.Confidence < 0.5 || *d.Confidence > 0.99 {
			t.Errorf("journal line %d: confidence %v outside 0.5-0.99", l+1, d.Confidence)
		}
		if d.Decision == "APPROVED" {
			approved++
		}
		if p.Event {
			verdicts++
			prev, ok := ids[*d.Retrograde.PreviousID]
			if !ok || prev >= l || c.lines[prev].Iteration >= it {
				t.Errorf("journal line %d: retrograde names %s, not a decision of an earlier iteration", l+1, *d.Retrograde.PreviousID)
			}
			if d.Retrograde.Outcome != journal.OutcomeCorrect && d.Retrograde.Outcome != journal.OutcomeIncorrect {
				t.Errorf("journal line %d: retrograde outcome %s", l+1, d.Retrograde.Outcome)
			}
		} else if d.Retrograde.Outcome != journal.OutcomeNA {
			t.Errorf("journal line %d: retrograde outcome %s without a previous_id", l+1, d.Retrograde.Outcome)
		}
	}
	if prevIter != corpusIterations {
		t.Errorf("%d iterations; want %d", prevIter, corpusIterations)
	}
	if share := float64(verdicts) / float64(len(c.lines)); share < 0.25 || share > 0.35 {
		t.Errorf("%.0f%% of lines carry a verdict; want about 30%%", 100*share)
	}
	if share := float64(approved) / float64(len(c.lines)); share < 0.7 {
		t.Errorf("%.0f%% of decisions APPROVED; want most", 100*share)
	}
	onlyEarly, mostlyIncorrect := 0, 0
	for ti, ls := range perTopic {
		tp := c.topics[ti]
		if len(ls) < corpusMinPerTop || len(ls) > corpusMaxPerTop {
			t.Errorf("topic %s occurs %d times; want %d-%d", tp.Topic, len(ls), corpusMinPerTop, corpusMaxPerTop)
			continue
		}
		if ls[len(ls)-1] < corpusEarlyLines {
			onlyEarly++
		} else if tp.Era == "early" {
			t.Errorf("early topic %s occurs on line %d", tp.Topic, ls[len(ls)-1]+1)
		}
		inc, judged := 0, 0
		for _, l := range ls {
			switch c.outcomeAsOf(l, len(c.lines)) {
			case journal.OutcomeIncorrect:
				inc++
				judged++
			case journal.OutcomeCorrect:
				judged++
			}
		}
		if judged > 0 && 2*inc > judged {
			mostlyIncorrect++
		} else if tp.TrackRecord == "poor" {
			t.Errorf("topic %s has a poor track record but %d of its %d judged decisions are INCORRECT", tp.Topic, inc, judged)
		}
	}
	if onlyEarly < 5 {
		t.Errorf("%d topics occur only in the first %d lines; want at least 5 (a tail -%d cannot see them)", onlyEarly, corpusEarlyLines, corpusTailLines)
	}
	if mostlyIncorrect < 2 {
		t.Errorf("%d topics are mostly INCORRECT; want at least 2", mostlyIncorrect)
	}
}

func corpusCheckQueries(t *testing.T, c *corpus) {
	line := map[string]int{}
	for l, ln := range c.lines {
		line[ln.ID] = l
	}
	ids := map[string]bool{}
	texts := map[string]bool{}
	kinds := map[string]int{}
	regular, asOf := 0, 0
	for _, q := range c.queries {
		if ids[q.ID] {
			t.Errorf("query id %s repeated", q.ID)
		}
		ids[q.ID] = true
		ti, ok := c.topicIdx[q.Topic]
		if !ok {
			t.Errorf("%s: no topic %s", q.ID, q.Topic)
			continue
		}
		tp := c.topics[ti]
		if q.Category != tp.Category || !slices.Contains(corpusKinds, q.Kind) {
			t.Errorf("%s: category %s kind %s", q.ID, q.Category, q.Kind)
		}
		n := len(c.lines)
		if q.AsOfLine > 0 {
			asOf++
			n = q.AsOfLine
		} else {
			regular++
			kinds[q.Kind]++
			if texts[q.Query] {
				t.Errorf("%s: query text %q repeated", q.ID, q.Query)
			}
			texts[q.Query] = true
		}
		if len(q.Relevant) == 0 {
			t.Errorf("%s: no relevant decision", q.ID)
		}
		want := map[string]bool{q.Topic: true}
		for _, r := range tp.Related {
			want[r] = true
		}
		got := map[string]bool{}
		for _, id := range q.Relevant {
			l, ok := line[id]
			if !ok || l >= n {
				t.Errorf("%s: relevant %s is not among the journal's first %d lines", q.ID, id, n)
				continue
			}
			got[id] = true
			rt := c.topics[c.lineTopic[l]]
			if !want[rt.Topic] || slices.Contains(tp.NearMissOf, rt.Topic) {
				t.Errorf("%s: relevant %s is of topic %s, neither %s nor related to it", q.ID, id, rt.Topic, q.Topic)
			}
		}
		for l := 0; l < n; l++ {
			if want[c.topics[c.lineTopic[l]].Topic] && !got[c.lines[l].ID] {
				t.Errorf("%s: %s (topic %s) missing from relevant", q.ID, c.lines[l].ID, c.topics[c.lineTopic[l]].Topic)
			}
		}
		for _, id := range q.Avoid {
			if !got[id] || c.outcomeAsOf(line[id], n) != journal.OutcomeIncorrect {
				t.Errorf("%s: avoid %s is not a relevant decision that was INCORRECT by then", q.ID, id)
			}
		}
	}
	if regular < 250 {
		t.Errorf("%d queries; want at least 250", regular)
	}
	if asOf != corpusAsOf {
		t.Errorf("%d as_of queries; want %d", asOf, corpusAsOf)
	}
	for _, k := range corpusKinds {
		if kinds[k] == 0 {
			t.Errorf("no query of kind %s", k)
		}
	}
}

// --- baselines -------------------------------------------------------------

// corpusMetrics accumulates recall@3 and MRR@10 as defined in
// testdata/precedent/README.md (precedenteval, shared with the hub's
// evaluation).
type corpusMetrics = precedenteval.Metrics

var corpusStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for are was were with that this from have has had not but you your our
		can could should would will what when where which who why how does did into than then them they their its
		all any out about via per instead before after still just also some each every one two`) {
		corpusStop[w] = true
	}
}

// corpusKeywords are the words a plain `grep -i -e w1 -e w2 ...` would be
// given: runs of letters and digits of 3+ characters, minus stopwords.
func corpusKeywords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}) {
		if len(w) >= 3 && !corpusStop[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func corpusReversed(xs []string) []string {
	out := slices.Clone(xs)
	slices.Reverse(out)
	return out
}

// TestCorpusBaselines logs how the seed's precedent retrieval does on the
// committed corpus: `tail -50 journal | grep '"category":"X"'`, and a plain
// whole-file `grep -i` for the query's keywords. grep does not rank; each is
// scored in file order (oldest first, as grep prints) and newest first.
func TestCorpusBaselines(t *testing.T) {
	raws, queries := loadCorpus(t)
	ids := make([]string, len(raws))
	lower := make([]string, len(raws))
	for i, r := range raws {
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(r), &d); err != nil {
			t.Fatal(err)
		}
		ids[i], lower[i] = d.ID, strings.ToLower(r)
	}
	systems := []string{"tail -50 | grep category, oldest first", "tail -50 | grep category, newest first",
		"grep -i keywords, oldest first", "grep -i keywords, newest first"}
	type key struct{ system, group string }
	res := map[key]*corpusMetrics{}
	add := func(s, g string, ranked []string, q corpusQuery) {
		k := key{s, g}
		if res[k] == nil {
			res[k] = &corpusMetrics{}
		}
		res[k].Add(ranked, q.Relevant, q.Avoid)
	}
	for _, q := range queries {
		n := len(raws)
		group := q.Kind
		if q.AsOfLine > 0 {
			n, group = q.AsOfLine, "as_of"
		}
		var tail, grep []string
		for i := max(0, n-corpusTailLines); i < n; i++ {
			if strings.Contains(raws[i], `"category":"`+q.Category+`"`) {
				tail = append(tail, ids[i])
			}
		}
		kws := corpusKeywords(q.Query)
		for i := 0; i < n; i++ {
			if slices.ContainsFunc(kws, func(w string) bool { return strings.Contains(lower[i], w) }) {
				grep = append(grep, ids[i])
			}
		}
		for s, ranked := range [][]string{tail, corpusReversed(tail), grep, corpusReversed(grep)} {
			add(systems[s], group, ranked, q)
			if q.AsOfLine == 0 {
				add(systems[s], "all", ranked, q)
			}
		}
	}
	groups := append([]string{"all"}, corpusKinds...)
	groups = append(groups, "as_of")
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-20s", "")
	for _, s := range systems {
		fmt.Fprintf(&b, " | %-40s", s)
	}
	for _, g := range groups {
		if res[key{systems[0], g}] == nil {
			continue
		}
		fmt.Fprintf(&b, "\n%-16s%4d", g, res[key{systems[0], g}].N)
		for _, s := range systems {
			fmt.Fprintf(&b, " | %-40s", res[key{s, g}])
		}
	}
	t.Log(b.String())
}
