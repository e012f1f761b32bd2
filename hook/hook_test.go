package hook_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/hook"
)

// docStopInput is the Stop hook input of Claude Code's hooks reference
// (code.claude.com/docs/en/hooks, "Stop input"), permission_mode included:
// a field orbit does not read.
const docStopInput = `{
  "session_id": "abc123",
  "transcript_path": "~/.claude/projects/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
  "cwd": "/Users/my-project",
  "permission_mode": "default",
  "hook_event_name": "Stop",
  "stop_hook_active": true,
  "last_assistant_message": "I've completed the refactoring. Here's a summary..."
}`

func TestParseInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    hook.Input
		wantErr string
	}{
		{
			name: "documented Stop input",
			in:   docStopInput,
			want: hook.Input{
				SessionID:            "abc123",
				TranscriptPath:       "~/.claude/projects/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
				CWD:                  "/Users/my-project",
				HookEventName:        "Stop",
				StopHookActive:       true,
				LastAssistantMessage: "I've completed the refactoring. Here's a summary...",
			},
		},
		{
			name: "older Stop input without cwd or last_assistant_message",
			in:   `{"session_id":"abc123","transcript_path":"/t.jsonl","hook_event_name":"Stop","stop_hook_active":false}`,
			want: hook.Input{SessionID: "abc123", TranscriptPath: "/t.jsonl", HookEventName: "Stop"},
		},
		{
			name: "SubagentStop input",
			in:   `{"session_id":"s","hook_event_name":"SubagentStop","stop_hook_active":false,"agent_id":"a1","agent_transcript_path":"/a.jsonl"}`,
			want: hook.Input{SessionID: "s", HookEventName: "SubagentStop"},
		},
		{name: "empty", in: "", want: hook.Input{}},
		{name: "blank lines", in: " \n\t\r\n", want: hook.Input{}},
		{name: "empty object", in: "{}", want: hook.Input{}},
		{name: "nulls are absent fields", in: `{"session_id":null,"stop_hook_active":null}`, want: hook.Input{}},
		{
			name: "unknown fields of every type are ignored",
			in:   `{"session_id":"s","extra":{"nested":[1,true,null,"x"]},"n":1.5e3,"hook_event_name":"Stop"}`,
			want: hook.Input{SessionID: "s", HookEventName: "Stop"},
		},
		{
			name: "trailing newline as Claude Code writes it",
			in:   `{"session_id":"s"}` + "\n",
			want: hook.Input{SessionID: "s"},
		},
		{name: "array", in: `[{"session_id":"s"}]`, wantErr: "hook input is not a JSON object"},
		{name: "string", in: `"Stop"`, wantErr: "hook input is not a JSON object"},
		{name: "number", in: `42`, wantErr: "hook input is not a JSON object"},
		{name: "plain text", in: `stop please`, wantErr: "hook input is not a JSON object"},
		{name: "stop_hook_active is a string", in: `{"stop_hook_active":"yes"}`, wantErr: "hook input: stop_hook_active is string, want bool"},
		{name: "session_id is a number", in: `{"session_id":7}`, wantErr: "hook input: session_id is number, want string"},
		{name: "cwd is an object", in: `{"cwd":{"path":"/x"}}`, wantErr: "hook input: cwd is object, want string"},
		{name: "last_assistant_message is an array", in: `{"last_assistant_message":["a"]}`, wantErr: "hook input: last_assistant_message is array, want string"},
		{name: "truncated", in: `{"session_id":"s",`, wantErr: "hook input: unexpected EOF"},
		{name: "two values", in: `{"session_id":"a"} {"session_id":"b"}`, wantErr: "hook input: more than one JSON value"},
		{name: "two values on two lines", in: "{}\n{}\n", wantErr: "hook input: more than one JSON value"},
		{name: "trailing garbage", in: `{} x`, wantErr: "hook input: more than one JSON value"},
		// BUG: json.Decoder.More is false before a '}' or ']', so a stray
		// closing bracket after the object is accepted as if absent.
		{name: "stray closing brace after the object", in: `{"session_id":"s"}}`, wantErr: "hook input: more than one JSON value"},
		{name: "stray closing bracket after the object", in: `{"session_id":"s"}]`, wantErr: "hook input: more than one JSON value"},
		{name: "anything after a stray closing brace", in: `{"session_id":"s"}} and more text`, wantErr: "hook input: more than one JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hook.ParseInput([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseInput(%q) error = %v; want %q", tt.in, err, tt.wantErr)
				}
				if got != (hook.Input{}) {
					t.Errorf("ParseInput(%q) = %+v with an error; want the zero Input", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseInput(%q) error = %v; want nil", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseInput(%q) = %+v; want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestOutputBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		out  hook.Output
		want string
	}{
		{name: "nothing to say prints nothing", out: hook.Output{}, want: ""},
		{
			name: "block",
			out:  hook.Output{Decision: "block", Reason: "ORBIT loop — iteration 2 of 20.\nQueue: <empty> & done"},
			want: `{"decision":"block","reason":"ORBIT loop — iteration 2 of 20.\nQueue: <empty> & done"}` + "\n",
		},
		{
			name: "system message only",
			out:  hook.Output{SystemMessage: "orbit: ORBIT loop finished"},
			want: `{"systemMessage":"orbit: ORBIT loop finished"}` + "\n",
		},
		{
			name: "block with a note",
			out:  hook.Output{Decision: "block", Reason: "r", SystemMessage: "orbit: took over"},
			want: `{"decision":"block","reason":"r","systemMessage":"orbit: took over"}` + "\n",
		},
		{
			name: "control characters and invalid UTF-8 stay valid JSON",
			out:  hook.Output{SystemMessage: "a\x00b\tc\xffd"},
			want: `{"systemMessage":"a\u0000b\tc\ufffdd"}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.out.Bytes())
			if got != tt.want {
				t.Errorf("%+v.Bytes() = %q; want %q", tt.out, got, tt.want)
			}
			if got != "" && !json.Valid([]byte(got)) {
				t.Errorf("%+v.Bytes() = %q: not valid JSON", tt.out, got)
			}
		})
	}
}

// FuzzParseInput: whatever Claude Code (or anyone) writes on stdin,
// ParseInput never panics, and either fails with the zero Input or returns
// exactly what encoding/json reads from the same object.
func FuzzParseInput(f *testing.F) {
	for _, s := range []string{
		docStopInput,
		"",
		"{}",
		`{"stop_hook_active":"yes"}`,
		`{"session_id":"a"} {"session_id":"b"}`,
		`[1,2]`,
		`{"session_id":"s","cwd":"/p","hook_event_name":"SubagentStop","stop_hook_active":false,"last_assistant_message":"<promise>ORBIT COMPLETE</promise>"}`,
		`{"session_id":"\ud800","last_assistant_message":"\u0000"}`,
		`{"session_id":"s",`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := hook.ParseInput(data)
		if err != nil {
			if in != (hook.Input{}) {
				t.Fatalf("ParseInput(%q) = %+v, %v; want the zero Input with an error", data, in, err)
			}
			if !strings.HasPrefix(err.Error(), "hook input") {
				t.Fatalf("ParseInput(%q) error %q does not name the hook input", data, err)
			}
			return
		}
		if len(strings.TrimSpace(string(data))) == 0 {
			if in != (hook.Input{}) {
				t.Fatalf("ParseInput(%q) = %+v; want the zero Input for blank input", data, in)
			}
			return
		}
		// ParseInput trims white space (Unicode's too) before decoding.
		var want hook.Input
		if err := json.Unmarshal(bytes.TrimSpace(data), &want); err != nil {
			t.Fatalf("ParseInput(%q) accepted what encoding/json refuses: %v", data, err)
		}
		if in != want {
			t.Fatalf("ParseInput(%q) = %+v; encoding/json reads %+v", data, in, want)
		}
		// What it read survives a round trip.
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		back, err := hook.ParseInput(again)
		if err != nil || back != in {
			t.Fatalf("ParseInput(Marshal(%+v)) = %+v, %v; want it back", in, back, err)
		}
	})
}
