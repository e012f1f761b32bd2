package knowledge

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parsePatterns reads the entries of a patterns.md: each `### Name` section
// (the retrospective agent's template: **Category**, **Discovered**,
// **Problem**, **Solution**, **Code Example**, **Gotchas**) and each
// top-level bullet of the free-form lists agents write under `## Heading`s
// instead. Headings and bullets inside code fences are text; placeholders
// such as "(add as discovered)" are not entries.
func parsePatterns(path string, data []byte) ([]Entry, []Problem) {
	p := &mdParser{path: path}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		p.line(i+1, l)
	}
	p.flush()
	p.finish()
	return p.entries, p.problems
}

type mdParser struct {
	path     string
	section  string // the current ## heading
	fence    string // the fence that opened the current code block, "" outside
	cur      *mdEntry
	entries  []Entry
	problems []Problem
	keys     map[string]int
}

// mdEntry is an entry being read.
type mdEntry struct {
	line     int
	heading  bool // a ### section (else a bullet)
	name     string
	section  string
	body     []string // lines after the heading or the bullet's first line
	first    string   // the bullet's text
	lastLine int
}

var (
	headingRE = lazyRegexp(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	bulletRE  = lazyRegexp(`^([-*+]|\d{1,3}[.)])\s+(.*)$`)
	fieldRE   = lazyRegexp(`^\s*(?:[-*+]\s+)?\*\*([^*\n]{1,40}?)(?::\s*)?\*\*\s*:?\s*(.*)$`)
	leadRE    = lazyRegexp(`^\*\*(.+?)\*\*`)
)

func (p *mdParser) line(n int, l string) {
	trimmed := strings.TrimSpace(l)
	if p.fence != "" {
		if strings.HasPrefix(trimmed, p.fence) && strings.Trim(trimmed, p.fence[:1]) == "" {
			p.fence = ""
		}
		p.add(n, l)
		return
	}
	if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
		p.fence = trimmed[:3]
		p.add(n, l)
		return
	}
	indented := len(l) > 0 && (l[0] == ' ' || l[0] == '\t')
	if m := headingRE().FindStringSubmatch(l); m != nil && !indented {
		p.flush()
		switch level := len(m[1]); {
		case level <= 2:
			p.section = stripMarkdown(m[2])
		case level == 3:
			p.cur = &mdEntry{line: n, heading: true, name: stripMarkdown(m[2]), section: p.section, lastLine: n}
		default:
			// A deeper heading inside an entry is part of it.
			p.add(n, l)
		}
		return
	}
	if p.cur != nil && p.cur.heading {
		p.add(n, l)
		return
	}
	if m := bulletRE().FindStringSubmatch(l); m != nil && !indented {
		p.flush()
		if placeholder(m[2]) {
			return
		}
		p.cur = &mdEntry{line: n, first: m[2], section: p.section, lastLine: n}
		return
	}
	if trimmed == "" {
		if p.cur != nil {
			p.cur.body = append(p.cur.body, "")
		}
		return
	}
	if p.cur != nil && (indented || p.cur.lastLine == n-1) {
		p.add(n, l)
		return
	}
	// A paragraph outside any entry: an introduction or a placeholder.
	p.flush()
}

func (p *mdParser) add(n int, l string) {
	if p.cur == nil {
		return
	}
	p.cur.body = append(p.cur.body, l)
	p.cur.lastLine = n
}

// placeholder reports text that only holds the place of entries to come.
func placeholder(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return true
	}
	for _, p := range []string{"()", "[]"} {
		if s[0] == p[0] && strings.IndexByte(s, p[1]) == len(s)-1 {
			return true
		}
	}
	return false
}

// flush ends the current entry.
func (p *mdParser) flush() {
	c := p.cur
	p.cur = nil
	if c == nil {
		return
	}
	for len(c.body) > 0 && strings.TrimSpace(c.body[len(c.body)-1]) == "" {
		c.body = c.body[:len(c.body)-1]
	}
	e := Entry{Line: c.line, Kind: KindPattern, Category: c.section, Shape: "bullet"}
	if c.heading {
		e.Shape = "section"
		e.Name = c.name
		p.fields(&e, c.body)
		e.Raw = strings.Join(append([]string{"### " + c.name}, c.body...), "\n")
	} else {
		whole := strings.TrimSpace(strings.Join(append([]string{c.first}, trimAll(c.body)...), "\n"))
		e.Name = bulletName(c.first)
		e.Solution = whole
		// A bold lead that is a title ("**Server guard.** text") is the
		// name, not part of the solution.
		if m := leadRE().FindStringSubmatch(whole); m != nil && strings.ContainsAny(lastRune(strings.TrimSpace(m[1])), ".:") {
			if rest := strings.TrimSpace(whole[len(m[0]):]); rest != "" {
				e.Solution = rest
			}
		}
		e.Raw = whole
		if placeholder(whole) {
			return
		}
	}
	if e.Name == "" && e.Solution == "" && e.Symptom == "" {
		return
	}
	e.analyse()
	p.entries = append(p.entries, e)
}

// fields reads the labelled fields of a ### section.
func (p *mdParser) fields(e *Entry, body []string) {
	var label string
	var buf []string
	var extra []string
	var solution, gotchas []string
	inFence := false
	done := func() {
		t := strings.TrimSpace(strings.Join(buf, "\n"))
		buf = nil
		if t == "" || placeholder(t) && label != "" {
			return
		}
		switch label {
		case "category":
			e.Category = t
		case "discovered", "discovered in", "track":
			e.Track = discoveredTrack(t)
		case "problem", "symptom", "error", "context", "when", "when to use":
			if e.Symptom != "" {
				e.Symptom += "\n"
			}
			e.Symptom += t
		case "solution", "fix", "resolution", "approach":
			solution = append(solution, t)
		case "code example", "code", "code fix", "example":
			e.CodeFix = fenced(t)
		case "gotchas", "gotcha", "watch out", "pitfalls":
			gotchas = append(gotchas, t)
		case "":
			extra = append(extra, t)
		default:
			extra = append(extra, label+": "+t)
		}
	}
	for _, l := range body {
		tl := strings.TrimSpace(l)
		if strings.HasPrefix(tl, "```") || strings.HasPrefix(tl, "~~~") {
			inFence = !inFence
		}
		if !inFence {
			if m := fieldRE().FindStringSubmatch(l); m != nil {
				done()
				label = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[1]), ":")))
				buf = append(buf, m[2])
				continue
			}
		}
		buf = append(buf, l)
	}
	done()
	if len(solution) == 0 {
		solution, extra = extra, nil
	}
	e.Solution = strings.Join(append(solution, extra...), "\n")
	if len(gotchas) > 0 {
		e.Solution = strings.TrimSpace(e.Solution + "\nGotchas: " + strings.Join(gotchas, "\n"))
	}
}

// fenced returns the content of the first code fence in t, or t.
func fenced(t string) string {
	lines := strings.Split(t, "\n")
	start := -1
	for i, l := range lines {
		tl := strings.TrimSpace(l)
		if strings.HasPrefix(tl, "```") || strings.HasPrefix(tl, "~~~") {
			if start < 0 {
				start = i
				continue
			}
			return strings.Join(lines[start+1:i], "\n")
		}
	}
	return t
}

// discoveredTrack reads "[track-id] on [date]".
func discoveredTrack(t string) string {
	if i := strings.Index(t, " on "); i > 0 {
		t = t[:i]
	}
	return strings.Trim(strings.TrimSpace(t), "[]`*")
}

// bulletName names a bullet: its bold lead (**Service + registry.**), else
// its first sentence, cut to 80 characters.
func bulletName(first string) string {
	if m := leadRE().FindStringSubmatch(first); m != nil {
		return strings.TrimRight(strings.TrimSpace(m[1]), ".:")
	}
	s := stripMarkdown(first)
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, ".:;")
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = strings.TrimSpace(string(r[:79])) + "…"
	}
	return s
}

// stripMarkdown removes emphasis and code marks.
func stripMarkdown(s string) string {
	s = strings.ReplaceAll(s, "**", "")
	s = strings.ReplaceAll(s, "`", "")
	return strings.TrimSpace(s)
}

func trimAll(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// finish gives every entry a key unique in the file: the slug of its name
// (-2, -3 on repeats), or #N.
func (p *mdParser) finish() {
	p.keys = map[string]int{}
	for i := range p.entries {
		e := &p.entries[i]
		e.Ordinal = i + 1
		base := slug(e.Name)
		if base == "" {
			e.Key = "#" + strconv.Itoa(i+1)
			continue
		}
		key := base
		for n := 2; p.keys[key] > 0; n++ {
			key = base + "-" + strconv.Itoa(n)
		}
		p.keys[key] = e.Line
		e.Key = key
	}
}

// slug lower-cases s and joins its runs of letters and digits with '-', at
// most 48 bytes.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	return b.String()
}

func lastRune(s string) string {
	if s == "" {
		return ""
	}
	_, n := utf8.DecodeLastRuneInString(s)
	return s[len(s)-n:]
}
