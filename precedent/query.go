// Package precedent owns the answer to "what did we decide last time
// something like this came up, and how did it turn out": ranked retrieval of
// similar past decisions over the whole journal (SQLite FTS5 and bm25,
// field weights, a same-category boost, outcome-aware ordering, recency as
// the tie-breaker), with queries built so that any text a user or hook
// passes is safe.
package precedent

import (
	"strings"
	"unicode"
)

// maxTokenRunes bounds one query token; longer runs are cut.
const maxTokenRunes = 64

// maxTokens bounds how many distinct tokens of a query are considered (a
// hook may pass 10 KB of text); the rarest are kept later.
const maxTokens = 64

// stopwords are words too common in decision text to say what a decision
// is about. They are dropped from queries (never from the index).
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be been but by can could do does did for from had has have how
		i if in into is it its it's me my no not of on or our over should so than that the their them then there these
		they this those to too up us vs versus was we were what when where which while who why will with would you your
		shall must may might also just any all some about via per`) {
		stopwords[w] = true
	}
}

// Tokens splits text into the words a query searches for: maximal runs of
// letters and digits, lower-cased, without stopwords, at most maxTokens
// distinct ones in order of first appearance. The FTS5 tokenizer (unicode61)
// splits at least wherever this does, so each token is one FTS term: no
// query ever becomes a phrase, an operator or a column filter.
func Tokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	var b strings.Builder
	n := 0
	flush := func() {
		if b.Len() == 0 {
			return
		}
		t := strings.ToLower(b.String())
		b.Reset()
		n = 0
		if stopwords[t] || seen[t] || len(out) >= maxTokens {
			return
		}
		if len(t) == 1 && t[0] >= 'a' && t[0] <= 'z' {
			return // a lone ASCII letter says nothing
		}
		seen[t] = true
		out = append(out, t)
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			if n < maxTokenRunes {
				b.WriteRune(r)
				n++
			}
			continue
		}
		flush()
	}
	flush()
	return out
}

// quote makes a token an FTS5 string: double quotes around it, inner
// double quotes doubled. Inside quotes FTS5 reads no operator, column name
// or syntax, so `OR`, `NEAR(`, `title:` and `c++` are plain words.
func quote(tok string) string {
	return `"` + strings.ReplaceAll(tok, `"`, `""`) + `"`
}

// MatchAny builds an FTS5 query matching any of the tokens (OR: an implicit
// AND of every word of a sentence finds almost nothing). "" for no tokens.
func MatchAny(tokens []string) string {
	q := make([]string, len(tokens))
	for i, t := range tokens {
		q[i] = quote(t)
	}
	return strings.Join(q, " OR ")
}

// MatchAll builds an FTS5 query matching all of the tokens.
func MatchAll(tokens []string) string {
	q := make([]string, len(tokens))
	for i, t := range tokens {
		q[i] = quote(t)
	}
	return strings.Join(q, " AND ")
}
