package precedent

// FTS5's porter stemmer, in Go: the classic Porter algorithm as FTS5 runs
// it, on the bytes of a unicode61 token (a byte that is not an ASCII vowel
// is a consonant), with FTS5's own choices: tokens under 3 or over 64 bytes
// are left alone, "y" counts as a vowel after the first letter when a stem
// is checked for a vowel, and only the first rule whose suffix matches is
// tried in each step. TestPorterIsFTS5 holds it to FTS5's output.

// porterMaxToken is the longest token FTS5 stems, in bytes.
const porterMaxToken = 64

// stem returns the term the index stores for a unicode61 token, appended to
// dst[:0].
func stem(dst, tok []byte) []byte {
	w := append(dst[:0], tok...)
	if len(tok) < 3 || len(tok) > porterMaxToken {
		return w
	}
	w = porterStep1a(w)
	if w2, removed := porterStep1b(w); removed {
		w = w2
		if w2, rule := porterApply(w, porterStep1b2); rule >= 0 {
			w = w2
		} else if c := w[len(w)-1]; !isVowel(c, false) && c != 'l' && c != 's' && c != 'z' && len(w) >= 2 && c == w[len(w)-2] {
			w = w[:len(w)-1]
		} else if measureIs1(w) && endsCVC(w) {
			w = append(w, 'e')
		}
	} else {
		w = w2
	}
	if n := len(w); w[n-1] == 'y' && hasVowel(w[:n-1]) {
		w[n-1] = 'i'
	}
	w, _ = porterApply(w, porterStep2)
	w, _ = porterApply(w, porterStep3)
	w, _ = porterApply(w, porterStep4)
	if n := len(w); w[n-1] == 'e' && (measureOver1(w[:n-1]) || measureIs1(w[:n-1]) && !endsCVC(w[:n-1])) {
		w = w[:n-1]
	}
	if n := len(w); n > 1 && w[n-1] == 'l' && w[n-2] == 'l' && measureOver1(w[:n-1]) {
		w = w[:n-1]
	}
	return w
}

// porterRule replaces suffix by repl when the stem before it passes cond
// (nil: always).
type porterRule struct {
	suffix, repl string
	cond         func(stem []byte) bool
}

// porterApply applies the first rule whose suffix ends w with at least one
// byte before it, if its condition holds: it returns that rule's index, or
// -1 when no rule applied.
func porterApply(w []byte, rules []porterRule) ([]byte, int) {
	for i, r := range rules {
		n := len(w) - len(r.suffix)
		if n <= 0 || string(w[n:]) != r.suffix {
			continue
		}
		if r.cond != nil && !r.cond(w[:n]) {
			return w, -1
		}
		return append(w[:n], r.repl...), i
	}
	return w, -1
}

// porterStep1a: plurals.
func porterStep1a(w []byte) []byte {
	n := len(w)
	if w[n-1] != 's' {
		return w
	}
	switch {
	case w[n-2] == 'e' && (n > 4 && w[n-4] == 's' && w[n-3] == 's' || n > 3 && w[n-3] == 'i'):
		return w[:n-2] // sses -> ss, ies -> i
	case w[n-2] == 'e' || w[n-2] != 's':
		return w[:n-1]
	}
	return w
}

// porterStep1b removes -ed and -ing (removed is true then), or makes -eed
// -ee.
func porterStep1b(w []byte) (out []byte, removed bool) {
	out, rule := porterApply(w, porterStep1bRules)
	return out, rule > 0
}

var porterStep1bRules = []porterRule{
	{"eed", "ee", measureOver0},
	{"ed", "", hasVowel},
	{"ing", "", hasVowel},
}

var porterStep1b2 = []porterRule{
	{"at", "ate", nil},
	{"bl", "ble", nil},
	{"iz", "ize", nil},
}

var porterStep2 = []porterRule{
	{"ational", "ate", measureOver0},
	{"tional", "tion", measureOver0},
	{"enci", "ence", measureOver0},
	{"anci", "ance", measureOver0},
	{"izer", "ize", measureOver0},
	{"logi", "log", measureOver0},
	{"bli", "ble", measureOver0},
	{"alli", "al", measureOver0},
	{"entli", "ent", measureOver0},
	{"eli", "e", measureOver0},
	{"ousli", "ous", measureOver0},
	{"ization", "ize", measureOver0},
	{"ation", "ate", measureOver0},
	{"ator", "ate", measureOver0},
	{"alism", "al", measureOver0},
	{"iveness", "ive", measureOver0},
	{"fulness", "ful", measureOver0},
	{"ousness", "ous", measureOver0},
	{"aliti", "al", measureOver0},
	{"iviti", "ive", measureOver0},
	{"biliti", "ble", measureOver0},
}

var porterStep3 = []porterRule{
	{"ical", "ic", measureOver0},
	{"ness", "", measureOver0},
	{"icate", "ic", measureOver0},
	{"iciti", "ic", measureOver0},
	{"ful", "", measureOver0},
	{"ative", "", measureOver0},
	{"alize", "al", measureOver0},
}

var porterStep4 = []porterRule{
	{"al", "", measureOver1},
	{"ance", "", measureOver1},
	{"ence", "", measureOver1},
	{"er", "", measureOver1},
	{"ic", "", measureOver1},
	{"able", "", measureOver1},
	{"ible", "", measureOver1},
	{"ant", "", measureOver1},
	{"ement", "", measureOver1},
	{"ment", "", measureOver1},
	{"ent", "", measureOver1},
	{"ion", "", func(s []byte) bool { return (s[len(s)-1] == 's' || s[len(s)-1] == 't') && measureOver1(s) }},
	{"ou", "", measureOver1},
	{"ism", "", measureOver1},
	{"ate", "", measureOver1},
	{"iti", "", measureOver1},
	{"ous", "", measureOver1},
	{"ive", "", measureOver1},
	{"ize", "", measureOver1},
}

// isVowel: a, e, i, o, u, and y when yIsVowel (after a consonant).
func isVowel(c byte, yIsVowel bool) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	case 'y':
		return yIsVowel
	}
	return false
}

// skipVC returns the length of s's first vowels-then-consonants sequence
// (consonants first allowed), 0 when s has none. prevCons says whether the
// byte before s was a consonant.
func skipVC(s []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(s); i++ {
		if cons = !isVowel(s[i], cons); !cons {
			break
		}
	}
	for i++; i < len(s); i++ {
		if cons = !isVowel(s[i], cons); cons {
			return i + 1
		}
	}
	return 0
}

// measureOver0: Porter's m > 0.
func measureOver0(s []byte) bool { return skipVC(s, false) > 0 }

// measureOver1: m > 1.
func measureOver1(s []byte) bool {
	n := skipVC(s, false)
	return n > 0 && skipVC(s[n:], true) > 0
}

// measureIs1: m = 1.
func measureIs1(s []byte) bool {
	n := skipVC(s, false)
	return n > 0 && skipVC(s[n:], true) == 0
}

// endsCVC: Porter's *o, s ends consonant-vowel-consonant, the last not w,
// x or y.
func endsCVC(s []byte) bool {
	n := len(s)
	if n == 0 || s[n-1] == 'w' || s[n-1] == 'x' || s[n-1] == 'y' {
		return false
	}
	mask, cons := 0, false
	for _, c := range s {
		cons = !isVowel(c, cons)
		mask <<= 1
		if cons {
			mask |= 1
		}
	}
	return mask&7 == 5
}

// hasVowel: Porter's *v*, with "y" a vowel anywhere but first.
func hasVowel(s []byte) bool {
	for i, c := range s {
		if isVowel(c, i > 0) {
			return true
		}
	}
	return false
}
