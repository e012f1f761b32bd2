package precedent

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/orbit-loop/orbit/db"
)

// indexTokenize is the tokenizer the Go code reproduces (unicode61.go,
// porter.go): TestIndexTokenizer fails if a migration changes it.
const indexTokenize = "porter unicode61 remove_diacritics 2"

// TestIndexTokenizer: both full-text indexes use the tokenizer the Go code
// reproduces.
func TestIndexTokenizer(t *testing.T) {
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	re := regexp.MustCompile(`tokenize\s*=\s*'([^']*)'`)
	for _, table := range []string{"decisions_fts", "knowledge_fts"} {
		var schema string
		if err := store.DB.Get(&schema, `SELECT sql FROM sqlite_master WHERE name = ?`, table); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		m := re.FindStringSubmatch(schema)
		if m == nil || m[1] != indexTokenize {
			t.Errorf("%s tokenizes with %q; precedent's Go tokenizer reproduces %q: change both together", table, m, indexTokenize)
		}
	}
}

// fts5Probe asks FTS5 itself how it tokenizes text: it indexes texts in a
// temporary full-text table (detail=full) and reads the terms back in order
// through an fts5vocab instance table.
type fts5Probe struct {
	tb testing.TB
	db *sql.DB
}

func newFTS5Probe(tb testing.TB, tokenize string) *fts5Probe {
	tb.Helper()
	sdb, err := sql.Open("sqlite", filepath.Join(tb.TempDir(), "probe.db"))
	if err != nil {
		tb.Fatal(err)
	}
	sdb.SetMaxOpenConns(1) // the temp tables belong to one connection
	tb.Cleanup(func() { sdb.Close() })
	for _, q := range []string{
		fmt.Sprintf(`CREATE VIRTUAL TABLE temp.probe USING fts5(t, tokenize = '%s')`, tokenize),
		`CREATE VIRTUAL TABLE temp.probe_terms USING fts5vocab(temp, probe, instance)`,
	} {
		if _, err := sdb.Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
	return &fts5Probe{tb: tb, db: sdb}
}

// tokens returns the terms FTS5 makes of each text, in order.
func (p *fts5Probe) tokens(texts []string) [][]string {
	p.tb.Helper()
	tx, err := p.db.Begin()
	if err != nil {
		p.tb.Fatal(err)
	}
	defer tx.Rollback()
	for i, text := range texts {
		if _, err := tx.Exec(`INSERT INTO probe (rowid, t) VALUES (?, ?)`, i+1, text); err != nil {
			p.tb.Fatal(err)
		}
	}
	rows, err := tx.Query(`SELECT term, doc, "offset" FROM probe_terms`)
	if err != nil {
		p.tb.Fatal(err)
	}
	defer rows.Close()
	out := make([][]string, len(texts))
	for rows.Next() {
		var term string
		var doc, off int
		if err := rows.Scan(&term, &doc, &off); err != nil {
			p.tb.Fatal(err)
		}
		toks := out[doc-1]
		for len(toks) <= off {
			toks = append(toks, "\x00missing")
		}
		toks[off] = term
		out[doc-1] = toks
	}
	if err := rows.Err(); err != nil {
		p.tb.Fatal(err)
	}
	return out // the rollback leaves the table empty for the next call
}

// goTokens is what the Go tokenizer makes of text: unicode61 tokens,
// stemmed when porter is set.
func goTokens(text string, porter bool) []string {
	var out []string
	var buf, sbuf []byte
	for i := 0; ; {
		var ok bool
		buf, i, ok = nextToken(text, i, buf)
		if !ok {
			return out
		}
		if porter {
			sbuf = stem(sbuf, buf)
			out = append(out, string(sbuf))
		} else {
			out = append(out, string(buf))
		}
	}
}

// encodeChar writes c so that SQLite's READ_UTF8 reads it back: UTF-8 up to
// U+1FFFFF, then a lead byte followed by as many continuation bytes as c
// needs (which SQLite accepts and Go does not).
func encodeChar(b []byte, c uint32) []byte {
	if c <= 0x1FFFFF {
		return appendUTF8(b, c)
	}
	k := 0
	for c>>(6*k) >= 8 {
		k++
	}
	b = append(b, 0xF0|byte(c>>(6*k)))
	for k--; k >= 0; k-- {
		b = append(b, 0x80|byte(c>>(6*k)&0x3F))
	}
	return b
}

// probedChar is what FTS5's unicode61 tokenizer does with one character.
type probedChar struct {
	c     uint32
	class charClass
	fold  string // the bytes it becomes in a token; for separators, unknown
}

// foldOf is the character c becomes in a token (0: dropped): the one whose
// bytes FTS5 wrote, or c itself when they are c's (which they are for a
// value beyond U+1FFFFF, though not its UTF-8: SQLite's writer keeps 21
// bits).
func (p probedChar) foldOf() uint32 {
	if p.fold == string(appendUTF8(nil, p.c)) {
		return p.c
	}
	f, _ := oneChar(p.fold)
	return f
}

// probeChars asks FTS5 (unicode61 with the index's options) the class and
// fold of each character: " <c>q<c>r" tokenizes to "FqFr" for a token
// character folding to F, "qFr" for a mark, "q" "r" for a separator; when
// F is empty, whether " <c> " makes an empty token tells a token character
// from a mark.
func probeChars(tb testing.TB, chars []uint32) []probedChar {
	tb.Helper()
	p := newFTS5Probe(tb, strings.TrimPrefix(indexTokenize, "porter "))
	out := make([]probedChar, 0, len(chars))
	var ambiguous []int
	const batch = 4096
	for start := 0; start < len(chars); start += batch * 16 {
		var texts []string
		var b []byte
		for i := start; i < min(start+batch*16, len(chars)); i += batch {
			b = b[:0]
			for _, c := range chars[i:min(i+batch, len(chars))] {
				b = append(b, ' ')
				b = encodeChar(b, c)
				b = append(b, 'q')
				b = encodeChar(b, c)
				b = append(b, 'r')
			}
			texts = append(texts, string(b))
		}
		for d, toks := range p.tokens(texts) {
			k := 0
			for _, c := range chars[start+d*batch : min(start+(d+1)*batch, len(chars))] {
				pc, n, ok := parseProbe(toks[k:])
				if !ok {
					tb.Fatalf("U+%04X: FTS5 made %q of \" <c>q<c>r\": not a token character, a mark or a separator", c, toks[k:min(k+3, len(toks))])
				}
				pc.c = c
				if pc.class == markChar && pc.fold == "" {
					ambiguous = append(ambiguous, len(out))
				}
				out = append(out, pc)
				k += n
			}
			if k != len(toks) {
				tb.Fatalf("probe text %d: %d tokens read of %d", d, k, len(toks))
			}
		}
	}
	if len(ambiguous) > 0 {
		texts := make([]string, len(ambiguous))
		for i, j := range ambiguous {
			texts[i] = " " + string(encodeChar(nil, out[j].c)) + " "
		}
		for i, toks := range p.tokens(texts) {
			if len(toks) == 1 && toks[0] == "" {
				out[ambiguous[i]].class = tokenChar
			} else if len(toks) != 0 {
				tb.Fatalf("U+%04X: FTS5 made %q of \" <c> \"", out[ambiguous[i]].c, toks)
			}
		}
	}
	return out
}

// parseProbe reads one character's tokens (see probeChars) and returns how
// many it used.
func parseProbe(toks []string) (probedChar, int, bool) {
	if len(toks) == 0 {
		return probedChar{}, 0, false
	}
	t := toks[0]
	if n := (len(t) - 2) / 2; len(t) >= 2 && len(t)%2 == 0 && t == t[:n]+"q"+t[:n]+"r" && t != "qr" {
		if _, ok := oneChar(t[:n]); ok {
			return probedChar{class: tokenChar, fold: t[:n]}, 1, true
		}
	}
	if len(t) >= 2 && t[0] == 'q' && t[len(t)-1] == 'r' {
		if _, ok := oneChar(t[1 : len(t)-1]); ok {
			return probedChar{class: markChar, fold: t[1 : len(t)-1]}, 1, true
		}
	}
	if len(toks) >= 2 && t == "q" && toks[1] == "r" {
		return probedChar{class: separator}, 2, true
	}
	return probedChar{}, 0, false
}

// oneChar decodes s as at most one character (0 for none).
func oneChar(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	c, n := readUTF8(s, 0)
	return c, n == len(s)
}

// beyondUnicode are values above U+10FFFF that SQLite's reader makes of
// invalid input, probed too.
var beyondUnicode = []uint32{0x110000, 0x10FFFF + 0x1234, 0x1FFFFF, 0x200000, 0x3FFFFFF, 0x7FFFFFFF, 0xFFFFFFFF}

// allChars is every character readUTF8 can return up to U+10FFFF (not the
// surrogates, U+FFFE, U+FFFF, which it reads as U+FFFD).
func allChars() []uint32 {
	var cs []uint32
	for c := uint32(0); c <= 0x10FFFF; c++ {
		if c == 0 || c>>11 == 0xD800>>11 || c == 0xFFFE || c == 0xFFFF {
			continue
		}
		cs = append(cs, c)
	}
	return cs
}

// testedChars is what the test probes on every run (all of it takes some
// 10 s, -update does): every character of planes 0 and 1 and of the tags and
// variation selectors, every boundary of the tables, every 61st other one,
// and values beyond Unicode.
func testedChars() []uint32 {
	set := map[uint32]bool{}
	for _, c := range allChars() {
		if c < 0x20000 || (c >= 0xE0000 && c < 0xE0200) || c%61 == 0 {
			set[c] = true
		}
	}
	edge := func(c uint32) {
		for _, d := range []uint32{c - 1, c, c + 1} {
			if d > 0 && d <= 0x10FFFF && d>>11 != 0xD800>>11 && d != 0xFFFE && d != 0xFFFF {
				set[d] = true
			}
		}
	}
	for _, r := range classRanges {
		edge(r.lo)
	}
	for _, r := range foldRuns {
		edge(r.lo)
		edge(r.hi)
	}
	for _, c := range beyondUnicode {
		set[c] = true
	}
	cs := make([]uint32, 0, len(set))
	for c := range set {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	return cs
}

// TestUnicode61Tables holds the Go tokenizer's tables to the linked SQLite:
// the class and fold of every probed character are FTS5's. A SQLite upgrade
// that changes its Unicode tables fails here; `go test ./precedent -run
// TestUnicode61Tables -update` probes every character and rewrites
// unicode61_tables.go.
func TestUnicode61Tables(t *testing.T) {
	if corpusUpdating() {
		writeTables(t, probeChars(t, append(allChars(), beyondUnicode...)))
		return
	}
	probed := probeChars(t, testedChars())
	bad := 0
	for _, p := range probed {
		gotClass, gotFold := classOf(p.c), ""
		if gotClass != separator {
			if f := foldChar(p.c); f != 0 {
				gotFold = string(appendUTF8(nil, f))
			}
		}
		if gotClass != p.class || p.class != separator && gotFold != p.fold {
			if bad++; bad <= 20 {
				t.Errorf("U+%04X: Go tokenizer class %d, fold %q; FTS5 says class %d, fold %q", p.c, gotClass, gotFold, p.class, p.fold)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d characters differ from SQLite %s's tokenizer: run `go test ./precedent -run TestUnicode61Tables -update`", bad, len(probed), sqliteVersion(t))
	}
	t.Logf("%d characters probed", len(probed))
}

func sqliteVersion(tb testing.TB) string {
	sdb, err := sql.Open("sqlite", filepath.Join(tb.TempDir(), "v.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer sdb.Close()
	var v string
	if err := sdb.QueryRow(`SELECT sqlite_version()`).Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// writeTables renders unicode61_tables.go from a probe of every character.
func writeTables(tb testing.TB, probed []probedChar) {
	tb.Helper()
	var ascii [128]charClass
	var ranges []classRange
	var runs []foldRun
	last := separator // the class of U+0000, never a token character
	for _, p := range probed {
		if p.c < 0x80 {
			ascii[p.c] = p.class
			want := p.c
			if 'A' <= p.c && p.c <= 'Z' {
				want += 'a' - 'A'
			}
			if p.class != separator && p.foldOf() != want {
				tb.Fatalf("U+%04X folds to %q: the ASCII fold in foldChar and nextToken assumes A-Z to a-z only", p.c, p.fold)
			}
			continue
		}
		if p.class != last || len(ranges) == 0 {
			ranges = append(ranges, classRange{lo: p.c, class: p.class})
			last = p.class
		}
		fold := p.foldOf()
		if p.class == separator || fold == p.c {
			continue
		}
		delta := int32(int64(fold) - int64(p.c))
		if n := len(runs); n > 0 {
			r := &runs[n-1]
			step := p.c - r.hi
			if r.delta == delta && (r.lo == r.hi && step <= 2 || step == uint32(r.stride)) {
				r.stride, r.hi = uint8(step), p.c
				continue
			}
		}
		runs = append(runs, foldRun{lo: p.c, hi: p.c, stride: 1, delta: delta})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by `go test ./precedent -run TestUnicode61Tables -update` from SQLite %s's unicode61 tokenizer (remove_diacritics 2); DO NOT EDIT.\n\n", sqliteVersion(tb))
	b.WriteString("package precedent\n\n")
	b.WriteString("// asciiClass is the class of each ASCII character.\nvar asciiClass = [128]charClass{")
	for i, c := range ascii {
		if i%16 == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d, ", c)
	}
	b.WriteString("\n}\n\n")
	fmt.Fprintf(&b, "// classRanges are the classes of the characters from U+0080 on (%d ranges).\nvar classRanges = [...]classRange{", len(ranges))
	for i, r := range ranges {
		if i%6 == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "{0x%x, %d}, ", r.lo, r.class)
	}
	b.WriteString("\n}\n\n")
	fmt.Fprintf(&b, "// foldRuns are the folds of the token characters from U+0080 on that fold (%d runs).\nvar foldRuns = [...]foldRun{", len(runs))
	for i, r := range runs {
		if i%4 == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "{0x%x, 0x%x, %d, %d}, ", r.lo, r.hi, r.stride, r.delta)
	}
	b.WriteString("\n}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile("unicode61_tables.go", src, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("unicode61_tables.go: %d class ranges, %d fold runs", len(ranges), len(runs))
}

// multilingualTexts exercise the tokenizer: accents precomposed and
// combining, CJK, emoji, mixed case, Greek and Cyrillic, ligatures,
// full-width forms, digits of other scripts, zero-width characters.
var multilingualTexts = []string{
	"Rename the café module",
	"Cafe\u0301 au lait: CAFÉ, Café, cafe, CAFE\u0301",
	"Überprüfung der Datenbankmigration für Müller & Söhne; STRASSE vs straße vs STRAẞE",
	"Élève naïve à l'hôpital; coöperate, façade, jalapeño, señor, Ångström, Øresund, Łódź, Dvořák, Şişli, İstanbul, ıi",
	"Tiếng Việt có dấu: Nguyễn Thị Minh Khai, phở bò, Hà Nội",
	"Η ΣΟΦΊΑ του Σωκράτη· σοφία, ΟΔΥΣΣΕΥΣ ὀδυσσεύς, ΐ ΰ",
	"Ёлка и ЁЖИК: проверка базы данных, Миграция ПРОВЕРКА",
	"数据库迁移计划 データベースの移行 데이터베이스 마이그레이션 漢字かなカナ",
	"deploy🚀rollback 👍🏽 thumbs ❤️ love 🇫🇷 flag 👨‍👩‍👧 family e\u0301moji",
	"SQLite vs PostgreSQL, iPhone, McDonald, camelCaseIdentifier, HTTPServer, x86_64, v1.2.3",
	"ﬁle ﬂow ﬀ œuvre Æsir ĲSSELMEER Ǆemal ǅemal ǈ ﬆ",
	"a\u0308bc o\u0301\u0323 \u0301leading n\u0303o q\u0338 x\u20dd \u0345\u0300",
	"ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ １２３ ｶﾀｶﾅ",
	"Ⅻ roman ² superscript ½ ٣ arabic-indic १२३ devanagari ⓐⒶ circled",
	"𐐀𐐁 𐐨 deseret 𝐀𝐁𝐂 math bold 𝔘𝔫𝔦 fraktur",
	"قاعدة البيانات מסד נתונים ฐานข้อมูล डेटाबेस का माइग्रेशन",
	"zero\u200bwidth joiner\u200dhere soft\u00adhyphen nbsp\u00a0space tab\tline\nend",
	"relational conditional rational valency hesitancy digitizer conformably radically differently vilely analogously",
	"vietnamization predication operator feudalism decisiveness hopefulness callousness formality sensitivity sensibility",
	"triplicate formative formalize electricity electrical hopeful goodness revival allowance inference airliner",
	"gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate",
}

// TestTokenizerIsFTS5: the Go tokenizer (unicode61 and porter) makes of
// each multilingual text, and of invalid UTF-8, exactly FTS5's terms.
func TestTokenizerIsFTS5(t *testing.T) {
	texts := append(slices.Clone(multilingualTexts),
		"bad\xff\xfebytes caf\xc3 \xe2\x82 \x80\xbf lone continuation \xc0\x80 overlong \xed\xa0\x80 surrogate \xef\xbf\xbe",
		"\xf4\x90\x80\x80 beyond \xf8\x88\x80\x80\x80 five \xfc\x84\x80\x80\x80\x80 six \xc3\xa9\x80\x80 extra",
		strings.Repeat("long", 20)+" "+strings.Repeat("é", 40)+"ing",
	)
	for _, porter := range []bool{false, true} {
		tokenize := indexTokenize
		if !porter {
			tokenize = strings.TrimPrefix(tokenize, "porter ")
		}
		want := newFTS5Probe(t, tokenize).tokens(texts)
		for i, text := range texts {
			if got := goTokens(text, porter); !slices.Equal(got, want[i]) {
				t.Errorf("%s: Go tokenizes %q as\n%q\nFTS5 as\n%q", tokenize, text, got, want[i])
			}
		}
	}
}

var (
	fuzzProbeOnce sync.Once
	fuzzProbe     *fts5Probe
)

// FuzzTokenizerIsFTS5: for any text, the Go tokenizer makes FTS5's terms,
// and each query token is one term of its own.
func FuzzTokenizerIsFTS5(f *testing.F) {
	for _, s := range multilingualTexts {
		f.Add(s)
	}
	f.Add("\xff\xc3\x28 \xf0\x9f\x98 \xed\xb2\x80 caf\xc3\xa9")
	fuzzProbeOnce.Do(func() { fuzzProbe = newFTS5Probe(f, indexTokenize) })
	f.Fuzz(func(t *testing.T, text string) {
		fuzzProbe.tb = t
		want := fuzzProbe.tokens([]string{text})[0]
		if got := goTokens(text, true); !slices.Equal(got, want) {
			t.Fatalf("Go tokenizes %q as %q; FTS5 as %q", text, got, want)
		}
		for _, tok := range Tokens(text) {
			if got := fuzzProbe.tokens([]string{tok})[0]; len(got) != 1 || got[0] != string(stem(nil, []byte(tok))) {
				t.Fatalf("query token %q of %q: FTS5 makes %q of it; want one term, its stem", tok, text, got)
			}
		}
	})
}
