// Package policy owns seed 000's decision policy: the depth classes, the
// impact x reversibility matrix and how the trust level adjusts it, and the
// decision an item gets when its tier decides it without an agent.
package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orbit-loop/orbit/trust"
)

// Impacts are the impact values of a pending request.
var Impacts = []string{"low", "medium", "high"}

// Tiers.
const (
	AutoApprove = "auto_approve"
	QuickReview = "quick_review"
	DeepThink   = "deep_think"
	Escalate    = "escalate"
)

// Depth classes, shallowest first.
var Depths = []string{"trivial", "light", "medium", "heavy"}

// DepthRank orders depths: trivial 0 … heavy 3 (-1 if unknown).
func DepthRank(depth string) int { return slices.Index(Depths, depth) }

// Classify gives the depth of an item from seed 000's table:
//
//	trivial  < 30 s    linting, docs, test coverage, formatting
//	light    1-3 min   new feature aligned with vision, API addition
//	medium   5-15 min  architecture choice, API contract change
//	heavy    15-30 min major pivot, production gate, feature removal
//
// made exact from impact and reversibility, with two category rules:
//
//	impact \ reversible   yes       no
//	low                   trivial   light
//	medium                light     medium
//	high                  medium    heavy
//
// An architecture item is at least medium (the seed's "architecture
// choice"); a high-impact deploy or scope item is heavy (production gates,
// feature removals).
func Classify(category, impact string, reversible bool) string {
	d := 0
	switch impact {
	case "medium":
		d = 1
	case "high":
		d = 2
	}
	if !reversible {
		d++
	}
	switch {
	case category == "architecture":
		d = max(d, 2)
	case impact == "high" && (category == "deploy" || category == "scope"):
		d = 3
	}
	return Depths[min(d, 3)]
}

// cell is one cell of the matrix.
type cell struct {
	impact     string
	reversible bool
}

// matrix is the effective impact x reversibility matrix for each trust
// level: the one table the tier comes from.
//
//	standard: seed 000 as written; High + irreversible is deep_think.
//	demoted:  every medium and high impact item escalates (the seed sends
//	          medium items and High + irreversible to escalate; High +
//	          reversible escalates too, so that more impact never meets
//	          less caution).
//	elevated: medium + reversible is auto-approved (it can be undone, and
//	          the loop has earned it); everything else as standard.
var matrix = map[trust.Level]map[cell]string{
	trust.Standard: {
		{"low", true}: AutoApprove, {"low", false}: QuickReview,
		{"medium", true}: QuickReview, {"medium", false}: DeepThink,
		{"high", true}: QuickReview, {"high", false}: DeepThink,
	},
	trust.Demoted: {
		{"low", true}: AutoApprove, {"low", false}: QuickReview,
		{"medium", true}: Escalate, {"medium", false}: Escalate,
		{"high", true}: Escalate, {"high", false}: Escalate,
	},
	trust.Elevated: {
		{"low", true}: AutoApprove, {"low", false}: QuickReview,
		{"medium", true}: AutoApprove, {"medium", false}: DeepThink,
		{"high", true}: QuickReview, {"high", false}: DeepThink,
	},
}

// Tier returns the tier of an item at a trust level.
func Tier(level trust.Level, impact string, reversible bool) (string, error) {
	m, ok := matrix[level]
	if !ok {
		return "", fmt.Errorf("unknown trust level %q", level)
	}
	t, ok := m[cell{impact, reversible}]
	if !ok {
		return "", fmt.Errorf("impact %q is not allowed (allowed: %s)", impact, strings.Join(Impacts, ", "))
	}
	return t, nil
}

// Cell is one cell of the effective matrix, for `orbit policy`.
type Cell struct {
	Impact     string `json:"impact"`
	Reversible bool   `json:"reversible"`
	Tier       string `json:"tier"`
	// Standard is the tier at standard trust, to show what the level
	// changed.
	Standard string `json:"standard_tier"`
}

// Matrix returns the effective matrix at a level, low impact first,
// reversible before irreversible.
func Matrix(level trust.Level) ([]Cell, error) {
	var out []Cell
	for _, imp := range Impacts {
		for _, rev := range []bool{true, false} {
			t, err := Tier(level, imp, rev)
			if err != nil {
				return nil, err
			}
			std, _ := Tier(trust.Standard, imp, rev)
			out = append(out, Cell{Impact: imp, Reversible: rev, Tier: t, Standard: std})
		}
	}
	return out, nil
}

// DefaultDecision is the decision a tier makes without an agent:
// auto_approve approves, escalate asks for human review. Other tiers need
// the agent's decision (ok false). The reason names the cell and the level.
func DefaultDecision(tier, impact string, reversible bool, level trust.Level) (decision, reason string, ok bool) {
	rev := "reversible"
	if !reversible {
		rev = "irreversible"
	}
	cell := fmt.Sprintf("%s impact, %s, trust %s", impact, rev, level)
	switch tier {
	case AutoApprove:
		return "APPROVED", "Auto-approved by the impact x reversibility matrix (" + cell + ").", true
	case Escalate:
		return "NEEDS_REVIEW", "Escalated to human review by the impact x reversibility matrix (" + cell + ").", true
	}
	return "", "", false
}
