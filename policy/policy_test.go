package policy_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/policy"
	"github.com/orbit-loop/orbit/trust"
)

// TestClassify checks every (category x impact x reversible) cell against the
// table in Classify's doc comment: the impact x reversibility depths, raised
// to medium for architecture and to heavy for high-impact deploy and scope.
func TestClassify(t *testing.T) {
	tests := []struct {
		category   string
		impact     string
		reversible bool
		want       string
	}{
		{"feature", "low", true, "trivial"},
		{"feature", "low", false, "light"},
		{"feature", "medium", true, "light"},
		{"feature", "medium", false, "medium"},
		{"feature", "high", true, "medium"},
		{"feature", "high", false, "heavy"},

		{"quality", "low", true, "trivial"},
		{"quality", "low", false, "light"},
		{"quality", "medium", true, "light"},
		{"quality", "medium", false, "medium"},
		{"quality", "high", true, "medium"},
		{"quality", "high", false, "heavy"},

		// An architecture item is at least medium.
		{"architecture", "low", true, "medium"},
		{"architecture", "low", false, "medium"},
		{"architecture", "medium", true, "medium"},
		{"architecture", "medium", false, "medium"},
		{"architecture", "high", true, "medium"},
		{"architecture", "high", false, "heavy"},

		// A high-impact scope or deploy item is heavy.
		{"scope", "low", true, "trivial"},
		{"scope", "low", false, "light"},
		{"scope", "medium", true, "light"},
		{"scope", "medium", false, "medium"},
		{"scope", "high", true, "heavy"},
		{"scope", "high", false, "heavy"},

		{"deploy", "low", true, "trivial"},
		{"deploy", "low", false, "light"},
		{"deploy", "medium", true, "light"},
		{"deploy", "medium", false, "medium"},
		{"deploy", "high", true, "heavy"},
		{"deploy", "high", false, "heavy"},
	}
	if got, want := len(tests), len(journal.Categories)*len(policy.Impacts)*2; got != want {
		t.Fatalf("table has %d cells; want %d (every category x impact x reversible)", got, want)
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/%s/reversible=%v", tt.category, tt.impact, tt.reversible)
		if seen[name] {
			t.Fatalf("cell %s listed twice", name)
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			if got := policy.Classify(tt.category, tt.impact, tt.reversible); got != tt.want {
				t.Errorf("Classify(%q, %q, %v) = %q; want %q", tt.category, tt.impact, tt.reversible, got, tt.want)
			}
		})
	}
}

// readmeMatrix is the README's table: impact, reversible, then the tier at
// standard, demoted and elevated trust.
var readmeMatrix = []struct {
	impact     string
	reversible bool
	standard   string
	demoted    string
	elevated   string
}{
	{"low", true, "auto_approve", "auto_approve", "auto_approve"},
	{"low", false, "quick_review", "quick_review", "quick_review"},
	{"medium", true, "quick_review", "escalate", "auto_approve"},
	{"medium", false, "deep_think", "escalate", "deep_think"},
	{"high", true, "quick_review", "escalate", "quick_review"},
	{"high", false, "deep_think", "escalate", "deep_think"},
}

func TestTier(t *testing.T) {
	for _, row := range readmeMatrix {
		for _, lv := range []struct {
			level trust.Level
			want  string
		}{{trust.Standard, row.standard}, {trust.Demoted, row.demoted}, {trust.Elevated, row.elevated}} {
			name := fmt.Sprintf("%s/%s/reversible=%v", lv.level, row.impact, row.reversible)
			t.Run(name, func(t *testing.T) {
				got, err := policy.Tier(lv.level, row.impact, row.reversible)
				if err != nil {
					t.Fatalf("Tier(%q, %q, %v) error: %v", lv.level, row.impact, row.reversible, err)
				}
				if got != lv.want {
					t.Errorf("Tier(%q, %q, %v) = %q; want %q", lv.level, row.impact, row.reversible, got, lv.want)
				}
			})
		}
	}
}

func TestTierErrors(t *testing.T) {
	tests := []struct {
		name     string
		level    trust.Level
		impact   string
		contains []string
	}{
		{"unknown impact", trust.Standard, "huge", []string{`"huge"`, "low, medium, high"}},
		{"empty impact", trust.Elevated, "", []string{`""`, "allowed"}},
		{"impact is case-sensitive", trust.Demoted, "Low", []string{`"Low"`}},
		{"unknown level", trust.Level("trusted"), "low", []string{`"trusted"`, "trust level"}},
		{"empty level", trust.Level(""), "medium", []string{"trust level"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := policy.Tier(tt.level, tt.impact, true)
			if err == nil {
				t.Fatalf("Tier(%q, %q, true) = %q, nil; want an error", tt.level, tt.impact, got)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Tier(%q, %q, true) error %q; want it to contain %q", tt.level, tt.impact, err, s)
				}
			}
		})
	}
}

func TestMatrix(t *testing.T) {
	for _, lv := range []trust.Level{trust.Standard, trust.Demoted, trust.Elevated} {
		t.Run(string(lv), func(t *testing.T) {
			got, err := policy.Matrix(lv)
			if err != nil {
				t.Fatalf("Matrix(%q) error: %v", lv, err)
			}
			var want []policy.Cell
			for _, row := range readmeMatrix {
				tier := map[trust.Level]string{trust.Standard: row.standard, trust.Demoted: row.demoted, trust.Elevated: row.elevated}[lv]
				want = append(want, policy.Cell{Impact: row.impact, Reversible: row.reversible, Tier: tier, Standard: row.standard})
			}
			if len(got) != 6 {
				t.Fatalf("Matrix(%q) has %d cells; want 6", lv, len(got))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Matrix(%q) =\n%+v\nwant\n%+v", lv, got, want)
			}
		})
	}
	t.Run("unknown level", func(t *testing.T) {
		got, err := policy.Matrix("trusted")
		if err == nil || !strings.Contains(err.Error(), `"trusted"`) {
			t.Errorf("Matrix(%q) = %v, %v; want an error naming the level", "trusted", got, err)
		}
	})
}

func TestDefaultDecision(t *testing.T) {
	tests := []struct {
		tier         string
		wantDecision string
		wantReason   string // substring
		wantOK       bool
	}{
		{policy.AutoApprove, "APPROVED", "Auto-approved", true},
		{policy.Escalate, "NEEDS_REVIEW", "human review", true},
		{policy.QuickReview, "", "", false},
		{policy.DeepThink, "", "", false},
		{"", "", "", false},
		{"bogus", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.tier, func(t *testing.T) {
			decision, reason, ok := policy.DefaultDecision(tt.tier, "medium", true, trust.Elevated)
			if decision != tt.wantDecision || ok != tt.wantOK {
				t.Errorf("DefaultDecision(%q) = %q, _, %v; want %q, _, %v", tt.tier, decision, ok, tt.wantDecision, tt.wantOK)
			}
			if tt.wantOK && !strings.Contains(reason, "(medium impact, reversible, trust elevated)") {
				t.Errorf("DefaultDecision(%q) reason = %q; want it to name the cell and the level", tt.tier, reason)
			}
			if !strings.Contains(reason, tt.wantReason) || (!tt.wantOK && reason != "") {
				t.Errorf("DefaultDecision(%q) reason = %q; want it to contain %q", tt.tier, reason, tt.wantReason)
			}
		})
	}
}

func TestDepthRank(t *testing.T) {
	tests := []struct {
		depth string
		want  int
	}{
		{"trivial", 0}, {"light", 1}, {"medium", 2}, {"heavy", 3}, {"", -1}, {"deep", -1},
	}
	for _, tt := range tests {
		t.Run(tt.depth, func(t *testing.T) {
			if got := policy.DepthRank(tt.depth); got != tt.want {
				t.Errorf("DepthRank(%q) = %d; want %d", tt.depth, got, tt.want)
			}
		})
	}
}

// TestMoreImpactNeverLessCaution is the README's promise for every level:
// at the same reversibility, a higher impact never gets a less cautious
// tier, and an irreversible item never a less cautious one than its
// reversible twin.
func TestMoreImpactNeverLessCaution(t *testing.T) {
	caution := map[string]int{policy.AutoApprove: 0, policy.QuickReview: 1, policy.DeepThink: 2, policy.Escalate: 3}
	for _, lv := range trust.Levels {
		for i, imp := range policy.Impacts {
			for _, rev := range []bool{true, false} {
				tier, err := policy.Tier(lv, imp, rev)
				if err != nil {
					t.Fatal(err)
				}
				if !rev {
					twin, _ := policy.Tier(lv, imp, true)
					if caution[tier] < caution[twin] {
						t.Errorf("%s: %s irreversible is %s, less cautious than reversible %s", lv, imp, tier, twin)
					}
				}
				if i > 0 {
					lower, _ := policy.Tier(lv, policy.Impacts[i-1], rev)
					if caution[tier] < caution[lower] {
						t.Errorf("%s: %s (reversible=%v) is %s, less cautious than %s's %s", lv, imp, rev, tier, policy.Impacts[i-1], lower)
					}
				}
			}
		}
	}
}
