package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/flock"
)

// Citadel's files (seed 001), relative to the project root.
const (
	LoopsDir   = ".planning/loops"
	DaemonFile = ".planning/daemon.json"
)

// ContractVersion is the version Citadel's contract records carry.
const ContractVersion = 1

// DefaultStopConditions are Citadel's default stop conditions.
var DefaultStopConditions = []string{"verifier-passed", "blocked", "budget-exhausted", "attempt-limit", "needs-human-review", "unsafe-to-continue"}

// DefaultRollback is Citadel's default recovery.rollback.
const DefaultRollback = "inspect git diff and revert loop-owned changes if needed"

// Contract is a Citadel loop contract record (seed 001), with every field
// the seed lists, in the order Citadel's own scripts write them.
type Contract struct {
	Version        int               `json:"version"`
	ID             string            `json:"id"`
	Type           string            `json:"type"`
	Template       *string           `json:"template"`
	Title          string            `json:"title"`
	Status         string            `json:"status"`
	Trigger        Trigger           `json:"trigger"`
	Input          Input             `json:"input"`
	Scope          Scope             `json:"scope"`
	Permissions    Permissions       `json:"permissions"`
	Budget         Budget            `json:"budget"`
	Verifier       Verifier          `json:"verifier"`
	Retry          Retry             `json:"retry"`
	StopConditions []string          `json:"stopConditions"`
	StatePath      string            `json:"statePath"`
	ReviewArtifact *string           `json:"reviewArtifact"`
	Recovery       Recovery          `json:"recovery"`
	CreatedAt      string            `json:"createdAt"`
	UpdatedAt      string            `json:"updatedAt"`
	Runs           []Run             `json:"runs"`
	Notes          []json.RawMessage `json:"notes"`
}

// Trigger is what starts the loop.
type Trigger struct {
	Kind    string  `json:"kind"`
	Cadence *string `json:"cadence"`
	Command *string `json:"command"`
}

// Input is the goal or queue the loop consumes.
type Input struct {
	Source string  `json:"source"`
	Queue  *string `json:"queue"`
	Goal   string  `json:"goal"`
}

// Scope is what the loop may touch.
type Scope struct {
	Description string   `json:"description"`
	Paths       []string `json:"paths"`
}

// Permissions are the filesystem, network and approval assumptions.
type Permissions struct {
	Filesystem string `json:"filesystem"`
	Network    string `json:"network"`
	Approvals  string `json:"approvals"`
}

// Budget is the attempt count and spend ceiling.
type Budget struct {
	MaxAttempts int      `json:"maxAttempts"`
	MaxSpend    *float64 `json:"maxSpend"`
	CostPerRun  *float64 `json:"costPerRun"`
}

// Verifier decides whether the work is done.
type Verifier struct {
	Command  *string `json:"command"`
	Profile  *string `json:"profile"`
	Required bool    `json:"required"`
}

// Retry is the retry ceiling and backoff.
type Retry struct {
	MaxAttempts int     `json:"maxAttempts"`
	Backoff     *string `json:"backoff"`
}

// Recovery says how to continue or roll back.
type Recovery struct {
	Rollback        string  `json:"rollback"`
	ContinueCommand *string `json:"continueCommand"`
}

// Run is one entry of a record's runs: an action or a verifier run of an
// attempt, as Citadel's runner appends them.
type Run struct {
	Attempt     int        `json:"attempt"`
	Status      string     `json:"status"`
	Summary     string     `json:"summary"`
	Command     *string    `json:"command"`
	Verifier    *string    `json:"verifier"`
	ExitCode    *int       `json:"exitCode"`
	StartedAt   string     `json:"startedAt"`
	CompletedAt string     `json:"completedAt"`
	Evidence    []Evidence `json:"evidence"`
}

// Evidence is what a run leaves for a human to inspect: orbit records the
// tail of the command's output.
type Evidence struct {
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	Bytes int64  `json:"bytes"`
}

// ContractOptions are the parts of a new contract; empty fields take
// Citadel's defaults.
type ContractOptions struct {
	ID, Type, Template, Title, Goal, Command    string
	VerifierCommand, VerifierProfile            string
	TriggerKind, Cadence, Scope, ReviewArtifact string
	Backoff                                     string
	MaxAttempts                                 int
	StopConditions                              []string
	Status                                      string
	VerifierRequired                            *bool
}

// NewContract builds a contract record as Citadel's createLoopContract does.
func NewContract(o ContractOptions, now time.Time) Contract {
	typ := o.Type
	if typ == "" {
		typ = "loop"
	}
	id := o.ID
	if id == "" {
		id = LoopID(typ, firstOf(o.Title, o.Command, o.Goal, o.Template, typ), now)
	}
	created := ISOTime(now)
	c := Contract{
		Version: ContractVersion, ID: id, Type: typ, Template: strPtr(o.Template),
		Title:   firstOf(o.Title, o.Goal, o.Command, id),
		Status:  firstOf(o.Status, "planned"),
		Trigger: Trigger{Kind: firstOf(o.TriggerKind, "manual"), Cadence: strPtr(o.Cadence), Command: strPtr(o.Command)},
		Input:   Input{Source: "user-request", Goal: firstOf(o.Goal, o.Title, o.Command)},
		Scope:   Scope{Description: firstOf(o.Scope, "current project"), Paths: []string{}},
		Permissions: Permissions{Filesystem: "workspace-write", Network: "restricted",
			Approvals: "required-for-risky-actions"},
		Budget:         Budget{MaxAttempts: max(o.MaxAttempts, 1)},
		Verifier:       Verifier{Command: strPtr(o.VerifierCommand), Profile: strPtr(o.VerifierProfile), Required: o.VerifierCommand != ""},
		Retry:          Retry{MaxAttempts: max(o.MaxAttempts, 1), Backoff: strPtr(o.Backoff)},
		StopConditions: slices.Clone(o.StopConditions),
		StatePath:      LoopsDir + "/" + id + ".json",
		ReviewArtifact: strPtr(o.ReviewArtifact),
		Recovery:       Recovery{Rollback: DefaultRollback},
		CreatedAt:      created, UpdatedAt: created,
		Runs: []Run{}, Notes: []json.RawMessage{},
	}
	if o.VerifierRequired != nil {
		c.Verifier.Required = *o.VerifierRequired
	}
	if len(c.StopConditions) == 0 {
		c.StopConditions = slices.Clone(DefaultStopConditions)
	}
	return c
}

// Bytes renders the record as Citadel writes it (JSON.stringify(c, null, 2)).
func (c Contract) Bytes() ([]byte, error) { return indent(c) }

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slugify is Citadel's slugify: lower case, runs of other characters as
// one dash, at most 80 characters.
func Slugify(s string) string {
	s = nonSlug.ReplaceAllString(strings.ToLower(s), "-")
	s = strings.TrimPrefix(s, "-")
	s = strings.TrimSuffix(s, "-")
	if len(s) > 80 {
		s = s[:80]
	}
	if s == "" {
		return "loop"
	}
	return s
}

// ISOTime renders t as JavaScript's toISOString does.
func ISOTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// LoopID is Citadel's loop id: type, slug of the title, and the time with
// ':' and '.' as '-'.
func LoopID(typ, source string, now time.Time) string {
	stamp := strings.NewReplacer(":", "-", ".", "-").Replace(ISOTime(now))
	return Slugify(typ) + "-" + Slugify(source) + "-" + stamp
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// RecordPath is the path of the Citadel record with id under root.
func RecordPath(root, id string) string { return filepath.Join(root, LoopsDir, id+".json") }

// CreateContract writes a new record under root, atomically and under its
// lock. An existing record with the same id is an error.
func CreateContract(ctx context.Context, root string, c Contract) (string, error) {
	if err := checkID(c.ID); err != nil {
		return "", err
	}
	path := RecordPath(root, c.ID)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	data, err := c.Bytes()
	if err != nil {
		return "", err
	}
	unlock, err := flock.Path(ctx, LockPath(path))
	if err != nil {
		return "", err
	}
	defer unlock()
	if exists(path) {
		return "", fmt.Errorf("%s already exists: pick another --id", rel(root, path))
	}
	st, err := ParseState(path, data)
	if err != nil {
		return "", err
	}
	return path, st.Write()
}

// checkID refuses ids that would escape the registry directory.
func checkID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return fmt.Errorf("loop id %q: must be a file name (no slashes, not starting with a dot)", id)
	}
	return nil
}

// LockPath is the lock orbit takes to rewrite another framework's file:
// a hidden file beside it (.{name}.lock), so that the frameworks' own
// listings (every *.json of a directory) never see it. The ORBIT state
// file keeps its own lock, ceo-loop-state.json.lock.
func LockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
}

// editJSON rewrites the JSON object file at path under its lock (LockPath):
// fn edits the ordered object read fresh from disk, and the result replaces
// the file atomically (temp file, fsync, rename). Fields fn leaves alone
// keep their values and order.
func editJSON(ctx context.Context, path string, fn func(*State) error) error {
	unlock, err := flock.Path(ctx, LockPath(path))
	if err != nil {
		return err
	}
	defer unlock()
	st, err := ReadState(path)
	if errors.Is(err, ErrNoState) {
		return fmt.Errorf("%s: the loop's file is gone", path)
	}
	if err != nil {
		return err
	}
	if err := fn(st); err != nil {
		return err
	}
	return st.Write()
}

// citadelStatus reads and checks a record's status word (Citadel's
// normalizeStatus lower-cases it).
func citadelStatus(st *State) (string, error) {
	s, _, err := st.String("status")
	if err != nil {
		return "", err
	}
	norm := strings.ToLower(strings.TrimSpace(s))
	if norm == "" {
		norm = "planned"
	}
	if !IsStatus(norm) {
		return "", fmt.Errorf("%s: status %q is not a loop status (allowed: %s)", st.Path, s, strings.Join(Statuses, ", "))
	}
	return norm, nil
}

// scanCitadel reads .planning/loops/*.json and .planning/daemon.json.
func scanCitadel(root string, s *Scan) {
	dir := filepath.Join(root, LoopsDir)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		s.problem(root, dir, err)
	}
	var paths []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		paths = append(paths, filepath.Join(dir, name))
	}
	s.readEach(root, paths, func(path string, o object) (View, error) { return citadelView(root, path, o) })
	path := filepath.Join(root, DaemonFile)
	o, _, err := readObject(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		s.problem(root, path, err)
	default:
		s.Loops = append(s.Loops, daemonView(root, path, o))
	}
}

// citadelView maps a contract record. A status outside the vocabulary is
// returned as an error naming the file (the loop is still listed, as
// unknown).
func citadelView(root, path string, o object) (View, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	v := View{Framework: Citadel, Path: rel(root, path)}
	v.file(root, path)
	v.identify(o, "id", name, false)
	v.Type = o.text("type")
	v.Title = firstOf(o.text("title"), v.ID)
	v.NativeStatus = o.text("status")
	var perr error
	norm := strings.ToLower(strings.TrimSpace(v.NativeStatus))
	switch {
	case norm == "" && o.kind("status") == "absent":
		v.Status = "planned"
		v.warn("no status: read as planned, as Citadel does")
	case IsStatus(norm):
		v.Status = norm
	default:
		v.Status = Unknown
		perr = fmt.Errorf("%s: status %q is not a loop status (allowed: %s)", rel(root, path), v.NativeStatus, strings.Join(Statuses, ", "))
		v.warn("status %q is not a loop status", v.NativeStatus)
	}
	if ver, note := o.int("version"); note != "" {
		v.note(note)
	} else if ver != nil && *ver != ContractVersion {
		v.warn("contract version %d (orbit knows version %d)", *ver, ContractVersion)
	}
	budget, retry := o.obj("budget"), o.obj("retry")
	var note string
	if budget != nil {
		v.MaxIterations, note = budget.int("maxAttempts")
		v.note(note)
		if spend, ok, _ := budget.num("maxSpend"); ok {
			v.BudgetLimit = f64(spend)
		}
	}
	if v.MaxIterations == nil && retry != nil {
		v.MaxIterations, _ = retry.int("maxAttempts")
	}
	v.UpdatedAt = firstOf(o.text("updatedAt"), o.text("createdAt"))
	v.checkTime("updatedAt", o.text("updatedAt"))
	v.checkTime("createdAt", o.text("createdAt"))
	runs := o.list("runs")
	var attempts int64
	for i, r := range runs {
		ro, ok := asObject(r)
		if !ok {
			v.warn("runs[%d] is not an object", i)
			continue
		}
		rv := RunView{Attempt: ro.text("attempt"), Status: ro.text("status"), Summary: ro.text("summary"),
			Command: ro.text("command"), Verifier: ro.text("verifier"), ExitCode: ro.text("exitCode"),
			StartedAt: ro.text("startedAt"), CompletedAt: ro.text("completedAt")}
		if ev := ro.list("evidence"); len(ev) > 0 {
			rv.Evidence = evidenceText(ev)
		}
		if a, _ := ro.int("attempt"); a != nil && *a > attempts {
			attempts = *a
		}
		if st := strings.ToLower(rv.Status); st != "" && !IsStatus(st) {
			v.warn("runs[%d].status %q is not a loop status", i, rv.Status)
		}
		v.Runs = append(v.Runs, rv)
	}
	if len(runs) > 0 || v.MaxIterations != nil {
		v.Iteration = i64(attempts)
	}
	if v.Iteration != nil && v.MaxIterations != nil && *v.Iteration > *v.MaxIterations {
		v.warn("attempt %d is past the cap of %d", *v.Iteration, *v.MaxIterations)
	}
	trigger, verifier := o.obj("trigger"), o.obj("verifier")
	v.detail("type", v.Type)
	v.detail("template", o.text("template"))
	if trigger != nil {
		t := trigger.text("kind")
		if c := trigger.text("cadence"); c != "" {
			t += " (" + c + ")"
		}
		v.detail("trigger", t)
		v.detail("command", trigger.text("command"))
	}
	if verifier != nil {
		v.detail("verifier", firstOf(verifier.text("command"), verifier.text("profile")))
	}
	if l := o.list("stopConditions"); l != nil {
		var conds []string
		for _, c := range l {
			var s string
			if json.Unmarshal(c, &s) == nil {
				conds = append(conds, s)
				if !IsStopReason(s) {
					v.warn("stop condition %q is not in the shared stop vocabulary", s)
				}
			}
		}
		v.detail("stop conditions", strings.Join(conds, ", "))
	}
	v.detail("state path", o.text("statePath"))
	if a := o.text("reviewArtifact"); a != "" {
		v.detail("review artifact", a)
		if p := filepath.Join(root, filepath.FromSlash(a)); exists(p) {
			v.file(root, p)
		}
	}
	v.detail("stopped at", o.text("stoppedAt"))
	v.detail("stop reason", o.text("stopReason"))
	if o.text("stoppedAt") != "" && !IsStopped(v.Status) && v.Status != Unknown {
		v.warn("stoppedAt is set (%s) but the status is %s", o.text("stoppedAt"), v.Status)
	}
	if v.Status != Unknown {
		v.Controls = citadelControls(v.Status)
	}
	return v, perr
}

func citadelControls(status string) []string {
	var c []string
	if !IsStopped(status) {
		c = append(c, "stop")
	}
	switch status {
	case "planned", "running", "waiting":
		c = append(c, "pause")
	case "paused", "needs-human-review":
		c = append(c, "resume")
	}
	return c
}

// evidenceText is the text of a run's evidence, for show.
func evidenceText(ev []json.RawMessage) string {
	var parts []string
	for _, e := range ev {
		var s string
		if json.Unmarshal(e, &s) == nil {
			parts = append(parts, s)
			continue
		}
		if eo, ok := asObject(e); ok {
			if t := eo.text("text"); t != "" {
				parts = append(parts, t)
				continue
			}
		}
		parts = append(parts, compact(e))
	}
	return strings.Join(parts, "\n")
}

// daemonView maps Citadel's legacy daemon state, as Citadel's loops.js list
// does: id daemon-{campaignSlug}.
func daemonView(root, path string, o object) View {
	v := View{Framework: Citadel, Type: "daemon", Path: rel(root, path)}
	v.file(root, path)
	slug := firstOf(o.text("campaignSlug"), "active")
	v.ID = "daemon-" + slug
	v.Title = "Daemon: " + firstOf(o.text("campaignSlug"), "active campaign")
	v.NativeStatus = o.text("status")
	switch norm := strings.ToLower(v.NativeStatus); {
	case IsStatus(norm):
		v.Status = norm
	case norm == "completed":
		v.Status = "done"
	default:
		v.Status = Unknown
		v.warn("daemon status %q is not a loop status", v.NativeStatus)
	}
	var note string
	v.Iteration, note = o.int("sessionCount")
	v.note(note)
	if spend, ok, note := o.num("estimatedSpend"); ok {
		v.BudgetUsed = f64(spend)
	} else {
		v.note(note)
	}
	if b, ok, note := o.num("budget"); ok {
		v.BudgetLimit = f64(b)
	} else {
		v.note(note)
	}
	if v.BudgetUsed != nil && v.BudgetLimit != nil && *v.BudgetLimit > 0 && *v.BudgetUsed >= *v.BudgetLimit && v.Status == "running" {
		v.warn("spend %v has reached the budget %v but the daemon is running", *v.BudgetUsed, *v.BudgetLimit)
	}
	for _, k := range []string{"startedAt", "lastTickAt", "stoppedAt"} {
		v.checkTime(k, o.text(k))
	}
	v.UpdatedAt = firstOf(o.text("lastTickAt"), o.text("stoppedAt"), o.text("startedAt"))
	v.detail("interval", o.text("interval"))
	v.detail("cooldown", o.text("cooldown"))
	v.detail("cost per session", o.text("costPerSession"))
	v.detail("last tick", o.text("lastTickStatus"))
	v.detail("log entries", fmt.Sprint(len(o.list("log"))))
	v.detail("stopped at", o.text("stoppedAt"))
	v.detail("stop reason", o.text("stopReason"))
	if !IsStopped(v.Status) && v.Status != Unknown {
		v.Controls = []string{"stop"}
	}
	return v
}

// stopCitadel stops a record or the daemon in Citadel's format: status,
// stoppedAt, stopReason, updatedAt (records only), as Citadel's stopLoop.
func stopCitadel(ctx context.Context, path, status, reason string, now time.Time, daemon bool) (from string, err error) {
	err = editJSON(ctx, path, func(st *State) error {
		if daemon {
			from, _, _ = st.String("status")
		} else if from, err = citadelStatus(st); err != nil {
			return err
		}
		if IsStopped(strings.ToLower(from)) {
			return fmt.Errorf("%s has already stopped (%s): %w", st.Path, from, ErrAlreadyStopped)
		}
		ts := ISOTime(now)
		for _, kv := range []struct {
			k string
			v any
		}{{"status", status}, {"stoppedAt", ts}, {"stopReason", firstOf(reason, status)}} {
			if err := setJSON(st, kv.k, kv.v); err != nil {
				return err
			}
		}
		if !daemon {
			return setJSON(st, "updatedAt", ts)
		}
		return nil
	})
	return from, err
}

// setCitadelStatus pauses or resumes a record: status and updatedAt.
func setCitadelStatus(ctx context.Context, path, status string, allowed []string, now time.Time) (from string, err error) {
	err = editJSON(ctx, path, func(st *State) error {
		if from, err = citadelStatus(st); err != nil {
			return err
		}
		if !slices.Contains(allowed, from) {
			return wrongState("%s is %s: only a loop that is %s can be %s", st.Path, from, strings.Join(allowed, " or "), verbed(status))
		}
		if err := setJSON(st, "status", status); err != nil {
			return err
		}
		return setJSON(st, "updatedAt", ISOTime(now))
	})
	return from, err
}

func verbed(status string) string {
	if status == "paused" {
		return "paused"
	}
	return "resumed"
}
