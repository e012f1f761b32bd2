package knowledge

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Pattern states: whether an entry's regex can be used for matching.
const (
	StateOK      = "ok"      // a usable regex
	StateNone    = "none"    // no pattern (or an empty one): full-text only
	StateInvalid = "invalid" // RE2 refused it
	// StateUnsupported is a JavaScript regex (what seed 004's lookup runs)
	// using a construct RE2 does not have (lookaround, backreferences):
	// valid, but matched by full text only.
	StateUnsupported = "unsupported"
	StateMatchesAll  = "matches_all" // it matches any text, so it says nothing
)

// maxPatternBytes bounds one regex: longer ones are refused.
const maxPatternBytes = 4096

// compilePattern compiles an entry's pattern as the seed's lookup does
// (`new RegExp(pattern, 'i')`: case-insensitive), with Go's RE2, whose
// matching time is linear in the text whatever the pattern: there is no
// catastrophic backtracking to fear from `(a+)+$`. Patterns RE2 does not
// support (backreferences, lookaround) are invalid, never approximated.
func compilePattern(p string) (*regexp.Regexp, error) {
	if len(p) > maxPatternBytes {
		return nil, fmt.Errorf("pattern is %d bytes; at most %d", len(p), maxPatternBytes)
	}
	re, err := regexp.Compile("(?i)" + p)
	if err != nil {
		// regexp's message quotes the whole expression, prefix included.
		msg := err.Error()
		if e, ok := err.(*syntax.Error); ok {
			msg = fmt.Sprintf("%s: `%s`", e.Code, strings.TrimPrefix(e.Expr, "(?i)"))
		}
		return nil, fmt.Errorf("invalid regex: %s", msg)
	}
	return re, nil
}

// lazyRegexp compiles pattern the first time the regexp is asked for, not
// at start-up: every orbit process, hooks included, links this package.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// jsOnly names the groups of JavaScript regexes that RE2 does not have
// (backreferences are escapes: unsupportedConstruct reads them).
var jsOnly = []struct{ prefix, name string }{
	{"(?<=", "a lookbehind"}, {"(?<!", "a negative lookbehind"}, {"(?=", "a lookahead"}, {"(?!", "a negative lookahead"},
}

// unsupportedConstruct names the first construct of p that JavaScript
// supports and RE2 does not, as written (outside character classes), or
// returns "".
func unsupportedConstruct(p string) (name, text string) {
	class := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			if !class && p[i+1] >= '1' && p[i+1] <= '9' {
				j := i + 2
				for j < len(p) && p[j] >= '0' && p[j] <= '9' {
					j++
				}
				return "a backreference", p[i:j]
			}
			if !class && strings.HasPrefix(p[i:], `\k<`) {
				end := strings.IndexByte(p[i:], '>')
				if end < 0 {
					end = len(p) - i - 1
				}
				return "a named backreference", p[i : i+end+1]
			}
			i++
		case c == '[':
			class = true
		case c == ']':
			class = false
		case c == '(' && !class:
			for _, k := range jsOnly {
				if strings.HasPrefix(p[i:], k.prefix) {
					return k.name, k.prefix + "…)"
				}
			}
		}
	}
	return "", ""
}

// storedState is the pattern_state the index keeps for a state: schema v1
// checks its words, and knows an unsupported regex as invalid (its
// pattern_error says which construct); readState tells them apart again.
func storedState(state string) string {
	if state == StateUnsupported {
		return StateInvalid
	}
	return state
}

// readState is the state of an indexed entry (see storedState).
func readState(stored, pattern string) string {
	if stored == StateInvalid {
		if name, _ := unsupportedConstruct(pattern); name != "" {
			if _, err := compilePattern(pattern); err != nil {
				return StateUnsupported
			}
		}
	}
	return stored
}

// probes are short texts that no pattern meant for one error matches all of.
var probes = []string{"x", "0", "-", "é", "zzz", "Q Q"}

// classify compiles a pattern and says whether it is usable, why not, and
// its prefilter requirements and specificity when it is.
func classify(p string, present bool) (state, why string, reqs [][]string, specificity int) {
	if !present {
		return StateNone, "no pattern: matched by full text only", nil, 0
	}
	if strings.TrimSpace(p) == "" {
		return StateNone, "empty pattern (the seed's lookup would match every error with it): matched by full text only", nil, 0
	}
	re, err := compilePattern(p)
	if err != nil {
		if name, text := unsupportedConstruct(p); name != "" {
			return StateUnsupported, fmt.Sprintf("uses %s, `%s`, which Go's RE2 does not support (it keeps matching linear in time): matched by full text only", name, text), nil, 0
		}
		return StateInvalid, err.Error(), nil, 0
	}
	all := true
	for _, s := range probes {
		if !re.MatchString(s) {
			all = false
			break
		}
	}
	if all {
		return StateMatchesAll, "the pattern matches any text, so it would win for every error: not used as a regex", nil, 0
	}
	reqs, specificity = prefilter(p)
	return StateOK, "", reqs, specificity
}

// fold maps every rune to the smallest rune of its simple case-folding
// orbit, so that a case-insensitive match of a literal in a text implies
// that fold(literal) is a substring of fold(text).
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return m
}

// Limits of the literal analysis.
const (
	maxExact     = 16 // strings in an exact set
	maxExactLen  = 64 // bytes in one of them
	maxAtoms     = 32 // alternatives in a requirement
	maxClassSize = 8  // runes of a character class expanded into literals
)

// prefilter returns the pattern's requirements: sets of literals
// (case-folded), each set such that every text the pattern matches contains
// at least one of its literals, and all sets must hold at once. The index
// files an entry under its rarest requirement. specificity is the number of
// literal characters the requirements guarantee (the shortest literal of
// each set, summed). It returns nil, 0 when the pattern requires no literal
// (`^\w+$`): such a regex is tried on every error.
func prefilter(p string) ([][]string, int) {
	re, err := syntax.Parse("(?i)"+p, syntax.Perl)
	if err != nil {
		return nil, 0
	}
	var reqs [][]string
	specificity := 0
	for _, req := range requirements(re.Simplify()) {
		slices.Sort(req)
		req = slices.Compact(req)
		shortest := -1
		for _, a := range req {
			if n := utf8.RuneCountInString(a); shortest < 0 || n < shortest {
				shortest = n
			}
		}
		if shortest <= 0 {
			continue
		}
		reqs = append(reqs, req)
		specificity += shortest
	}
	return reqs, specificity
}

// requirements returns every requirement of re: for a concatenation, one
// per run of children with exact sets and one per other child that has
// one; otherwise re's single requirement, if any.
func requirements(re *syntax.Regexp) [][]string {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat || exact(re) != nil {
		if req := required(re); req != nil {
			return [][]string{req}
		}
		return nil
	}
	var out [][]string
	eachConcatCandidate(re, func(c []string) {
		if len(c) > 0 && !slices.Contains(c, "") {
			out = append(out, c)
		}
	})
	return out
}

// eachConcatCandidate calls fn with each candidate requirement of a
// concatenation: every run of children with exact sets, joined into
// literals, and the requirement of every other child (nil when it has
// none). A candidate may be empty or hold "": callers skip those.
func eachConcatCandidate(re *syntax.Regexp, fn func([]string)) {
	run := []string{""}
	for _, s := range re.Sub {
		if sub := exact(s); sub != nil {
			if next := cross(run, sub); next != nil {
				run = next
				continue
			}
			fn(run)
			run = sub
			continue
		}
		fn(run)
		run = []string{""}
		fn(required(s))
	}
	fn(run)
}

// exact returns the finite set of strings re matches (folded), or nil when
// it is unbounded or too large. Zero-width assertions match "".
func exact(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{fold(string(re.Rune))}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi-lo >= maxClassSize {
				return nil
			}
			for r := lo; r <= hi; r++ {
				out = append(out, string(foldRune(r)))
			}
		}
		slices.Sort(out)
		out = slices.Compact(out)
		if len(out) == 0 || len(out) > maxExact {
			return nil
		}
		return out
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		sub := exact(re.Sub[0])
		if sub == nil {
			return nil
		}
		return union(sub, []string{""})
	case syntax.OpConcat:
		set := []string{""}
		for _, s := range re.Sub {
			sub := exact(s)
			if sub == nil {
				return nil
			}
			if set = cross(set, sub); set == nil {
				return nil
			}
		}
		return set
	case syntax.OpAlternate:
		var set []string
		for _, s := range re.Sub {
			sub := exact(s)
			if sub == nil {
				return nil
			}
			if set = union(set, sub); set == nil {
				return nil
			}
		}
		return set
	}
	return nil
}

func cross(a, b []string) []string {
	if len(a)*len(b) > maxExact {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if len(x)+len(y) > maxExactLen {
				return nil
			}
			out = append(out, x+y)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxExact {
		return nil
	}
	return out
}

// required returns literals at least one of which every match of re
// contains, or nil when it cannot tell.
func required(re *syntax.Regexp) []string {
	if set := exact(re); set != nil {
		if slices.Contains(set, "") {
			return nil
		}
		return set
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
		return nil
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			sub := required(s)
			if sub == nil {
				return nil
			}
			out = append(out, sub...)
			if len(out) > maxAtoms {
				return nil
			}
		}
		return out
	case syntax.OpConcat:
		// Runs of children with exact sets join into longer literals; any
		// one child's requirement is also the concatenation's. Keep the
		// best candidate: the longest shortest literal, then the fewest.
		var best []string
		eachConcatCandidate(re, func(c []string) {
			if len(c) > 0 && !slices.Contains(c, "") && (best == nil || better(c, best)) {
				best = c
			}
		})
		return best
	}
	return nil
}

// better reports whether requirement a filters better than b.
func better(a, b []string) bool {
	ma, mb := minLen(a), minLen(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func minLen(set []string) int {
	m := -1
	for _, s := range set {
		if m < 0 || len(s) < m {
			m = len(s)
		}
	}
	return m
}

// trigram packs three bytes into an integer key.
func trigram(s string, i int) int64 {
	return int64(s[i])<<16 | int64(s[i+1])<<8 | int64(s[i+2])
}

// trigrams returns the distinct byte trigrams of s.
func trigrams(s string) []int64 {
	if len(s) < 3 {
		return nil
	}
	seen := make(map[int64]struct{}, len(s))
	out := make([]int64, 0, len(s))
	for i := 0; i+3 <= len(s); i++ {
		t := trigram(s, i)
		if _, ok := seen[t]; !ok {
			seen[t] = struct{}{}
			out = append(out, t)
		}
	}
	return out
}
