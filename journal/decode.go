package journal

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A one-pass JSON decoder for journal records. encoding/json validates a
// record in full and then decodes it by reflection: two passes. Sync and
// import decode every line, so this reads a record once, accepting exactly
// the JSON that encoding/json accepts (checked by
// FuzzDecodeMatchesEncodingJSON), with keys matched exactly.
//
// It stays because the import measured it worth its lines, as a whole
// process: `orbit import` of 20,000 synthetic decisions executes 5.37-5.39G
// instructions with it, 6.82-6.83G with encoding/json (+27%) and 5.77-5.79G with
// encoding/json/v2 (+7%, and v2 needs GOEXPERIMENT=jsonv2 in go1.26); per
// line 2.2µs against 8.1µs and 3.2µs. The Stop hook, which decodes the few
// lines an iteration appends, shows no difference beyond its run-to-run
// spread (77-79M instructions with it, 73-85M with either encoding/json).
// Measured 2026-11-30 with the decode suite's builds (bench/suite_decode.go;
// its wall times were taken at a load average of 6 to 20 on 2 cores):
//
//	go build -tags orbit_decode_stdlib ./cmd/orbit     # or GOEXPERIMENT=jsonv2 -tags orbit_decode_jsonv2
//	head -20000 testdata/bench/decisions-1M-seed20260308.jsonl > j.jsonl
//	orbit init && GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind orbit import j.jsonl
//	go test ./journal -bench '^BenchmarkParseDecision$' -count 5

// syntaxError is malformed JSON, located by byte offset.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at column %d", e.msg, e.off+1) }

// typeError is a field of the wrong JSON type.
type typeError struct {
	field string
	want  string
	got   string
}

func (e *typeError) Error() string { return fmt.Sprintf("%s: want %s, got %s", e.field, e.want, e.got) }

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

type lexer struct {
	b     []byte
	i     int
	depth int
	// typeErr is the first type error; decoding goes on so that a syntax
	// error later in the record wins, as in encoding/json.
	typeErr *typeError
}

func (l *lexer) fail(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), off: l.i}
}

func (l *lexer) ws() {
	for l.i < len(l.b) {
		switch l.b[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		default:
			return
		}
	}
}

func (l *lexer) unexpected() error {
	if l.i >= len(l.b) {
		return l.fail("unexpected end of JSON input")
	}
	return l.fail("invalid character %q", l.b[l.i])
}

// kind names the JSON type of the value at the cursor.
func (l *lexer) kind() string {
	if l.i >= len(l.b) {
		return "nothing"
	}
	switch c := l.b[l.i]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	default:
		return "number"
	}
}

// object walks an object's members, calling member with each key and the
// cursor on its value; member must consume the value.
func (l *lexer) object(member func(key string) error) error {
	if l.i >= len(l.b) || l.b[l.i] != '{' {
		return l.unexpected()
	}
	if l.depth++; l.depth > maxDepth {
		return l.fail("exceeded max depth")
	}
	defer func() { l.depth-- }()
	l.i++
	l.ws()
	if l.i < len(l.b) && l.b[l.i] == '}' {
		l.i++
		return nil
	}
	for {
		l.ws()
		if l.i >= len(l.b) || l.b[l.i] != '"' {
			return l.unexpected()
		}
		key, err := l.str()
		if err != nil {
			return err
		}
		l.ws()
		if l.i >= len(l.b) || l.b[l.i] != ':' {
			return l.unexpected()
		}
		l.i++
		l.ws()
		if err := member(key); err != nil {
			return err
		}
		if done, err := l.next('}'); done || err != nil {
			return err
		}
	}
}

// next consumes the ',' or the closing byte after a member or an element;
// done is true at the close.
func (l *lexer) next(close byte) (done bool, err error) {
	l.ws()
	if l.i < len(l.b) {
		switch l.b[l.i] {
		case ',':
			l.i++
			return false, nil
		case close:
			l.i++
			return true, nil
		}
	}
	return false, l.unexpected()
}

// skip consumes any value, validating it.
func (l *lexer) skip() error {
	if l.i >= len(l.b) {
		return l.unexpected()
	}
	switch c := l.b[l.i]; {
	case c == '"':
		_, err := l.str()
		return err
	case c == '{':
		return l.object(func(string) error { return l.skip() })
	case c == '[':
		if l.depth++; l.depth > maxDepth {
			return l.fail("exceeded max depth")
		}
		defer func() { l.depth-- }()
		l.i++
		l.ws()
		if l.i < len(l.b) && l.b[l.i] == ']' {
			l.i++
			return nil
		}
		for {
			l.ws()
			if err := l.skip(); err != nil {
				return err
			}
			if done, err := l.next(']'); done || err != nil {
				return err
			}
		}
	case c == 't':
		return l.literal("true")
	case c == 'f':
		return l.literal("false")
	case c == 'n':
		return l.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := l.number()
		return err
	default:
		return l.unexpected()
	}
}

func (l *lexer) literal(word string) error {
	for j := 0; j < len(word); j++ {
		if l.i >= len(l.b) || l.b[l.i] != word[j] {
			return l.unexpected()
		}
		l.i++
	}
	return nil
}

// null consumes a null and reports true, or leaves the cursor and reports
// false.
func (l *lexer) null() (bool, error) {
	if l.i < len(l.b) && l.b[l.i] == 'n' {
		return true, l.literal("null")
	}
	return false, nil
}

// number consumes a JSON number and returns its text.
func (l *lexer) number() ([]byte, error) {
	start := l.i
	if l.i < len(l.b) && l.b[l.i] == '-' {
		l.i++
	}
	switch {
	case l.i < len(l.b) && l.b[l.i] == '0':
		l.i++
	case l.i < len(l.b) && l.b[l.i] >= '1' && l.b[l.i] <= '9':
		for l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '9' {
			l.i++
		}
	default:
		return nil, l.unexpected()
	}
	if l.i < len(l.b) && l.b[l.i] == '.' {
		l.i++
		if l.i >= len(l.b) || l.b[l.i] < '0' || l.b[l.i] > '9' {
			return nil, l.unexpected()
		}
		for l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '9' {
			l.i++
		}
	}
	if l.i < len(l.b) && (l.b[l.i] == 'e' || l.b[l.i] == 'E') {
		l.i++
		if l.i < len(l.b) && (l.b[l.i] == '+' || l.b[l.i] == '-') {
			l.i++
		}
		if l.i >= len(l.b) || l.b[l.i] < '0' || l.b[l.i] > '9' {
			return nil, l.unexpected()
		}
		for l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '9' {
			l.i++
		}
	}
	return l.b[start:l.i], nil
}

// str consumes a string and returns its value; invalid UTF-8 and lone
// surrogates become U+FFFD, as in encoding/json.
func (l *lexer) str() (string, error) {
	l.i++ // opening quote
	start := l.i
	// Fast path: no escapes, all ASCII or valid UTF-8.
	for l.i < len(l.b) {
		c := l.b[l.i]
		if c == '"' {
			s := l.b[start:l.i]
			l.i++
			if utf8.Valid(s) {
				return string(s), nil
			}
			return string([]rune(string(s))), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", l.fail("invalid character %q in string literal", c)
		}
		l.i++
	}
	buf := make([]byte, 0, l.i-start+16)
	buf = append(buf, l.b[start:l.i]...)
	for {
		if l.i >= len(l.b) {
			return "", l.fail("unexpected end of JSON input")
		}
		c := l.b[l.i]
		switch {
		case c == '"':
			l.i++
			if !utf8.Valid(buf) {
				return string([]rune(string(buf))), nil
			}
			return string(buf), nil
		case c < 0x20:
			return "", l.fail("invalid character %q in string literal", c)
		case c != '\\':
			buf = append(buf, c)
			l.i++
			continue
		}
		l.i++
		if l.i >= len(l.b) {
			return "", l.fail("unexpected end of JSON input")
		}
		e := l.b[l.i]
		l.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := l.hex4()
			if !ok {
				return "", l.fail("invalid character in \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if l.i+1 < len(l.b) && l.b[l.i] == '\\' && l.b[l.i+1] == 'u' {
					save := l.i
					l.i += 2
					if lo, ok := l.hex4(); ok {
						if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
							r2 = dec
						} else {
							l.i = save
						}
					} else {
						return "", l.fail("invalid character in \\u escape")
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			l.i--
			return "", l.fail("invalid character %q in string escape code", e)
		}
	}
}

func (l *lexer) hex4() (rune, bool) {
	if l.i+4 > len(l.b) {
		return 0, false
	}
	var r rune
	for _, c := range l.b[l.i : l.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	l.i += 4
	return r, true
}

// typeErrorf notes the first type error and skips the value.
func (l *lexer) mistyped(field, want string) error {
	if l.typeErr == nil {
		got := l.kind()
		if got == "number" {
			start := l.i
			if lit, err := l.number(); err == nil {
				got = "number " + string(lit)
			}
			l.i = start
		}
		l.typeErr = &typeError{field: field, want: want, got: got}
	}
	return l.skip()
}

// optString decodes a string field: nil for null.
func (l *lexer) optString(field string, dst **string) error {
	if isNull, err := l.null(); isNull || err != nil {
		*dst = nil
		return err
	}
	if l.i >= len(l.b) || l.b[l.i] != '"' {
		return l.mistyped(field, "string")
	}
	s, err := l.str()
	if err != nil {
		return err
	}
	*dst = &s
	return nil
}

// optBool decodes a boolean field: nil for null.
func (l *lexer) optBool(field string, dst **bool) error {
	if isNull, err := l.null(); isNull || err != nil {
		*dst = nil
		return err
	}
	if l.kind() != "boolean" {
		return l.mistyped(field, "boolean")
	}
	v := l.b[l.i] == 't'
	lit := "false"
	if v {
		lit = "true"
	}
	if err := l.literal(lit); err != nil {
		return err
	}
	*dst = &v
	return nil
}

// anyString decodes a value that is kept only when it is a string.
func (l *lexer) anyString(dst *string) error {
	if l.i < len(l.b) && l.b[l.i] == '"' {
		s, err := l.str()
		*dst = s
		return err
	}
	*dst = ""
	return l.skip()
}

func (l *lexer) optInt(field string, dst **int64) error {
	if isNull, err := l.null(); isNull || err != nil {
		*dst = nil
		return err
	}
	if l.kind() != "number" {
		return l.mistyped(field, "integer")
	}
	start := l.i
	lit, err := l.number()
	if err != nil {
		return err
	}
	v, perr := strconv.ParseInt(string(lit), 10, 64)
	if perr != nil {
		l.i = start
		return l.mistyped(field, "integer")
	}
	*dst = &v
	return nil
}

func (l *lexer) optFloat(field string, dst **float64) error {
	if isNull, err := l.null(); isNull || err != nil {
		*dst = nil
		return err
	}
	if l.kind() != "number" {
		return l.mistyped(field, "number")
	}
	start := l.i
	lit, err := l.number()
	if err != nil {
		return err
	}
	v, perr := strconv.ParseFloat(string(lit), 64)
	if perr != nil {
		l.i = start
		return l.mistyped(field, "number")
	}
	*dst = &v
	return nil
}

// document decodes a whole record: one object and nothing after it but
// whitespace.
func (l *lexer) document(member func(key string) error) error {
	l.ws()
	if err := l.object(member); err != nil {
		return err
	}
	l.ws()
	if l.i < len(l.b) {
		return l.fail("invalid character %q after top-level value", l.b[l.i])
	}
	if l.typeErr != nil {
		return l.typeErr
	}
	return nil
}
