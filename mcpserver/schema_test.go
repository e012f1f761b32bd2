package mcpserver

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSchemasMatchArguments: each tool's input schema lists exactly the
// arguments its call decodes, in order, and is valid JSON of an object
// schema whose required arguments exist.
func TestSchemasMatchArguments(t *testing.T) {
	args := map[string]any{
		"decide": decideArgs{}, "retro": retroArgs{}, "queue": queueArgs{}, "precedent": precedentArgs{},
		"trust": trustArgs{}, "stale": staleArgs{}, "loop_status": struct{}{}, "knowledge_match": knowledgeArgs{},
		"void": voidArgs{},
	}
	if len(args) != len(tools) {
		t.Fatalf("%d argument types for %d tools", len(args), len(tools))
	}
	for _, tl := range tools {
		a, ok := args[tl.name]
		if !ok {
			t.Errorf("tool %s: no argument type in this test", tl.name)
			continue
		}
		var tags []string
		rt := reflect.TypeOf(a)
		for i := range rt.NumField() {
			tags = append(tags, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
		if names := tl.schema.names(); !slices.Equal(names, tags) {
			t.Errorf("tool %s: schema properties %q; its arguments decode %q", tl.name, names, tags)
		}
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tl.schema.JSON(), &s); err != nil || s.Type != "object" || len(s.Properties) != len(tags) {
			t.Errorf("tool %s: schema %s (%v); want an object of %d properties", tl.name, tl.schema.JSON(), err, len(tags))
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("tool %s: required %q is not a property", tl.name, r)
			}
		}
	}
}
