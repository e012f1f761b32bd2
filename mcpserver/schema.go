package mcpserver

import (
	"bytes"
	"encoding/json"
)

// prop is one argument of a tool, as its input schema shows it: as little
// as a model needs (the whole tool list is paid for in tokens by every
// conversation that loads it).
type prop struct {
	name string
	typ  string // JSON Schema type
	desc string
	enum []string
	// items is the type of an array's items.
	items string
	// min and max bound a number.
	min, max *float64
}

// object is a tool's input schema: an object of props, some required.
type object struct {
	props    []prop
	required []string
}

func (o object) names() []string {
	n := make([]string, len(o.props))
	for i, p := range o.props {
		n[i] = p.name
	}
	return n
}

// JSON is the schema, compact, its properties in order.
func (o object) JSON() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range o.props {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, p.name)
		b.WriteString(`:{"type":`)
		writeJSON(&b, p.typ)
		if p.items != "" {
			b.WriteString(`,"items":{"type":`)
			writeJSON(&b, p.items)
			b.WriteByte('}')
		}
		if len(p.enum) > 0 {
			b.WriteString(`,"enum":`)
			writeJSON(&b, p.enum)
		}
		if p.min != nil {
			b.WriteString(`,"minimum":`)
			writeJSON(&b, *p.min)
		}
		if p.max != nil {
			b.WriteString(`,"maximum":`)
			writeJSON(&b, *p.max)
		}
		if p.desc != "" {
			b.WriteString(`,"description":`)
			writeJSON(&b, p.desc)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	if len(o.required) > 0 {
		b.WriteString(`,"required":`)
		writeJSON(&b, o.required)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings, numbers and string slices always encode
	b.Truncate(b.Len() - 1)
}

func ptr(f float64) *float64 { return &f }
