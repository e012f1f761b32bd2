package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Targets of `orbit knowledge match` (the knowledge patterns issue).
const (
	// knowledgeVsNodeTarget: the seed's node loop's time over orbit's, at
	// least (whole process).
	knowledgeVsNodeTarget = 10.0
	// knowledgeEntries is the size of the synthetic registry.
	knowledgeEntries = 10000
	// knowledgeHit is the entry the matching error text belongs to: near
	// the end, so that the seed's first-match loop walks nearly all.
	knowledgeHit = 9990
	// knowledgeGrepRuns bounds the timed runs of the grep loop (10,000
	// processes each).
	knowledgeGrepRuns = 3
)

// knowledgeFamilies are the error families of the synthetic registry: each
// entry is one family made unique by its number. The patterns use only
// syntax that RE2, JavaScript's RegExp and POSIX ERE (grep -E) read alike.
var knowledgeFamilies = []struct {
	pattern, text, category string
}{
	{`Module not found: Can't resolve '[^']+' in '.*/src/module%d'`, `Module not found: Can't resolve 'lodash' in '/app/src/module%d'`, "webpack"},
	{`TS2322: Type '[^']+' is not assignable to type 'Model%d'`, `TS2322: Type 'string' is not assignable to type 'Model%d'`, "typescript"},
	{`connect ECONNREFUSED 10\.0\.%d\.[0-9]+:5432`, `connect ECONNREFUSED 10.0.%d.7:5432`, "postgres"},
	{`ENOENT: no such file or directory, open '.*/config%d\.json'`, `Error: ENOENT: no such file or directory, open '/srv/app/config%d.json'`, "node"},
	{`(TypeError|ReferenceError): handler%d is not (defined|a function)`, `Uncaught TypeError: handler%d is not a function`, "javascript"},
	{`relation "table_%d" does not exist`, `ERROR: relation "table_%d" does not exist at character 15`, "postgres"},
	{`Cannot read properties of undefined \(reading 'field%d'\)`, `TypeError: Cannot read properties of undefined (reading 'field%d')`, "javascript"},
	{`HTTP (500|502|503) from service-%d\.internal`, `upstream error: HTTP 502 from service-%d.internal after 3 retries`, "http"},
	{`password authentication failed for user "user%d"`, `FATAL: password authentication failed for user "user%d"`, "postgres"},
	{`Hydration failed in component Widget%d because .* does not match`, `Error: Hydration failed in component Widget%d because the initial UI does not match`, "nextjs"},
}

// knowledgeRegistry renders a registry of n entries in the retrospective
// template's shape, laid out as the seed's JSON.stringify(errors, null, 2).
func knowledgeRegistry(n int) ([]byte, error) {
	type entry struct {
		ID           string `json:"id"`
		Pattern      string `json:"pattern"`
		Category     string `json:"category"`
		Context      string `json:"context"`
		Problem      string `json:"problem"`
		Solution     string `json:"solution"`
		CodeFix      string `json:"code_fix"`
		Occurrences  int    `json:"occurrences"`
		LastSeen     string `json:"last_seen"`
		DiscoveredIn string `json:"discovered_in"`
	}
	es := make([]entry, n)
	for i := range es {
		num := i + 1
		fam := knowledgeFamilies[num%len(knowledgeFamilies)]
		es[i] = entry{
			ID: fmt.Sprintf("err-%03d", num), Pattern: fmt.Sprintf(fam.pattern, num), Category: fam.category,
			Context: fmt.Sprintf("Seen while building feature %d", num), Problem: fmt.Sprintf("Cause number %d of the %s family", num, fam.category),
			Solution: fmt.Sprintf("Apply fix %d", num), CodeFix: "", Occurrences: 1, LastSeen: "2026-01-31",
			DiscoveredIn: fmt.Sprintf("track-%d_20260101", num/100),
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Version int     `json:"version"`
		Errors  []entry `json:"errors"`
	}{1, es}); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// knowledgeText is the error text of entry num.
func knowledgeText(num int) string {
	return fmt.Sprintf(knowledgeFamilies[num%len(knowledgeFamilies)].text, num)
}

// seedLookupJS is seed 004's findKnownSolution, verbatim but for the I/O:
// read errors.json, parse it, and test each pattern with new RegExp(p, 'i')
// until one matches.
const seedLookupJS = `const fs = require('fs');
function findKnownSolution(errorMessage) {
  const errors = JSON.parse(fs.readFileSync('conductor/knowledge/errors.json', 'utf8'));
  for (const error of errors.errors) {
    if (new RegExp(error.pattern, 'i').test(errorMessage)) {
      return { found: true, id: error.id, solution: error.solution, code_fix: error.code_fix };
    }
  }
  return { found: false };
}
console.log(JSON.stringify(findKnownSolution(process.argv[2])));
`

// grepLoop is the same loop in a shell: one grep -iE per pattern, until one
// matches; it prints the entry's position. The patterns are extracted from
// errors.json once, beforehand (untimed), which spares the loop a JSON
// parser.
const grepLoop = `n=0; while IFS= read -r p; do n=$((n+1)); if printf '%s\n' "$1" | grep -qiE -- "$p"; then echo "$n"; exit 0; fi; done < patterns.txt; echo none`

// runKnowledge times `orbit knowledge match` over a 10,000-entry registry
// against the seed's lookup in node and a grep -E loop in sh.
func runKnowledge(ctx context.Context, e *Env) (string, error) {
	dir, err := e.NewProject("knowledge")
	if err != nil {
		return "", err
	}
	reg, err := knowledgeRegistry(knowledgeEntries)
	if err != nil {
		return "", err
	}
	kdir := filepath.Join(dir, "conductor", "knowledge")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(kdir, "errors.json"), reg, 0o644); err != nil {
		return "", err
	}
	e.Logf("knowledge: a registry of %d entries (%.1f MB); orbit knowledge import", knowledgeEntries, float64(len(reg))/(1<<20))
	imp, err := Measure(e.OrbitCmd(dir, "knowledge", "import", "--no-decisions"))
	if err != nil {
		return "", err
	}
	if want := fmt.Sprintf("%d entries: %d with a regex", knowledgeEntries, knowledgeEntries); !strings.Contains(string(imp.Stdout), want) {
		return "", fmt.Errorf("orbit knowledge import: output lacks %q:\n%s", want, imp.Stdout)
	}
	var pats strings.Builder
	var parsed struct {
		Errors []struct {
			Pattern string `json:"pattern"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(reg, &parsed); err != nil {
		return "", err
	}
	for _, p := range parsed.Errors {
		pats.WriteString(p.Pattern + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "patterns.txt"), []byte(pats.String()), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "seed-lookup.js"), []byte(seedLookupJS), 0o644); err != nil {
		return "", err
	}
	node, _ := exec.LookPath("node")

	queries := []struct {
		label, text string
		want        int // the entry that matches; 0 for none
	}{
		{fmt.Sprintf("matches entry %d of %d", knowledgeHit, knowledgeEntries), knowledgeText(knowledgeHit), knowledgeHit},
		{"matches no entry", "Segmentation fault (core dumped) in worker 7", 0},
	}
	var notes []string
	if node == "" {
		notes = append(notes, MissingTool("node")+" (package `nodejs`)")
	}
	t := Table{Header: []string{"error text", "command", "median", "p90", "min", "max", "CPU (median)", "peak RSS", "÷ orbit"}}
	r := Table{Header: []string{"ratio (medians, whole process)", "value", "target", ""}}
	for _, q := range queries {
		wantID := "none"
		if q.want > 0 {
			wantID = fmt.Sprintf("err-%03d", q.want)
		}
		orbitC := &contender{name: "`orbit knowledge match`", run: func(int) (Sample, error) {
			s, err := Measure(e.OrbitCmd(dir, "knowledge", "match", "-k", "1", q.text))
			if err == nil {
				err = checkKnowledgeOrbit(s.Stdout, wantID)
			}
			return s, err
		}}
		cs := []*contender{orbitC}
		var nodeC *contender
		if node != "" {
			nodeC = &contender{name: "seed lookup, node (`new RegExp(p, 'i').test` loop)", run: func(int) (Sample, error) {
				s, err := Measure(e.Command(dir, node, "seed-lookup.js", q.text))
				if err == nil {
					err = checkKnowledgeNode(s.Stdout, wantID)
				}
				return s, err
			}}
			cs = append(cs, nodeC)
		}
		e.Logf("knowledge (%s): %d rounds of %d commands", q.label, e.Runs.Small, len(cs))
		if err := rounds(ctx, e.Runs.Small, cs); err != nil {
			return "", err
		}
		grepC := &contender{name: "same loop in sh, `grep -qiE` per pattern", run: func(int) (Sample, error) {
			s, err := Measure(e.Command(dir, "sh", "-c", grepLoop, "sh", q.text))
			if err == nil {
				want := "none"
				if q.want > 0 {
					want = strconv.Itoa(q.want)
				}
				if got := strings.TrimSpace(string(s.Stdout)); got != want {
					err = fmt.Errorf("the grep loop found %q; want %s", got, want)
				}
			}
			return s, err
		}}
		runs := min(knowledgeGrepRuns, e.Runs.Small)
		e.Logf("knowledge (%s): %d runs of the grep loop (10,000 processes each)", q.label, runs)
		for round := range runs {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			s, err := grepC.run(round)
			if err != nil {
				return "", err
			}
			grepC.samples = append(grepC.samples, s)
		}
		cs = append(cs, grepC)
		ost := Summarize(orbitC.samples)
		for _, c := range cs {
			st := Summarize(c.samples)
			t.Add(q.label, c.name, Dur(st.Median), Dur(st.P90), Dur(st.Min), Dur(st.Max), Dur(st.MedianCPU), MB(st.MedianRSSKB), Ratio(st.Median, ost.Median))
		}
		if nodeC != nil {
			v := float64(Summarize(nodeC.samples).Median) / float64(ost.Median)
			r.Add(fmt.Sprintf("node ÷ orbit, %s", q.label), fmt.Sprintf("%.1f", v), fmt.Sprintf("≥ %.0f", knowledgeVsNodeTarget), met(v >= knowledgeVsNodeTarget))
		}
		v := float64(Summarize(grepC.samples).Median) / float64(ost.Median)
		r.Add(fmt.Sprintf("grep loop ÷ orbit, %s", q.label), fmt.Sprintf("%.0f", v), fmt.Sprintf("≥ %.0f", knowledgeVsNodeTarget), met(v >= knowledgeVsNodeTarget))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "One error text looked up in a registry of %d known errors (`conductor/knowledge/errors.json`, %.1f MB, the retrospective template's shape, laid out as the seed's `JSON.stringify(errors, null, 2)` writes it; ten error families of realistic patterns, each entry made unique by its number), as whole processes run in the project's directory. ", knowledgeEntries, float64(len(reg))/(1<<20))
	fmt.Fprintf(&b, "orbit reads its index (`orbit knowledge import` indexed the registry once, in %s; every match then costs one `stat` of the unchanged file), runs only the regexes whose required literal occurs in the text (a trigram index finds them), records the match in `.claude/orbit-knowledge.jsonl` and prints the ranked solutions. ", Dur(imp.Wall))
	fmt.Fprintf(&b, "The seed's lookup (`findKnownSolution` in seed 004) parses the whole file and compiles and tests each pattern in turn until one matches; the shell loop does the same with one `grep -qiE` process per pattern. All three are checked to find the same entry. %d rounds of orbit and node, interleaved, after %d untimed rounds; %d runs of the grep loop.\n\n",
		e.Runs.Small, warmups, min(knowledgeGrepRuns, e.Runs.Small))
	b.WriteString(t.String())
	b.WriteString("\n")
	b.WriteString(r.String())
	b.WriteString("\n")
	fmt.Fprintf(&b, "Commands:\n\n```sh\norbit knowledge match -k 1 %s\nnode seed-lookup.js %s    # seed 004's findKnownSolution\nsh -c %s sh %s\n```\n\n",
		ShellQuote(knowledgeText(knowledgeHit)), ShellQuote(knowledgeText(knowledgeHit)), ShellQuote(grepLoop), ShellQuote(knowledgeText(knowledgeHit)))
	for _, n := range notes {
		b.WriteString(n + "\n\n")
	}
	return b.String(), nil
}

// checkKnowledgeOrbit checks the first line of `orbit knowledge match`
// (piped: rank, match, score, id, …) names wantID ("none": no output).
func checkKnowledgeOrbit(out []byte, wantID string) error {
	fields := strings.Split(strings.SplitN(string(out), "\n", 2)[0], "\t")
	got := "none"
	if len(fields) > 3 {
		got = fields[3]
	}
	if got != wantID {
		return fmt.Errorf("orbit knowledge match found %s; want %s:\n%s", got, wantID, out)
	}
	return nil
}

func checkKnowledgeNode(out []byte, wantID string) error {
	var r struct {
		Found bool   `json:"found"`
		ID    string `json:"id"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("the node lookup printed %q: %w", out, err)
	}
	got := "none"
	if r.Found {
		got = r.ID
	}
	if got != wantID {
		return fmt.Errorf("the node lookup found %s; want %s", got, wantID)
	}
	return nil
}
