package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/hook"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
)

// testNow is the clock of every direct Stop test.
var testNow = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

const sentinel = "<promise>ORBIT COMPLETE</promise>"

// fixture is a project on disk for hook.Stop.
type fixture struct {
	tb   testing.TB
	root string
}

// newFixture is a project whose journal is testdata/cmd/journal.jsonl (six
// decisions, 2 of 3 retrograde verdicts CORRECT), whose queue holds seed
// 000's example request, and whose loop is at iteration 5 of 20, started
// ten minutes ago with a 30-minute limit.
func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	fx := &fixture{tb: tb, root: tb.TempDir()}
	if err := os.Mkdir(fx.path(".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	j, err := os.ReadFile(filepath.Join("..", "testdata", "cmd", "journal.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	fx.write(project.DecisionsFile, string(j))
	fx.write(project.PendingFile, oneRequest)
	fx.write(project.StateFile, state(5, 20))
	return fx
}

const oneRequest = `[
  {
    "id": "req-001",
    "submitted_at": "2026-03-08T10:01:00Z",
    "requestor": "forge:builder",
    "category": "architecture",
    "title": "WebSocket vs polling for agent communication",
    "description": "Should we implement WebSocket-based real-time agent communication or keep polling?",
    "impact": "medium",
    "reversible": true,
    "context": "Current polling adds 2-3s latency. WebSocket would require server changes."
  }
]
`

// state is an active loop's state file at iteration it of max, with extra
// fields ("key": value) appended.
func state(it, max int, extra ...string) string {
	s := fmt.Sprintf(`{
  "active": true,
  "iteration": %d,
  "max_iterations": %d,
  "time_limit_minutes": 30,
  "started_at": "2026-03-09T11:50:00Z",
  "trust_level": "standard",
  "depth_escalation_counter": 0,
  "correct_decisions": 2,
  "incorrect_decisions": 1,
  "completion_sentinel": "<promise>ORBIT COMPLETE</promise>",
  "budget_tokens": 0,
  "tokens_used": 0,
  "last_stop_decisions": 6`, it, max)
	for _, e := range extra {
		s += ",\n  " + e
	}
	return s + "\n}\n"
}

func (fx *fixture) path(rel string) string { return filepath.Join(fx.root, filepath.FromSlash(rel)) }

func (fx *fixture) write(rel, content string) {
	fx.tb.Helper()
	if err := os.WriteFile(fx.path(rel), []byte(content), 0o644); err != nil {
		fx.tb.Fatal(err)
	}
}

func (fx *fixture) read(rel string) string {
	fx.tb.Helper()
	b, err := os.ReadFile(fx.path(rel))
	if err != nil {
		fx.tb.Fatal(err)
	}
	return string(b)
}

func (fx *fixture) exists(rel string) bool {
	_, err := os.Stat(fx.path(rel))
	return err == nil
}

// orbit reads the state file as the loop's state.
func (fx *fixture) orbit() ceo.LoopInfo {
	fx.tb.Helper()
	o, _, err := ceo.ReadLoopState("", fx.path(project.StateFile))
	if err != nil {
		fx.tb.Fatal(err)
	}
	return o
}

// env is a hook environment at now: pid 4242 on host testhost, the index
// opened and synced the way the CLI does it.
func (fx *fixture) env(now time.Time) hook.Env {
	tb := fx.tb
	return hook.Env{
		Now: func() time.Time { return now }, PID: 4242, Host: "testhost",
		Getwd: func() (string, error) { return fx.root, nil },
		Open: func(ctx context.Context, p project.Project) (*journal.Index, error) {
			store, err := db.Open(ctx, p.DB, db.Options{})
			if err != nil {
				return nil, err
			}
			tb.Cleanup(func() { store.Close() })
			ix := journal.NewIndex(store, p)
			ix.Now = func() time.Time { return now }
			_, err = ix.Sync(ctx, journal.SyncOptions{})
			return ix, err
		},
	}
}

// stop runs hook.Stop at now and checks what every run must hold: the
// output is nothing or one JSON object and a newline.
func (fx *fixture) stop(now time.Time, in hook.Input) hook.Result {
	fx.tb.Helper()
	if in.CWD == "" {
		in.CWD = fx.root
	}
	if in.HookEventName == "" {
		in.HookEventName = "Stop"
	}
	r := hook.Stop(context.Background(), fx.env(now), in)
	checkPrinted(fx.tb, r.Output.Bytes())
	return r
}

// checkPrinted fails unless out is empty or exactly one JSON object of
// the hook's fields followed by one newline.
func checkPrinted(tb testing.TB, out []byte) {
	tb.Helper()
	if len(out) == 0 {
		return
	}
	if !bytes.HasSuffix(out, []byte("}\n")) || bytes.Count(out, []byte("\n")) != 1 {
		tb.Fatalf("hook printed %q; want one JSON object on one line", out)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var o hook.Output
	if err := dec.Decode(&o); err != nil {
		tb.Fatalf("hook printed %q: %v", out, err)
	}
	if dec.More() {
		tb.Fatalf("hook printed more than one JSON value: %q", out)
	}
	if n := len([]rune(string(out))); n > hook.MaxOutput {
		tb.Fatalf("hook printed %d characters; Claude Code's cap is %d", n, hook.MaxOutput)
	}
}

func TestStopNoProject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fx := &fixture{tb: t, root: dir}
	r := fx.stop(testNow, hook.Input{SessionID: "s1", CWD: dir})
	if r.Output != (hook.Output{}) || r.Log != "" || r.Project != "" || r.Err != nil {
		t.Errorf("Stop outside any project = %+v; want nothing at all", r)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Stop outside any project wrote %v", entries)
	}
}

// TestStopLockRecordsThisProcess: the lock names the session, the pid and
// host from the environment, and its heartbeat is refreshed by each stop.
func TestStopLockRecordsThisProcess(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "one"})
	later := testNow.Add(2 * time.Minute)
	fx.stop(later, hook.Input{SessionID: "s1", StopHookActive: true, LastAssistantMessage: "two"})
	lk, err := orbitloop.ReadLock(fx.root)
	if err != nil || lk == nil {
		t.Fatalf("ReadLock = %v, %v; want the lock", lk, err)
	}
	want := orbitloop.Lock{Owner: "session:s1", PID: 4242, Host: "testhost", AcquiredAt: testNow, HeartbeatAt: later}
	if lk.Owner != want.Owner || lk.PID != want.PID || lk.Host != want.Host || !lk.AcquiredAt.Equal(want.AcquiredAt) || !lk.HeartbeatAt.Equal(want.HeartbeatAt) {
		t.Errorf("lock = %+v; want %+v", *lk, want)
	}
}

func TestStopLockConflict(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	lock := `{"owner":"session:other","pid":999,"host":"otherhost","acquired_at":"2026-03-09T11:50:00Z","heartbeat_at":"2026-03-09T11:58:00Z"}`
	fx.write(orbitloop.LockFile, lock)
	before := fx.read(project.StateFile)
	msg := "orbit: this ORBIT loop belongs to session:other (pid 999 on otherhost, last heartbeat 2m0s ago); this session is not driving it. Stop here, or take the loop over with `orbit loop stop` then `orbit loop start`."

	r := fx.stop(testNow, hook.Input{SessionID: "s2", LastAssistantMessage: "hi"})
	if want := (hook.Output{Decision: "block", Reason: msg}); r.Output != want {
		t.Errorf("first stop = %+v; want %+v", r.Output, want)
	}
	r = fx.stop(testNow, hook.Input{SessionID: "s2", StopHookActive: true, LastAssistantMessage: "ok"})
	if want := (hook.Output{SystemMessage: msg}); r.Output != want {
		t.Errorf("second stop = %+v; want %+v", r.Output, want)
	}
	if got := fx.read(project.StateFile); got != before {
		t.Errorf("state after a lock conflict:\n%s\nwant it unchanged:\n%s", got, before)
	}
	lk, _ := orbitloop.ReadLock(fx.root)
	if lk == nil || lk.Owner != "session:other" {
		t.Errorf("lock after a conflict = %+v; want still session:other's", lk)
	}
}

func TestStopStaleLockTakenOver(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.write(orbitloop.LockFile, `{"owner":"session:old","pid":999,"host":"otherhost","acquired_at":"2026-03-09T11:00:00Z","heartbeat_at":"2026-03-09T11:54:59Z"}`)
	r := fx.stop(testNow, hook.Input{SessionID: "s2", LastAssistantMessage: "hi"})
	if r.Output.Decision != "block" || !strings.HasPrefix(r.Output.Reason, "ORBIT loop — iteration 6 of 20.") {
		t.Errorf("stop with a stale lock = %+v; want the next iteration", r.Output)
	}
	if want := "orbit: took over the loop from session:old, whose heartbeat was older than 5m0s"; r.Output.SystemMessage != want {
		t.Errorf("systemMessage = %q; want %q", r.Output.SystemMessage, want)
	}
	if lk, _ := orbitloop.ReadLock(fx.root); lk == nil || lk.Owner != "session:s2" {
		t.Errorf("lock = %+v; want session:s2's", lk)
	}
	if it := fx.orbit().Iteration; it != 6 {
		t.Errorf("iteration = %d; want 6", it)
	}
}

// TestStopSameTurnTwice: Claude Code may run the hook twice for one turn
// (stop_hook_active and the same last message). The second run must answer
// as the first did: nothing counted twice.
func TestStopSameTurnTwice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(fx *fixture)
		want  int64 // iteration after both stops
	}{
		{name: "mid-loop", setup: func(fx *fixture) {}, want: 6},
		// BUG: the first stop moved the iteration to the cap; the second
		// sees iteration >= max_iterations and tears the loop down,
		// spending the last iteration on the repeat.
		{name: "last iteration", setup: func(fx *fixture) { fx.write(project.StateFile, state(19, 20)) }, want: 20},
		// BUG: the turn recorded a decision and emptied the queue; the
		// first stop goes on, the second finds no decision "since the last
		// stop" (its own) and tears down with no-active-work.
		{name: "turn that emptied the queue", setup: func(fx *fixture) {
			fx.write(project.PendingFile, "[]\n")
			f, err := os.OpenFile(fx.path(project.DecisionsFile), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(f, `{"id":"iter-5-1","iteration":5,"ts":"2026-03-09T11:59:00Z","tier":"auto_approve","depth":"trivial","category":"quality","input":"Fix the README typo","decision":"APPROVED","reason":"Docs.","next_action":"Commit.","verification":"PENDING","retrograde":{"previous_id":null,"outcome":"N/A"},"confidence":0.99}`)
			f.Close()
		}, want: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			tt.setup(fx)
			// A turn is identified by its transcript's size and its last
			// message: a retried hook sees both unchanged.
			in := hook.Input{SessionID: "s1", StopHookActive: true, LastAssistantMessage: "Iteration done: 2 decisions recorded.",
				TranscriptPath: fx.transcript(`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"Iteration done."}]}}`)}
			first := fx.stop(testNow, in)
			if first.Output.Decision != "block" {
				t.Fatalf("first stop = %+v; want a block", first.Output)
			}
			second := fx.stop(testNow, in)
			if second.Output != first.Output {
				t.Errorf("second stop of the same turn = %+v; want the first's answer %+v", second.Output, first.Output)
			}
			o := fx.orbit()
			if o.Iteration != tt.want || !o.Active {
				t.Errorf("after the same turn stopped twice: iteration %d, active %t; want %d, true", o.Iteration, o.Active, tt.want)
			}
			if !strings.Contains(second.Log, " same_turn=true ") {
				t.Errorf("second stop logged %q; want same_turn=true", second.Log)
			}
		})
	}
}

// TestStopCountsEveryTurn documents a bug: a turn is told from its repeat
// by the digest of last_assistant_message alone. Claude Code versions
// without last_assistant_message (the hooks reference's older Stop input)
// send stop_hook_active true on every stop after the first block, so every
// stop looks like "the same turn", the iteration never advances past 2 and
// max_iterations never stops the loop. The same happens when the agent
// ends each iteration with the same short message.
func TestStopCountsEveryTurn(t *testing.T) {
	t.Parallel()
	for _, last := range []string{"", "Iteration complete."} {
		t.Run(fmt.Sprintf("last_assistant_message %q", last), func(t *testing.T) {
			fx := newFixture(t)
			// The journal's decisions go up to iteration 3.
			fx.write(project.StateFile, state(3, 20))
			var got []int64
			for i := range 4 {
				fx.stop(testNow.Add(time.Duration(i)*time.Minute), hook.Input{SessionID: "s1", StopHookActive: i > 0, LastAssistantMessage: last})
				got = append(got, fx.orbit().Iteration)
			}
			if want := []int64{4, 5, 6, 7}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("iterations after 4 turns = %v; want %v", got, want)
			}
		})
	}
}

// transcript lines as Claude Code writes them (one JSON object per line).
func userLine(text string) string {
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":%q},"uuid":"u-%d","timestamp":"2026-03-09T11:59:00.000Z"}`, text, len(text))
}

func toolResultLine(text string) string {
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":%q}]},"uuid":"t-%d"}`, text, len(text))
}

func assistantLine(msgID, text string, in, cacheCreate, cacheRead, out int) string {
	return fmt.Sprintf(`{"parentUuid":"u","type":"assistant","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%q}],"stop_reason":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,"service_tier":"standard"}},"requestId":"req_%s","uuid":"a-%s","timestamp":"2026-03-09T11:59:30.000Z"}`,
		msgID, text, in, cacheCreate, cacheRead, out, msgID, msgID)
}

func (fx *fixture) transcript(lines ...string) string {
	fx.tb.Helper()
	p := filepath.Join(fx.tb.TempDir(), "00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		fx.tb.Fatal(err)
	}
	return p
}

// TestStopSentinelInTranscript: with no last_assistant_message, the
// sentinel counts only when the agent wrote it.
func TestStopSentinelInTranscript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		lines []string
		done  bool
	}{
		{name: "in the last assistant message", done: true, lines: []string{
			userLine("ORBIT loop — iteration 5 of 20."),
			assistantLine("msg_1", "Queue empty, nothing to scan.\n"+sentinel, 3, 10, 100, 20),
		}},
		{name: "before the last tool result of the turn", done: true, lines: []string{
			userLine("ORBIT loop — iteration 5 of 20."),
			assistantLine("msg_1", "All done. "+sentinel, 3, 10, 100, 20),
			toolResultLine("ok"),
		}},
		{name: "only in the user's prompt", lines: []string{
			userLine("When the queue is empty write " + sentinel),
			assistantLine("msg_1", "Working on req-001.", 3, 10, 100, 20),
		}},
		{name: "only in a tool result", lines: []string{
			userLine("ORBIT loop — iteration 5 of 20."),
			toolResultLine("grep found: " + sentinel),
			assistantLine("msg_1", "Working on req-001.", 3, 10, 100, 20),
		}},
		// BUG: every assistant line in the last 64 KiB is searched, not the
		// current turn: the previous loop's final message (the loop was
		// restarted in the same session) ends the new loop at its first
		// stop.
		{name: "only in an earlier turn", lines: []string{
			assistantLine("msg_0", "Queue empty. "+sentinel, 3, 10, 100, 20),
			userLine("New requests are queued; run the ORBIT loop again."),
			assistantLine("msg_1", "Working on req-001.", 3, 10, 100, 20),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			r := fx.stop(testNow, hook.Input{SessionID: "s1", StopHookActive: true, TranscriptPath: fx.transcript(tt.lines...)})
			o := fx.orbit()
			if tt.done {
				want := "orbit: ORBIT loop finished after iteration 5: done (the completion sentinel was written). Session summary in .claude/ceo-loop-progress.md."
				if r.Output != (hook.Output{SystemMessage: want}) || o.Active || o.StopReason != "done" {
					t.Errorf("Stop = %+v, state active %t reason %q; want the loop done", r.Output, o.Active, o.StopReason)
				}
				return
			}
			if r.Output.Decision != "block" || !o.Active || o.Iteration != 6 {
				t.Errorf("Stop = %+v, state active %t iteration %d; want the loop to go on at 6", r.Output, o.Active, o.Iteration)
			}
		})
	}
}

// TestStopTokenBudget counts the tokens of the session's transcript.
func TestStopTokenBudget(t *testing.T) {
	t.Parallel()
	t.Run("under budget", func(t *testing.T) {
		fx := newFixture(t)
		fx.write(project.StateFile, strings.Replace(state(5, 20), `"budget_tokens": 0`, `"budget_tokens": 1000`, 1))
		tr := fx.transcript(userLine("go"), assistantLine("msg_1", "a", 10, 100, 5000, 90), assistantLine("msg_2", "b", 5, 0, 5100, 95))
		r := fx.stop(testNow, hook.Input{SessionID: "s1", TranscriptPath: tr, LastAssistantMessage: "b"})
		if !strings.Contains(r.Output.Reason, "\nBudget: 300 of 1000 tokens used (30%), counted from the session transcript.\n") {
			t.Errorf("reason = %q; want the budget line with 300 of 1000", r.Output.Reason)
		}
		if o := fx.orbit(); o.TokensUsed != 300 || !o.Active {
			t.Errorf("tokens_used = %d, active %t; want 300, true", o.TokensUsed, o.Active)
		}
		// The next stop counts only what was appended since.
		f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
		fmt.Fprintln(f, assistantLine("msg_3", "c", 10, 0, 5200, 90))
		f.Close()
		fx.stop(testNow.Add(time.Minute), hook.Input{SessionID: "s1", StopHookActive: true, TranscriptPath: tr, LastAssistantMessage: "c"})
		if o := fx.orbit(); o.TokensUsed != 400 {
			t.Errorf("tokens_used after one more message = %d; want 400", o.TokensUsed)
		}
	})
	t.Run("spent", func(t *testing.T) {
		fx := newFixture(t)
		fx.write(project.StateFile, strings.Replace(state(5, 20), `"budget_tokens": 0`, `"budget_tokens": 1000`, 1))
		tr := fx.transcript(userLine("go"), assistantLine("msg_1", "a", 10, 900, 5000, 100), assistantLine("msg_2", "b", 5, 0, 5100, 95))
		r := fx.stop(testNow, hook.Input{SessionID: "s1", TranscriptPath: tr, LastAssistantMessage: "b"})
		want := "orbit: ORBIT loop finished after iteration 5: budget-exhausted (1110 of 1000 tokens used). Session summary in .claude/ceo-loop-progress.md."
		if r.Output != (hook.Output{SystemMessage: want}) {
			t.Errorf("Stop = %+v; want %q", r.Output, want)
		}
		if o := fx.orbit(); o.Active || o.StopReason != "budget-exhausted" || o.TokensUsed != 1110 {
			t.Errorf("state: active %t, stop_reason %q, tokens_used %d; want false, budget-exhausted, 1110", o.Active, o.StopReason, o.TokensUsed)
		}
	})
	// BUG: Claude Code writes one transcript line per content block of a
	// response (thinking, text, tool_use), each repeating the message's id
	// and its whole usage; countTokens adds every line, so a response of
	// three blocks is counted three times.
	t.Run("one response split over content blocks", func(t *testing.T) {
		fx := newFixture(t)
		fx.write(project.StateFile, strings.Replace(state(5, 20), `"budget_tokens": 0`, `"budget_tokens": 1000`, 1))
		tr := fx.transcript(userLine("go"),
			assistantLine("msg_1", "thinking…", 10, 100, 5000, 90),
			assistantLine("msg_1", "text", 10, 100, 5000, 90),
			assistantLine("msg_1", "tool_use", 10, 100, 5000, 90))
		fx.stop(testNow, hook.Input{SessionID: "s1", TranscriptPath: tr, LastAssistantMessage: "text"})
		if o := fx.orbit(); o.TokensUsed != 200 {
			t.Errorf("tokens_used = %d for one response of 200 tokens written as 3 content-block lines; want 200", o.TokensUsed)
		}
	})
}

// TestStopOutputCap: a 200 KB progress file and 500 queued requests still
// print at most 10,000 characters; the progress excerpt goes first, and the
// header, the queue line and the accuracy line stay.
func TestStopOutputCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		titleLen int
	}{
		{name: "short titles", titleLen: 40},
		{name: "titles of 4000 characters", titleLen: 4000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			var prog strings.Builder
			for i := range 500 {
				fmt.Fprintf(&prog, "%03d %s\n", i, strings.Repeat("progress ", 44))
			}
			if prog.Len() < 200_000 {
				t.Fatalf("progress file of %d bytes; want 200 KB", prog.Len())
			}
			fx.write(project.ProgressFile, prog.String())
			var q []map[string]any
			for i := range 500 {
				title := fmt.Sprintf("Request %03d ", i+1)
				title += strings.Repeat("x", tt.titleLen-len(title))
				q = append(q, map[string]any{"id": fmt.Sprintf("req-%03d", i+1), "category": "quality", "title": title, "impact": "low", "reversible": true})
			}
			data, _ := json.Marshal(q)
			fx.write(project.PendingFile, string(data))

			r := fx.stop(testNow, hook.Input{SessionID: "s1", LastAssistantMessage: "next"})
			printed := r.Output.Bytes()
			if n := len([]rune(string(printed))); n > hook.MaxOutput {
				t.Fatalf("printed %d characters; want at most %d", n, hook.MaxOutput)
			}
			reason := r.Output.Reason
			for _, want := range []string{
				"ORBIT loop — iteration 6 of 20. Run the next CEO-LOOP iteration: OBSERVE → REASON → BUILD → INSPECT → TURN.\nTime: 10 of 30 minutes used.\n",
				"\nQueue: 500 pending; next depth target: trivial.",
				"\nAccuracy: 2/3 = 66.7% | last 20: 2/3 = 66.7% | last 10: 2/3 = 66.7% | trust level: standard\n",
			} {
				if !strings.Contains(reason, want) {
					t.Errorf("reason lacks %q:\n%s", want, reason)
				}
			}
			kept := len(regexp.MustCompile(`(?m)^\d{3} progress`).FindAllString(reason, -1))
			if kept >= 30 {
				t.Errorf("reason holds %d progress lines; want the 30-line excerpt cut to fit", kept)
			}
			t.Logf("printed %d characters, %d progress lines kept", len([]rune(string(printed))), kept)
			// The progress excerpt is cut before the queue's titles are.
			if strings.Contains(reason, "\n000 progress") && !strings.Contains(reason, "\n3. Request 003") {
				t.Errorf("progress kept while queue titles were cut:\n%s", reason)
			}
			if tt.titleLen == 40 && !strings.Contains(reason, "\n3. Request 003 ") {
				t.Errorf("short titles cut:\n%s", reason)
			}
		})
	}
}

// TestStopOutputCapWithHugeNote documents a bug: when the systemMessage
// alone is over MaxOutput (here a token-count note quoting a 5,000-byte
// transcript path twice), fit cuts the reason to "…" and then loops
// forever (r[:len(r)*9/10] of one rune is empty, "…" is added back), so the
// hook never answers; it also ignores SIGTERM. Run in a child process that
// is killed after 5 seconds.
func TestStopOutputCapWithHugeNote(t *testing.T) {
	t.Parallel()
	if os.Getenv("ORBIT_TEST_HUGE_NOTE_CHILD") == "1" {
		fx := newFixture(t)
		fx.write(project.StateFile, strings.Replace(state(5, 20), `"budget_tokens": 0`, `"budget_tokens": 1000`, 1))
		path := "/" + strings.Repeat("x", 5000) + ".jsonl"
		fx.stop(testNow, hook.Input{SessionID: "s1", TranscriptPath: path, LastAssistantMessage: "next"})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStopOutputCapWithHugeNote$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ORBIT_TEST_HUGE_NOTE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("hook.Stop with a systemMessage over %d characters did not return within 5s (killed)", hook.MaxOutput)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
