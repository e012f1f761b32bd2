package journal

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

func loadLines(b *testing.B) [][]byte {
	f, err := os.Open("/tmp/gen/1k.jsonl")
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

func BenchmarkParseDecisionTmp(b *testing.B) {
	lines := loadLines(b)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		ParseDecision(lines[i%len(lines)])
		i++
	}
}

func BenchmarkJSONValidTmp(b *testing.B) {
	lines := loadLines(b)
	i := 0
	for b.Loop() {
		json.Valid(lines[i%len(lines)])
		i++
	}
}

func BenchmarkUnmarshalPlainTmp(b *testing.B) {
	lines := loadLines(b)
	i := 0
	for b.Loop() {
		var d Decision
		json.Unmarshal(lines[i%len(lines)], &d)
		i++
	}
}
