package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/server"
)

// TestDecideFieldErrors: a request field orbit cannot take is named as the
// JSON body names it, never as a CLI flag, with its value and the values
// allowed as fields of the problem.
func TestDecideFieldErrors(t *testing.T) {
	e := newEnv(t, "", server.Config{})
	e.serve()
	for _, tt := range []struct {
		body, field, value, detail string
		allowed                    bool
	}{
		{`{"category":"quality","impact":"low","reversible":true}`, "title", "", "title is required", false},
		{`{"title":"x","category":"featur","impact":"low","reversible":true}`, "category", "featur", `did you mean "feature"`, true},
		{`{"title":"x","category":"quality","impact":"low","reversible":false,"next_action":"y"}`, "decision", "", "decision is required", false},
	} {
		r := e.post("/api/v1/decisions", tt.body)
		wantStatus(t, "POST "+tt.body, r, 422)
		var p struct {
			Detail  string   `json:"detail"`
			Field   string   `json:"field"`
			Value   string   `json:"value"`
			Allowed []string `json:"allowed"`
		}
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		if p.Field != tt.field || p.Value != tt.value || !strings.Contains(p.Detail, tt.detail) || strings.Contains(p.Detail, "--") || (len(p.Allowed) > 0) != tt.allowed {
			t.Errorf("POST %s = %s; want field %q, value %q, detail with %q and no flag", tt.body, r.body, tt.field, tt.value, tt.detail)
		}
	}
	// Enumerations in any case, as on the CLI.
	r := e.post("/api/v1/decisions", `{"title":"x","category":"QUALITY","impact":"Low","reversible":true,"iteration":0}`)
	wantStatus(t, "POST in mixed case", r, 201)
	if !strings.Contains(string(r.body), `"category":"quality"`) || !strings.Contains(string(r.body), `"iteration":0`) {
		t.Errorf("POST in mixed case = %s", r.body)
	}
}
