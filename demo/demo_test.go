package demo

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/orbit-loop/orbit/synth"
)

var update = flag.Bool("update", false, "rewrite the generated sample journal")

// TestSampleJournalIsGenerated keeps the committed sample equal to what
// synth generates from SampleOptions (regenerate with -update).
func TestSampleJournalIsGenerated(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.Generate(&buf, SampleOptions); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(filepath.FromSlash(JournalFile), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(JournalFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s differs from synth.Generate(SampleOptions); run go test ./demo -update", JournalFile)
	}
}

func TestWriteSamples(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteSamples(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{JournalFile, AgentFile, RetroFile} {
		p, ok := paths[name]
		if !ok {
			t.Fatalf("WriteSamples did not write %s", name)
		}
		want, _ := Read(name)
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: written copy differs from the embedded file (err %v)", name, err)
		}
	}
}
