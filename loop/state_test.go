package loop_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/loop"
)

// seedState is seed 000's example state file, verbatim.
const seedState = "testdata/doc-example.ceo-loop-state.json"

func writeState(tb testing.TB, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "ceo-loop-state.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func TestReadStateSeedExample(t *testing.T) {
	st, err := loop.ReadState("", seedState)
	if err != nil {
		t.Fatalf("ReadState(%s): %v", seedState, err)
	}
	ints := []struct {
		key  string
		want int64
	}{
		{"iteration", 7}, {"max_iterations", 20}, {"time_limit_minutes", 30},
		{"depth_escalation_counter", 0}, {"correct_decisions", 47}, {"incorrect_decisions", 2},
	}
	for _, tt := range ints {
		got, ok, err := st.Int(tt.key)
		if err != nil || !ok || got != tt.want {
			t.Errorf("Int(%q) = %d, %v, %v; want %d, true, nil", tt.key, got, ok, err, tt.want)
		}
	}
	if got, ok, err := st.Bool("active"); err != nil || !ok || !got {
		t.Errorf("Bool(active) = %v, %v, %v; want true, true, nil", got, ok, err)
	}
	strs := []struct{ key, want string }{{"started_at", "2026-03-08T10:00:00Z"}, {"trust_level", "standard"}}
	for _, tt := range strs {
		got, ok, err := st.String(tt.key)
		if err != nil || !ok || got != tt.want {
			t.Errorf("String(%q) = %q, %v, %v; want %q, true, nil", tt.key, got, ok, err, tt.want)
		}
	}
	// Read and written back unchanged, the file is byte-identical.
	if got, want := string(st.Bytes()), readFile(t, seedState); got != want {
		t.Errorf("Bytes() =\n%s\nwant the file unchanged:\n%s", got, want)
	}
}

func TestReadStateInitialExample(t *testing.T) {
	// The seed's heredoc leaves "$STARTED" unexpanded: still a string.
	path := "testdata/doc-example.initial.ceo-loop-state.json"
	st, err := loop.ReadState("", path)
	if err != nil {
		t.Fatalf("ReadState(%s): %v", path, err)
	}
	if got, _, err := st.String("started_at"); err != nil || got != "$STARTED" {
		t.Errorf("String(started_at) = %q, %v; want %q", got, err, "$STARTED")
	}
	if got, ok, err := st.Int("iteration"); err != nil || !ok || got != 0 {
		t.Errorf("Int(iteration) = %d, %v, %v; want 0, true, nil", got, ok, err)
	}
}

func TestAbsentAndNull(t *testing.T) {
	path := writeState(t, `{"iteration": null, "active": null, "started_at": null}`)
	st, err := loop.ReadState("", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"iteration", "absent"} {
		if v, ok, err := st.Int(key); v != 0 || ok || err != nil {
			t.Errorf("Int(%q) = %d, %v, %v; want 0, false, nil", key, v, ok, err)
		}
	}
	for _, key := range []string{"active", "absent"} {
		if v, ok, err := st.Bool(key); v || ok || err != nil {
			t.Errorf("Bool(%q) = %v, %v, %v; want false, false, nil", key, v, ok, err)
		}
	}
	for _, key := range []string{"started_at", "absent"} {
		if v, ok, err := st.String(key); v != "" || ok || err != nil {
			t.Errorf("String(%q) = %q, %v, %v; want \"\", false, nil", key, v, ok, err)
		}
	}
}

// canonical is a state file in the layout orbit writes (two-space indent),
// with fields the seed does not define: a nested object, an array, floats
// spelled in ways a re-encoding would change, a big integer and escapes.
const canonical = `{
  "active": true,
  "iteration": 7,
  "budget": 0.10,
  "ratio": 1.5e3,
  "big": 12345678901234567890,
  "meta": {
    "owner": "forge:ceo",
    "limits": [
      1,
      2.50
    ],
    "nested": {
      "empty": {},
      "none": []
    }
  },
  "note": "caf\u00e9 <b>",
  "trust_level": "standard",
  "correct_decisions": 47,
  "incorrect_decisions": 2
}
`

func TestSetKeepsEverythingElse(t *testing.T) {
	tests := []struct {
		name string
		set  map[string]any
		want string
	}{
		{
			"one counter",
			map[string]any{"correct_decisions": 48},
			strings.Replace(canonical, `"correct_decisions": 47`, `"correct_decisions": 48`, 1),
		},
		{
			"the three fields orbit keeps",
			map[string]any{"correct_decisions": 0, "incorrect_decisions": 20, "trust_level": "demoted"},
			strings.NewReplacer(`"correct_decisions": 47`, `"correct_decisions": 0`,
				`"incorrect_decisions": 2`, `"incorrect_decisions": 20`,
				`"trust_level": "standard"`, `"trust_level": "demoted"`).Replace(canonical),
		},
		{
			"the first key",
			map[string]any{"active": false},
			strings.Replace(canonical, `"active": true`, `"active": false`, 1),
		},
		{
			"a new key goes last",
			map[string]any{"orbit_synced": true},
			strings.Replace(canonical, "\"incorrect_decisions\": 2\n}", "\"incorrect_decisions\": 2,\n  \"orbit_synced\": true\n}", 1),
		},
		{
			"a value the same as before",
			map[string]any{"iteration": 7},
			canonical,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeState(t, canonical)
			st, err := loop.ReadState("", path)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.set {
				if err := st.Set(k, v); err != nil {
					t.Fatalf("Set(%q, %v): %v", k, v, err)
				}
			}
			if got := string(st.Bytes()); got != tt.want {
				t.Errorf("Bytes() after Set =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestSetNewKeysInOrder(t *testing.T) {
	st, err := loop.ParseState("s.json", []byte(`{"b":1,"a":2}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"z", "last"}, {"a", 3}, {"m", []int{1}}} {
		if err := st.Set(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	// A compact file stays compact: new keys after the last, laid out
	// like it.
	want := `{"b":1,"a":3,"z":"last","m":[1]}`
	if got := string(st.Bytes()); got != want {
		t.Errorf("Bytes() =\n%s\nwant\n%s", got, want)
	}
}

func TestSetUnencodable(t *testing.T) {
	st, err := loop.ParseState("s.json", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	err = st.Set("bad", make(chan int))
	if err == nil || !strings.Contains(err.Error(), "bad") || !strings.Contains(err.Error(), "s.json") {
		t.Errorf("Set(bad, chan) error = %v; want one naming the key and file", err)
	}
	if got := string(st.Bytes()); got != "{}" {
		t.Errorf("Bytes() after a failed Set = %q; want the object unchanged", got)
	}
}

// TestCompactValuesSurvive: a file in another layout keeps every value's
// spelling (floats, escapes, big numbers) through a Set.
func TestCompactValuesSurvive(t *testing.T) {
	in := `{"iteration":3,"f":1.0e2,"g":-0.0,"s":"\u00e9\n","big":18446744073709551616,"o":{"k":[true,null]}}`
	st, err := loop.ParseState("s.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set("iteration", 4); err != nil {
		t.Fatal(err)
	}
	got := string(st.Bytes())
	if want := strings.Replace(in, `"iteration":3`, `"iteration":4`, 1); got != want {
		t.Errorf("Bytes() =\n%s\nwant only the iteration changed:\n%s", got, want)
	}
	st2, err := loop.ParseState("s.json", []byte(got))
	if err != nil {
		t.Fatalf("the written state does not parse: %v\n%s", err, got)
	}
	if n, _, _ := st2.Int("iteration"); n != 4 {
		t.Errorf("re-read iteration = %d; want 4", n)
	}
}

func TestReadStateMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ceo-loop-state.json")
	st, err := loop.ReadState("", path)
	if !errors.Is(err, loop.ErrNoState) {
		t.Fatalf("ReadState(missing) = %v, %v; want ErrNoState", st, err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("ReadState(missing) error %q; want it to name %s", err, path)
	}
}

func TestReadStateMalformed(t *testing.T) {
	tests := []struct {
		name    string
		content string
		// pos lists the acceptable line:col: the offending character, or
		// the start of the bad token it belongs to.
		pos []string
		msg string
	}{
		{"empty file", "", []string{"1:1"}, "EOF"},
		{"not an object", "[1, 2]\n", []string{"1:1", "1:2"}, "want a JSON object"},
		{"a number", "7\n", []string{"1:1", "1:2"}, "want a JSON object"},
		{"double comma", "{\n  \"active\": true,\n  \"iteration\": 7,,\n  \"x\": 1\n}\n", []string{"3:18"}, "invalid character ','"},
		{"missing comma", "{\n  \"active\": true\n  \"iteration\": 7\n}\n", []string{"3:3"}, "invalid character"},
		{"trailing comma", "{\n  \"active\": true,\n}\n", []string{"3:1"}, "invalid character '}'"},
		{"unterminated", "{\n  \"active\": true,\n  \"iteration\": 7\n", []string{"3:17", "4:1"}, "EOF"},
		{"data after the object", "{\"active\": true}\n{\"x\": 1}\n", []string{"2:1", "2:2"}, "unexpected data after the object"},
		// Errors inside a value: the position must still be where the
		// error is, not where the value starts (json.Decoder's
		// SyntaxError.Offset from Decode does not count the bytes Token
		// consumed).
		{"bad literal at the top level", "{\n  \"active\": tru\n}\n", []string{"2:13", "2:16"}, "invalid character"},
		{"bad literal in a nested object", "{\n  \"active\": true,\n  \"meta\": {\n    \"a\": 1,\n    \"b\": fals\n  }\n}\n", []string{"5:10", "5:14"}, "invalid character"},
		{"bad value in a nested array", "{\"a\": 1,\n\"list\": [1, 2,\n x]}\n", []string{"3:2"}, "invalid character 'x'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeState(t, tt.content)
			st, err := loop.ReadState("", path)
			if err == nil {
				t.Fatalf("ReadState(%q) = %v, nil; want an error", tt.content, st)
			}
			if errors.Is(err, loop.ErrNoState) {
				t.Fatalf("ReadState(%q) = ErrNoState; want a parse error", tt.content)
			}
			re := regexp.MustCompile(`^` + regexp.QuoteMeta(path) + `:(\d+:\d+): `)
			m := re.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("ReadState(%q) error %q; want it to start with %s:line:col: ", tt.content, err, path)
			}
			if !slices.Contains(tt.pos, m[1]) {
				t.Errorf("ReadState(%q) error %q at %s; want the position %s", tt.content, err, m[1], strings.Join(tt.pos, " or "))
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("ReadState(%q) error %q; want it to contain %q", tt.content, err, tt.msg)
			}
		})
	}
}

func TestReadStateCRLFAndBOM(t *testing.T) {
	seed := readFile(t, seedState)
	tests := []struct {
		name    string
		content string
	}{
		{"CRLF", strings.ReplaceAll(seed, "\n", "\r\n")},
		{"BOM", "\xef\xbb\xbf" + seed},
		{"BOM and CRLF", "\xef\xbb\xbf" + strings.ReplaceAll(seed, "\n", "\r\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := loop.ReadState("", writeState(t, tt.content))
			if err != nil {
				t.Fatalf("ReadState: %v", err)
			}
			if got, ok, err := st.Int("iteration"); err != nil || !ok || got != 7 {
				t.Errorf("Int(iteration) = %d, %v, %v; want 7, true, nil", got, ok, err)
			}
			if got, _, err := st.String("trust_level"); err != nil || got != "standard" {
				t.Errorf("String(trust_level) = %q, %v; want standard", got, err)
			}
			// Written back, every byte is kept: the mark, the line ends.
			if err := st.Set("iteration", 8); err != nil {
				t.Fatal(err)
			}
			if got, want := string(st.Bytes()), strings.Replace(tt.content, `"iteration": 7`, `"iteration": 8`, 1); got != want {
				t.Errorf("Bytes() =\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestWrongTypes(t *testing.T) {
	content := `{"iteration": "7", "max_iterations": 7.5, "time_limit_minutes": true, "active": "yes", "started_at": 5, "trust_level": ["standard"], "correct_decisions": -3}`
	path := writeState(t, content)
	st, err := loop.ReadState("", path)
	if err != nil {
		t.Fatalf("ReadState: %v (types are checked when a field is read)", err)
	}
	tests := []struct {
		key  string
		read func(string) error
		want string
	}{
		{"iteration", func(k string) error { _, _, err := st.Int(k); return err }, `iteration is "7", want an integer`},
		{"max_iterations", func(k string) error { _, _, err := st.Int(k); return err }, "max_iterations is 7.5, want an integer"},
		{"time_limit_minutes", func(k string) error { _, _, err := st.Int(k); return err }, "time_limit_minutes is true, want an integer"},
		{"active", func(k string) error { _, _, err := st.Bool(k); return err }, `active is "yes", want true or false`},
		{"started_at", func(k string) error { _, _, err := st.String(k); return err }, "started_at is 5, want a string"},
		{"trust_level", func(k string) error { _, _, err := st.String(k); return err }, `trust_level is ["standard"], want a string`},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			err := tt.read(tt.key)
			if err == nil {
				t.Fatalf("reading %s = nil error; want one", tt.key)
			}
			if got := err.Error(); got != path+": "+tt.want {
				t.Errorf("error = %q; want %q", got, path+": "+tt.want)
			}
		})
	}
	if n, ok, err := st.Int("correct_decisions"); err != nil || !ok || n != -3 {
		t.Errorf("Int(correct_decisions) = %d, %v, %v; want -3, true, nil", n, ok, err)
	}
}
