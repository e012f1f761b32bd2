package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text from a journal or a checkout is shown on terminals and written to
// logs; none of it may drive the terminal (ESC sequences, BEL, NUL, a
// carriage return that hides what came before, bidirectional overrides
// that reorder what is shown) or, in a log that might be sourced by a
// shell, run a command. Escape and EscapeLog are the one place this is
// decided.

// Escape returns s with every character that could act on a terminal
// written as a visible escape: C0 and C1 control characters and DEL as
// \xNN (tab, newline and carriage return as \t, \n, \r), Unicode format
// characters that reorder or hide text (bidi overrides and isolates, zero
// width joiners, the BOM) as \u{NNNN}, and invalid UTF-8 bytes as \xNN.
// Printable text, including a backslash, is kept as it is.
func Escape(s string) string { return escape(s, false) }

// EscapeLog is Escape that also defuses what a shell would run, quoted or
// not: a backtick becomes \x60, and the $ of $( or ${ becomes \x24. The
// result holds neither, so escaping it again changes nothing. The hook log
// and the server's log use it.
func EscapeLog(s string) string { return escape(s, true) }

// text is project text for one line of human-readable output: whitespace
// runs collapsed, control characters escaped.
func text(s string) string { return Escape(oneLine(s)) }

func escape(s string, shell bool) string {
	if clean(s, shell) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u{%04x}`, r)
		case shell && r == '`':
			b.WriteString(`\x60`)
		case shell && r == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			b.WriteString(`\x24`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no escaping (the common case, checked
// without allocating).
func clean(s string, shell bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= 0x80 || (shell && (c == '`' || c == '$')) {
			return false
		}
	}
	return true
}

// hidden reports whether r is a format character that reorders or hides
// text on a terminal.
func hidden(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, // zero width space, joiners, LRM, RLM
		r >= 0x202a && r <= 0x202e, // bidi embeddings and overrides
		r >= 0x2066 && r <= 0x2069, // bidi isolates
		r == 0x061c, r == 0xfeff, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
