package jsonedit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Node is a JSON value with its byte span in the document it was parsed
// from, so that a rewrite can replace one value or insert one member and
// leave every other byte as it was.
type Node struct {
	Kind       byte // '{', '[', '"', '0' (number), 't', 'f', 'n'
	Start, End int  // data[Start:End] is the value's text
	Members    []Member
	Elems      []*Node
}

// Member is one key and value of an object.
type Member struct {
	Key      string
	KeyStart int
	KeyEnd   int
	Val      *Node
}

// Get returns the value of key (the last one when the key repeats, as
// JSON.parse does), or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != '{' {
		return nil
	}
	for i := len(n.Members) - 1; i >= 0; i-- {
		if n.Members[i].Key == key {
			return n.Members[i].Val
		}
	}
	return nil
}

// Has reports whether the object holds key.
func (n *Node) Has(key string) bool { return n.Get(key) != nil }

// KindName names a value's JSON type for messages.
func KindName(n *Node) string {
	if n == nil {
		return "absent"
	}
	switch n.Kind {
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

// SyntaxError is a syntax error at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return e.Msg }

// MaxDepth bounds nesting, so that a hostile file cannot exhaust the stack.
const MaxDepth = 1000

// Parse parses a whole document (RFC 8259; a leading UTF-8 byte-order
// mark is skipped) into nodes with their spans.
func Parse(data []byte) (*Node, error) {
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
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
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

func (p *jparser) value(depth int) (*Node, error) {
	if depth > MaxDepth {
		return nil, p.errorf("nested more than %d levels deep", MaxDepth)
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
		return &Node{Kind: '"', Start: start, End: p.pos}, nil
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

func (p *jparser) literal(word string, kind byte) (*Node, error) {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return nil, p.errorf("unexpected %s, expecting a value", p.describe())
	}
	n := &Node{Kind: kind, Start: p.pos, End: p.pos + len(word)}
	p.pos += len(word)
	return n, nil
}

func (p *jparser) object(depth int) (*Node, error) {
	n := &Node{Kind: '{', Start: p.pos}
	p.pos++
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		n.End = p.pos
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
		m := Member{Key: p.decodeString(ks, p.pos), KeyStart: ks, KeyEnd: p.pos}
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
		m.Val = v
		n.Members = append(n.Members, m)
		if done, err := p.next(n, "an object"); done || err != nil {
			return n, err
		}
	}
}

// next consumes the ',' or the closing byte after a member or an element
// of n (what says which, for errors); done is true at the close, n.End set.
func (p *jparser) next(n *Node, what string) (done bool, err error) {
	close := byte('}')
	if n.Kind == '[' {
		close = ']'
	}
	p.space()
	if p.pos >= len(p.data) {
		return false, p.errorf("unexpected end of file in %s, expecting ',' or '%c'", what, close)
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case close:
		p.pos++
		n.End = p.pos
		return true, nil
	}
	return false, p.errorf("unexpected %s in %s, expecting ',' or '%c'", p.describe(), what, close)
}

func (p *jparser) array(depth int) (*Node, error) {
	n := &Node{Kind: '[', Start: p.pos}
	p.pos++
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		n.End = p.pos
		return n, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, v)
		if done, err := p.next(n, "an array"); done || err != nil {
			return n, err
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

func (p *jparser) number() (*Node, error) {
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
	return &Node{Kind: '0', Start: start, End: p.pos}, nil
}

// decodeString decodes the string literal data[start:end] (quotes
// included). Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func (p *jparser) decodeString(start, end int) string {
	return DecodeString(p.data[start:end])
}

// DecodeString decodes a string literal (quotes included). Invalid UTF-8
// becomes U+FFFD, as encoding/json does.
func DecodeString(lit []byte) string {
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

// Str returns the decoded string of a string node ("" for any other).
func (n *Node) Str(data []byte) string {
	if n == nil || n.Kind != '"' {
		return ""
	}
	return DecodeString(data[n.Start:n.End])
}

// Lines maps byte offsets to 1-based line numbers.
type Lines []int

// NewLines indexes the line starts of data.
func NewLines(data []byte) Lines {
	li := Lines{0}
	for i, c := range data {
		if c == '\n' {
			li = append(li, i+1)
		}
	}
	return li
}

// Line returns the 1-based line holding offset off.
func (li Lines) Line(off int) int {
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

// Col returns the 1-based column (in bytes) of offset off.
func (li Lines) Col(off int) int {
	return off - li[li.Line(off)-1] + 1
}
