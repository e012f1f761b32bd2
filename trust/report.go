package trust

import (
	"math"
	"sort"
)

// Z95 is the normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Interval is a 95% Wilson score interval for an accuracy.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Wilson returns the 95% Wilson interval of correct out of n: honest even
// for n = 4, where a plain correct/n would claim too much. n = 0 gives
// [0, 1].
func Wilson(correct, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	p := float64(correct) / float64(n)
	z2 := Z95 * Z95
	nf := float64(n)
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := Z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return Interval{Low: math.Max(0, center-half), High: math.Min(1, center+half)}
}

// Stat is accuracy over a set of scored decisions, with its interval.
// Need, for a rolling window, is how many decisions it is meant to hold.
type Stat struct {
	N         int      `json:"n"`
	Correct   int      `json:"correct"`
	Incorrect int      `json:"incorrect"`
	Accuracy  float64  `json:"accuracy"`
	CI95      Interval `json:"ci95"`
	Need      int      `json:"need,omitempty"`
}

// UnknownFields: with nothing scored, the accuracy is unknown.
func (s Stat) UnknownFields() []string { return unknownIf(s.N == 0, "accuracy") }

// NewStat counts a set.
func NewStat(correct, incorrect int) Stat {
	w := NewWindow(correct, incorrect)
	return Stat{N: w.N, Correct: correct, Incorrect: incorrect, Accuracy: w.Accuracy, CI95: Wilson(correct, w.N)}
}

// Group is the accuracy of the decisions sharing a value (a category, a
// tier, a depth, a requestor, an iteration).
type Group struct {
	Value string `json:"value"`
	Stat
}

// IterationStat is the accuracy of one iteration's decisions.
type IterationStat struct {
	Iteration int64 `json:"iteration"`
	Stat
}

// Bucket is what the index keeps per confidence bucket (round(c*100)):
// counts and sums of confidence in millionths.
type Bucket struct {
	Bucket       int64 `db:"bucket"`
	N            int64 `db:"n"`
	Correct      int64 `db:"correct"`
	ConfU        int64 `db:"conf_u"`
	Conf2U2      int64 `db:"conf2_u2"`
	ConfCorrectU int64 `db:"conf_correct_u"`
}

// Bin is one row of the reliability table.
type Bin struct {
	Low            float64  `json:"low"`
	High           float64  `json:"high"`
	N              int      `json:"n"`
	MeanConfidence float64  `json:"mean_confidence"`
	Accuracy       float64  `json:"accuracy"`
	CI95           Interval `json:"ci95"`
}

// UnknownFields: an empty bin has no mean confidence or accuracy.
func (b Bin) UnknownFields() []string { return unknownIf(b.N == 0, "mean_confidence", "accuracy") }

// Calibration says how well stated confidence predicts outcomes.
type Calibration struct {
	// N is the number of scored decisions that state a confidence.
	N int `json:"n"`
	// Brier is the mean squared error of confidence against the outcome
	// (1 correct, 0 incorrect): 0 is perfect, 0.25 is a coin stated at 0.5.
	Brier float64 `json:"brier"`
	// Reliability, Resolution and Uncertainty are Murphy's decomposition
	// over the bins: Brier = Reliability - Resolution + Uncertainty +
	// WithinBin, the last being what binning hides (the spread of
	// confidence inside each bin).
	Reliability float64 `json:"reliability"`
	Resolution  float64 `json:"resolution"`
	Uncertainty float64 `json:"uncertainty"`
	WithinBin   float64 `json:"within_bin"`
	// ECE is the expected calibration error: the count-weighted mean gap
	// between confidence and accuracy over the bins.
	ECE  float64 `json:"ece"`
	Bins []Bin   `json:"bins"`
}

// UnknownFields: without a stated confidence, no score is known.
func (c Calibration) UnknownFields() []string {
	return unknownIf(c.N == 0, "brier", "reliability", "resolution", "uncertainty", "within_bin", "ece")
}

// micro is the unit of confidence sums: millionths.
const micro = 1e6

// Calibrate computes calibration from confidence buckets, grouped into nbins
// equal bins over [0, 1] (a bucket b, confidence b/100 rounded, falls in bin
// min(nbins-1, floor(b*nbins/100))).
func Calibrate(buckets []Bucket, nbins int) Calibration {
	if nbins < 1 {
		nbins = 10
	}
	type acc struct{ n, correct, confU, conf2U2, confCorrectU int64 }
	bins := make([]acc, nbins)
	var total acc
	for _, b := range buckets {
		if b.N == 0 {
			continue
		}
		i := min(int(b.Bucket)*nbins/100, nbins-1)
		for _, a := range []*acc{&bins[i], &total} {
			a.n += b.N
			a.correct += b.Correct
			a.confU += b.ConfU
			a.conf2U2 += b.Conf2U2
			a.confCorrectU += b.ConfCorrectU
		}
	}
	c := Calibration{N: int(total.n), Bins: []Bin{}}
	if total.n == 0 {
		return c
	}
	n := float64(total.n)
	// Σ(f - y)² = Σf² - 2Σf·y + Σy, with y in {0, 1}.
	c.Brier = (float64(total.conf2U2)/(micro*micro) - 2*float64(total.confCorrectU)/micro + float64(total.correct)) / n
	obar := float64(total.correct) / n
	c.Uncertainty = obar * (1 - obar)
	for i, b := range bins {
		bin := Bin{Low: float64(i) / float64(nbins), High: float64(i+1) / float64(nbins), N: int(b.n), CI95: Wilson(int(b.correct), int(b.n))}
		if b.n > 0 {
			nk := float64(b.n)
			bin.MeanConfidence = float64(b.confU) / micro / nk
			bin.Accuracy = float64(b.correct) / nk
			c.Reliability += nk * (bin.MeanConfidence - bin.Accuracy) * (bin.MeanConfidence - bin.Accuracy) / n
			c.Resolution += nk * (bin.Accuracy - obar) * (bin.Accuracy - obar) / n
			c.ECE += nk / n * math.Abs(bin.MeanConfidence-bin.Accuracy)
		}
		c.Bins = append(c.Bins, bin)
	}
	c.WithinBin = c.Brier - (c.Reliability - c.Resolution + c.Uncertainty)
	return c
}

// Report is everything `orbit trust` shows.
type Report struct {
	// Decisions is how many decisions of the journal the report covers;
	// WithOutcome how many of them are scored.
	Decisions   int `json:"decisions"`
	WithOutcome int `json:"with_outcome"`
	// Correct, Incorrect, Accuracy and CI95 are the loop's overall
	// figures: the Baseline adopted from before orbit (unfiltered reports
	// only; zero when none) plus the outcomes recorded since.
	Correct   int      `json:"correct"`
	Incorrect int      `json:"incorrect"`
	Accuracy  float64  `json:"accuracy"`
	CI95      Interval `json:"ci95"`
	Baseline  Stat     `json:"baseline"`
	// Last20 and Last10 are the rolling windows of recorded outcomes; Need
	// says how many each is meant to hold.
	Last20    Stat   `json:"last20"`
	Last10    Stat   `json:"last10"`
	Level     Level  `json:"level"`
	Alert     bool   `json:"alert"`
	AlertText string `json:"alert_text,omitempty"`

	ByCategory  []Group         `json:"by_category"`
	ByTier      []Group         `json:"by_tier"`
	ByDepth     []Group         `json:"by_depth"`
	ByRequestor []Group         `json:"by_requestor"`
	Iterations  []IterationStat `json:"iterations"`
	Calibration Calibration     `json:"calibration"`

	// Filter says what narrowed the report ("" for the whole journal).
	Filter string `json:"filter,omitempty"`
}

// UnknownFields: with nothing scored, the accuracy is unknown.
func (r Report) UnknownFields() []string { return unknownIf(r.Correct+r.Incorrect == 0, "accuracy") }

// Cell is the count of scored decisions sharing category, tier, depth and
// requestor.
type Cell struct {
	Category  string `db:"category"`
	Tier      string `db:"tier"`
	Depth     string `db:"depth"`
	Requestor string `db:"requestor"`
	Correct   int64  `db:"correct"`
	Incorrect int64  `db:"incorrect"`
}

// Aggregates are the inputs of a report, from the index's derived tables
// or from scored rows.
type Aggregates struct {
	Decisions  int
	Cells      []Cell
	Iterations []IterationCount
	Buckets    []Bucket
	// LatestNewestFirst are the current outcomes (true: CORRECT) of the
	// latest scored decisions, at least 20 of them when there are.
	LatestNewestFirst []bool
	// Baseline is the counters adopted from before orbit (zero when none,
	// and for a filtered report: they cannot be filtered).
	Baseline Window
}

// IterationCount is the scored decisions of one iteration.
type IterationCount struct {
	Iteration int64 `db:"iteration"`
	Correct   int64 `db:"correct"`
	Incorrect int64 `db:"incorrect"`
}

// Build turns aggregates into a report: headline, breakdowns, the latest
// iterations (at most maxIterations, oldest first) and calibration over
// nbins bins.
func Build(a Aggregates, nbins, maxIterations int) Report {
	var r Report
	r.Decisions = a.Decisions
	by := map[string]map[string]*Stat{"category": {}, "tier": {}, "depth": {}, "requestor": {}}
	add := func(dim, value string, c, i int) {
		s, ok := by[dim][value]
		if !ok {
			s = &Stat{}
			by[dim][value] = s
		}
		s.Correct += c
		s.Incorrect += i
	}
	for _, c := range a.Cells {
		ci, ii := int(c.Correct), int(c.Incorrect)
		if ci+ii == 0 {
			continue
		}
		r.Correct += ci
		r.Incorrect += ii
		add("category", c.Category, ci, ii)
		add("tier", c.Tier, ci, ii)
		add("depth", c.Depth, ci, ii)
		requestor := c.Requestor
		if requestor == "" {
			requestor = "(none)"
		}
		add("requestor", requestor, ci, ii)
	}
	r.WithOutcome = r.Correct + r.Incorrect
	h := headline(r.Correct, r.Incorrect, a.Baseline, a.LatestNewestFirst)
	all := NewStat(h.Correct, h.Incorrect)
	r.Correct, r.Incorrect, r.Accuracy, r.CI95 = h.Correct, h.Incorrect, all.Accuracy, all.CI95
	r.Baseline = NewStat(a.Baseline.Correct, a.Baseline.Incorrect)
	r.Last20 = NewStat(h.Last20.Correct, h.Last20.Incorrect)
	r.Last20.Need = h.Last20.Need
	r.Last10 = NewStat(h.Last10.Correct, h.Last10.Incorrect)
	r.Last10.Need = h.Last10.Need
	r.Level, r.Alert = h.Level, h.Alert
	r.AlertText = h.Warning()
	groups := func(dim string) []Group {
		out := []Group{}
		for v, s := range by[dim] {
			out = append(out, Group{Value: v, Stat: NewStat(s.Correct, s.Incorrect)})
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].N != out[j].N {
				return out[i].N > out[j].N
			}
			return out[i].Value < out[j].Value
		})
		return out
	}
	r.ByCategory, r.ByTier, r.ByDepth, r.ByRequestor = groups("category"), groups("tier"), groups("depth"), groups("requestor")
	its := append([]IterationCount(nil), a.Iterations...)
	sort.Slice(its, func(i, j int) bool { return its[i].Iteration < its[j].Iteration })
	var nonEmpty []IterationCount
	for _, it := range its {
		if it.Correct+it.Incorrect > 0 {
			nonEmpty = append(nonEmpty, it)
		}
	}
	if maxIterations > 0 && len(nonEmpty) > maxIterations {
		nonEmpty = nonEmpty[len(nonEmpty)-maxIterations:]
	}
	r.Iterations = []IterationStat{}
	for _, it := range nonEmpty {
		r.Iterations = append(r.Iterations, IterationStat{Iteration: it.Iteration, Stat: NewStat(int(it.Correct), int(it.Incorrect))})
	}
	r.Calibration = Calibrate(a.Buckets, nbins)
	return r
}

// Scored is one scored decision, for reports narrowed by a filter.
type Scored struct {
	Seq        int64    `db:"seq"`
	Iteration  int64    `db:"iteration"`
	Category   string   `db:"category"`
	Tier       string   `db:"tier"`
	Depth      string   `db:"depth"`
	Requestor  string   `db:"requestor"`
	Confidence *float64 `db:"confidence"`
	Correct    bool     `db:"correct"`
}

// Aggregate folds scored decisions, in journal order, into aggregates: the
// same figures the index's triggers keep, computed from rows.
func Aggregate(decisions int, rows []Scored) Aggregates {
	a := Aggregates{Decisions: decisions}
	cells := map[Cell]*Cell{}
	its := map[int64]*IterationCount{}
	buckets := map[int64]*Bucket{}
	for _, s := range rows {
		key := Cell{Category: s.Category, Tier: s.Tier, Depth: s.Depth, Requestor: s.Requestor}
		c, ok := cells[key]
		if !ok {
			c = &Cell{Category: s.Category, Tier: s.Tier, Depth: s.Depth, Requestor: s.Requestor}
			cells[key] = c
		}
		it, ok := its[s.Iteration]
		if !ok {
			it = &IterationCount{Iteration: s.Iteration}
			its[s.Iteration] = it
		}
		ok1 := int64(0)
		if s.Correct {
			c.Correct++
			it.Correct++
			ok1 = 1
		} else {
			c.Incorrect++
			it.Incorrect++
		}
		if s.Confidence != nil {
			b := int64(math.Round(*s.Confidence * 100))
			u := int64(math.Round(*s.Confidence * micro))
			bk, ok := buckets[b]
			if !ok {
				bk = &Bucket{Bucket: b}
				buckets[b] = bk
			}
			bk.N++
			bk.Correct += ok1
			bk.ConfU += u
			bk.Conf2U2 += u * u
			bk.ConfCorrectU += u * ok1
		}
	}
	for _, c := range cells {
		a.Cells = append(a.Cells, *c)
	}
	for _, it := range its {
		a.Iterations = append(a.Iterations, *it)
	}
	for _, b := range buckets {
		a.Buckets = append(a.Buckets, *b)
	}
	for i := len(rows) - 1; i >= 0 && len(a.LatestNewestFirst) < 20; i-- {
		a.LatestNewestFirst = append(a.LatestNewestFirst, rows[i].Correct)
	}
	return a
}

// Sparkline draws accuracies (0..1) as block characters, one per value.
func Sparkline(values []float64) string {
	const blocks = "▁▂▃▄▅▆▇█"
	rs := []rune(blocks)
	out := make([]rune, len(values))
	for i, v := range values {
		k := int(math.Round(v * float64(len(rs)-1)))
		out[i] = rs[max(0, min(len(rs)-1, k))]
	}
	return string(out)
}
