package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/orbit-loop/orbit/journal"
)

// TestErrorProblemRendersFinding: an error that is a finding is rendered
// as a problem detail whose finding member is the finding itself, named by
// its path in the project; any other error as a plain problem detail.
func TestErrorProblemRendersFinding(t *testing.T) {
	finding := journal.Problem{File: "/srv/proj/.planning/loops/x.json", Line: 3, LineEnd: 3, Column: 23, Severity: journal.SevError,
		Code: journal.CodeJSON, Message: "invalid JSON: unexpected end of JSON input"}
	for _, tt := range []struct {
		name        string
		err         error
		wantDetail  string
		wantFinding *journal.Problem
	}{
		{"a finding, wrapped", fmt.Errorf("stop: %w", finding),
			".planning/loops/x.json:3:23: invalid JSON: unexpected end of JSON input",
			&journal.Problem{File: ".planning/loops/x.json", Line: 3, LineEnd: 3, Column: 23, Severity: journal.SevError, Code: journal.CodeJSON,
				Message: "invalid JSON: unexpected end of JSON input"}},
		{"another error", fmt.Errorf("disk full"), "disk full", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			errorProblem(w, httptest.NewRequest("POST", "/api/v1/loops/x/stop", nil), "/srv/proj", 409, "the loop's file cannot be read as a loop", tt.err)
			if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" || w.Code != 409 {
				t.Errorf("status %d, Content-Type %q; want 409, application/problem+json", w.Code, ct)
			}
			var got Problem
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Detail != tt.wantDetail || got.Status != 409 || got.Instance != "/api/v1/loops/x/stop" {
				t.Errorf("problem = %+v; want detail %q", got, tt.wantDetail)
			}
			if (got.Finding == nil) != (tt.wantFinding == nil) || got.Finding != nil && *got.Finding != *tt.wantFinding {
				t.Errorf("finding = %+v; want %+v", got.Finding, tt.wantFinding)
			}
		})
	}
}
