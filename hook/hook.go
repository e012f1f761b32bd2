// Package hook owns orbit's side of Claude Code's hook protocol: reading the
// hook's stdin JSON, deciding at each Stop whether the ORBIT loop goes on
// and what the agent is re-fed, tearing the loop down when it is done, and
// reporting every failure three ways (stderr, .claude/orbit-hook.log, and a
// systemMessage in the hook's JSON output) instead of dying silently.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// MaxOutput is Claude Code's cap on a hook's output, in characters.
const MaxOutput = 10000

// MaxInput bounds what is read from stdin.
const MaxInput = 1 << 20

// DefaultTimeout bounds a hook run (orbit init registers the hooks with
// Claude Code's timeout at 30 s): a lock held by a hung process or a stdin
// nobody closes ends in a systemMessage, not in Claude Code killing a
// silent hook.
const DefaultTimeout = 20 * time.Second

// Input is the JSON Claude Code writes to a Stop or SubagentStop hook's
// stdin. Unknown fields are ignored; any field may be missing.
type Input struct {
	SessionID            string `json:"session_id"`
	TranscriptPath       string `json:"transcript_path"`
	CWD                  string `json:"cwd"`
	HookEventName        string `json:"hook_event_name"`
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
	// Source is what started a session, on SessionStart: startup, resume,
	// clear or compact.
	Source string `json:"source"`
}

// ParseInput reads a hook's stdin. Empty input is allowed (a hook run by
// hand); anything else must be one JSON object, and a field of the wrong
// type is an error naming it.
func ParseInput(data []byte) (Input, error) {
	var in Input
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return in, nil
	}
	if trimmed[0] != '{' {
		return in, errors.New("hook input is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Input{}, fmt.Errorf("hook input: %s is %s, want %s", te.Field, te.Value, te.Type)
		}
		return Input{}, fmt.Errorf("hook input: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Input{}, errors.New("hook input: more than one JSON value")
	}
	return in, nil
}

// Output is a hook's JSON answer. With Decision "block", Claude Code goes on
// with Reason as the next prompt; without, the session may end, and
// SystemMessage is shown to the person watching. On SessionStart,
// Specific carries the context to add.
type Output struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
	// Specific is the answer particular to an event (SessionStart's
	// additional context).
	Specific *SpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// SpecificOutput is hookSpecificOutput: on SessionStart, text Claude Code
// adds to the session's context.
type SpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// Bytes is what the hook prints: nothing when there is nothing to say (exit
// 0, the session ends), else one JSON object and a newline.
func (o Output) Bytes() []byte {
	if o == (Output{}) {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		// Strings always encode; keep stdout parseable whatever happens.
		return []byte(`{"systemMessage":"orbit hook: could not encode its output"}` + "\n")
	}
	return b.Bytes()
}
