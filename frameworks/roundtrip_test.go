package frameworks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/frameworks"
	"github.com/orbit-loop/orbit/internal/looptest"
	"github.com/orbit-loop/orbit/internal/tooltest"
	"github.com/orbit-loop/orbit/jsonedit"
	"github.com/orbit-loop/orbit/loop"
)

// The round trips (issue 18): every example file of ../shared/examples
// (copied to testdata/frameworks/examples) is put where its framework keeps
// it in a fresh project; orbit stops, pauses and resumes it; then
// testdata/frameworks/seedcheck.js, written from the seed documents, reads
// the result the way the framework does and must accept it, and every byte
// outside the fields the control changed must be as it was.

var examplesDir = filepath.Join("..", "testdata", "frameworks", "examples")

// example reads an example file.
func example(tb testing.TB, framework, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(examplesDir, framework, name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// examples lists a framework's example files (not its README).
func examples(tb testing.TB, framework string) []string {
	tb.Helper()
	entries, err := os.ReadDir(filepath.Join(examplesDir, framework))
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != "README.md" {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		tb.Fatalf("no examples of %s", framework)
	}
	return names
}

// newProject makes a project holding files (path under the root -> content).
func newProject(tb testing.TB, files map[string][]byte) string {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "project")
	for rel, data := range files {
		looptest.Write(tb, filepath.Join(root, filepath.FromSlash(rel)), string(data))
	}
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return root
}

// snapshot is every file of the project outside orbit's own .claude/.
func snapshot(tb testing.TB, root string) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".claude" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// seedFacts is what seedcheck.js says of a loop.
type seedFacts struct {
	Errors []string       `json:"errors"`
	Facts  map[string]any `json:"facts"`
}

func seedCheck(tb testing.TB, framework, root, id string) seedFacts {
	tb.Helper()
	node := tooltest.Require(tb, "node")[0]
	script, _ := filepath.Abs(filepath.Join("..", "testdata", "frameworks", "seedcheck.js"))
	out, err := exec.Command(node, script, framework, root, id, looptest.Now.Format(time.RFC3339)).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		tb.Fatalf("seedcheck %s %s: %v\n%s", framework, id, err, ee.Stderr)
	}
	if err != nil {
		tb.Fatal(err)
	}
	var c seedFacts
	if err := json.Unmarshal(out, &c); err != nil {
		tb.Fatalf("seedcheck output %s: %v", out, err)
	}
	if len(c.Errors) > 0 {
		tb.Errorf("%s %s: the framework would not accept the result:\n  %s", framework, id, strings.Join(c.Errors, "\n  "))
	}
	return c
}

// fact renders a fact for comparison ("<nil>" when absent).
func (c seedFacts) fact(name string) string {
	v, ok := c.Facts[name]
	if !ok || v == nil {
		return "<nil>"
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (c seedFacts) want(tb testing.TB, what string, facts map[string]string) {
	tb.Helper()
	for k, want := range facts {
		if got := c.fact(k); got != want {
			tb.Errorf("%s: the framework reads %s = %s; want %s", what, k, got, want)
		}
	}
}

// revert returns data with the values at paths replaced by those of orig
// (or cut out when orig has none): what remains must be orig's bytes.
func revert(tb testing.TB, data, orig []byte, paths [][]string) (a, b []byte) {
	tb.Helper()
	cut := func(doc []byte, path []string) ([]byte, bool) {
		root, err := jsonedit.Parse(doc)
		if err != nil {
			tb.Fatalf("not JSON: %v\n%s", err, doc)
		}
		obj := root
		for _, k := range path[:len(path)-1] {
			if obj = obj.Get(k); obj == nil {
				return doc, false
			}
		}
		for i, m := range obj.Members {
			if m.Key != path[len(path)-1] {
				continue
			}
			switch {
			case len(obj.Members) == 1:
				return slices.Concat(doc[:obj.Start], []byte("{}"), doc[obj.End:]), true
			case i > 0:
				return slices.Concat(doc[:obj.Members[i-1].Val.End], doc[m.Val.End:]), true
			default:
				return slices.Concat(doc[:m.KeyStart], doc[obj.Members[1].KeyStart:]), true
			}
		}
		return doc, false
	}
	value := func(doc []byte, path []string) *jsonedit.Node {
		root, err := jsonedit.Parse(doc)
		if err != nil {
			tb.Fatalf("not JSON: %v\n%s", err, doc)
		}
		n := root
		for _, k := range path {
			if n = n.Get(k); n == nil {
				return nil
			}
		}
		return n
	}
	a, b = data, orig
	for _, p := range paths {
		na, nb := value(a, p), value(b, p)
		switch {
		case na != nil && nb != nil:
			a = slices.Concat(a[:na.Start], b[nb.Start:nb.End], a[na.End:])
		case na != nil:
			a, _ = cut(a, p)
		case nb != nil:
			b, _ = cut(b, p)
		}
	}
	return a, b
}

// onlyFields fails unless after differs from before in the values at
// paths only.
func onlyFields(tb testing.TB, file string, before, after []byte, paths ...string) {
	tb.Helper()
	var ps [][]string
	for _, p := range paths {
		ps = append(ps, strings.Split(p, "."))
	}
	a, b := revert(tb, after, before, ps)
	if !bytes.Equal(a, b) {
		tb.Errorf("%s: bytes outside %s changed:\nbefore:\n%s\nafter:\n%s", file, strings.Join(paths, ", "), before, after)
	}
}

// unchanged fails unless the snapshot holds the same files and bytes,
// except the ones listed (checked by the caller).
func unchanged(tb testing.TB, before, after map[string][]byte, except ...string) {
	tb.Helper()
	for name, data := range before {
		if slices.Contains(except, name) {
			continue
		}
		if got, ok := after[name]; !ok {
			tb.Errorf("%s is gone", name)
		} else if !bytes.Equal(got, data) {
			tb.Errorf("%s changed:\n%s\nwas\n%s", name, got, data)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok && !slices.Contains(except, name) {
			tb.Errorf("%s appeared (orbit leaves nothing beside the user's files)", name)
		}
	}
}

// controls holds one Control per project (opening an index costs more
// than the controls).
var controls sync.Map

// control applies one control to the loop key of the project at root.
func control(tb testing.TB, root, key, kind, status, reason string) (loop.Event, error) {
	tb.Helper()
	c, ok := controls.Load(root)
	if !ok {
		c, _ = newControl(tb, root)
		controls.Store(root, c)
		tb.Cleanup(func() { controls.Delete(root) })
	}
	return c.(*frameworks.Control).Apply(context.Background(), looptest.ViewOf(tb, root, key), kind, status, reason)
}

func mustControl(tb testing.TB, root, key, kind, status, reason string) loop.Event {
	tb.Helper()
	e, err := control(tb, root, key, kind, status, reason)
	if err != nil {
		tb.Fatalf("%s %s: %v", kind, key, err)
	}
	return e
}

// refused applies a control that must not apply, and checks that nothing
// changed.
func refused(tb testing.TB, root, key, kind, status string, want error) {
	tb.Helper()
	before := snapshot(tb, root)
	if _, err := control(tb, root, key, kind, status, "why"); !errors.Is(err, want) {
		tb.Errorf("%s %s: %v; want %v", kind, key, err, want)
	}
	unchanged(tb, before, snapshot(tb, root))
}

// TestRoundTripCitadel: seed 001's records and legacy daemon.
func TestRoundTripCitadel(t *testing.T) {
	for _, name := range examples(t, "citadel") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data := example(t, "citadel", name)
			switch {
			case name == "doc-example.daemon.json":
				citadelDaemon(t, data, nil)
			case name == "doc-example.daemon-log-entry.json":
				// A tick's log entry: in the daemon's log, it survives a stop
				// byte for byte.
				d := example(t, "citadel", "doc-example.daemon.json")
				entry := strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", "\n    ")
				citadelDaemon(t, bytes.Replace(d, []byte(`"log": []`), []byte("\"log\": [\n    "+entry+"\n  ]"), 1), data)
			default:
				citadelRecord(t, name, data)
			}
		})
	}
}

func citadelDaemon(t *testing.T, data, entry []byte) {
	root := newProject(t, map[string][]byte{".planning/daemon.json": data})
	c := seedCheck(t, "citadel", root, "daemon")
	c.want(t, "the daemon as found", map[string]string{"status": "running"})
	before := snapshot(t, root)
	refused(t, root, "citadel:daemon-{slug}", loop.EventPause, "", frameworks.ErrNoControl)
	e := mustControl(t, root, "citadel:daemon-{slug}", loop.EventStop, "budget-exhausted", "spent")
	after := snapshot(t, root)
	onlyFields(t, "daemon.json", before[".planning/daemon.json"], after[".planning/daemon.json"], "status", "stoppedAt", "stopReason")
	unchanged(t, before, after, ".planning/daemon.json")
	c = seedCheck(t, "citadel", root, "daemon")
	c.want(t, "after the stop", map[string]string{"status": "stopped", "stopReason": "budget-exhausted"})
	if entry != nil && !bytes.Contains(after[".planning/daemon.json"], bytes.ReplaceAll(bytes.TrimSpace(entry), []byte("\n"), []byte("\n    "))) {
		t.Errorf("the log entry changed:\n%s", after[".planning/daemon.json"])
	}
	if v := looptest.ViewOf(t, root, "citadel:daemon-{slug}"); v.Status != "budget-exhausted" || e.Status != "budget-exhausted" {
		t.Errorf("orbit reads the stopped daemon as %s (event %s); want budget-exhausted", v.Status, e.Status)
	}
}

func citadelRecord(t *testing.T, name string, data []byte) {
	id := strings.TrimSuffix(name, ".json")
	rel := ".planning/loops/" + name
	key := "citadel:" + id
	root := newProject(t, map[string][]byte{rel: data})
	c := seedCheck(t, "citadel", root, id)
	if status := c.fact("status"); status != "planned" {
		// A record that has stopped: every control leaves it as it is.
		refused(t, root, key, loop.EventStop, "stopped", frameworks.ErrAlreadyStopped)
		refused(t, root, key, loop.EventPause, "", frameworks.ErrWrongState)
		refused(t, root, key, loop.EventResume, "", frameworks.ErrWrongState)
		return
	}
	step := func(kind, status, reason string, fields []string, facts map[string]string) {
		t.Helper()
		before := snapshot(t, root)
		e := mustControl(t, root, key, kind, status, reason)
		after := snapshot(t, root)
		onlyFields(t, rel, before[rel], after[rel], fields...)
		unchanged(t, before, after, rel)
		seedCheck(t, "citadel", root, id).want(t, kind+" "+status, facts)
		if len(e.Wrote) != 1 || !strings.HasPrefix(e.Wrote[0], rel+": status") {
			t.Errorf("%s: wrote %q", kind, e.Wrote)
		}
	}
	step(loop.EventPause, "", "", []string{"status", "updatedAt"}, map[string]string{"status": "paused", "stopReason": "<nil>"})
	step(loop.EventResume, "", "", []string{"status", "updatedAt"}, map[string]string{"status": "running"})
	// A stop for a person's review keeps the word in stopReason and the
	// words in a note; a resume clears the stop (issue 18), the note stays.
	step(loop.EventStop, "needs-human-review", "check the fix on staging", []string{"status", "updatedAt", "stoppedAt", "stopReason", "notes"},
		map[string]string{"status": "needs-human-review", "stopReason": "needs-human-review", "notes": `["check the fix on staging"]`})
	step(loop.EventResume, "", "", []string{"status", "updatedAt", "stoppedAt", "stopReason"},
		map[string]string{"status": "running", "stopReason": "<nil>", "stoppedAt": "<nil>", "notes": `["check the fix on staging"]`})
	if v := looptest.ViewOf(t, root, key); len(v.Warnings) != 0 {
		t.Errorf("orbit flags its own resumed record: %q", v.Warnings)
	}
	step(loop.EventStop, "stopped", "", []string{"status", "updatedAt", "stoppedAt", "stopReason"}, map[string]string{"status": "stopped", "stopReason": "stopped"})
}

// TestRoundTripCCW: seed 002's loop state files, and the v1 task a loop
// refers to.
func TestRoundTripCCW(t *testing.T) {
	for _, name := range examples(t, "ccw") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data := example(t, "ccw", name)
			var s struct {
				LoopID string `json:"loop_id"`
				ID     string `json:"id"`
			}
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			if s.LoopID == "" {
				ccwV1(t, s.ID, data)
				return
			}
			for _, stop := range []string{"budget-exhausted", "done"} {
				ccwLoop(t, s.LoopID, data, stop)
			}
		})
	}
}

func ccwLoop(t *testing.T, id string, data []byte, stopWord string) {
	rel := frameworks.CCWDir + "/" + id + ".json"
	key := "ccw:" + id
	root := newProject(t, map[string][]byte{rel: data})
	c := seedCheck(t, "ccw", root, id)
	step := func(kind, status, reason string, fields []string, facts map[string]string) loop.Event {
		t.Helper()
		before := snapshot(t, root)
		e := mustControl(t, root, key, kind, status, reason)
		after := snapshot(t, root)
		onlyFields(t, rel, before[rel], after[rel], fields...)
		unchanged(t, before, after, rel)
		seedCheck(t, "ccw", root, id).want(t, kind+" "+status, facts)
		if want := rel + ": " + strings.Join(fields, ", "); len(e.Wrote) != 1 || e.Wrote[0] != want {
			t.Errorf("%s %s: says it wrote %q; it wrote %s", kind, status, e.Wrote, want)
		}
		return e
	}
	if c.fact("status") == "running" {
		step(loop.EventPause, "", "", []string{"status", "updated_at"}, map[string]string{"status": "paused", "signal": "exit gracefully, wait for resume"})
		e := step(loop.EventResume, "", "", []string{"status", "updated_at"}, map[string]string{"status": "running", "signal": "continue", "next": "DEVELOP"})
		// The skill exited on the pause: the resume says what continues it.
		if e.Next != "/ccw-loop --loop-id="+id+" --auto" {
			t.Errorf("resume: next %q; want the skill's command", e.Next)
		}
	} else {
		refused(t, root, key, loop.EventPause, "", frameworks.ErrWrongState)
		refused(t, root, key, loop.EventResume, "", frameworks.ErrWrongState)
	}
	if stopWord == "done" {
		step(loop.EventStop, "done", "", []string{"status", "completed_at", "updated_at"},
			map[string]string{"status": "completed", "signal": "stop", "next": "<nil>", "failure_reason": "<nil>"})
	} else {
		step(loop.EventStop, stopWord, "tokens spent", []string{"status", "failure_reason", "completed_at", "updated_at"},
			map[string]string{"status": "failed", "signal": "terminate", "next": "<nil>", "failure_reason": stopWord + ": tokens spent"})
	}
	refused(t, root, key, loop.EventStop, "stopped", frameworks.ErrAlreadyStopped)
}

// ccwV1 runs a v1 loop (a task with loop_control, and the loop state the
// dashboard's v1 API keeps for it): the task is read, never written.
func ccwV1(t *testing.T, taskID string, task []byte) {
	id := "loop-" + taskID + "-20260122120000"
	rel := frameworks.CCWDir + "/" + id + ".json"
	state := fmt.Sprintf("{\n  \"loop_id\": %q,\n  \"task_id\": %q,\n  \"status\": \"running\",\n  \"current_iteration\": 1,\n  \"max_iterations\": 3,\n  \"created_at\": \"2026-01-22T12:00:00Z\",\n  \"updated_at\": \"2026-01-22T12:00:00Z\"\n}\n", id, taskID)
	root := newProject(t, map[string][]byte{rel: []byte(state), ".task/" + taskID + ".json": task})
	v := looptest.ViewOf(t, root, "ccw:"+id)
	if v.Title != "Test Task "+taskID || !slices.Contains(v.Files, ".task/"+taskID+".json") {
		t.Errorf("the v1 task is not read: title %q, files %q", v.Title, v.Files)
	}
	before := snapshot(t, root)
	mustControl(t, root, "ccw:"+id, loop.EventPause, "", "")
	mustControl(t, root, "ccw:"+id, loop.EventResume, "", "")
	mustControl(t, root, "ccw:"+id, loop.EventStop, "stopped", "enough")
	after := snapshot(t, root)
	onlyFields(t, rel, before[rel], after[rel], "status", "updated_at", "failure_reason", "completed_at")
	unchanged(t, before, after, rel)
	seedCheck(t, "ccw", root, id).want(t, "v1 after stop", map[string]string{"status": "failed", "signal": "terminate"})
}

// TestRoundTripCavekit: seed 003's .cavekit/ as two real projects left it,
// and the iteration log of Cavekit's own repository.
func TestRoundTripCavekit(t *testing.T) {
	sets := map[string]map[string][]byte{}
	used := map[string]bool{}
	for _, name := range examples(t, "cavekit") {
		owner, file, _ := strings.Cut(name, ".")
		switch {
		case owner == "cavekit-repo":
			// context/impl/loop-log.md: Cavekit's own log, which orbit
			// neither reads nor writes; it rides along in both projects.
			for _, s := range []string{"PyEIDORS", "agentguard"} {
				if sets[s] == nil {
					sets[s] = map[string][]byte{}
				}
				sets[s]["context/impl/loop-log.md"] = example(t, "cavekit", name)
			}
		default:
			if sets[owner] == nil {
				sets[owner] = map[string][]byte{}
			}
			dest := file
			if file == "loop.json" || file == "progress.json" || file == "auto-backprop-pending.json" {
				dest = "." + file
			}
			sets[owner][".cavekit/"+dest] = example(t, "cavekit", name)
		}
		used[name] = true
	}
	for _, owner := range []string{"PyEIDORS", "agentguard"} {
		for _, lock := range []string{"none", "stale", "live", "epoch-ms"} {
			t.Run(owner+"/lock-"+lock, func(t *testing.T) {
				t.Parallel()
				files := maps.Clone(sets[owner])
				switch lock {
				case "stale":
					files[".cavekit/.loop.lock"] = []byte(`{"owner":"session:old","pid":1,"host":"h","heartbeat_at":"2026-03-09T11:00:00.000Z"}`)
				case "live":
					files[".cavekit/.loop.lock"] = []byte(`{"owner":"session:now","pid":1,"host":"h","heartbeat_at":"2026-03-09T11:58:00.000Z"}`)
				case "epoch-ms":
					// What Cavekit's own tools write: Date.now().
					files[".cavekit/.loop.lock"] = []byte(fmt.Sprintf(`{"owner":"session:now","pid":1,"host":"h","acquired_at":%d,"heartbeat_at":%d}`,
						looptest.Now.Add(-time.Minute).UnixMilli(), looptest.Now.Add(-time.Minute).UnixMilli()))
				}
				cavekitTeardown(t, files, lock)
			})
		}
	}
	for _, name := range examples(t, "cavekit") {
		if !used[name] {
			t.Errorf("example %s has no round trip", name)
		}
	}
}

func cavekitTeardown(t *testing.T, files map[string][]byte, lock string) {
	root := newProject(t, files)
	seedCheck(t, "cavekit", root, "").want(t, "as found", map[string]string{"stopHookActive": "true"})
	refused(t, root, "cavekit:cavekit", loop.EventPause, "", frameworks.ErrNoControl)
	before := snapshot(t, root)
	e := mustControl(t, root, "cavekit:cavekit", loop.EventStop, "stopped", "")
	after := snapshot(t, root)
	live := lock == "live" || lock == "epoch-ms"
	except := []string{".cavekit/.loop.json", ".cavekit/state.md"}
	if !live {
		except = append(except, ".cavekit/.loop.lock")
	}
	unchanged(t, before, after, except...)
	c := seedCheck(t, "cavekit", root, "")
	facts := map[string]string{"stopHookActive": "false", "phase": "complete", "lock": "<nil>"}
	if live {
		// Never delete .loop.lock while a session might be active (seed 003).
		facts["lock"] = `{"owner":"session:now","stale":false}`
	}
	c.want(t, "after teardown", facts)
	// state.md: phase and updated_at changed, every other line as it was.
	old, cur := strings.Split(string(before[".cavekit/state.md"]), "\n"), strings.Split(string(after[".cavekit/state.md"]), "\n")
	if _, ok := before[".cavekit/state.md"]; ok {
		if len(old) != len(cur) {
			t.Errorf("state.md lines %d -> %d:\n%s", len(old), len(cur), after[".cavekit/state.md"])
		}
		for i := range min(len(old), len(cur)) {
			if old[i] != cur[i] && !strings.HasPrefix(cur[i], "phase: ") && !strings.HasPrefix(cur[i], "updated_at: ") {
				t.Errorf("state.md line %d changed: %q -> %q", i+1, old[i], cur[i])
			}
		}
	} else if c.fact("state") != `{"phase":"complete","updated_at":"2026-03-09T12:00:00.000Z"}` {
		t.Errorf("state.md written as %s", c.fact("state"))
	}
	if !slices.Contains(e.Wrote, "removed "+frameworks.CavekitLoopFile) {
		t.Errorf("wrote %q", e.Wrote)
	}
	refused(t, root, "cavekit:cavekit", loop.EventStop, "stopped", frameworks.ErrAlreadyStopped)
}

// conductorTracks is a tracks.md in the plugin's template, listing the
// example tracks.
const conductorTracks = `# Conductor Track Registry

Active and completed development tracks.

## Active Tracks

| Track ID | Name | Type | Status | Step | Created |
|----------|------|------|--------|------|---------|
| platoon-operations_20260913 | Platoon operations: FOBs, pickets, multi-axis offensives | feature | new | NOT_STARTED | 2026-09-13 |
| player-ai-commander_20260913 | Player-side AI commander with toggle | feature | implemented-pending-game-verification | GAME_VERIFICATION | 2026-09-13 |

## Completed Tracks

| Track ID | Name | Completed | Summary |
|----------|------|-----------|---------|
| (none yet) | | | |
`

// TestRoundTripConductor: seed 004's tracks, config and knowledge files.
func TestRoundTripConductor(t *testing.T) {
	base := map[string][]byte{"conductor/tracks.md": []byte(conductorTracks)}
	var tracks []string
	for _, name := range examples(t, "conductor") {
		owner, file, _ := strings.Cut(name, ".")
		switch {
		case strings.HasSuffix(file, ".metadata.json"):
			tracks = append(tracks, name)
		case file == "config.json":
			base["conductor/config.json"] = example(t, "conductor", name)
		case file == "errors.json" || file == "patterns.md":
			// The knowledge layer of each project rides along: a stop
			// leaves it as it was.
			base["conductor/knowledge/"+owner+"/"+file] = example(t, "conductor", name)
		default:
			t.Errorf("example %s has no round trip", name)
		}
	}
	for _, name := range tracks {
		_, file, _ := strings.Cut(name, ".")
		id := strings.TrimSuffix(file, ".metadata.json")
		for _, stop := range []string{"stopped", "blocked", "done"} {
			t.Run(id+"/"+stop, func(t *testing.T) {
				t.Parallel()
				files := maps.Clone(base)
				files["conductor/tracks/"+id+"/metadata.json"] = example(t, "conductor", name)
				conductorStop(t, files, id, stop)
			})
		}
	}
}

func conductorStop(t *testing.T, files map[string][]byte, id, stop string) {
	root := newProject(t, files)
	rel := "conductor/tracks/" + id + "/metadata.json"
	key := "conductor:" + id
	c := seedCheck(t, "conductor", root, id)
	refused(t, root, key, loop.EventPause, "", frameworks.ErrNoControl)
	refused(t, root, key, loop.EventResume, "", frameworks.ErrNoControl)
	if c.fact("step") == "COMPLETE" {
		refused(t, root, key, loop.EventStop, stop, frameworks.ErrAlreadyStopped)
		return
	}
	before := snapshot(t, root)
	e := mustControl(t, root, key, loop.EventStop, stop, "in-game checks left")
	after := snapshot(t, root)
	unchanged(t, before, after, rel, "conductor/tracks.md")
	c = seedCheck(t, "conductor", root, id)
	oldTracks, newTracks := strings.Split(conductorTracks, "\n"), strings.Split(string(after["conductor/tracks.md"]), "\n")
	changedLines := 0
	for _, l := range newTracks {
		if !slices.Contains(oldTracks, l) {
			changedLines++
		}
	}
	switch stop {
	case "blocked":
		onlyFields(t, rel, before[rel], after[rel], "loop_state.step_status", "blockers", "status", "stop_reason")
		c.want(t, "blocked", map[string]string{"stepStatus": "BLOCKED", "status": "blocked", "activeBlockers": `["in-game checks left"]`,
			"resumption": "skip blocked tasks: in-game checks left"})
		if row := c.Facts["tracks"].(map[string]any); row["section"] != "Active Tracks" || row["cells"].([]any)[3] != "blocked" || changedLines != 1 {
			t.Errorf("tracks.md row %v (%d lines changed)", row, changedLines)
		}
	case "done":
		onlyFields(t, rel, before[rel], after[rel], "loop_state.current_step", "loop_state.step_status", "status", "completed_at", "stop_reason")
		c.want(t, "done", map[string]string{"step": "COMPLETE", "stepStatus": "PASSED", "status": "complete", "resumption": "complete", "completionProtocol": "true"})
		if row := c.Facts["tracks"].(map[string]any); row["section"] != "Completed Tracks" || row["cells"].([]any)[2] != "2026-03-09" {
			t.Errorf("tracks.md row %v; want it in the completed tracks with the date", row)
		}
	default:
		onlyFields(t, rel, before[rel], after[rel], "loop_state.current_step", "loop_state.step_status", "warnings", "autonomous_decisions",
			"status", "completed_at", "stop_reason")
		c.want(t, "stopped", map[string]string{"step": "COMPLETE", "stepStatus": "PASSED_WITH_WARNINGS", "status": "complete", "completionProtocol": "true",
			"decisions": `["completed_with_warnings"]`, "warnings": `["stopped: in-game checks left (orbit loop stop)"]`})
		if row := c.Facts["tracks"].(map[string]any); row["cells"].([]any)[3] != "Done (with warnings)" || changedLines != 1 {
			t.Errorf("tracks.md row %v (%d lines changed)", row, changedLines)
		}
	}
	if len(e.Wrote) != 2 || !strings.HasPrefix(e.Wrote[1], "conductor/tracks.md: ") {
		t.Errorf("wrote %q", e.Wrote)
	}
	refused(t, root, key, loop.EventStop, "stopped", frameworks.ErrAlreadyStopped)
}

// TestExamplesCopied: testdata holds every example of ../shared/examples
// for the four frameworks, byte for byte (where that directory exists: it
// is outside the repository).
func TestExamplesCopied(t *testing.T) {
	// ../shared/examples beside the checkout (a worktree is one level
	// deeper).
	var shared string
	for _, up := range []string{"../../shared/examples", "../../../shared/examples"} {
		if fi, err := os.Stat(filepath.FromSlash(up)); err == nil && fi.IsDir() {
			shared = filepath.FromSlash(up)
			break
		}
	}
	if shared == "" {
		t.Skip("../shared/examples is not beside this checkout (it is outside the repository): nothing to compare")
	}
	for _, fw := range []string{"citadel", "ccw", "cavekit", "conductor"} {
		entries, err := os.ReadDir(filepath.Join(shared, fw))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			want, _ := os.ReadFile(filepath.Join(shared, fw, e.Name()))
			if got, err := os.ReadFile(filepath.Join(examplesDir, fw, e.Name())); err != nil || !bytes.Equal(got, want) {
				t.Errorf("testdata/frameworks/examples/%s/%s is not a copy of the shared example (%v)", fw, e.Name(), err)
			}
		}
	}
}
