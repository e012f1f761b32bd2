package precedent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// porterWords are words that exercise every rule of the stemmer: each
// suffix after stems of each measure, vowel and "y" patterns, the shortest
// and longest words it stems, non-ASCII bytes.
func porterWords() []string {
	suffixes := []string{"s", "ss", "sses", "ies", "es", "eed", "ed", "ing", "ated", "bled", "ized", "ating", "y",
		"ational", "tional", "enci", "anci", "izer", "logi", "bli", "alli", "entli", "eli", "ousli", "ization", "ation",
		"ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "icate", "ative", "alize", "iciti",
		"ical", "ful", "ness", "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "sion",
		"tion", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "e", "ll", "le", "ly", "ingly", "ations", "nesses"}
	stems := []string{"", "b", "a", "y", "ay", "ey", "by", "tr", "ab", "hop", "fil", "ski", "sky", "rat", "rel", "cond",
		"gener", "conform", "happ", "feed", "agre", "ty", "troubl", "control", "roll", "fall", "cry", "oy", "ayy",
		"vietnam", "caf\u00e9", "na\u00efv", "\u00fcberpr\u00fcf", "\u03c3\u03bf\u03c6", "bbb", "aaa", "yyy", "syzyg",
		"w", "x", "ow", "ax", "fizz", "miss", "hiss", "bott", "hopp", "sing", "ing", "ed", "eed", "ee"}
	var words []string
	for _, s := range stems {
		for _, x := range suffixes {
			words = append(words, s+x)
			for _, y := range []string{"s", "ed", "ing", "ly", "ness", "al", "e"} {
				words = append(words, s+x+y)
			}
		}
	}
	// Every word of 1 to 4 letters over letters that matter to the rules.
	const letters = "aeiouyslbdtgnzwxc"
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		if n == 0 {
			words = append(words, prefix)
			return
		}
		for i := range len(letters) {
			gen(prefix+letters[i:i+1], n-1)
		}
	}
	for n := 1; n <= 4; n++ {
		gen("", n)
	}
	// Around the 64-byte limit.
	for n := 60; n <= 68; n++ {
		words = append(words, strings.Repeat("a", n-5)+"ation", strings.Repeat("\u00e9", n/2)+"ing")
	}
	return words
}

// TestPorterIsFTS5 holds the Go tokenizer and stemmer to FTS5's: every
// word of porterWords and of the evaluation corpus gets the term FTS5 gives
// it, and a word always passes the prefilter of the terms it stems to.
func TestPorterIsFTS5(t *testing.T) {
	words := porterWords()
	jdata, err := os.ReadFile(filepath.Join(corpusDir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, w := range goTokens(string(jdata), false) {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	p := newFTS5Probe(t, indexTokenize)
	const batch = 2000
	compared := 0
	for start := 0; start < len(words); start += batch * 20 {
		var texts []string
		for i := start; i < min(start+batch*20, len(words)); i += batch {
			texts = append(texts, strings.Join(words[i:min(i+batch, len(words))], " "))
		}
		for d, want := range p.tokens(texts) {
			got := goTokens(texts[d], true)
			if len(got) != len(want) {
				t.Fatalf("text %d: Go made %d terms, FTS5 %d", d, len(got), len(want))
			}
			plain := goTokens(texts[d], false)
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%q: Go stems to %q; FTS5 to %q", plain[i], got[i], want[i])
				}
				if !newTerms([]string{plain[i]}).mayStemToTerm([]byte(plain[i])) {
					t.Errorf("%q (stem %q) fails the prefilter of its own stem", plain[i], got[i])
				}
				compared++
			}
		}
	}
	t.Logf("%d words compared", compared)
}
