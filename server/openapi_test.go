package server_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/server"
)

// TestOpenAPIMatchesRoutes: every route is documented and every documented
// operation is served; write routes declare the bearer scheme.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newEnv(t, "", server.Config{}).handler()
	r := e.get("/api/v1/openapi.json")
	wantStatus(t, "GET openapi.json", r, 200)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q; want application/json", ct)
	}
	file, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != string(r.body) {
		t.Errorf("GET openapi.json differs from server/openapi.json")
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi = %q; want 3.x", doc.OpenAPI)
	}
	routes := server.RouteList()
	for _, rt := range routes {
		op, ok := doc.Paths[rt[1]][strings.ToLower(rt[0])]
		if !ok {
			t.Errorf("route %s %s is not in openapi.json", rt[0], rt[1])
			continue
		}
		var o struct {
			Security  []map[string]any           `json:"security"`
			Responses map[string]json.RawMessage `json:"responses"`
		}
		if err := json.Unmarshal(op, &o); err != nil {
			t.Errorf("%s %s: %v", rt[0], rt[1], err)
			continue
		}
		if len(o.Responses) == 0 {
			t.Errorf("%s %s documents no response", rt[0], rt[1])
		}
		// Every answer is declared, with its body: the errors every route
		// may give (401 off loopback, 421 for a foreign Host, 500) and a
		// schema for every response that has a body.
		for _, code := range []string{"401", "421", "500"} {
			if _, ok := o.Responses[code]; !ok {
				t.Errorf("%s %s does not document %s", rt[0], rt[1], code)
			}
		}
		for code, raw := range o.Responses {
			var resp struct {
				Ref     string                          `json:"$ref"`
				Content map[string]struct{ Schema any } `json:"content"`
			}
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Errorf("%s %s %s: %v", rt[0], rt[1], code, err)
				continue
			}
			if code == "204" || resp.Ref != "" {
				continue
			}
			if len(resp.Content) == 0 {
				t.Errorf("%s %s %s declares no body", rt[0], rt[1], code)
			}
			for ct, c := range resp.Content {
				if c.Schema == nil && ct != "image/svg+xml" {
					t.Errorf("%s %s %s %s has no schema", rt[0], rt[1], code, ct)
				}
			}
		}
		if server.WriteRoute(rt[0], rt[1]) {
			if !slices.ContainsFunc(o.Security, func(m map[string]any) bool { _, ok := m["bearer"]; return ok }) {
				t.Errorf("write route %s %s does not declare the bearer security scheme", rt[0], rt[1])
			}
			if _, ok := o.Responses["401"]; !ok {
				t.Errorf("write route %s %s does not document 401", rt[0], rt[1])
			}
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			switch method {
			case "parameters", "summary", "description", "servers":
				continue
			}
			if !slices.Contains(routes, [2]string{strings.ToUpper(method), path}) {
				t.Errorf("openapi.json documents %s %s, which the routes table does not serve", strings.ToUpper(method), path)
			}
		}
	}
}
