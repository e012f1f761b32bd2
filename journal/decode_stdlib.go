//go:build orbit_decode_stdlib

package journal

import (
	"encoding/json"
	"errors"
)

// decodeDecision with encoding/json, for the bench harness's comparison
// (decode_records.go). Unlike the one-pass decoder, keys also match when
// their case differs.
func decodeDecision(text []byte, w *wireDecision) error {
	var r jsonDecision
	if err := json.Unmarshal(text, &r); err != nil {
		return stdlibError(err)
	}
	*w = r.wire()
	return nil
}

func decodeOutcome(text []byte, w *wireOutcome) error {
	return stdlibError(json.Unmarshal(text, w))
}

// stdlibError turns encoding/json's errors into the decoder's.
func stdlibError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &syntaxError{msg: se.Error(), off: int(se.Offset)}
	case errors.As(err, &te):
		return &typeError{field: te.Field, want: te.Type.String(), got: te.Value}
	}
	return &syntaxError{msg: err.Error()}
}
