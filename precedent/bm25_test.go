package precedent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/db"
)

// TestScoreIsFTS5BM25 holds the scorer to FTS5's own bm25(): on the
// evaluation corpus, where the pool holds every match so the document
// counts are exact, every decision a search scores gets the score bm25()
// gives it (this checks the tokenizer, the stemmer, the column weights and
// the index totals together), and the decisions it chose to read include
// the ten bm25() ranks best, for every evaluation query.
func TestScoreIsFTS5BM25(t *testing.T) {
	lines, queries := loadCorpus(t)
	store := evalIndex(t, lines, 0)
	var qs []string
	for _, q := range queries {
		qs = append(qs, q.ID+"\t"+q.Query)
	}
	if compared := checkScores(t, store, qs, len(lines)); compared < 10000 {
		t.Fatalf("only %d scores compared", compared)
	}
}

// TestScoreIsFTS5BM25Multilingual: the same on decisions written in many
// scripts (multilingualTexts: accents precomposed and combining, CJK,
// emoji, mixed case, Greek, Cyrillic, ligatures), queried with their words
// spelt otherwise (without accents, upper-cased, decomposed).
func TestScoreIsFTS5BM25Multilingual(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 61))
	var words []string
	for _, text := range multilingualTexts {
		words = append(words, strings.Fields(text)...)
	}
	pick := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(out, " ")
	}
	var lines []string
	for i := 1; i <= 300; i++ {
		input := multilingualTexts[i%len(multilingualTexts)]
		if i%3 == 0 {
			input = pick(3 + rng.IntN(8))
		}
		line, err := json.Marshal(map[string]any{
			"id": fmt.Sprintf("iter-%d-1", i), "iteration": i, "ts": "2026-02-02T08:41:28Z", "tier": "auto_approve",
			"depth": "trivial", "category": "quality", "input": input, "decision": "APPROVED", "reason": pick(rng.IntN(12)),
			"next_action": pick(rng.IntN(4)), "verification": "PENDING", "context": pick(rng.IntN(6)),
			"retrograde": map[string]any{"previous_id": nil, "outcome": "N/A"},
		})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(line))
	}
	store := evalIndex(t, lines, 0)
	qs := []string{"cafe", "CAFÉ", "cafe\u0301 module", "uberprufung datenbankmigration", "STRASSE straße", "istanbul",
		"σοφία ΣΟΦΊΑ", "ΟΔΥΣΣΕΥΣ", "ёлка проверка", "ЁЖИК", "数据库迁移计划", "データベースの移行", "deploy rollback 🚀",
		"file flow ﬁle", "ĳsselmeer", "ＦＵＬＬＷＩＤＴＨ text", "fullwidth", "nguyen viet", "hopefulness formality",
		"relational conditional rational", "postgresql sqlite", "camelcaseidentifier", "zero width", "جاهز قاعدة",
		"ⅻ roman", "𐐨 deseret", "a\u0308bc", "o\u0301\u0323"}
	for _, w := range words[:len(words):len(words)] {
		if rng.IntN(4) == 0 {
			qs = append(qs, w)
		}
	}
	if compared := checkScores(t, store, qs, len(lines)); compared < 1000 {
		t.Fatalf("only %d scores compared", compared)
	}
	// The issue's own example: an accent-free query finds the accented word.
	got, err := scoresBySeq(score(context.Background(), &localIndex{store: store}, Tokens("cafe"), Options{K: 3, Weights: DefaultWeights, Pool: len(lines) + 1}))
	if err != nil {
		t.Fatal(err)
	}
	if s := got[1]; s <= 0 { // decision 1 is "Rename the café module"
		t.Errorf(`"cafe" scores "Rename the café module" %v; want bm25's positive score`, s)
	}
}

// scoresBySeq is what score returned, as scores by journal position.
func scoresBySeq(scored []Hit, err error) (map[int64]float64, error) {
	out := make(map[int64]float64, len(scored))
	for _, h := range scored {
		out[h.Seq] = h.Score
	}
	return out, err
}

// checkScores compares, for each query (an optional "ID\t" before it), every
// score the Go scorer gives with FTS5's bm25(), and checks that the ten best
// by bm25() were read; it returns how many scores it compared.
func checkScores(t *testing.T, store *db.Store, queries []string, n int) int {
	t.Helper()
	ctx := context.Background()
	w := DefaultWeights
	compared := 0
	for _, q := range queries {
		id, query, ok := strings.Cut(q, "\t")
		if !ok {
			id, query = "query", q
		}
		tokens := Tokens(query)
		if len(tokens) > maxTerms {
			tokens = tokens[:maxTerms]
		}
		if len(tokens) == 0 {
			continue
		}
		got, err := scoresBySeq(score(ctx, &localIndex{store: store}, tokens, Options{K: 3, Weights: w, Pool: n + 1}))
		if err != nil {
			t.Fatal(err)
		}
		type scored struct {
			seq   int64
			score float64
		}
		var want []scored
		if err := func() error {
			rows, err := store.DB.QueryxContext(ctx, `SELECT rowid, -bm25(decisions_fts, ?, ?, ?, ?) FROM decisions_fts WHERE decisions_fts MATCH ?
				ORDER BY bm25(decisions_fts, ?, ?, ?, ?), rowid DESC`,
				w.Input, w.Reason, w.NextAction, w.Context, MatchAny(tokens), w.Input, w.Reason, w.NextAction, w.Context)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var s scored
				if err := rows.Scan(&s.seq, &s.score); err != nil {
					return err
				}
				want = append(want, s)
			}
			return rows.Err()
		}(); err != nil {
			t.Fatal(err)
		}
		byseq := map[int64]float64{}
		for _, s := range want {
			byseq[s.seq] = s.score
		}
		for seq, g := range got {
			wv, ok := byseq[seq]
			if !ok || math.Abs(g-wv) > 1e-9*math.Max(1, math.Abs(wv)) {
				t.Errorf("%s %q: decision %d scored %v; FTS5 bm25 says %v (matched: %v)", id, query, seq, g, wv, ok)
			}
			compared++
		}
		for i, s := range want[:min(10, len(want))] {
			if _, ok := got[s.seq]; !ok && s.score > 0 {
				t.Errorf("%s %q: bm25's number %d (decision %d, %v) was not read", id, query, i+1, s.seq, s.score)
			}
		}
	}
	t.Logf("%d scores compared", compared)
	return compared
}

// TestFTS5RecordFormat: the Go scorer reads FTS5's internal averages record
// (decisions_fts_data, row 1: the row count, then each column's token
// total, as varints) and its config (format version 4). A SQLite upgrade
// that changes either fails here, loudly, before a search silently scores
// wrong.
func TestFTS5RecordFormat(t *testing.T) {
	lines := []string{}
	texts := [][4]string{
		{"Rename the café module", "it is misnamed", "", ""},
		{"ΣΟΦΊΑ database migration 数据库", "", "ship it", "OPS-306 rollback"},
		{"", "", "", ""},
		{"one two three four five six", "seven", "eight nine", "ten"},
	}
	for i, x := range texts {
		line, err := json.Marshal(map[string]any{
			"id": fmt.Sprintf("iter-%d-1", i+1), "iteration": i + 1, "ts": "2026-02-02T08:41:28Z", "tier": "auto_approve",
			"depth": "trivial", "category": "quality", "input": x[0], "decision": "APPROVED", "reason": x[1],
			"next_action": x[2], "context": x[3], "verification": "PENDING",
			"retrograde": map[string]any{"previous_id": nil, "outcome": "N/A"},
		})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(line))
	}
	store := evalIndex(t, lines, 0)
	ctx := context.Background()
	var version int
	if err := store.DB.GetContext(ctx, &version, `SELECT v FROM decisions_fts_config WHERE k = 'version'`); err != nil {
		t.Fatalf("FTS5 config version: %v (SQLite changed decisions_fts_config: review precedent/bm25.go readStats)", err)
	}
	if version != fts5FormatVersion {
		t.Fatalf("FTS5 format version %d; precedent/bm25.go decodes version %d: review readStats against the new format", version, fts5FormatVersion)
	}
	var blob []byte
	if err := store.DB.GetContext(ctx, &blob, `SELECT block FROM decisions_fts_data WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	var cols [4]int
	for _, x := range texts {
		for c, text := range x {
			cols[c] += len(goTokens(text, false))
		}
	}
	var want []byte
	want = appendSQLiteVarint(want, uint64(len(texts)))
	for _, n := range cols {
		want = appendSQLiteVarint(want, uint64(n))
	}
	if !bytes.Equal(blob, want) {
		t.Fatalf("averages record % x; want % x (rows %d, column totals %v): SQLite changed FTS5's record format, review precedent/bm25.go readStats", blob, want, len(texts), cols)
	}
	st, err := readStats(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	total := cols[0] + cols[1] + cols[2] + cols[3]
	if st.rows != int64(len(texts)) || st.avgdl != float64(total)/float64(len(texts)) {
		t.Errorf("readStats = %+v; want rows %d, avgdl %v", st, len(texts), float64(total)/float64(len(texts)))
	}
	// And bm25() agrees with those totals: one term in one row, scored by
	// hand from them.
	var got float64
	if err := store.DB.GetContext(ctx, &got, `SELECT -bm25(decisions_fts, 1, 1, 1, 1) FROM decisions_fts WHERE decisions_fts MATCH '"cafe"'`); err != nil {
		t.Fatal(err)
	}
	dl := float64(len(goTokens(texts[0][0]+" "+texts[0][1], false)))
	want1 := idf(st.rows, 1) * (1 * (bm25K1 + 1)) / (1 + bm25K1*(1-bm25B+bm25B*dl/st.avgdl))
	if math.Abs(got-want1) > 1e-12 {
		t.Errorf("bm25 of \"cafe\" = %v; from the decoded totals %v", got, want1)
	}
}

func TestDecodeStats(t *testing.T) {
	tests := []struct {
		name string
		blob []byte
		want ftsStats
		ok   bool
	}{
		{"rows and four totals", []byte{4, 10, 2, 0, 0x81, 0x00}, ftsStats{rows: 4, avgdl: 140.0 / 4}, true},
		{"empty index", []byte{0, 0, 0, 0, 0}, ftsStats{}, true},
		{"a fifth column", []byte{4, 10, 2, 0, 1, 7}, ftsStats{}, false},
		{"three columns", []byte{4, 10, 2, 0}, ftsStats{}, false},
		{"cut varint", []byte{4, 10, 2, 0, 0x81}, ftsStats{}, false},
		{"nothing", nil, ftsStats{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeStats(tt.blob)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("decodeStats(% x) = %+v, %v; want %+v, ok %v", tt.blob, got, err, tt.want, tt.ok)
			}
		})
	}
}

// appendSQLiteVarint encodes v as SQLite's varint (the inverse of
// sqliteVarint).
func appendSQLiteVarint(b []byte, v uint64) []byte {
	if v>>56 != 0 {
		var out [9]byte
		out[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			out[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return append(b, out[:]...)
	}
	var tmp [9]byte
	n := 0
	for {
		tmp[n] = byte(v&0x7f) | 0x80
		n++
		v >>= 7
		if v == 0 {
			break
		}
	}
	tmp[0] &= 0x7f
	for i := n - 1; i >= 0; i-- {
		b = append(b, tmp[i])
	}
	return b
}

func TestSQLiteVarint(t *testing.T) {
	tests := []struct {
		in   []byte
		want uint64
		n    int
	}{
		{[]byte{0x00}, 0, 1},
		{[]byte{0x7f}, 127, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0x87, 0x68, 0x00}, 1000, 2},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, math.MaxUint64, 9},
		{[]byte{0x81}, 0, 0},
	}
	for _, tt := range tests {
		if v, n := sqliteVarint(tt.in); v != tt.want || n != tt.n {
			t.Errorf("sqliteVarint(% x) = %d, %d; want %d, %d", tt.in, v, n, tt.want, tt.n)
		}
	}
}

// TestOlderDecisionsFound: when the pool (the newest decisions holding any
// query word) is full and does not reach back far enough, a decision
// holding the query's rarest words is still found however old.
func TestOlderDecisionsFound(t *testing.T) {
	line := func(i int, input string) string {
		return fmt.Sprintf(`{"id":"iter-%d-1","iteration":%d,"ts":"2026-02-02T08:41:28Z","tier":"auto_approve","depth":"trivial","category":"quality","input":%q,"decision":"APPROVED","reason":"","next_action":"","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"}}`, i, i, input)
	}
	lines := []string{line(1, "Pin the flakey zookeeper quorum deploy")}
	for i := 2; i <= 60; i++ {
		lines = append(lines, line(i, fmt.Sprintf("Deploy service %d to staging", i)))
	}
	store := evalIndex(t, lines, 0)
	ctx := context.Background()
	hits, err := Search(ctx, store, "deploy the zookeeper quorum", Options{K: 3, Pool: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].ID != "iter-1-1" {
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		t.Errorf("hits %v; want iter-1-1 first (it holds every word, though older than the pool)", ids)
	}
}

// TestIDFMoreHitsThanRows: totals read before a concurrent write can count
// fewer rows than the hits read after it; the score stays a number.
func TestIDFMoreHitsThanRows(t *testing.T) {
	for _, tt := range []struct {
		rows int64
		hits float64
	}{{10, 12}, {0, 1}, {5, 5.6}} {
		if v := idf(tt.rows, tt.hits); math.IsNaN(v) || v <= 0 {
			t.Errorf("idf(%d, %v) = %v; want a small positive number", tt.rows, tt.hits, v)
		}
	}
}
