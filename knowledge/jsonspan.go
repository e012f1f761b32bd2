package knowledge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// node is a JSON value with its byte span in the document it was parsed
// from, so that a rewrite can replace one value or insert one member and
// leave every other byte as it was.
type node struct {
	kind       byte // '{', '[', '"', '0' (number), 't', 'f', 'n'
	start, end int  // data[start:end] is the value's text
	members    []member
	elems      []*node
}

// member is one key and value of an object.
type member struct {
	key      string
	keyStart int
	keyEnd   int
	val      *node
}

// get returns the value of key (the last one when the key repeats, as
// JSON.parse does), or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// has reports whether the object holds key.
func (n *node) has(key string) bool { return n.get(key) != nil }

// kindName names a value's JSON type for messages.
func kindName(n *node) string {
	if n == nil {
		return "absent"
	}
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	default:
		return "null"
	}
}

// jsonError is a syntax error at a byte offset.
type jsonError struct {
	Offset int
	Msg    string
}

func (e *jsonError) Error() string { return e.Msg }

// maxDepth bounds nesting, so that a hostile file cannot exhaust the stack.
const maxDepth = 1000

// parseJSON parses a whole document (RFC 8259; a leading UTF-8 byte-order
// mark is skipped) into nodes with their spans.
func parseJSON(data []byte) (*node, error) {
	p := &jparser{data: data}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(data) {
		return nil, p.errorf("unexpected %s after the top-level value", p.describe())
	}
	return n, nil
}

type jparser struct {
	data []byte
	pos  int
}

func (p *jparser) errorf(format string, args ...any) error {
	return &jsonError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *jparser) describe() string {
	if p.pos >= len(p.data) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.data[p.pos:])
	return fmt.Sprintf("%q", r)
}

func (p *jparser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jparser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested more than %d levels deep", maxDepth)
	}
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of file, expecting a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		start := p.pos
		if err := p.str(); err != nil {
			return nil, err
		}
		return &node{kind: '"', start: start, end: p.pos}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", 't')
	case c == 'f':
		return p.literal("false", 'f')
	case c == 'n':
		return p.literal("null", 'n')
	default:
		return nil, p.errorf("unexpected %s, expecting a value", p.describe())
	}
}

func (p *jparser) literal(word string, kind byte) (*node, error) {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return nil, p.errorf("unexpected %s, expecting a value", p.describe())
	}
	n := &node{kind: kind, start: p.pos, end: p.pos + len(word)}
	p.pos += len(word)
	return n, nil
}

func (p *jparser) object(depth int) (*node, error) {
	n := &node{kind: '{', start: p.pos}
	p.pos++
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		n.end = p.pos
		return n, nil
	}
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("unexpected %s, expecting a string key", p.describe())
		}
		ks := p.pos
		if err := p.str(); err != nil {
			return nil, err
		}
		m := member{key: p.decodeString(ks, p.pos), keyStart: ks, keyEnd: p.pos}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("unexpected %s after a key, expecting ':'", p.describe())
		}
		p.pos++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m.val = v
		n.members = append(n.members, m)
		p.space()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of file in an object, expecting ',' or '}'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			n.end = p.pos
			return n, nil
		default:
			return nil, p.errorf("unexpected %s in an object, expecting ',' or '}'", p.describe())
		}
	}
}

func (p *jparser) array(depth int) (*node, error) {
	n := &node{kind: '[', start: p.pos}
	p.pos++
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		n.end = p.pos
		return n, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		p.space()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of file in an array, expecting ',' or ']'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			n.end = p.pos
			return n, nil
		default:
			return nil, p.errorf("unexpected %s in an array, expecting ',' or ']'", p.describe())
		}
	}
}

// str scans a string starting at the opening quote.
func (p *jparser) str() error {
	p.pos++
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return nil
		case c == '\\':
			if p.pos+1 >= len(p.data) {
				return p.errorf("unexpected end of file in a string")
			}
			switch p.data[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) {
					return p.errorf("unexpected end of file in a \\u escape")
				}
				for _, h := range p.data[p.pos+2 : p.pos+6] {
					if !isHex(h) {
						return p.errorf("invalid \\u escape in a string")
					}
				}
				p.pos += 6
			default:
				p.pos++
				return p.errorf("invalid escape %s in a string", p.describe())
			}
		case c < 0x20:
			return p.errorf("control character %#02x in a string (write it as an escape)", c)
		default:
			p.pos++
		}
	}
	return p.errorf("unexpected end of file in a string (a missing '\"'?)")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (p *jparser) number() (*node, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number: no digits in the exponent")
		}
	}
	return &node{kind: '0', start: start, end: p.pos}, nil
}

// decodeString decodes the string literal data[start:end] (quotes
// included). Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func (p *jparser) decodeString(start, end int) string {
	return decodeString(p.data[start:end])
}

func decodeString(lit []byte) string {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		// The scanner accepted it, so this cannot happen; keep the text.
		return strings.ToValidUTF8(string(inner), "\uFFFD")
	}
	return s
}

// str returns the decoded string of a string node.
func (n *node) str(data []byte) string {
	if n == nil || n.kind != '"' {
		return ""
	}
	return decodeString(data[n.start:n.end])
}

// lineIndex maps byte offsets to 1-based line numbers.
type lineIndex []int

func newLineIndex(data []byte) lineIndex {
	li := lineIndex{0}
	for i, c := range data {
		if c == '\n' {
			li = append(li, i+1)
		}
	}
	return li
}

// line returns the 1-based line holding offset off.
func (li lineIndex) line(off int) int {
	lo, hi := 0, len(li)
	for lo < hi {
		m := (lo + hi) / 2
		if li[m] <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// col returns the 1-based column (in bytes) of offset off.
func (li lineIndex) col(off int) int {
	return off - li[li.line(off)-1] + 1
}
