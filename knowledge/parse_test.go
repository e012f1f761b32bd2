package knowledge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/orbit-loop/orbit/jsonedit"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		present bool
		want    string
		why     string // substring
		spec    int
	}{
		{"absent", "", false, StateNone, "no pattern", 0},
		{"empty", "", true, StateNone, "empty pattern", 0},
		{"blank", "   ", true, StateNone, "empty pattern", 0},
		{"literal", "NEXT_REDIRECT", true, StateOK, "", 13},
		{"group", "Cannot find module '([^']+)'", true, StateOK, "", 21},
		{"alternation", "rate limit(ed)? exceeded|429 Too Many Requests", true, StateOK, "", 19},
		{"dot star", ".*", true, StateMatchesAll, "matches any text", 0},
		{"dot plus", ".+", true, StateMatchesAll, "matches any text", 0},
		{"word star", `\w*`, true, StateMatchesAll, "matches any text", 0},
		{"caret", "^", true, StateMatchesAll, "matches any text", 0},
		{"empty alternative", "foo|", true, StateMatchesAll, "matches any text", 0},
		{"unclosed", "(unclosed group", true, StateInvalid, "missing closing )", 0},
		// Valid JavaScript RE2 cannot run: the construct named, full text.
		{"lookbehind", "(?<=foo)bar", true, StateUnsupported, "uses a lookbehind, `(?<=…)`, which Go's RE2 does not support", 0},
		{"negative lookbehind", `x(?<!y)z`, true, StateUnsupported, "a negative lookbehind, `(?<!…)`", 0},
		{"lookahead", "foo(?=bar)", true, StateUnsupported, "uses a lookahead, `(?=…)`", 0},
		{"negative lookahead", "^(?!WARN).*error", true, StateUnsupported, "a negative lookahead, `(?!…)`", 0},
		{"backreference", `(a)\1`, true, StateUnsupported, "uses a backreference, `\\1`", 0},
		{"named backreference", `(?<q>['"]).*\k<q>`, true, StateUnsupported, "a named backreference, `\\k<q>`", 0},
		{"in a class it is literal", `[(?=]x(`, true, StateInvalid, "missing closing )", 0},
		{"repeat count", "a{1001}", true, StateInvalid, "invalid repeat count", 0},
		{"too long", strings.Repeat("a", maxPatternBytes+1), true, StateInvalid, "at most", 0},
		{"exponential in backtracking engines", "(a+)+$", true, StateOK, "", 1},
		{"ReDoS example", "^(([a-z])+.)+[A-Z]([a-z])+$", true, StateOK, "", 0},
		{"anchored class", `^\w+$`, true, StateOK, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, why, _, spec := classify(tt.pattern, tt.present)
			if state != tt.want || !strings.Contains(why, tt.why) || spec != tt.spec {
				t.Errorf("classify(%q) = %s, %q, specificity %d; want %s, %q, %d", tt.pattern, state, why, spec, tt.want, tt.why, tt.spec)
			}
		})
	}
}

func TestPrefilter(t *testing.T) {
	tests := []struct {
		pattern string
		want    string // requirements: sets joined by " & ", literals by "|"
		spec    int
	}{
		{"NEXT_REDIRECT", "NEXT_REDIRECT", 13},
		{"Cannot find module '([^']+)'", "CANNOT FIND MODULE ' & '", 21},
		{"colou?r", "COLOR|COLOUR", 5},
		{"(foo|bar)baz", "BARBAZ|FOOBAZ", 6},
		{"foo.*barbaz", "FOO & BARBAZ", 9},
		{"[Ee]rror: (\\d+)", "ERROR: ", 7},
		{"(a+)+$", "A", 1},
		{`^\w+$`, "", 0},
		{"x*", "", 0},
		{"Straße", "STRAßE", 6},
		{"Module not found: Can't resolve '[^']+' in '.*/src/module42'", "MODULE NOT FOUND: CAN'T RESOLVE ' & ' IN ' & /SRC/MODULE42'", 53},
	}
	for _, tt := range tests {
		reqs, spec := prefilter(tt.pattern)
		var parts []string
		for _, r := range reqs {
			parts = append(parts, strings.Join(r, "|"))
		}
		if got := strings.Join(parts, " & "); got != tt.want || spec != tt.spec {
			t.Errorf("prefilter(%q) = %q, %d; want %q, %d", tt.pattern, got, spec, tt.want, tt.spec)
		}
	}
}

func TestRarest(t *testing.T) {
	shared := map[string]int{"MODULE NOT FOUND: '": 1000, "/SRC/MODULE42'": 1, "AB": 0}
	reqs := [][]string{{"MODULE NOT FOUND: '"}, {"AB"}, {"/SRC/MODULE42'"}}
	if got := rarest(reqs, shared); strings.Join(got, "|") != "/SRC/MODULE42'" {
		t.Errorf("rarest = %q; want the literal one entry requires", got)
	}
}

// FuzzPrefilter checks the promise the match index rests on: whenever a
// usable pattern matches a text, the text holds one of its literals.
func FuzzPrefilter(f *testing.F) {
	seeds := [][2]string{
		{"Cannot find module '([^']+)'", "Error: cannot FIND module 'react'"},
		{"colou?r", "COLOR"},
		{"ſtraße", "STRASSE straße"},
		{"[Kk]elvin", "\u212aelvin"},
		{"(?-i)Foo|bar", "xBARx"},
		{"a\\bb", "a b"},
		{"(foo|)bar", "bar"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		state, _, reqs, _ := classify(pattern, true)
		if state != StateOK {
			return
		}
		re, err := compilePattern(pattern)
		if err != nil {
			t.Fatalf("classified ok but does not compile: %v", err)
		}
		if !re.MatchString(text) {
			return
		}
		ft := fold(text)
	next:
		for _, req := range reqs {
			for _, a := range req {
				if strings.Contains(ft, a) {
					continue next
				}
			}
			t.Fatalf("%q matches %q, which holds none of the literals %q (folded text %q)", pattern, text, req, ft)
		}
	})
}

// TestPathologicalLinear runs the patterns that take exponential time in a
// backtracking engine (JavaScript's RegExp, Perl, PCRE) over inputs that
// trigger it: RE2 finishes them in linear time.
func TestPathologicalLinear(t *testing.T) {
	inputs := map[string]string{
		"(a+)+$":                       strings.Repeat("a", 100000) + "!",
		"(x+x+)+y":                     strings.Repeat("x", 100000),
		"^(([a-z])+.)+[A-Z]([a-z])+$":  strings.Repeat("a", 100000) + "!",
		"(.*a){20}":                    strings.Repeat("a", 5000) + "b",
		"^(\\w+\\s?)*$":                strings.Repeat("word ", 20000) + "!",
		"(a|aa)+$":                     strings.Repeat("a", 100000) + "b",
		"([a-zA-Z]+)*@example\\.com$":  strings.Repeat("a", 100000) + "@example.org",
		"(?:[^\"\\\\]|\\\\.)*\"x\"end": strings.Repeat("\\a", 50000),
	}
	start := time.Now()
	for p, in := range inputs {
		re, err := compilePattern(p)
		if err != nil {
			t.Fatalf("compilePattern(%q): %v", p, err)
		}
		re.MatchString(in)
	}
	// Not a timing assertion (the machine may be busy): a backtracking
	// engine would not finish at all. Report the figure.
	t.Logf("%d pathological patterns over 100 KB inputs: %s", len(inputs), time.Since(start))
}

func TestFold(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"abcXYZ09-", "ABCXYZ09-"},
		{"straße", "STRAßE"},
		{"\u212aelvin", "KELVIN"},
		{"ſ", "S"},
	} {
		if got := fold(tt.in); got != tt.want {
			t.Errorf("fold(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	if fold("Σσς") != fold("σΣς") {
		t.Errorf("fold does not equate the sigmas: %q vs %q", fold("Σσς"), fold("σΣς"))
	}
}

// shapeView is what the golden files record of a parsed registry.
type shapeView struct {
	Shape    string      `json:"shape"`
	Entries  []entryView `json:"entries"`
	Problems []string    `json:"problems"`
}

type entryView struct {
	Key         string     `json:"key"`
	Line        int        `json:"line"`
	Kind        string     `json:"kind"`
	Name        string     `json:"name"`
	Pattern     string     `json:"pattern,omitempty"`
	State       string     `json:"pattern_state"`
	Why         string     `json:"why,omitempty"`
	Reqs        [][]string `json:"requirements,omitempty"`
	Specificity int        `json:"specificity,omitempty"`
	Category    string     `json:"category,omitempty"`
	Track       string     `json:"track,omitempty"`
	Symptom     string     `json:"symptom,omitempty"`
	Solution    string     `json:"solution,omitempty"`
	CodeFix     string     `json:"code_fix,omitempty"`
	Occurrences int64      `json:"occurrences,omitempty"`
	LastSeen    string     `json:"last_seen,omitempty"`
	Shape       string     `json:"shape"`
}

func view(shape string, es []Entry, probs []Problem) shapeView {
	v := shapeView{Shape: shape, Entries: []entryView{}, Problems: []string{}}
	for _, e := range es {
		v.Entries = append(v.Entries, entryView{Key: e.Key, Line: e.Line, Kind: e.Kind, Name: e.Name, Pattern: e.Pattern, State: e.State,
			Why: e.StateWhy, Reqs: e.Reqs, Specificity: e.Specificity, Category: e.Category, Track: e.Track, Symptom: e.Symptom,
			Solution: e.Solution, CodeFix: e.CodeFix, Occurrences: e.Occurrences, LastSeen: e.LastSeen, Shape: e.Shape})
	}
	for _, p := range probs {
		v.Problems = append(v.Problems, p.Error())
	}
	return v
}

// TestRegistryGolden reads errors.json in each shape seen (or documented)
// in the wild.
func TestRegistryGolden(t *testing.T) {
	tests := []struct {
		file, shape string
	}{
		{"gearsnitch.errors.json", ShapeFreeForm},
		{"RTS-Commander.errors.json", ShapeScaffold},
		{"talemate.errors.json", ShapeScaffold},
		{"template.errors.json", ShapeTemplate},
		{"loop-fixer.errors.json", ShapeLoopFixer},
		{"hostile.errors.json", ShapeLoopFixer},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			reg, err := parseRegistry(tt.file, readFixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if reg.shape != tt.shape {
				t.Errorf("shape = %s; want %s", reg.shape, tt.shape)
			}
			goldenJSON(t, strings.TrimSuffix(tt.file, ".json")+".import.golden", view(reg.shape, reg.entries, reg.problems))
		})
	}
}

func TestRegistryNotARegistry(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"syntax", "{\n  \"errors\": [\n    {\"id\": 1,}\n  ]\n}", "errors.json:3:14: not valid JSON: unexpected '}'"},
		{"no errors", `{"version": 1}`, `errors.json:1: no "errors" array`},
		{"errors not array", "{\n\"errors\": {}}", `errors.json:2: "errors" is an object, not an array`},
		{"string", `"x"`, "errors.json:1: the file is a string"},
		{"truncated", `{"errors": [{"id": "err-001", "pattern": "x`, "errors.json:1:44: not valid JSON: unexpected end of file in a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseRegistry("errors.json", []byte(tt.in))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("parseRegistry(%q) = %v; want an error starting %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestPatternsGolden(t *testing.T) {
	for _, file := range []string{"gearsnitch.patterns.md", "RTS-Commander.patterns.md", "talemate.patterns.md", "template.patterns.md"} {
		t.Run(file, func(t *testing.T) {
			es, probs := parsePatterns(file, readFixture(t, file))
			goldenJSON(t, strings.TrimSuffix(file, ".md")+".import.golden", view(patternsShape(es), es, probs))
		})
	}
}

func TestPatternsCases(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		names []string
	}{
		{"placeholders only", "## A\n(add as discovered)\n\n## B\n- (add as discovered)\n", nil},
		{"crlf and bom", "\ufeff## A\r\n- first\r\n- second\r\n", []string{"first", "second"}},
		{"continuation", "## A\n- first line\n  continued\nlazy\n\n  after blank\n- second\n", []string{"first line", "second"}},
		{"numbered", "## Steps\n1. one\n2) two\n", []string{"one", "two"}},
		{"fence hides headings", "### Real\n```\n### fake\n- fake\n```\n**Solution**: x\n", []string{"Real"}},
		{"deep heading stays inside", "### Entry\n#### Detail\ntext\n### Next\n", []string{"Entry", "Next"}},
		{"intro paragraph is not an entry", "# Title\n\nSome intro.\n\n## A\nParagraph text.\n- bullet\n", []string{"bullet"}},
		{"unterminated fence", "### A\n```\nnever closed\n- not a bullet", []string{"A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, _ := parsePatterns("p.md", []byte(tt.in))
			var got []string
			for _, e := range es {
				got = append(got, e.Name)
			}
			if strings.Join(got, "|") != strings.Join(tt.names, "|") {
				t.Errorf("names = %q; want %q", got, tt.names)
			}
		})
	}
}

// FuzzParseRegistry: any bytes either fail with file:line or give entries
// on lines of the file, with keys unique in it, and setMembers edits that
// keep the document valid JSON.
func FuzzParseRegistry(f *testing.F) {
	for _, name := range []string{"gearsnitch.errors.json", "RTS-Commander.errors.json", "template.errors.json", "hostile.errors.json"} {
		b, err := readFixtureFile(name)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`[{"id":"a","pattern":"x"},{"id":"a"},{}]`))
	locRE := regexp.MustCompile(`^errors\.json:\d+(:\d+)?: `)
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := parseRegistry("errors.json", data)
		if err != nil {
			if !locRE.MatchString(err.Error()) {
				t.Fatalf("error %q does not start with file:line", err)
			}
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		seen := map[string]bool{}
		for i, e := range reg.entries {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry %d on line %d of %d", i, e.Line, lines)
			}
			if seen[e.Key] {
				t.Fatalf("key %q repeats", e.Key)
			}
			seen[e.Key] = true
			if !utf8.ValidString(e.Solution) {
				t.Fatalf("solution %q is not UTF-8", e.Solution)
			}
		}
		var edits []jsonedit.Edit
		for i, n := range reg.nodes {
			if n != nil {
				edits = append(edits, jsonedit.SetMembers(reg.data, reg.root, n, []jsonedit.KV{{Key: "occurrences", Val: fmt.Sprint(i + 7)}, {Key: "last_seen", Val: `"2026-03-09"`}})...)
			}
		}
		out := jsonedit.Apply(data, edits)
		if !json.Valid(bytes.TrimPrefix(out, []byte("\ufeff"))) {
			t.Fatalf("edited document is not valid JSON:\n%s", out)
		}
		if len(edits) == 0 && !bytes.Equal(out, data) {
			t.Fatalf("no edits, yet the document changed")
		}
	})
}

func readFixtureFile(name string) ([]byte, error) { return os.ReadFile(fixture(name)) }

// FuzzParsePatterns: any text gives entries on lines of the file with
// unique keys.
func FuzzParsePatterns(f *testing.F) {
	for _, name := range []string{"gearsnitch.patterns.md", "RTS-Commander.patterns.md", "template.patterns.md"} {
		if b, err := readFixtureFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("### A\n**Problem**: x\n**Solution**: y\n```\n### B\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, _ := parsePatterns("p.md", data)
		lines := bytes.Count(data, []byte("\n")) + 1
		seen := map[string]bool{}
		for _, e := range es {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry %q on line %d of %d", e.Name, e.Line, lines)
			}
			if seen[e.Key] || e.Key == "" {
				t.Fatalf("key %q empty or repeated", e.Key)
			}
			seen[e.Key] = true
		}
	})
}
