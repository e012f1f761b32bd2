package bench

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/internal/tooltest"
	"github.com/orbit-loop/orbit/synth"
)

// TestTrustJQ checks the jq program of the trust suite against the
// headline figures computed here from the same synthetic journal: the
// latest verdict per decision, scored decisions in journal order.
func TestTrustJQ(t *testing.T) {
	jq := tooltest.Require(t, "jq")[0]
	var journal bytes.Buffer
	if err := synth.Generate(&journal, synth.Options{Decisions: 3000, Seed: JournalSeed}); err != nil {
		t.Fatal(err)
	}
	var want trustFigures
	latest := map[string]string{}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(journal.String()), "\n") {
		var d struct {
			ID         string `json:"id"`
			Retrograde struct {
				PreviousID *string `json:"previous_id"`
				Outcome    string  `json:"outcome"`
			} `json:"retrograde"`
		}
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
		if d.Retrograde.PreviousID != nil {
			latest[*d.Retrograde.PreviousID] = d.Retrograde.Outcome
		}
	}
	var scored []bool
	for _, id := range ids {
		switch latest[id] {
		case "CORRECT":
			scored = append(scored, true)
		case "INCORRECT":
			scored = append(scored, false)
		}
	}
	acc := func(s []bool) float64 {
		c := 0
		for _, ok := range s {
			if ok {
				c++
			}
		}
		return float64(c) / float64(len(s))
	}
	want.Decisions, want.WithOutcome = len(ids), len(scored)
	for _, ok := range scored {
		if ok {
			want.Correct++
		}
	}
	want.Accuracy, want.Last20, want.Last10 = acc(scored), acc(scored[len(scored)-20:]), acc(scored[len(scored)-10:])

	cmd := exec.Command(jq, "-c", "-s", trustJQ)
	cmd.Stdin = &journal
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	got, err := jqTrustFigures(out)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFigures(got, want) {
		t.Errorf("jq computed %+v; want %+v", got, want)
	}
}

func TestPeakRSS(t *testing.T) {
	for _, tt := range []struct {
		kb, parent int64
		want       string
	}{
		{20480, 0, "20.0 MB"},
		{20480, 20000, "≤ 20.0 MB"},
		{20480, 10240, "20.0 MB"},
		{2048000, 20000, "2000.0 MB"},
	} {
		if got := PeakRSS(tt.kb, tt.parent); got != tt.want {
			t.Errorf("PeakRSS(%d, %d) = %q; want %q", tt.kb, tt.parent, got, tt.want)
		}
	}
}

func TestMatchCount(t *testing.T) {
	for in, want := range map[string]int{"": 0, "0\n": 0, "21942\n": 21942} {
		if got, err := matchCount([]byte(in)); err != nil || got != want {
			t.Errorf("matchCount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestRepresentative(t *testing.T) {
	var qs []evalQuery
	for i := range 100 {
		q := evalQuery{ID: string(rune('a' + i%26)), Kind: "k"}
		if i%10 == 9 {
			q.AsOfLine = 5
		}
		qs = append(qs, q)
	}
	got := representative(qs, 20)
	if len(got) != 20 {
		t.Fatalf("got %d queries; want 20", len(got))
	}
	for _, q := range got {
		if q.AsOfLine != 0 {
			t.Errorf("representative picked an as_of query")
		}
	}
	if w := queryWords("a b c d e f g h i j k l m n o p q r s t alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma"); len(w) != precedentMaxTerms {
		t.Errorf("queryWords kept %d words; want %d", len(w), precedentMaxTerms)
	}
}
