//go:build orbit_decode_jsonv2 && goexperiment.jsonv2

package journal

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
)

// decodeDecision with encoding/json/v2 (GOEXPERIMENT=jsonv2), for the bench
// harness's comparison (decode_records.go): keys match exactly, as in the
// one-pass decoder; duplicate keys and invalid UTF-8 are allowed, as in
// encoding/json.
func decodeDecision(text []byte, w *wireDecision) error {
	var r jsonDecision
	if err := json.Unmarshal(text, &r, jsonv2Options); err != nil {
		return jsonv2Error(err)
	}
	*w = r.wire()
	return nil
}

func decodeOutcome(text []byte, w *wireOutcome) error {
	return jsonv2Error(json.Unmarshal(text, w, jsonv2Options))
}

var jsonv2Options = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// jsonv2Error turns encoding/json/v2's errors into the decoder's.
func jsonv2Error(err error) error {
	var se *jsontext.SyntacticError
	var te *json.SemanticError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &syntaxError{msg: se.Error(), off: int(se.ByteOffset)}
	case errors.As(err, &te):
		return &typeError{field: string(te.JSONPointer), want: te.GoType.String(), got: te.JSONKind.String()}
	}
	return &syntaxError{msg: err.Error()}
}
