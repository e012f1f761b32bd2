// Package precedent owns the answer to "what did we decide last time
// something like this came up, and how did it turn out": ranked retrieval of
// similar past decisions over the whole journal (SQLite FTS5 and bm25,
// field weights, a same-category boost, outcome-aware ordering, recency as
// the tie-breaker), with queries built so that any text a user or hook
// passes is safe.
package precedent

import "strings"

// maxTokenRunes bounds one query token; longer runs are cut.
const maxTokenRunes = 64

// maxTokens bounds how many distinct tokens of a query are considered (a
// hook may pass 10 KB of text); the rarest are kept later.
const maxTokens = 64

// isStopword reports whether a token is too common in decision text to
// say what a decision is about. Stopwords are dropped from queries (never
// from the index).
func isStopword(tok string) bool {
	switch tok {
	case "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "do", "does",
		"did", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its",
		"me", "my", "no", "not", "of", "on", "or", "our", "over", "should", "so", "than", "that", "the",
		"their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "us",
		"vs", "versus", "was", "we", "were", "what", "when", "where", "which", "while", "who", "why",
		"will", "with", "would", "you", "your", "shall", "must", "may", "might", "also", "just", "any",
		"all", "some", "about", "via", "per":
		return true
	}
	return false
}

// Tokens splits text into the words a query searches for: the index's own
// tokens (unicode61: lower-cased, diacritics removed, see unicode61.go)
// without stopwords, each cut to maxTokenRunes characters, at most
// maxTokens distinct ones in order of first appearance. Each is one term of
// the index's tokenizer, so no query ever becomes a phrase, an operator or a
// column filter, and bm25 in Go scores the term FTS5 matches.
func Tokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	var buf, check []byte
	for i := 0; len(out) < maxTokens; {
		var ok bool
		buf, i, ok = nextToken(text, i, buf)
		if !ok {
			break
		}
		tok := cutChars(buf, maxTokenRunes)
		if len(tok) == 0 || isStopword(string(tok)) || seen[string(tok)] {
			continue
		}
		if len(tok) == 1 && tok[0] >= 'a' && tok[0] <= 'z' {
			continue // a lone ASCII letter says nothing
		}
		// A cut token is still one token of itself (its characters are
		// token characters, folded); checked rather than assumed.
		var end int
		if check, end, ok = nextToken(string(tok), 0, check); !ok || end != len(tok) || string(check) != string(tok) {
			continue
		}
		seen[string(tok)] = true
		out = append(out, string(tok))
	}
	return out
}

// cutChars cuts a folded token after n characters (a character of it starts
// at any byte that is not a UTF-8 continuation byte).
func cutChars(tok []byte, n int) []byte {
	for i := range tok {
		if tok[i]&0xC0 != 0x80 {
			if n == 0 {
				return tok[:i]
			}
			n--
		}
	}
	return tok
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
