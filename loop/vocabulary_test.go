package loop_test

import (
	"fmt"
	"testing"

	"github.com/orbit-loop/orbit/loop"
)

func TestStatusWords(t *testing.T) {
	if n := len(loop.Statuses()); n != 14 {
		t.Errorf("%d status words; want 14 (5 active states with needs-human-review, 9 more stop words)", n)
	}
	for _, s := range loop.StopReasons() {
		if !loop.IsStatus(s) {
			t.Errorf("stop word %q is not a status", s)
		}
	}
	for _, s := range []string{"planned", "running", "waiting", "paused", "needs-human-review"} {
		if loop.IsStopped(s) {
			t.Errorf("IsStopped(%q) = true; want false", s)
		}
	}
	for _, s := range []string{"done", "verifier-passed", "stopped", "attempt-limit"} {
		if !loop.IsStopped(s) {
			t.Errorf("IsStopped(%q) = false; want true", s)
		}
	}
	if got := fmt.Sprint(loop.IsStatus("finished"), loop.IsStatus("Running")); got != "false false" {
		t.Errorf("IsStatus(finished), IsStatus(Running) = %s; want false false", got)
	}
}

// TestVocabularyIsCopied: the vocabulary is handed out as copies, so a
// caller that changes what it got changes nobody else's words.
func TestVocabularyIsCopied(t *testing.T) {
	for name, get := range map[string]func() []string{"Frameworks": loop.Frameworks, "Statuses": loop.Statuses, "StopReasons": loop.StopReasons} {
		first := get()
		want := first[0]
		first[0] = "changed"
		if got := get()[0]; got != want {
			t.Errorf("%s()[0] = %q after a caller changed its copy; want %q", name, got, want)
		}
	}
	if loop.IsStopReason("changed") || loop.IsStatus("changed") || loop.IsFramework("changed") {
		t.Error("a word a caller wrote into its copy became part of the vocabulary")
	}
	if got := loop.StopMeaning("stopped"); got != "The user or operator explicitly stopped the loop." {
		t.Errorf("StopMeaning(stopped) = %q", got)
	}
}
