package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want, wantLog string
	}{
		{name: "plain", in: "Use SQLite — café", want: "Use SQLite — café", wantLog: "Use SQLite — café"},
		{name: "ESC colour", in: "\x1b[31mred\x1b[0m", want: `\x1b[31mred\x1b[0m`, wantLog: `\x1b[31mred\x1b[0m`},
		{name: "BEL and NUL", in: "a\x07b\x00c", want: `a\x07b\x00c`, wantLog: `a\x07b\x00c`},
		{name: "newline, CR, tab", in: "a\nb\rc\td", want: `a\nb\rc\td`, wantLog: `a\nb\rc\td`},
		{name: "DEL and C1 CSI", in: "a\x7fb\u009bc", want: `a\x7fb\x9bc`, wantLog: `a\x7fb\x9bc`},
		{name: "bidi override", in: "abc\u202edef", want: `abc\u{202e}def`, wantLog: `abc\u{202e}def`},
		{name: "invalid UTF-8", in: "a\xffb", want: `a\xffb`, wantLog: `a\xffb`},
		{name: "command substitution", in: `"$(touch /tmp/x)"`, want: `"$(touch /tmp/x)"`, wantLog: `"\x24(touch /tmp/x)"`},
		{name: "backticks", in: "run `id`", want: "run `id`", wantLog: `run \x60id\x60`},
		{name: "parameter expansion", in: "${HOME} and $HOME", want: "${HOME} and $HOME", wantLog: `\x24{HOME} and $HOME`},
		{name: "an escaped $( stays inert", in: `\$(id)`, want: `\$(id)`, wantLog: `\\x24(id)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q; want %q", tt.in, got, tt.want)
			}
			got := EscapeLog(tt.in)
			if got != tt.wantLog {
				t.Errorf("EscapeLog(%q) = %q; want %q", tt.in, got, tt.wantLog)
			}
			if again := EscapeLog(got); again != got {
				t.Errorf("EscapeLog is not idempotent: %q -> %q", got, again)
			}
			if strings.ContainsAny(got, "`\x1b\x07\x00\n\r") || strings.Contains(got, "$(") {
				t.Errorf("EscapeLog(%q) = %q still holds an active character", tt.in, got)
			}
		})
	}
}

// FuzzEscapeLog: whatever the input, the output holds no control
// character, no backtick and no $(, and escaping it again changes nothing.
func FuzzEscapeLog(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "$(id)", "`id`", "\xff\xfe", "a\u202eb", "$$(", "\\$("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := EscapeLog(s)
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || hidden(r) || r == '`' {
				t.Fatalf("EscapeLog(%q) = %q holds %U", s, got, r)
			}
		}
		if strings.Contains(got, "$(") || strings.Contains(got, "${") {
			t.Fatalf("EscapeLog(%q) = %q holds a shell expansion", s, got)
		}
		if EscapeLog(got) != got {
			t.Fatalf("EscapeLog not idempotent on %q", got)
		}
	})
}

// TestTableEscapes: a decision titled with terminal controls prints them
// escaped, on a terminal, piped and in markdown.
func TestTableEscapes(t *testing.T) {
	tbl := &Table{Header: []string{"ID", "INPUT"}}
	tbl.Append("iter-1-1", "\x1b[31mred\x07\x00 title")
	for _, mode := range []string{"terminal", "tsv", "markdown"} {
		var b bytes.Buffer
		var err error
		switch mode {
		case "terminal":
			err = tbl.Render(&b, true)
		case "tsv":
			err = tbl.Render(&b, false)
		default:
			err = tbl.Markdown(&b)
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(b.String(), "\x1b\x07\x00") {
			t.Errorf("%s: raw control characters in %q", mode, b.String())
		}
		if !strings.Contains(b.String(), `\x1b[31mred\x07\x00 title`) {
			t.Errorf("%s: %q lacks the escaped title", mode, b.String())
		}
	}
}
