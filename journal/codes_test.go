package journal

import (
	"slices"
	"testing"

	"github.com/orbit-loop/orbit/db"
)

// Every value a decision line may hold has a code in the index (schema
// v7 stores the enumerations as small integers): a value added to seed
// 000's lists without one would still be indexed, as its text, but not
// small.
func TestEnumerationsHaveCodes(t *testing.T) {
	for column, values := range map[string][]string{
		"tier": Tiers, "depth": Depths, "category": Categories, "decision": DecisionValues,
		"verification": Verifications, "retro_outcome": Outcomes, "outcome": Outcomes,
	} {
		codes := db.CodeValues(column)
		for _, v := range values {
			if !slices.Contains(codes, v) {
				t.Errorf("%s %q has no code (db.CodeValues(%q) = %q)", column, v, column, codes)
			}
		}
		if len(codes) != len(values) {
			t.Errorf("db.CodeValues(%q) = %q; the journal allows %q", column, codes, values)
		}
	}
}
