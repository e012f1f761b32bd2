package citadel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/citadel"
	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/loop"
)

// citadelExample is a record Citadel's own scripts wrote (README of
// ../shared/examples/citadel).
func citadelExample(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(looptest.Fixture("project/.planning/loops/" + name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// keysOf returns the keys of a JSON object in the order written, and of
// its object members, as "member.key".
func keysOf(tb testing.TB, raw []byte) []string {
	tb.Helper()
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		tb.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			tb.Fatal(err)
		}
		key := tok.(string)
		keys = append(keys, key)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			tb.Fatal(err)
		}
		if len(v) > 0 && v[0] == '{' {
			for _, k := range keysOf(tb, v) {
				keys = append(keys, key+"."+k)
			}
		}
	}
	return keys
}

func TestLoopIDAsCitadel(t *testing.T) {
	at := time.Date(2026, 11, 29, 19, 19, 30, 576e6, time.UTC)
	tests := []struct{ typ, source, want string }{
		{"foreground-loop", "touch done.flag", "foreground-loop-touch-done-flag-2026-11-29T19-19-30-576Z"},
		{"pr-watch", "PR review and repair", "pr-watch-pr-review-and-repair-2026-11-29T19-19-30-576Z"},
		{"", "", "loop-loop-2026-11-29T19-19-30-576Z"},
		{"x", "--ÄÖ--", "x-loop-2026-11-29T19-19-30-576Z"},
	}
	for _, tt := range tests {
		if got := citadel.LoopID(tt.typ, tt.source, at); got != tt.want {
			t.Errorf("LoopID(%q, %q) = %q; want %q", tt.typ, tt.source, got, tt.want)
		}
	}
	if got := loop.ISOTime(at); got != "2026-11-29T19:19:30.576Z" {
		t.Errorf("ISOTime = %q; want JavaScript's toISOString", got)
	}
}

// TestPlanAsCitadelWrites compares a plan with the record Citadel's
// `loops.js plan --template pr-review-repair` wrote: the same fields in the
// same order with the same values, except the id and times, and except
// trigger.kind, which Citadel's CLI loses ("manual") and orbit keeps.
func TestPlanAsCitadelWrites(t *testing.T) {
	example := citadelExample(t, "pr-watch-pr-review-and-repair-2026-11-29T19-19-30-743Z.json")
	tp, err := citadel.FindTemplate("pr-review-repair")
	if err != nil {
		t.Fatal(err)
	}
	c := tp.Plan(citadel.PlanOptions{}, time.Date(2026, 11, 29, 19, 19, 30, 743e6, time.UTC))
	got, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if g, w := keysOf(t, got), keysOf(t, example); !slices.Equal(g, w) {
		t.Errorf("plan keys\n%q\nwant Citadel's\n%q", g, w)
	}
	var gm, wm map[string]any
	json.Unmarshal(got, &gm)
	json.Unmarshal(example, &wm)
	if gm["trigger"].(map[string]any)["kind"] != "scheduled" {
		t.Errorf("trigger.kind = %v; want the template's scheduled", gm["trigger"])
	}
	wm["trigger"].(map[string]any)["kind"] = "scheduled"
	for _, k := range []string{"createdAt", "updatedAt"} {
		gm[k], wm[k] = nil, nil
	}
	g, _ := json.Marshal(gm)
	w, _ := json.Marshal(wm)
	if !bytes.Equal(g, w) {
		t.Errorf("plan\n%s\nwant (Citadel's, trigger.kind fixed)\n%s", g, w)
	}
}

// TestForegroundContractAsCitadelWrites compares the contract orbit's
// runner starts with to the one Citadel's loop-runner wrote.
func TestForegroundContractAsCitadelWrites(t *testing.T) {
	example := citadelExample(t, "foreground-loop-touch-done-flag-2026-11-29T19-19-30-576Z.json")
	c := citadel.NewContract(citadel.ContractOptions{Type: "foreground-loop", Title: "touch done.flag", Command: "touch done.flag",
		VerifierCommand: "test -f done.flag", MaxAttempts: 3}, time.Date(2026, 11, 29, 19, 19, 30, 576e6, time.UTC))
	got, _ := c.Bytes()
	var gm, wm map[string]any
	json.Unmarshal(got, &gm)
	json.Unmarshal(example, &wm)
	for _, k := range []string{"createdAt", "updatedAt", "runs", "status", "stoppedAt", "stopReason"} {
		delete(gm, k)
		delete(wm, k)
	}
	g, _ := json.Marshal(gm)
	w, _ := json.Marshal(wm)
	if !bytes.Equal(g, w) {
		t.Errorf("contract\n%s\nwant Citadel's\n%s", g, w)
	}
}

func TestTemplates(t *testing.T) {
	want := []string{"pr-review-repair", "issue-triage", "dependency-refresh", "docs-drift-check", "nightly-health", "visual-qa",
		"security-scan", "demo-proof-refresh"}
	if got := citadel.TemplateNames(); !slices.Equal(got, want) {
		t.Fatalf("templates %q; want seed 001's %q", got, want)
	}
	for _, tp := range citadel.Templates() {
		c := tp.Plan(citadel.PlanOptions{}, looptest.Now)
		if c.Template == nil || *c.Template != tp.Name || c.Type != tp.Type || c.Trigger.Kind != tp.TriggerKind ||
			c.Budget.MaxAttempts != tp.MaxAttempts || c.Retry.MaxAttempts != tp.MaxAttempts || c.Status != "planned" {
			t.Errorf("%s: plan %+v lost the template's defaults", tp.Name, c)
		}
		if c.Verifier.Required != (tp.VerifierCommand != "") {
			t.Errorf("%s: verifier.required = %v; want %v (Citadel: required when there is a command)", tp.Name, c.Verifier.Required, tp.VerifierCommand != "")
		}
		for _, s := range c.StopConditions {
			if !loop.IsStopReason(s) {
				t.Errorf("%s: stop condition %q is not a shared stop word", tp.Name, s)
			}
		}
	}
	c := citadel.Templates()[3].Plan(citadel.PlanOptions{ID: "docs-drift", Title: "Docs", Scope: "docs/", ReviewArtifact: "reports/docs.md"}, looptest.Now)
	if c.ID != "docs-drift" || c.Title != "Docs" || c.Scope.Description != "docs/" || *c.ReviewArtifact != "reports/docs.md" ||
		c.StatePath != ".planning/loops/docs-drift.json" || *c.Verifier.Command != "npm run docs:check" {
		t.Errorf("plan with options = %+v", c)
	}
	if _, err := citadel.FindTemplate("nope"); err == nil {
		t.Error("FindTemplate(nope) = nil error")
	}
}

func TestCreateContract(t *testing.T) {
	root := t.TempDir()
	c := citadel.Templates()[0].Plan(citadel.PlanOptions{ID: "pr-1"}, looptest.Now)
	path, err := citadel.CreateContract(context.Background(), root, c)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(root, ".planning", "loops", "pr-1.json") {
		t.Errorf("path %s", path)
	}
	want, _ := c.Bytes()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("written\n%s\nwant\n%s", got, want)
	}
	if _, err := citadel.CreateContract(context.Background(), root, c); err == nil {
		t.Error("second CreateContract with the same id: nil error; want one (never overwrite a record)")
	}
	for _, bad := range []string{"../escape", ".hidden", "a/b", ""} {
		c.ID = bad
		if _, err := citadel.CreateContract(context.Background(), root, c); err == nil {
			t.Errorf("CreateContract(id %q): nil error", bad)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".planning", "loops"))
	for _, e := range entries {
		if e.Name() != "pr-1.json" {
			t.Errorf("stray file %s in the registry (locks go under %s)", e.Name(), loop.LocksDir)
		}
	}
	s := frameworks.ScanProject(root, looptest.Now)
	if len(s.Loops) != 1 || s.Loops[0].ID != "pr-1" || s.Loops[0].Status != "planned" {
		t.Errorf("scan after create: %+v", s)
	}
}

// TestTemplatesAreCopied: a caller changing the templates it got changes
// neither the next caller's nor a plan's defaults.
func TestTemplatesAreCopied(t *testing.T) {
	got := citadel.Templates()
	got[0].Name = "changed"
	got[0].StopConditions[0] = "changed"
	again := citadel.Templates()
	if again[0].Name != "pr-review-repair" || again[0].StopConditions[0] != "verifier-passed" {
		t.Errorf("Templates()[0] = %s %v after a caller changed its copy; want pr-review-repair [verifier-passed ...]", again[0].Name, again[0].StopConditions)
	}
	d := citadel.DefaultStopConditions()
	d[0] = "changed"
	if c := citadel.NewContract(citadel.ContractOptions{Title: "x"}, looptest.Now); c.StopConditions[0] != "verifier-passed" {
		t.Errorf("NewContract stop conditions %v after a caller changed DefaultStopConditions(); want Citadel's defaults", c.StopConditions)
	}
}
