package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxLineBytes bounds one line of a journal. Longer lines are rejected (their
// bytes stay in the file) without ever being held in memory whole.
const MaxLineBytes = 1 << 20

// MaxFieldBytes bounds each text field of a record orbit writes (a title,
// a reason, a context): seven of them fit a line whatever they hold.
const MaxFieldBytes = 64 << 10

// maxRecordLines bounds a record pretty-printed over several lines.
const maxRecordLines = 1000

// ChunkKind says what a stretch of a file is.
type ChunkKind int

const (
	// Record is one JSON value, on one line or pretty-printed over several.
	Record ChunkKind = iota
	// Blank is an empty or whitespace-only line.
	Blank
	// Bad is a line that cannot be a record; Chunk.Err says why: a warning
	// for a torn fragment (a write cut short), an error otherwise.
	Bad
	// Pending is an unterminated last line, or a multi-line record that the
	// end of the file cuts short: a write in progress. It is not consumed.
	Pending
)

// Chunk is a stretch of whole lines of a file.
type Chunk struct {
	Kind    ChunkKind
	Line    int   // first line, 1-based
	LineEnd int   // last line, inclusive
	Offset  int64 // byte offset of the first line
	Length  int64 // bytes, line terminators included
	// Text is the record's text without line terminators (lines of a
	// multi-line record joined by \n). It is a fresh slice the caller owns.
	Text     []byte
	Err      *Problem
	Warnings []Problem
}

// End is the byte offset just past the chunk.
func (c Chunk) End() int64 { return c.Offset + c.Length }

// rawLine is one physical line.
type rawLine struct {
	num        int
	off        int64
	length     int64 // bytes including the terminator
	text       []byte
	terminated bool
	tooLong    bool
}

// Reader splits a journal into chunks: records, blank lines and bad lines,
// each located by file:line. It never drops a byte: every byte read belongs to
// exactly one chunk.
type Reader struct {
	br   *bufio.Reader
	file string
	line int   // number of the last physical line read
	off  int64 // offset just past the last physical line read
	// queue holds lines read ahead while assembling a multi-line record and
	// given back when the assembly failed.
	queue []rawLine
	// AcceptUnterminated treats a complete record on an unterminated last line
	// as a record (for importing foreign files, which editors often save
	// without a final newline). Sync leaves it pending instead.
	AcceptUnterminated bool
	eof                bool
}

// NewReader reads r, whose first byte is at offset off of file and which
// starts at line line+1.
func NewReader(r io.Reader, file string, off int64, line int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 256<<10), file: file, line: line, off: off}
}

// readLine reads one physical line, keeping at most MaxLineBytes of it.
func (r *Reader) readLine() (rawLine, error) {
	if len(r.queue) > 0 {
		l := r.queue[0]
		r.queue = r.queue[1:]
		return l, nil
	}
	if r.eof {
		return rawLine{}, io.EOF
	}
	l := rawLine{num: r.line + 1, off: r.off}
	var buf []byte
	for {
		frag, err := r.br.ReadSlice('\n')
		l.length += int64(len(frag))
		if !l.tooLong {
			if len(buf)+len(frag) > MaxLineBytes+2 {
				l.tooLong = true
				buf = nil
			} else {
				buf = append(buf, frag...)
			}
		}
		if err == nil {
			l.terminated = true
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			r.eof = true
			if l.length == 0 {
				return rawLine{}, io.EOF
			}
			break
		}
		return rawLine{}, fmt.Errorf("read %s:%d: %w", r.file, l.num, err)
	}
	r.line = l.num
	r.off += l.length
	if l.terminated && !l.tooLong {
		buf = buf[:len(buf)-1]
	}
	if n := len(buf); n > 0 && buf[n-1] == '\r' {
		buf = buf[:n-1]
	}
	// A line whose buffer overflowed holds more than MaxLineBytes of text
	// even if its last two bytes were \r\n; one that did not, may still.
	if len(buf) > MaxLineBytes {
		l.tooLong, buf = true, nil
	}
	l.text = buf
	return l, nil
}

func (r *Reader) unread(lines []rawLine) {
	r.queue = append(append([]rawLine(nil), lines...), r.queue...)
}

func (r *Reader) problem(l rawLine, end int, code, format string, args ...any) *Problem {
	return &Problem{File: r.file, Line: l.num, LineEnd: end, Severity: SevError, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Next returns the next chunk, or io.EOF after the last one. A Pending chunk
// is always the last; with AcceptUnterminated there is none (an incomplete
// tail is a Bad chunk instead).
func (r *Reader) Next() (Chunk, error) {
	c, err := r.next()
	if err == nil && c.Kind == Pending && r.AcceptUnterminated {
		c.Kind = Bad
		c.Err = &Problem{File: r.file, Line: c.Line, LineEnd: c.LineEnd, Severity: SevWarning, Code: CodeTorn,
			Message: "truncated record at the end of the file: the JSON ends before the record does"}
	}
	return c, err
}

func (r *Reader) next() (Chunk, error) {
	l, err := r.readLine()
	if err != nil {
		return Chunk{}, err
	}
	c := Chunk{Line: l.num, LineEnd: l.num, Offset: l.off, Length: l.length}
	var warns []Problem
	if l.off == 0 && bytes.HasPrefix(l.text, []byte("\xef\xbb\xbf")) {
		l.text = l.text[3:]
		warns = append(warns, Problem{File: r.file, Line: l.num, LineEnd: l.num, Severity: SevWarning, Code: CodeBOM, Message: "file starts with a UTF-8 byte order mark; ignored"})
	}
	c.Warnings = warns
	switch {
	case l.tooLong:
		c.Kind, c.Err = Bad, r.problem(l, l.num, CodeTooLong, "line is %d bytes, longer than the %d-byte limit", l.length, MaxLineBytes)
		return c, nil
	case !l.terminated && !r.AcceptUnterminated:
		c.Kind = Pending
		c.Text = l.text
		return c, nil
	}
	trimmed := bytes.TrimSpace(l.text)
	if len(trimmed) == 0 {
		if !l.terminated && !r.AcceptUnterminated {
			c.Kind = Pending
			return c, nil
		}
		c.Kind = Blank
		return c, nil
	}
	if i := bytes.IndexByte(l.text, 0); i >= 0 {
		c.Kind, c.Err = Bad, r.problem(l, l.num, CodeNUL, "NUL byte at column %d", i+1)
		return c, nil
	}
	// A line that opens an object and does not close it may be the first of
	// a record pretty-printed over several lines, or a write cut short.
	// (A line that ends in '}' is left to the record decoder, which
	// validates it anyway.)
	unclosed := trimmed[0] == '{' && trimmed[len(trimmed)-1] != '}' && incomplete(trimmed)
	// A write stops at any byte, inside a multi-byte character too: such a
	// cut at the end of an open record is a torn fragment, not bad text.
	if !utf8.Valid(l.text) && !(unclosed && endsInCutRune(l.text)) {
		c.Kind, c.Err = Bad, r.problem(l, l.num, CodeUTF8, "invalid UTF-8 at column %d", InvalidUTF8At(l.text)+1)
		return c, nil
	}
	if unclosed {
		return r.assemble(l, c)
	}
	c.Kind = Record
	c.Text = bytes.Clone(l.text)
	return c, nil
}

// assemble reads the lines that follow first while together they are an
// incomplete JSON value: a record pretty-printed over several lines.
func (r *Reader) assemble(first rawLine, c Chunk) (Chunk, error) {
	lines := []rawLine{first}
	text := bytes.Clone(first.text)
	// pending: the file ends inside the record, a write in progress. The
	// chunk covers every line read, so that it is the last one.
	pending := func() (Chunk, error) {
		last := lines[len(lines)-1]
		c.Kind = Pending
		c.LineEnd = last.num
		c.Length = last.off + last.length - first.off
		return c, nil
	}
	for len(lines) < maxRecordLines && len(text) <= MaxLineBytes {
		l, err := r.readLine()
		if errors.Is(err, io.EOF) {
			return pending()
		}
		if err != nil {
			return Chunk{}, err
		}
		lines = append(lines, l)
		if l.tooLong || !utf8.Valid(l.text) || bytes.IndexByte(l.text, 0) >= 0 {
			break
		}
		// A whole one-line record is never the inside of another: the
		// first line is a fragment cut short, and this record stands.
		if t := bytes.TrimSpace(l.text); len(t) > 0 && t[0] == '{' && t[len(t)-1] == '}' && json.Valid(t) {
			break
		}
		if !l.terminated && !r.AcceptUnterminated {
			return pending()
		}
		text = append(append(text, '\n'), l.text...)
		if json.Valid(text) {
			last := lines[len(lines)-1]
			c.Kind = Record
			c.LineEnd = last.num
			c.Length = last.off + last.length - first.off
			c.Text = text
			c.Warnings = append(c.Warnings, Problem{File: r.file, Line: first.num, LineEnd: last.num, Severity: SevWarning, Code: CodeMultiline,
				Message: fmt.Sprintf("record is pretty-printed over %d lines; read as one record", len(lines))})
			return c, nil
		}
		if !incomplete(text) {
			break
		}
	}
	// Not a multi-line record: the first line is a fragment, and the lines
	// after it are read again on their own.
	r.unread(lines[1:])
	c.Kind = Bad
	c.Err = tornFragment(r.file, first.num)
	return c, nil
}

// tornFragment is the finding for a torn fragment at line of file. It is a
// warning: a write cut short loses nothing that was acknowledged, since
// appenders acknowledge a record only once its whole line is written.
func tornFragment(file string, line int) *Problem {
	return &Problem{File: file, Line: line, LineEnd: line, Severity: SevWarning, Code: CodeTorn,
		Message: "truncated record: the JSON ends before the line does (a write cut short?)"}
}

// cutShort reports whether a line is the start of a record that the end of
// the line cuts short: a torn fragment, whatever its last byte.
func cutShort(text []byte) bool {
	t := bytes.TrimSpace(text)
	return len(t) > 0 && t[0] == '{' && incomplete(t)
}

// incomplete reports whether data is a prefix of a JSON value that more input
// could complete.
func incomplete(data []byte) bool {
	var v json.RawMessage
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&v)
	return errors.Is(err, io.ErrUnexpectedEOF)
}

// endsInCutRune reports whether b is valid UTF-8 but for its last bytes,
// which begin a multi-byte character that the end of b cuts short.
func endsInCutRune(b []byte) bool {
	i := InvalidUTF8At(b)
	return i < len(b) && len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:])
}

// InvalidUTF8At is the 0-based offset of the first byte of b that is not
// UTF-8 (len(b) when all is).
func InvalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}
