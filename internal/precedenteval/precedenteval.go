// Package precedenteval owns how precedent search is judged: the metrics
// (recall@3, MRR@10) defined in testdata/precedent/README.md and the
// loading of that corpus, so that every index that answers precedent
// queries (the project's SQLite, the hub's PostgreSQL) is measured the same
// way. It is test support: no command links it.
package precedenteval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Query is one query of the corpus (queries.jsonl).
type Query struct {
	ID       string `json:"id"`
	Query    string `json:"query"`
	Category string `json:"category"`
	Topic    string `json:"topic"`
	Kind     string `json:"kind"`
	// AsOfLine, when set, asks the query when only the journal's first
	// AsOfLine lines exist; Relevant and Avoid are as of then.
	AsOfLine int      `json:"as_of_line,omitempty"`
	Relevant []string `json:"relevant"`
	Avoid    []string `json:"avoid"`
}

// Load reads the corpus in dir: the journal's lines and the queries.
func Load(dir string) (lines []string, queries []Query, err error) {
	jdata, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	qdata, err := os.ReadFile(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	for i, l := range strings.Split(strings.TrimSuffix(string(qdata), "\n"), "\n") {
		var q Query
		if err := json.Unmarshal([]byte(l), &q); err != nil {
			return nil, nil, fmt.Errorf("queries.jsonl:%d: %v", i+1, err)
		}
		queries = append(queries, q)
	}
	return strings.Split(strings.TrimSuffix(string(jdata), "\n"), "\n"), queries, nil
}

// Metrics accumulates recall@3 and MRR@10 over queries.
type Metrics struct {
	N           int
	Recall, RR  float64
	AvoidInTop3 int
	// WithAvoid counts the queries that have a failed precedent (a
	// relevant decision proved INCORRECT), AvoidShown those of them whose
	// top 3 shows one.
	WithAvoid, AvoidShown int
}

// Add scores one query's ranking (ids, best first) against its judgments.
func (m *Metrics) Add(ranked []string, relevant, avoid []string) {
	rel := map[string]bool{}
	for _, id := range relevant {
		rel[id] = true
	}
	hits, shown := 0, false
	for _, id := range ranked[:min(3, len(ranked))] {
		if rel[id] {
			hits++
		}
		if slices.Contains(avoid, id) {
			m.AvoidInTop3++
			shown = true
		}
	}
	if len(avoid) > 0 {
		m.WithAvoid++
		if shown {
			m.AvoidShown++
		}
	}
	m.Recall += float64(hits) / float64(min(len(relevant), 3))
	for i, id := range ranked[:min(10, len(ranked))] {
		if rel[id] {
			m.RR += 1 / float64(i+1)
			break
		}
	}
	m.N++
}

// RecallAt3 is the mean recall@3.
func (m Metrics) RecallAt3() float64 {
	if m.N == 0 {
		return 0
	}
	return m.Recall / float64(m.N)
}

// MRR is the mean reciprocal rank of the first relevant hit in the top 10.
func (m Metrics) MRR() float64 {
	if m.N == 0 {
		return 0
	}
	return m.RR / float64(m.N)
}

// AvoidRecall is the share of the queries with a failed precedent whose
// top 3 shows one: seed 000 asks the loop to see them, so as not to repeat
// them.
func (m Metrics) AvoidRecall() float64 {
	if m.WithAvoid == 0 {
		return 0
	}
	return float64(m.AvoidShown) / float64(m.WithAvoid)
}

func (m Metrics) String() string {
	if m.N == 0 {
		return "-"
	}
	return fmt.Sprintf("R@3 %.3f  MRR %.3f", m.RecallAt3(), m.MRR())
}
