package frameworks

import (
	"encoding/json"
	"errors"
)

// SplitObjectForTest exposes the object splitter to the fuzz test.
func SplitObjectForTest(data []byte) (map[string]json.RawMessage, error) {
	if !json.Valid(data) {
		return nil, errors.New("invalid JSON")
	}
	o, ok := asObject(data)
	if !ok {
		return nil, errors.New("not an object")
	}
	m := map[string]json.RawMessage{}
	for _, mem := range o {
		m[string(mem.key)] = mem.raw
	}
	return m, nil
}
