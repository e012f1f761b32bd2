package precedent

// The index's tokenizer in Go. decisions_fts and knowledge_fts use
// `porter unicode61 remove_diacritics 2`; bm25 computed here counts a
// decision's words exactly as FTS5 does only if it splits, folds and stems
// them exactly as FTS5 does, byte for byte:
//
//   - unicode61 reads the text as SQLite reads UTF-8 (readUTF8), and sorts
//     each character into a separator, a token character, or a diacritic
//     mark that continues a token but never starts one (charClass);
//   - it folds each character of a token (foldChar: lower case, then the
//     diacritic removed, marks dropped), with SQLite's own Unicode tables,
//     which are older than Go's: the tables in unicode61_tables.go are
//     probed from the linked SQLite by TestUnicode61Tables, which fails when
//     a SQLite upgrade changes them (`go test ./precedent -run
//     TestUnicode61Tables -update` rewrites them);
//   - porter then stems each token (porter.go).

// charClass is what FTS5's unicode61 tokenizer does with a character.
type charClass uint8

const (
	// separator ends a token, or is skipped between tokens.
	separator charClass = iota
	// tokenChar starts or continues a token.
	tokenChar
	// markChar continues a token but never starts one (a combining
	// diacritic: dropped by the fold).
	markChar
)

// classOf returns c's class.
func classOf(c uint32) charClass {
	if c < 0x80 {
		return asciiClass[c]
	}
	// The last range whose start is at most c.
	lo, hi := 0, len(classRanges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if classRanges[m].lo <= c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return classRanges[lo-1].class
}

// classRange: the characters from lo up to the next range's lo have class.
type classRange struct {
	lo    uint32
	class charClass
}

// foldRun: every stride-th character from lo to hi (inclusive) folds to
// itself plus delta; 0 means the character is dropped.
type foldRun struct {
	lo, hi uint32
	stride uint8
	delta  int32
}

// foldChar returns what a token character becomes in the token (0: it is
// dropped).
func foldChar(c uint32) uint32 {
	if c < 0x80 {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	lo, hi := 0, len(foldRuns)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if foldRuns[m].lo <= c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return c
	}
	r := foldRuns[lo-1]
	if c > r.hi || (c-r.lo)%uint32(r.stride) != 0 {
		return c
	}
	return uint32(int64(c) + int64(r.delta))
}

// readUTF8 decodes the character at s[i] as SQLite's READ_UTF8 does (which
// is not Go's decoding of invalid input: a stray continuation byte is a
// character of its own value, a lead byte takes every continuation byte
// that follows, and an overlong form, a surrogate, U+FFFE and U+FFFF read as
// U+FFFD), and returns it with the index after it.
func readUTF8(s string, i int) (uint32, int) {
	c := uint32(s[i])
	i++
	if c < 0xC0 {
		return c, i
	}
	switch {
	case c < 0xE0:
		c &= 0x1F
	case c < 0xF0:
		c &= 0x0F
	case c < 0xF8:
		c &= 0x07
	case c < 0xFC:
		c &= 0x03
	case c < 0xFE:
		c &= 0x01
	default:
		c = 0
	}
	for i < len(s) && s[i]&0xC0 == 0x80 {
		c = c<<6 + uint32(s[i]&0x3F)
		i++
	}
	if c < 0x80 || c&0xFFFFF800 == 0xD800 || c&0xFFFFFFFE == 0xFFFE {
		c = 0xFFFD
	}
	return c, i
}

// appendUTF8 encodes c as SQLite's WRITE_UTF8 does (up to 4 bytes, for any
// value readUTF8 returns).
func appendUTF8(b []byte, c uint32) []byte {
	switch {
	case c < 0x80:
		return append(b, byte(c))
	case c < 0x800:
		return append(b, 0xC0|byte(c>>6&0x1F), 0x80|byte(c&0x3F))
	case c < 0x10000:
		return append(b, 0xE0|byte(c>>12&0x0F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	}
	return append(b, 0xF0|byte(c>>18&0x07), 0x80|byte(c>>12&0x3F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
}

// nextToken finds the first token of text at or after i, as FTS5's
// unicode61 tokenizer (remove_diacritics 2) makes it, and returns it folded
// (appended to buf[:0]) with the index after it. ok is false when text
// holds no more tokens.
func nextToken(text string, i int, buf []byte) (tok []byte, end int, ok bool) {
	tok = buf[:0]
	// Skip separators and marks up to the token's first character.
	for {
		if i >= len(text) {
			return tok, i, false
		}
		if b := text[i]; b < 0x80 {
			if asciiClass[b] == tokenChar {
				break
			}
			i++
			continue
		}
		c, next := readUTF8(text, i)
		i = next
		if classOf(c) == tokenChar {
			if f := foldChar(c); f != 0 {
				tok = appendUTF8(tok, f)
			}
			break
		}
	}
	for i < len(text) {
		if b := text[i]; b < 0x80 {
			if asciiClass[b] != tokenChar {
				break
			}
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			tok = append(tok, b)
			i++
			continue
		}
		c, next := readUTF8(text, i)
		if classOf(c) == separator {
			break
		}
		i = next
		if f := foldChar(c); f != 0 {
			tok = appendUTF8(tok, f)
		}
	}
	return tok, i, true
}
