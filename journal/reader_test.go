package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// chunkWant is what a test expects of one chunk: text is compared only when
// checkText is set; code is the Err's code ("" for no error); warnings are
// the codes of its Warnings.
type chunkWant struct {
	kind      ChunkKind
	line, end int
	text      string
	checkText bool
	code      string
	warnings  []string
}

// kindName names a chunk kind in test messages.
func kindName(k ChunkKind) string {
	switch k {
	case Record:
		return "Record"
	case Blank:
		return "Blank"
	case Bad:
		return "Bad"
	case Pending:
		return "Pending"
	}
	return fmt.Sprintf("ChunkKind(%d)", int(k))
}

func rec(line int, text string) chunkWant {
	return chunkWant{kind: Record, line: line, end: line, text: text, checkText: true}
}

func blank(line int) chunkWant { return chunkWant{kind: Blank, line: line, end: line} }

func bad(line int, code string) chunkWant {
	return chunkWant{kind: Bad, line: line, end: line, code: code}
}

func pending(line int) chunkWant { return chunkWant{kind: Pending, line: line, end: line} }

func codes(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Code)
	}
	return out
}

func checkChunks(t *testing.T, data string, got []Chunk, want []chunkWant) {
	t.Helper()
	if len(got) != len(want) {
		for _, c := range got {
			t.Logf("got %s lines %d-%d off %d len %d err %v text %.80q", kindName(c.Kind), c.Line, c.LineEnd, c.Offset, c.Length, c.Err, c.Text)
		}
		t.Fatalf("got %d chunks; want %d", len(got), len(want))
	}
	for i, w := range want {
		c := got[i]
		if c.Kind != w.kind || c.Line != w.line || c.LineEnd != w.end {
			t.Errorf("chunk %d = %s lines %d-%d; want %s lines %d-%d", i, kindName(c.Kind), c.Line, c.LineEnd, kindName(w.kind), w.line, w.end)
		}
		if w.checkText && string(c.Text) != w.text {
			t.Errorf("chunk %d Text = %q; want %q", i, c.Text, w.text)
		}
		gotCode := ""
		if c.Err != nil {
			gotCode = c.Err.Code
			// A torn fragment loses nothing acknowledged: a warning.
			sev := SevError
			if c.Err.Code == CodeTorn {
				sev = SevWarning
			}
			if c.Err.Line != c.Line || c.Err.File != "j.jsonl" || c.Err.Severity != sev {
				t.Errorf("chunk %d Err = %+v; want %s located at j.jsonl:%d", i, *c.Err, sev, c.Line)
			}
		}
		if gotCode != w.code {
			t.Errorf("chunk %d Err code = %q (%v); want %q", i, gotCode, c.Err, w.code)
		}
		if g := strings.Join(codes(c.Warnings), ","); g != strings.Join(w.warnings, ",") {
			t.Errorf("chunk %d warnings = %q; want %q", i, g, w.warnings)
		}
	}
	checkTiling(t, data, got)
}

const (
	lineA = `{"id":"a","iteration":1}`
	lineB = `{"id":"b","iteration":2}`
)

func TestReaderChunks(t *testing.T) {
	pretty, err := os.ReadFile("testdata/doc-example.pretty.decision-record.json")
	if err != nil {
		t.Fatal(err)
	}
	prettyText := strings.TrimSuffix(string(pretty), "\n")
	tests := []struct {
		name       string
		in         string
		acceptTail bool
		want       []chunkWant
	}{
		{
			name: "one record per line",
			in:   lineA + "\n" + lineB + "\n",
			want: []chunkWant{rec(1, lineA), rec(2, lineB)},
		},
		{
			name: "CRLF line endings",
			in:   lineA + "\r\n" + lineB + "\r\n",
			want: []chunkWant{rec(1, lineA), rec(2, lineB)},
		},
		{
			name: "blank and whitespace-only lines",
			in:   "\n  \t\n" + lineA + "\n\r\n" + lineB + "\n",
			want: []chunkWant{blank(1), blank(2), rec(3, lineA), blank(4), rec(5, lineB)},
		},
		{
			name: "byte order mark at file start",
			in:   "\xef\xbb\xbf" + lineA + "\n" + lineB + "\n",
			want: []chunkWant{{kind: Record, line: 1, end: 1, text: lineA, checkText: true, warnings: []string{CodeBOM}}, rec(2, lineB)},
		},
		{
			name: "byte order mark after the first line is kept",
			in:   lineA + "\n\xef\xbb\xbf" + lineB + "\n",
			want: []chunkWant{rec(1, lineA), rec(2, "\xef\xbb\xbf"+lineB)},
		},
		{
			name: "NUL byte",
			in:   lineA + "\n" + `{"id":"x` + "\x00" + `"}` + "\n" + lineB + "\n",
			want: []chunkWant{rec(1, lineA), bad(2, CodeNUL), rec(3, lineB)},
		},
		{
			name: "invalid UTF-8",
			in:   `{"id":"caf` + "\xe9" + `"}` + "\n" + lineB + "\n",
			want: []chunkWant{bad(1, CodeUTF8), rec(2, lineB)},
		},
		{
			name: "pretty-printed record",
			in:   lineA + "\n" + string(pretty) + lineB + "\n",
			want: []chunkWant{
				rec(1, lineA),
				{kind: Record, line: 2, end: 16, text: prettyText, checkText: true, warnings: []string{CodeMultiline}},
				rec(17, lineB),
			},
		},
		{
			name: "pretty-printed record with CRLF",
			in:   strings.ReplaceAll(string(pretty), "\n", "\r\n") + lineB + "\n",
			want: []chunkWant{
				{kind: Record, line: 1, end: 15, text: prettyText, checkText: true, warnings: []string{CodeMultiline}},
				rec(16, lineB),
			},
		},
		{
			name: "torn line then a record",
			in:   `{"id":"a","itera` + "\n" + lineB + "\n",
			want: []chunkWant{bad(1, CodeTorn), rec(2, lineB)},
		},
		{
			name: "torn line after a comma then a record",
			in:   `{"id":"a",` + "\n" + lineB + "\n" + lineA + "\n",
			want: []chunkWant{bad(1, CodeTorn), rec(2, lineB), rec(3, lineA)},
		},
		{
			name: "torn line after a colon then a record",
			in:   `{"id":"a","input":` + "\n" + lineB + "\n",
			want: []chunkWant{bad(1, CodeTorn), rec(2, lineB)},
		},
		{
			name: "torn inside a two-byte character then a record",
			in:   `{"id":"a","input":"Schl` + "\xc3\n" + lineB + "\n",
			want: []chunkWant{bad(1, CodeTorn), rec(2, lineB)},
		},
		{
			name: "torn inside a three-byte character then a record",
			in:   `{"id":"a","input":"` + "\xe2\x82\n" + lineB + "\n",
			want: []chunkWant{bad(1, CodeTorn), rec(2, lineB)},
		},
		{
			name: "invalid UTF-8 before a cut character is still invalid",
			in:   `{"id":"a","input":"caf` + "\xe9" + `","reason":"Schl` + "\xc3\n" + lineB + "\n",
			want: []chunkWant{bad(1, CodeUTF8), rec(2, lineB)},
		},
		{
			name: "a cut character after a whole record is invalid UTF-8",
			in:   lineA + "\xc3\n" + lineB + "\n",
			want: []chunkWant{bad(1, CodeUTF8), rec(2, lineB)},
		},
		{
			name: "unterminated last line",
			in:   lineA + "\n" + `{"id":"b","iter`,
			want: []chunkWant{rec(1, lineA), {kind: Pending, line: 2, end: 2, text: `{"id":"b","iter`, checkText: true}},
		},
		{
			name: "unterminated complete last line",
			in:   lineA + "\n" + lineB,
			want: []chunkWant{rec(1, lineA), {kind: Pending, line: 2, end: 2, text: lineB, checkText: true}},
		},
		{
			name: "unterminated whitespace last line",
			in:   lineA + "\n  ",
			want: []chunkWant{rec(1, lineA), pending(2)},
		},
		{
			name:       "unterminated complete last line accepted",
			in:         lineA + "\n" + lineB,
			acceptTail: true,
			want:       []chunkWant{rec(1, lineA), rec(2, lineB)},
		},
		{
			name:       "unterminated incomplete last line accepted is torn",
			in:         lineA + "\n" + `{"id":"b","iter`,
			acceptTail: true,
			want:       []chunkWant{rec(1, lineA), bad(2, CodeTorn)},
		},
		{
			name:       "unterminated blank last line accepted",
			in:         lineA + "\n \t",
			acceptTail: true,
			want:       []chunkWant{rec(1, lineA), blank(2)},
		},
		{
			name:       "pretty-printed record without final newline, accepted",
			in:         strings.TrimSuffix(string(pretty), "\n"),
			acceptTail: true,
			want:       []chunkWant{{kind: Record, line: 1, end: 15, text: prettyText, checkText: true, warnings: []string{CodeMultiline}}},
		},
		{
			name: "stray opening brace before a pretty-printed record",
			in:   "{\n" + string(pretty),
			want: []chunkWant{bad(1, CodeTorn), {kind: Record, line: 2, end: 16, text: prettyText, checkText: true, warnings: []string{CodeMultiline}}},
		},
		{
			name: "lone opening brace before records",
			in:   "{\n" + lineA + "\n" + lineB + "\n",
			want: []chunkWant{bad(1, CodeTorn), rec(2, lineA), rec(3, lineB)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readAll(t, tt.in, tt.acceptTail)
			checkChunks(t, tt.in, got, tt.want)
		})
	}
}

func TestReaderLongLine(t *testing.T) {
	long := `{"input":"` + strings.Repeat("x", MaxLineBytes+100<<10) + `"}`
	in := lineA + "\n" + long + "\n" + lineB + "\n"
	got := readAll(t, in, false)
	checkChunks(t, in, got, []chunkWant{rec(1, lineA), bad(2, CodeTooLong), rec(3, lineB)})
	if c := got[1]; c.Length != int64(len(long)+1) || len(c.Text) != 0 {
		t.Errorf("long line chunk: Length = %d, len(Text) = %d; want %d and 0", c.Length, len(c.Text), len(long)+1)
	}
	if c := got[2]; c.Offset != int64(len(lineA)+1+len(long)+1) {
		t.Errorf("line after the long one: Offset = %d; want %d", c.Offset, len(lineA)+1+len(long)+1)
	}
}

// TestReaderLineLengthLimit pins the limit: a line of MaxLineBytes bytes
// (terminator not counted) is read, one byte more is too long.
func TestReaderLineLengthLimit(t *testing.T) {
	tests := []struct {
		name    string
		content int
		eol     string
		tooLong bool
	}{
		{"at the limit", MaxLineBytes, "\n", false},
		{"at the limit with CRLF", MaxLineBytes, "\r\n", false},
		{"one byte over", MaxLineBytes + 1, "\n", true},
		{"one byte over with CRLF", MaxLineBytes + 1, "\r\n", true},
		{"two bytes over", MaxLineBytes + 2, "\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Repeat("a", tt.content) + tt.eol + lineB + "\n"
			got := readAll(t, in, false)
			if len(got) != 2 {
				t.Fatalf("got %d chunks; want 2", len(got))
			}
			isTooLong := got[0].Kind == Bad && got[0].Err.Code == CodeTooLong
			if isTooLong != tt.tooLong {
				t.Errorf("line of %d bytes + %q: too long = %v; want %v (MaxLineBytes = %d)", tt.content, tt.eol, isTooLong, tt.tooLong, MaxLineBytes)
			}
			if c := got[1]; c.Kind != Record || c.Line != 2 || string(c.Text) != lineB {
				t.Errorf("line after it = %s line %d %q; want Record line 2 %q", kindName(c.Kind), c.Line, c.Text, lineB)
			}
			checkTiling(t, in, got)
		})
	}
}

// TestReaderPendingIsLast checks Next's contract: a Pending chunk is the last
// one, and it holds every byte from its offset to the end of the file.
func TestReaderPendingIsLast(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int // of the Pending chunk
	}{
		{"unterminated line", lineA + "\n" + `{"id":"b"`, 2},
		{"unterminated blank line", lineA + "\n" + "  ", 2},
		{"multi-line record cut at a line end", lineA + "\n{\n  \"id\": \"x\",\n  \"iteration\": 3,\n", 2},
		{"multi-line record cut mid-line", lineA + "\n{\n  \"id\": \"x\",\n  \"iter", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in), "j.jsonl", 0, 0)
			for {
				c, err := r.Next()
				if err != nil {
					t.Fatalf("Next: %v before any Pending chunk", err)
				}
				if c.Kind != Pending {
					if c.Line >= tt.line {
						t.Fatalf("line %d: %s chunk; want Pending from line %d", c.Line, kindName(c.Kind), tt.line)
					}
					continue
				}
				if c.Line != tt.line {
					t.Errorf("Pending chunk at line %d; want %d", c.Line, tt.line)
				}
				if c.End() != int64(len(tt.in)) {
					t.Errorf("Pending chunk at line %d ends at %d; want %d (the end of the file)", c.Line, c.End(), len(tt.in))
				}
				next, err := r.Next()
				if !errors.Is(err, io.EOF) {
					t.Errorf("Next after Pending = %s lines %d-%d %q, %v; want io.EOF", kindName(next.Kind), next.Line, next.LineEnd, next.Text, err)
				}
				return
			}
		})
	}
}

// TestReaderTornAnywhere cuts a record at every byte (inside multi-byte
// characters and just after a nested object too) and follows it with a
// complete record, then reads and decodes as sync does (up to the first
// Pending chunk): the fragment never keeps the record after it from being
// read, and it is a torn fragment, a warning, whatever its last byte.
func TestReaderTornAnywhere(t *testing.T) {
	full := strings.Replace(dec("iter-1-1", 1, 0), "input of iter-1-1", "Schlüsselrotation prüfen – ≥ 2 Schlüssel 🔑", 1)
	next := dec("iter-1-2", 1, 1)
	var swallowed, notTorn []string
	for k := 1; k < len(full); k++ {
		frag := full[:k]
		in := frag + "\n" + next + "\n"
		var got []parsed
		err := produce(context.Background(), NewReader(strings.NewReader(in), "j.jsonl", 0, 0), decisionKind{}, 10, func(p *parsed) error {
			got = append(got, *p)
			return nil
		})
		if err != nil {
			t.Fatalf("produce: %v", err)
		}
		if len(got) != 2 || got[1].c.Kind != Record || got[1].c.Line != 2 || string(got[1].c.Text) != next || got[1].d.Reject != nil {
			swallowed = append(swallowed, "…"+frag[max(0, k-24):])
			continue
		}
		if c := got[0].c; c.Kind != Bad || c.Err.Code != CodeTorn || c.Err.Severity != SevWarning || c.Err.Line != 1 {
			notTorn = append(notTorn, fmt.Sprintf("…%q: %s %v", frag[max(0, k-16):], kindName(c.Kind), c.Err))
		}
	}
	if len(swallowed) > 0 {
		t.Errorf("after %d of %d fragments the complete record on the next line is not read (the fragment is Pending), fragments ending: %q", len(swallowed), len(full)-1, swallowed)
	}
	if len(notTorn) > 0 {
		t.Errorf("%d of %d fragments not read as a torn fragment (a warning):\n%s", len(notTorn), len(full)-1, strings.Join(notTorn, "\n"))
	}
}

func TestReaderStartsMidFile(t *testing.T) {
	head := lineA + "\n" + lineB + "\n"
	tail := "\n" + lineA + "\n"
	r := NewReader(strings.NewReader(tail), "j.jsonl", int64(len(head)), 2)
	var got []Chunk
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if len(got) != 2 {
		t.Fatalf("got %d chunks; want 2", len(got))
	}
	if got[0].Kind != Blank || got[0].Line != 3 || got[0].Offset != int64(len(head)) {
		t.Errorf("first chunk = %s line %d offset %d; want Blank line 3 offset %d", kindName(got[0].Kind), got[0].Line, got[0].Offset, len(head))
	}
	if got[1].Kind != Record || got[1].Line != 4 || got[1].Offset != int64(len(head)+1) {
		t.Errorf("second chunk = %s line %d offset %d; want Record line 4 offset %d", kindName(got[1].Kind), got[1].Line, got[1].Offset, len(head)+1)
	}
}

// FuzzReadRecords feeds any bytes to the reader: it never fails or panics,
// its chunks tile the input exactly, and a record's text is its lines'.
func FuzzReadRecords(f *testing.F) {
	pretty, err := os.ReadFile("testdata/doc-example.pretty.decision-record.json")
	if err != nil {
		f.Fatal(err)
	}
	example, err := os.ReadFile("testdata/doc-example.ceo-loop-decisions.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"",
		"\n",
		string(example),
		string(pretty),
		string(example) + string(pretty) + string(example),
		lineA + "\r\n" + lineB + "\r\n",
		"\xef\xbb\xbf" + lineA + "\n",
		"\xef\xbb\xbf{\n\"a\":1}\n",
		lineA + "\n" + `{"id":"b","iter`,
		`{"id":"a","input":` + "\n" + lineB + "\n",
		"{\n{\n{\n}\n",
		"{\n  \"id\": \"x\",\n",
		"[\n1,\n2]\n",
		"{\"a\":\"\x00\"}\n{\"b\":\"\xff\"}\n",
		"  \n\t\r\n{}\n",
		"{\"a\":[\n1,\n{\"b\":\n2}]}",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, acceptTail bool) {
		in := string(data)
		got := readAll(t, in, acceptTail)
		checkTiling(t, in, got)
		for i, c := range got {
			raw := data[c.Offset:c.End()]
			if n := bytes.Count(raw, []byte("\n")); n != c.LineEnd-c.Line+1 && !(i == len(got)-1 && !bytes.HasSuffix(raw, []byte("\n")) && n == c.LineEnd-c.Line) {
				t.Fatalf("chunk %d: lines %d-%d but %d newlines in %q", i, c.Line, c.LineEnd, n, raw)
			}
			if (c.Kind == Bad) != (c.Err != nil) {
				t.Fatalf("chunk %d: Kind %s with Err %v", i, kindName(c.Kind), c.Err)
			}
			if acceptTail && c.Kind == Pending {
				t.Fatalf("chunk %d: Pending with AcceptUnterminated", i)
			}
			if c.Kind == Record {
				if want := recordText(raw, c.Offset == 0); !bytes.Equal(c.Text, want) {
					t.Fatalf("chunk %d: Text = %q; want %q", i, c.Text, want)
				}
			}
		}
	})
}

// recordText is what a record chunk's Text must be: its lines without their
// terminators, joined by \n, less a leading byte order mark.
func recordText(raw []byte, atStart bool) []byte {
	if atStart {
		raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	}
	ls := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	for i, l := range ls {
		ls[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return bytes.Join(ls, []byte("\n"))
}
