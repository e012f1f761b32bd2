package bench

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/journal"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"1000", 1000},
		{"1k", 1000},
		{"100k", 100000},
		{"1M", 1000000},
		{" 10k", 10000},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if label := SizeLabel(got); strings.TrimSpace(tt.in) != label && tt.in != "1000" {
			t.Errorf("SizeLabel(%d) = %q; want %q", got, label, strings.TrimSpace(tt.in))
		}
	}
	for _, bad := range []string{"", "k", "-1", "1G", "0"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded; want an error", bad)
		}
	}
}

func TestSummarize(t *testing.T) {
	ms := func(ns ...int) []Sample {
		out := make([]Sample, len(ns))
		for i, n := range ns {
			out[i] = Sample{Wall: time.Duration(n) * time.Millisecond, MaxRSSKB: int64(n)}
		}
		return out
	}
	tests := []struct {
		name                   string
		in                     []Sample
		median, p90, min, maxd time.Duration
	}{
		{"odd", ms(5, 1, 3), 3 * time.Millisecond, 5 * time.Millisecond, time.Millisecond, 5 * time.Millisecond},
		{"even", ms(4, 1, 3, 2), 2500 * time.Microsecond, 4 * time.Millisecond, time.Millisecond, 4 * time.Millisecond},
		{"ten", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 5500 * time.Microsecond, 9 * time.Millisecond, time.Millisecond, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		st := Summarize(tt.in)
		if st.Median != tt.median || st.P90 != tt.p90 || st.Min != tt.min || st.Max != tt.maxd {
			t.Errorf("%s: Summarize = median %v p90 %v min %v max %v; want %v %v %v %v", tt.name, st.Median, st.P90, st.Min, st.Max, tt.median, tt.p90, tt.min, tt.maxd)
		}
	}
}

func TestSplice(t *testing.T) {
	doc := Render([]Block{{Name: "intro", Text: "# B\n"}, {Name: "import", Text: "old import"}, {Name: "hook", Text: "old hook"}})
	got := Splice(doc, []Block{{Name: "import", Text: "new import"}, {Name: "trust", Text: "new trust"}})
	for _, want := range []string{"# B", "new import", "old hook", "new trust"} {
		if !strings.Contains(got, want) {
			t.Errorf("Splice result lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old import") {
		t.Errorf("Splice kept the replaced block:\n%s", got)
	}
	if i, j := strings.Index(got, "new import"), strings.Index(got, "old hook"); i > j {
		t.Errorf("Splice moved the replaced block after the next one:\n%s", got)
	}
}

func TestSchema(t *testing.T) {
	s, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CREATE TABLE decisions", "CREATE VIRTUAL TABLE decisions_fts"} {
		if !strings.Contains(s, want) {
			t.Errorf("Schema() lacks %q", want)
		}
	}
	// 00001's Down drops the full-text indexes; 00002's recreates v1's journal_files.
	if strings.Contains(s, "DROP TABLE knowledge_fts;") || strings.Count(s, "CHECK (kind IN ('decisions', 'retro'))") != 1 {
		t.Errorf("Schema() holds a Down section")
	}
}

func TestDecisionLine(t *testing.T) {
	line := DecisionLine("bench-1", 7)
	if line[len(line)-1] != '\n' || strings.Count(string(line), "\n") != 1 {
		t.Fatalf("DecisionLine = %q; want one line ending in a newline", line)
	}
	var d journal.Decision
	if err := json.Unmarshal(line, &d); err != nil || d.ID != "bench-1" || d.Iteration != 7 {
		t.Errorf("DecisionLine decodes to %+v, %v", d, err)
	}
}

func TestShellQuote(t *testing.T) {
	tests := map[string]string{
		"plain":     "plain",
		"a b":       "'a b'",
		"it's":      `'it'\''s'`,
		"":          "''",
		"/tmp/x.db": "/tmp/x.db",
	}
	for in, want := range tests {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s; want %s", in, got, want)
		}
	}
}
