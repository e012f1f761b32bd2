package citadel

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Template is one of Citadel's built-in loop templates (seed 001,
// core/loops/templates.js), with its defaults.
type Template struct {
	Name            string   `json:"id"`
	Title           string   `json:"title"`
	Type            string   `json:"type"`
	TriggerKind     string   `json:"triggerKind"`
	Cadence         string   `json:"cadence,omitempty"`
	Goal            string   `json:"goal"`
	VerifierCommand string   `json:"verifierCommand,omitempty"`
	VerifierProfile string   `json:"verifierProfile,omitempty"`
	MaxAttempts     int      `json:"maxAttempts"`
	StopConditions  []string `json:"stopConditions"`
}

// templates are the eight templates of seed 001, in Citadel's order and
// with Citadel's defaults.
var templates = []Template{
	{Name: "pr-review-repair", Title: "PR review and repair", Type: "pr-watch", TriggerKind: "scheduled", Cadence: "every 15 minutes",
		Goal:            "Monitor a pull request, inspect review/CI feedback, apply targeted fixes, and stop at review or green checks.",
		VerifierProfile: "pr-checks", MaxAttempts: 3,
		StopConditions: []string{"verifier-passed", "needs-human-review", "attempt-limit", "unsafe-to-continue"}},
	{Name: "issue-triage", Title: "Issue triage", Type: "triage", TriggerKind: "scheduled", Cadence: "daily",
		Goal:            "Inspect new issues, classify them, and write a reviewable triage summary.",
		VerifierProfile: "triage-report", MaxAttempts: 1,
		StopConditions: []string{"done", "blocked", "needs-human-review"}},
	{Name: "dependency-refresh", Title: "Dependency refresh", Type: "maintenance", TriggerKind: "manual",
		Goal:            "Check dependency drift, apply safe updates, and verify with the project test profile.",
		VerifierProfile: "project-tests", MaxAttempts: 2,
		StopConditions: []string{"verifier-passed", "verifier-failed", "needs-human-review"}},
	{Name: "docs-drift-check", Title: "Docs drift check", Type: "schedule", TriggerKind: "scheduled", Cadence: "weekly",
		Goal:            "Check whether docs still match current scripts, commands, and public claims.",
		VerifierCommand: "npm run docs:check", VerifierProfile: "docs", MaxAttempts: 1,
		StopConditions: []string{"verifier-passed", "verifier-failed", "needs-human-review"}},
	{Name: "nightly-health", Title: "Nightly health", Type: "schedule", TriggerKind: "scheduled", Cadence: "daily",
		Goal:            "Run the safest project health checks and report blockers.",
		VerifierProfile: "project-health", MaxAttempts: 1,
		StopConditions: []string{"verifier-passed", "verifier-failed", "blocked"}},
	{Name: "visual-qa", Title: "Visual QA", Type: "qa", TriggerKind: "manual",
		Goal:            "Exercise the target UI route, capture evidence, and stop for human review on visual uncertainty.",
		VerifierProfile: "visual", MaxAttempts: 2,
		StopConditions: []string{"verifier-passed", "needs-human-review", "attempt-limit"}},
	{Name: "security-scan", Title: "Security scan", Type: "security", TriggerKind: "manual",
		Goal:            "Run bounded security checks, report actionable findings, and avoid autonomous risky changes.",
		VerifierProfile: "security", MaxAttempts: 1,
		StopConditions: []string{"done", "needs-human-review", "unsafe-to-continue"}},
	{Name: "demo-proof-refresh", Title: "Demo proof refresh", Type: "verification", TriggerKind: "manual",
		Goal:            "Refresh operating-loop proof artifacts and verify public demo claims.",
		VerifierCommand: "node scripts/operating-proof.js --write", VerifierProfile: "operating-proof", MaxAttempts: 1,
		StopConditions: []string{"verifier-passed", "verifier-failed", "blocked"}},
}

// Templates are the eight templates of seed 001, in Citadel's order and
// with Citadel's defaults (copies: changing one changes no other caller's).
func Templates() []Template {
	out := slices.Clone(templates)
	for i := range out {
		out[i].StopConditions = slices.Clone(out[i].StopConditions)
	}
	return out
}

// TemplateNames lists the templates' names.
func TemplateNames() []string {
	names := make([]string, len(templates))
	for i, t := range templates {
		names[i] = t.Name
	}
	return names
}

// FindTemplate returns the template called name.
func FindTemplate(name string) (Template, error) {
	for _, t := range Templates() {
		if t.Name == name {
			return t, nil
		}
	}
	return Template{}, fmt.Errorf("unknown loop template %q (templates: %s)", name, strings.Join(TemplateNames(), ", "))
}

// PlanOptions override a template's defaults.
type PlanOptions struct {
	ID, Title, Goal, Scope, ReviewArtifact string
}

// Plan instantiates a template as a loop contract. Unlike Citadel's own
// CLI, which always passes its --trigger default ("manual") and so loses
// the template's trigger kind, the template's trigger kind is kept.
func (t Template) Plan(opts PlanOptions, now time.Time) Contract {
	c := ContractOptions{
		ID: opts.ID, Type: t.Type, Template: t.Name, Title: t.Title, Goal: t.Goal,
		TriggerKind: t.TriggerKind, Cadence: t.Cadence,
		VerifierCommand: t.VerifierCommand, VerifierProfile: t.VerifierProfile,
		MaxAttempts: t.MaxAttempts, StopConditions: t.StopConditions,
		Scope: opts.Scope, ReviewArtifact: opts.ReviewArtifact,
	}
	if opts.Title != "" {
		c.Title = opts.Title
	}
	if opts.Goal != "" {
		c.Goal = opts.Goal
	}
	return NewContract(c, now)
}
