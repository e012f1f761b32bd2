package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/precedent"
	"github.com/orbit-loop/orbit/project"
)

// Targets of `orbit precedent` (the precedent search issue).
const (
	// precedentVsGrepTarget: grep's time over orbit's, at least.
	precedentVsGrepTarget = 10.0
	// precedentVsLogTarget: orbit precedent's time over `orbit log
	// --limit 1` on the same index, at most (issue 21).
	precedentVsLogTarget = 1.3
	// precedentQueries is how many evaluation queries the whole-process
	// comparison cycles through.
	precedentQueries = 20
	// precedentPasses is how many timed passes over every evaluation query
	// the in-process measurement makes (after one untimed pass).
	precedentPasses = 3
	// precedentMaxTerms mirrors precedent.maxTerms: Search uses the first 16
	// words of a query, so grep and rg are given the same ones.
	precedentMaxTerms = 16
	// precedentOwnQueries is how many of the journal's own decision inputs
	// are also timed in process.
	precedentOwnQueries = 100
)

// evalQuery is one line of testdata/precedent/queries.jsonl, as far as the
// suite needs it.
type evalQuery struct {
	ID       string `json:"id"`
	Query    string `json:"query"`
	Category string `json:"category"`
	Kind     string `json:"kind"`
	AsOfLine int    `json:"as_of_line"`
}

func (e *Env) evalQueries() ([]evalQuery, error) {
	if e.Root == "" {
		return nil, errors.New("the precedent suite needs the module's root (Env.Root) to read testdata/precedent")
	}
	data, err := os.ReadFile(filepath.Join(e.Root, "testdata", "precedent", "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	var qs []evalQuery
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var q evalQuery
		if err := json.Unmarshal([]byte(l), &q); err != nil {
			return nil, fmt.Errorf("testdata/precedent/queries.jsonl:%d: %w", i+1, err)
		}
		if q.AsOfLine > 0 {
			q.Kind = "as_of"
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// queryWords are the words Search looks for in q, as grep and rg get them.
func queryWords(q string) []string {
	w := precedent.Tokens(q)
	return w[:min(len(w), precedentMaxTerms)]
}

// ownInputs returns the input of n decisions spread evenly over the journal
// at path (of total lines): queries in the journal's own vocabulary, whose
// words occur in many lines.
func ownInputs(path string, total, n int) ([]evalQuery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	step := max(total/n, 1)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []evalQuery
	for line := 0; sc.Scan() && len(out) < n; line++ {
		if line%step != step/2 {
			continue
		}
		var d struct {
			ID       string `json:"id"`
			Input    string `json:"input"`
			Category string `json:"category"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
		}
		out = append(out, evalQuery{ID: d.ID, Query: d.Input, Category: d.Category, Kind: "journal's own"})
	}
	return out, sc.Err()
}

// latency is one timed in-process search.
type latency struct {
	kind string
	d    time.Duration
	hits int
}

func percentiles(ls []latency) (p50, p90, p99, maxd, mean time.Duration) {
	ds := make([]time.Duration, len(ls))
	var sum time.Duration
	for i, l := range ls {
		ds[i] = l.d
		sum += l.d
	}
	slices.Sort(ds)
	q := func(p float64) time.Duration { return ds[nearestRank(len(ds), p)] }
	return q(0.5), q(0.9), q(0.99), ds[len(ds)-1], sum / time.Duration(len(ds))
}

// searchLatencies times precedent.Search in process on the index at path:
// one untimed pass over qs, then passes timed passes. Options are those of
// `orbit precedent QUERY --category C`: 3 hits, the query's category
// boosted.
func searchLatencies(ctx context.Context, path string, qs []evalQuery, passes int) ([]latency, error) {
	store, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var out []latency
	for pass := range 1 + passes {
		for _, q := range qs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			start := time.Now()
			hits, err := precedent.Search(ctx, store, q.Query, precedent.Options{K: 3, Category: q.Category})
			d := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("precedent.Search(%q): %w", q.Query, err)
			}
			if pass > 0 {
				out = append(out, latency{kind: q.Kind, d: d, hits: len(hits)})
			}
		}
	}
	return out, nil
}

// runPrecedent measures precedent search on the large project: in process
// over the evaluation queries, and as a whole `orbit precedent` process
// against grep and rg finding the same words in the journal and against
// `orbit log --limit 1`; then the search's quality on the evaluation corpus.
func runPrecedent(ctx context.Context, e *Env) (string, error) {
	large := e.Large()
	L := SizeLabel(large)
	dir, err := e.Project(ctx, large)
	if err != nil {
		return "", err
	}
	qs, err := e.evalQueries()
	if err != nil {
		return "", err
	}
	var b strings.Builder

	// Whole process first: the in-process searches grow the harness's peak
	// RSS, and every process it starts afterwards is charged that peak.
	whole, err := e.precedentProcesses(ctx, dir, qs)
	if err != nil {
		return "", err
	}

	// In process.
	e.Logf("precedent: in-process search, %d queries x %d passes on %s", len(qs), precedentPasses, L)
	lat, err := searchLatencies(ctx, IndexPath(dir), qs, precedentPasses)
	if err != nil {
		return "", err
	}
	src, err := e.Journal(large)
	if err != nil {
		return "", err
	}
	own, err := ownInputs(src, large, precedentOwnQueries)
	if err != nil {
		return "", err
	}
	ownLat, err := searchLatencies(ctx, IndexPath(dir), own, precedentPasses)
	if err != nil {
		return "", err
	}
	lt := Table{Header: []string{"queries", "n", "searches", "with a hit", "p50", "p90", "p99", "max", "mean"}}
	addRow := func(name string, n int, ls []latency) {
		if len(ls) == 0 {
			return
		}
		hit := 0
		for _, l := range ls {
			if l.hits > 0 {
				hit++
			}
		}
		p50, p90, p99, mx, mean := percentiles(ls)
		lt.Add(name, fmt.Sprint(n), fmt.Sprint(len(ls)), fmt.Sprintf("%.0f%%", 100*float64(hit)/float64(len(ls))), Dur(p50), Dur(p90), Dur(p99), Dur(mx), Dur(mean))
	}
	addRow("**all evaluation queries**", len(qs), lat)
	var kinds []string
	count := map[string]int{}
	for _, q := range qs {
		if count[q.Kind] == 0 {
			kinds = append(kinds, q.Kind)
		}
		count[q.Kind]++
	}
	for _, k := range kinds {
		var ls []latency
		for _, l := range lat {
			if l.kind == k {
				ls = append(ls, l)
			}
		}
		addRow(k, count[k], ls)
	}
	addRow(fmt.Sprintf("the journal's own inputs (%d decisions spread over it)", len(own)), len(own), ownLat)

	fmt.Fprintf(&b, "### In process, %s decisions\n\n", L)
	fmt.Fprintf(&b, "`precedent.Search` on the %s-decision project's index, opened once with `db.Open` (as every orbit command opens it), for each of the %d evaluation queries of `testdata/precedent/queries.jsonl` with the options of `orbit precedent QUERY --category C` (3 hits, the query's category boosted): one untimed pass, then %d timed passes; percentiles over every timed search. The queries are about an invoicing product and the synthetic journal is not, so they find whatever shares their words: this measures latency, not quality (quality is below). The last row asks the inputs of %d of the journal's own decisions, spread evenly over it: words that occur in many lines, the heavier case a loop repeating its own decisions meets.\n\n",
		L, len(qs), precedentPasses, len(own))
	b.WriteString(lt.String())
	b.WriteString("\n")

	b.WriteString(whole)

	// Quality.
	body, err := e.precedentQuality(ctx)
	if err != nil {
		return "", err
	}
	b.WriteString(body)
	return b.String(), nil
}

// representative picks n of the regular (not as_of) queries, evenly spread
// over the file, so that every kind and many topics are in.
func representative(qs []evalQuery, n int) []evalQuery {
	var regular []evalQuery
	for _, q := range qs {
		if q.AsOfLine == 0 {
			regular = append(regular, q)
		}
	}
	n = min(n, len(regular))
	out := make([]evalQuery, n)
	for i := range n {
		out[i] = regular[i*len(regular)/n]
	}
	return out
}

// matchCount reads the count `grep -c` or `rg -c` prints.
func matchCount(out []byte) (int, error) {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return 0, nil // rg -c prints nothing when nothing matched
	}
	return strconv.Atoi(s)
}

func (e *Env) precedentProcesses(ctx context.Context, dir string, all []evalQuery) (string, error) {
	L := SizeLabel(e.Large())
	qs := representative(all, precedentQueries)
	nq := len(qs)
	runs := max(e.Runs.Small, minTimedRuns)
	runs = (runs + nq - 1) / nq * nq // every query the same number of times
	// query r of round r: warm-up rounds take the first ones.
	query := func(round int) evalQuery { return qs[round%nq] }
	pattern := func(q evalQuery) string { return strings.Join(queryWords(q.Query), "|") }

	type counts struct{ orbit, grep, rg int }
	perQuery := map[string]*counts{}
	for _, q := range qs {
		perQuery[q.ID] = &counts{-1, -1, -1}
	}
	cs := []*contender{{name: "`orbit precedent QUERY`", run: func(round int) (Sample, error) {
		q := query(round)
		s, err := Measure(e.OrbitCmd(dir, "precedent", q.Query))
		if err == nil {
			perQuery[q.ID].orbit = bytes.Count(s.Stdout, []byte{'\n'})
		}
		return s, err
	}}}
	var notes []string
	var grepC, rgC *contender
	if e.Grep == "" {
		notes = append(notes, MissingTool("grep"))
	} else {
		grepC = &contender{name: "`grep -c -i -E 'w1|w2|…' journal`", run: func(round int) (Sample, error) {
			q := query(round)
			s, err := MeasureExit(e.Command(dir, e.Grep, "-c", "-i", "-E", pattern(q), project.DecisionsFile), 1)
			if err == nil {
				perQuery[q.ID].grep, err = matchCount(s.Stdout)
			}
			return s, err
		}}
		cs = append(cs, grepC)
	}
	if e.RG == "" {
		notes = append(notes, MissingPackage("rg", "ripgrep"))
	} else {
		rgC = &contender{name: "`rg -c -i 'w1|w2|…' journal`", run: func(round int) (Sample, error) {
			q := query(round)
			s, err := MeasureExit(e.Command(dir, e.RG, "-c", "-i", pattern(q), project.DecisionsFile), 1)
			if err == nil {
				perQuery[q.ID].rg, err = matchCount(s.Stdout)
			}
			return s, err
		}}
		cs = append(cs, rgC)
	}
	logC := &contender{name: "`orbit log --limit 1`", run: func(int) (Sample, error) {
		s, err := Measure(e.OrbitCmd(dir, "log", "--limit", "1"))
		if err == nil && len(bytes.TrimSpace(s.Stdout)) == 0 {
			err = fmt.Errorf("orbit log --limit 1 in %s printed nothing", dir)
		}
		return s, err
	}}
	cs = append(cs, logC)
	e.Logf("precedent: %d rounds of %d commands on %s", runs, len(cs), L)
	if err := rounds(ctx, runs, cs); err != nil {
		return "", err
	}

	stats := map[*contender]Stats{}
	t := Table{Header: []string{"command", "runs", "median", "p90", "min", "max", "CPU (median)", "peak RSS"}}
	for _, c := range cs {
		st := Summarize(c.samples)
		stats[c] = st
		t.Add(c.name, fmt.Sprint(st.N), Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), PeakRSS(st.MedianRSSKB, st.ParentRSSKB))
	}
	orbit := stats[cs[0]]
	r := Table{Header: []string{"ratio (medians)", "value", "target", ""}}
	if grepC != nil {
		v := float64(stats[grepC].Median) / float64(orbit.Median)
		r.Add("grep ÷ orbit precedent", fmt.Sprintf("%.1f", v), fmt.Sprintf("≥ %.0f", precedentVsGrepTarget), met(v >= precedentVsGrepTarget))
	}
	if rgC != nil {
		v := float64(stats[rgC].Median) / float64(orbit.Median)
		r.Add("rg ÷ orbit precedent", fmt.Sprintf("%.1f", v), "", "")
	}
	v := float64(orbit.Median) / float64(stats[logC].Median)
	r.Add("orbit precedent ÷ orbit log --limit 1", fmt.Sprintf("%.2f", v), fmt.Sprintf("≤ %.1f", precedentVsLogTarget), met(v <= precedentVsLogTarget))

	var b strings.Builder
	fmt.Fprintf(&b, "### Whole process, %s decisions\n\n", L)
	fmt.Fprintf(&b, "`orbit precedent QUERY` in the %s-decision project's directory (it syncs, searches and prints the 3 best hits, tab-separated since stdout is not a terminal) against `grep -i -E` and `rg -i` finding the query's words (`precedent.Tokens`, the words the search uses: lower-cased, stopwords and lone letters dropped, at most %d) anywhere in the same journal's lines, and `orbit log --limit 1` (open the index, sync, print one row) on the same index as the floor of any orbit command. grep and rg count the matching lines (`-c`), so they read the whole file but print nothing: the cheapest form of the seed's `grep -i` (without `-c`, grep writes every matching line, often tens of megabytes). %d evaluation queries, evenly spread over `queries.jsonl` (listed below); round r asks query r mod %d of every command, so each command sees each query equally often; %d timed rounds after %d untimed ones. Locale: %s.\n\n",
		L, precedentMaxTerms, nq, nq, runs, warmups, locale())
	b.WriteString(t.String())
	b.WriteString("\n")
	if strings.Contains(t.String(), "| ≤ ") {
		b.WriteString(rssNote + "\n\n")
	}
	b.WriteString(r.String())
	b.WriteString("\n")
	if v := toolVersions(ctx, e); v != "" {
		b.WriteString(v + "\n\n")
	}
	qt := Table{Header: []string{"query", "kind", "words given to grep and rg", "orbit hits", "grep lines", "rg lines"}}
	var mismatch []string
	for _, q := range qs {
		c := perQuery[q.ID]
		show := func(n int) string {
			if n < 0 {
				return "–"
			}
			return strconv.Itoa(n)
		}
		qt.Add(fmt.Sprintf("%s: %s", q.ID, q.Query), q.Kind, "`"+pattern(q)+"`", show(c.orbit), show(c.grep), show(c.rg))
		if c.grep >= 0 && c.rg >= 0 && c.grep != c.rg {
			mismatch = append(mismatch, q.ID)
		}
	}
	fmt.Fprintf(&b, "<details><summary>The %d queries, and what each command found</summary>\n\n", nq)
	b.WriteString(qt.String())
	b.WriteString("\n</details>\n\n")
	if len(mismatch) > 0 {
		notes = append(notes, fmt.Sprintf("**grep and rg counted different lines for %s** (case folding of non-ASCII letters differs between them).", strings.Join(mismatch, ", ")))
	}
	for _, n := range notes {
		b.WriteString(n + "\n\n")
	}
	return b.String(), nil
}

// locale names the locale the peer tools ran in (grep -i depends on it).
func locale() string {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := os.Getenv(k); v != "" {
			return fmt.Sprintf("`%s=%s`", k, v)
		}
	}
	return "POSIX (no LC_ALL, LC_CTYPE or LANG)"
}

func toolVersions(ctx context.Context, e *Env) string {
	var vs []string
	for _, p := range []string{e.Grep, e.RG} {
		if p == "" {
			continue
		}
		if v := firstLine(output(ctx, "", p, "--version")); v != "" {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return ""
	}
	return "Versions: " + strings.Join(vs, "; ") + "."
}

// precedentQuality runs the precedent evaluation test and returns its
// table with how to reproduce it.
func (e *Env) precedentQuality(ctx context.Context) (string, error) {
	if e.GoTool == "" || e.Root == "" {
		return "", errors.New("the precedent suite needs the go tool and the module's root (Env.GoTool, Env.Root) for the quality table")
	}
	d, err := e.Dir("eval")
	if err != nil {
		return "", err
	}
	out := filepath.Join(d, "eval.md")
	e.Logf("precedent: quality on the evaluation corpus (go test ./precedent -run TestEvalPrecedent)")
	cmd := exec.CommandContext(ctx, e.GoTool, "test", "./precedent", "-run", "^TestEvalPrecedent$", "-count=1", "-args", "-eval-out", out)
	cmd.Dir = e.Root
	if o, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go test ./precedent -run TestEvalPrecedent: %w\n%s", err, tail(string(o), 3000))
	}
	table, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	// A system's name holds a pipe ("tail -50 | grep category") that the
	// test writes unescaped: escape it, or the table has a column too many.
	tab := strings.ReplaceAll(strings.TrimSpace(string(table)), "tail -50 | grep", `tail -50 \| grep`)
	var b strings.Builder
	b.WriteString("### Quality on the evaluation corpus\n\n")
	b.WriteString("Recall@3 and MRR of `orbit precedent` on `testdata/precedent` (1,500 decisions of a B2B invoicing product's loop over 120 iterations; 311 queries with relevance judgments, plus 40 `as_of` queries asked when only the journal's first N lines exist, ranked over those lines only), against the seed's retrieval: `tail -50 journal | grep '\"category\":\"X\"'`, and a whole-file `grep -i` for the query's keywords (words of 3+ letters minus stopwords, anywhere in the raw line), in file order and ranked by how many keywords a line holds (newest first among equals). Over the first 10 results a system returns for each query:\n\n")
	b.WriteString("- **recall@3** = |relevant ∩ top 3| / min(|relevant|, 3), averaged over queries;\n")
	b.WriteString("- **MRR** = mean over queries of 1/rank of the first relevant result, 0 if none is in the top 10.\n\n")
	b.WriteString("orbit is asked as `orbit decide` asks, the query's category boosted and a relevant failed precedent kept among the hits (marked AVOID): its top 3 is a search with `-k 3`, the rest of its first 10 one with `-k 10`; beside it, decisions proved INCORRECT ranked after all the others (the former default). The second table counts, of the queries that have a failed precedent (a relevant decision proved INCORRECT), those whose top 3 shows one. As `TestEvalPrecedent` does.\n\n")
	b.WriteString(tab + "\n\n")
	b.WriteString("Reproduce: `go test ./precedent -run TestEvalPrecedent -count=1 -v -args -eval-out eval.md` (the table is logged and written to `eval.md`); the corpus and its relevance judgments are described in `testdata/precedent/README.md`.\n")
	return b.String(), nil
}
