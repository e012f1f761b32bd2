package jsonedit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Edit replaces data[Start:End] with Text.
type Edit struct {
	Start, End int
	Text       string
}

// Apply makes non-overlapping edits.
func Apply(data []byte, edits []Edit) []byte {
	slices.SortFunc(edits, func(a, b Edit) int { return a.Start - b.Start })
	var b bytes.Buffer
	b.Grow(len(data) + 64*len(edits))
	prev := 0
	for _, e := range edits {
		b.Write(data[prev:e.Start])
		b.WriteString(e.Text)
		prev = e.End
	}
	b.Write(data[prev:])
	return b.Bytes()
}

// IndentOf returns the whitespace before off on its line, or "" when
// something else precedes it there.
func IndentOf(data []byte, off int) string {
	start := off
	for start > 0 && data[start-1] != '\n' {
		start--
	}
	ws := data[start:off]
	if len(bytes.Trim(ws, " \t")) > 0 {
		return ""
	}
	return string(ws)
}

// lineIndent returns the whitespace that starts the line holding off.
func lineIndent(data []byte, off int) string {
	start := off
	for start > 0 && data[start-1] != '\n' {
		start--
	}
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// OnOwnLine reports whether only whitespace precedes off on its line.
func OnOwnLine(data []byte, off int) bool {
	for i := off - 1; i >= 0; i-- {
		switch data[i] {
		case '\n':
			return true
		case ' ', '\t':
		default:
			return false
		}
	}
	return true
}

// IndentUnit is the document's indentation step: the indentation of the
// root's first member (or element) on its own line, else two spaces (what
// JSON.stringify(v, null, 2) writes).
func IndentUnit(data []byte, root *Node) string {
	if root == nil {
		return "  "
	}
	if root.Kind == '{' && len(root.Members) > 0 {
		if ind := IndentOf(data, root.Members[0].KeyStart); ind != "" {
			return ind
		}
	}
	if root.Kind == '[' && len(root.Elems) > 0 {
		if ind := IndentOf(data, root.Elems[0].Start); ind != "" {
			return ind
		}
	}
	return "  "
}

// KV is a member to write, its value already encoded as JSON.
type KV struct {
	Key, Val string
}

// Marshal encodes v as JSON.stringify does: no HTML escaping of <, > and
// & (the frameworks' own scripts write their files with it, and a
// "<promise>" must stay greppable).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Quote encodes a string as a JSON value, as Marshal does.
func Quote(s string) string {
	b, _ := Marshal(s)
	return string(b)
}

// newline is the document's line break: CRLF when its first line ends so.
func newline(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// layout renders the JSON value raw for a place: composite values on
// several lines (each at indent plus unit, lines broken with nl) when
// multiline, else compact.
func layout(raw string, multiline bool, indent, unit, nl string) string {
	t := strings.TrimSpace(raw)
	if t == "" || (t[0] != '{' && t[0] != '[') || strings.Contains(t, "\n") {
		// A scalar, or a value already laid out (a part of the file
		// edited on its own and put back).
		return t
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(t)); err != nil {
		return t
	}
	compact := b.String()
	if !multiline || compact == "{}" || compact == "[]" {
		return compact
	}
	b.Reset()
	if err := json.Indent(&b, []byte(compact), indent, unit); err != nil {
		return compact
	}
	return strings.ReplaceAll(b.String(), "\n", nl)
}

// SetMembers returns the edits that give obj the members: values replaced
// in place, missing members added after the last one, laid out like it
// (an empty object gets them on one line, or on their own lines when it is
// the root, already spans lines or is the value of a member on its own
// line).
func SetMembers(data []byte, root, obj *Node, set []KV) []Edit {
	unit, nl := IndentUnit(data, root), newline(data)
	var edits []Edit
	var missing []KV
	for _, f := range set {
		if v := obj.Get(f.Key); v != nil {
			multi := bytes.IndexByte(data[v.Start:v.End], '\n') >= 0
			if text := layout(f.Val, multi, lineIndent(data, v.Start), unit, nl); string(data[v.Start:v.End]) != text {
				edits = append(edits, Edit{v.Start, v.End, text})
			}
			continue
		}
		missing = append(missing, f)
	}
	if len(missing) == 0 {
		return edits
	}
	var b strings.Builder
	if len(obj.Members) == 0 {
		if obj == root || bytes.IndexByte(data[obj.Start:obj.End], '\n') >= 0 || memberOwnsLine(data, obj.Start) {
			ind := lineIndent(data, obj.Start)
			b.WriteString("{")
			for i, f := range missing {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(nl + ind + unit + Quote(f.Key) + ": " + layout(f.Val, true, ind+unit, unit, nl))
			}
			b.WriteString(nl + ind + "}")
			return append(edits, Edit{obj.Start, obj.End, b.String()})
		}
		for i, f := range missing {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(Quote(f.Key) + ": " + layout(f.Val, false, "", "", nl))
		}
		return append(edits, Edit{obj.Start + 1, obj.Start + 1, b.String()})
	}
	last := obj.Members[len(obj.Members)-1]
	sep := string(data[last.KeyEnd:last.Val.Start])
	if strings.TrimSpace(sep) != ":" || strings.Contains(sep, "\n") {
		sep = ": "
	}
	lead := " "
	if sep == ":" {
		lead = "" // a compact document: no space after commas either
	}
	multi := false
	if ind := IndentOf(data, last.KeyStart); ind != "" || OnOwnLine(data, last.KeyStart) {
		lead, multi = nl+ind, true
	} else if len(obj.Members) > 1 {
		prev := obj.Members[len(obj.Members)-2]
		between := data[prev.Val.End:last.KeyStart]
		if i := bytes.IndexByte(between, ','); i >= 0 && len(bytes.Trim(between[i+1:], " \t")) == 0 {
			lead = string(between[i+1:])
		}
	}
	ind := lineIndent(data, last.KeyStart)
	for _, f := range missing {
		b.WriteString("," + lead + Quote(f.Key) + sep + layout(f.Val, multi, ind, unit, nl))
	}
	return append(edits, Edit{last.Val.End, last.Val.End, b.String()})
}

// Doc is a JSON document edited in place: each edit changes the bytes of
// one value or member and leaves every other byte as it was.
type Doc struct {
	data []byte
	root *Node
}

// ParseDoc parses a document for editing.
func ParseDoc(data []byte) (*Doc, error) {
	root, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return &Doc{data: data, root: root}, nil
}

// Bytes is the document as edited.
func (d *Doc) Bytes() []byte { return d.data }

// Root is the document's top-level value.
func (d *Doc) Root() *Node { return d.root }

// Find returns the value at path (object keys from the root), or nil.
func (d *Doc) Find(path ...string) *Node {
	n := d.root
	for _, k := range path {
		if n = n.Get(k); n == nil {
			return nil
		}
	}
	return n
}

// Raw returns the text of the value at path, as written.
func (d *Doc) Raw(path ...string) ([]byte, bool) {
	n := d.Find(path...)
	if n == nil {
		return nil, false
	}
	return d.data[n.Start:n.End], true
}

func (d *Doc) apply(edits []Edit) error {
	if len(edits) == 0 {
		return nil
	}
	out := Apply(d.data, edits)
	root, err := Parse(out)
	if err != nil {
		// The edits put valid values between valid bytes.
		return fmt.Errorf("jsonedit: an edit broke the document: %w", err)
	}
	d.data, d.root = out, root
	return nil
}

// parent returns the object holding the last key of path.
func (d *Doc) parent(path []string) (*Node, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("jsonedit: an empty path")
	}
	obj := d.Find(path[:len(path)-1]...)
	if obj == nil || obj.Kind != '{' {
		return nil, fmt.Errorf("%s is %s, not an object", strings.Join(path[:len(path)-1], "."), KindName(obj))
	}
	return obj, nil
}

// Set sets the member at path to the JSON value raw: in place when it
// exists, else added after the object's last member. The objects on the
// way must exist.
func (d *Doc) Set(path []string, raw []byte) error {
	if !json.Valid(raw) {
		return fmt.Errorf("set %s: not a JSON value", strings.Join(path, "."))
	}
	obj, err := d.parent(path)
	if err != nil {
		return fmt.Errorf("set %s: %w", strings.Join(path, "."), err)
	}
	return d.apply(SetMembers(d.data, d.root, obj, []KV{{path[len(path)-1], string(raw)}}))
}

// Delete removes the member at path, with its separator; a missing member
// is no edit.
func (d *Doc) Delete(path ...string) error {
	obj, err := d.parent(path)
	if err != nil {
		return fmt.Errorf("delete %s: %w", strings.Join(path, "."), err)
	}
	key := path[len(path)-1]
	for {
		i := slices.IndexFunc(obj.Members, func(m Member) bool { return m.Key == key })
		if i < 0 {
			return nil
		}
		if err := d.Remove(obj.Members[i].Val); err != nil {
			return err
		}
		if obj = d.Find(path[:len(path)-1]...); obj == nil {
			return nil
		}
	}
}

// memberOwnsLine reports whether the value at off is the value of a member
// that starts its line ("key": value), or the document itself.
func memberOwnsLine(data []byte, off int) bool {
	start := off
	for start > 0 && data[start-1] != '\n' {
		start--
	}
	before := bytes.TrimSpace(data[start:off])
	if len(before) == 0 {
		return bytes.IndexByte(bytes.TrimSpace(data), '\n') >= 0
	}
	return before[0] == '"' && before[len(before)-1] == ':' && bytes.Count(before, []byte(`"`)) >= 2 && !bytes.ContainsAny(before, "{[,")
}

// Append adds the JSON value raw at the end of the array at path, laid out
// like the elements before it (an empty array on its own lines when its
// member is on one).
func (d *Doc) Append(path []string, raw []byte) error {
	if !json.Valid(raw) {
		return fmt.Errorf("append to %s: not a JSON value", strings.Join(path, "."))
	}
	arr := d.Find(path...)
	if arr == nil || arr.Kind != '[' {
		return fmt.Errorf("append to %s: it is %s, not an array", strings.Join(path, "."), KindName(arr))
	}
	unit, nl := IndentUnit(d.data, d.root), newline(d.data)
	if len(arr.Elems) == 0 {
		ind := lineIndent(d.data, arr.Start)
		if memberOwnsLine(d.data, arr.Start) {
			text := "[" + nl + ind + unit + layout(string(raw), true, ind+unit, unit, nl) + nl + ind + "]"
			return d.apply([]Edit{{arr.Start, arr.End, text}})
		}
		return d.apply([]Edit{{arr.Start, arr.End, "[" + layout(string(raw), false, "", "", nl) + "]"}})
	}
	last := arr.Elems[len(arr.Elems)-1]
	var lead []byte
	if len(arr.Elems) > 1 {
		between := d.data[arr.Elems[len(arr.Elems)-2].End:last.Start]
		if i := bytes.IndexByte(between, ','); i >= 0 {
			lead = between[i+1:]
		}
	} else {
		lead = d.data[arr.Start+1 : last.Start]
	}
	multi := bytes.IndexByte(lead, '\n') >= 0
	if multi {
		// One line break, even after a blank line between elements.
		lead = []byte(nl + lineIndent(d.data, last.Start))
	}
	text := "," + string(lead) + layout(string(raw), multi, lineIndent(d.data, last.Start), unit, nl)
	return d.apply([]Edit{{last.End, last.End, text}})
}

// Replace replaces the value n (a node of the document) with the JSON
// value raw, as written: the bytes around it stay as they were.
func (d *Doc) Replace(n *Node, raw []byte) error {
	if !json.Valid(raw) {
		return fmt.Errorf("replace: not a JSON value")
	}
	return d.apply([]Edit{{n.Start, n.End, string(raw)}})
}

// Remove removes the value n (a node of the document: an array element,
// or the value of an object member, which goes with its key) with its
// separator, so that its neighbours keep their layout. The document's
// top-level value cannot be removed.
func (d *Doc) Remove(n *Node) error {
	parent := d.parentOf(d.root, n)
	if parent == nil {
		return fmt.Errorf("remove: the value at byte %d is not inside the document", n.Start)
	}
	var spans []struct{ start, end, next int }
	if parent.Kind == '[' {
		for i, e := range parent.Elems {
			next := -1
			if i+1 < len(parent.Elems) {
				next = parent.Elems[i+1].Start
			}
			spans = append(spans, struct{ start, end, next int }{e.Start, e.End, next})
		}
	} else {
		for i, m := range parent.Members {
			next := -1
			if i+1 < len(parent.Members) {
				next = parent.Members[i+1].KeyStart
			}
			spans = append(spans, struct{ start, end, next int }{m.KeyStart, m.Val.End, next})
		}
	}
	i := slices.IndexFunc(spans, func(s struct{ start, end, next int }) bool { return s.end == n.End })
	var e Edit
	switch {
	case len(spans) == 1:
		e = Edit{parent.Start, parent.End, string(d.data[parent.Start]) + string(d.data[parent.End-1])}
	case i > 0:
		e = Edit{spans[i-1].end, spans[i].end, ""}
	default:
		e = Edit{spans[0].start, spans[0].next, ""}
	}
	return d.apply([]Edit{e})
}

// parentOf returns the array or object in the tree at p that holds n.
func (d *Doc) parentOf(p, n *Node) *Node {
	if p == nil {
		return nil
	}
	for _, e := range p.Elems {
		if e == n {
			return p
		}
		if q := d.parentOf(e, n); q != nil {
			return q
		}
	}
	for _, m := range p.Members {
		if m.Val == n {
			return p
		}
		if q := d.parentOf(m.Val, n); q != nil {
			return q
		}
	}
	return nil
}

// SetIn sets members of the object n (a node of the document): values
// replaced in place, missing members added after its last one.
func (d *Doc) SetIn(n *Node, set []KV) error {
	if n == nil || n.Kind != '{' {
		return fmt.Errorf("set members: the value is %s, not an object", KindName(n))
	}
	return d.apply(SetMembers(d.data, d.root, n, set))
}
