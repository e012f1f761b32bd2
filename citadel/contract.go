package citadel

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/loop"
)

// Citadel's files (seed 001), relative to the project root.
const (
	LoopsDir   = ".planning/loops"
	DaemonFile = ".planning/daemon.json"
	// AutomationsDir holds Codex automations, legacy loop state
	// Citadel's loops.js list also reads (seed 001).
	AutomationsDir = ".planning/codex-automations"
)

// ContractVersion is the version Citadel's contract records carry.
const ContractVersion = 1

// defaultStopConditions are Citadel's default stop conditions.
var defaultStopConditions = []string{"verifier-passed", "blocked", "budget-exhausted", "attempt-limit", "needs-human-review", "unsafe-to-continue"}

// DefaultStopConditions are Citadel's default stop conditions (a new slice
// each call).
func DefaultStopConditions() []string { return slices.Clone(defaultStopConditions) }

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
		id = LoopID(typ, cmp.Or(o.Title, o.Command, o.Goal, o.Template, typ), now)
	}
	created := loop.ISOTime(now)
	c := Contract{
		Version: ContractVersion, ID: id, Type: typ, Template: strPtr(o.Template),
		Title:   cmp.Or(o.Title, o.Goal, o.Command, id),
		Status:  cmp.Or(o.Status, "planned"),
		Trigger: Trigger{Kind: cmp.Or(o.TriggerKind, "manual"), Cadence: strPtr(o.Cadence), Command: strPtr(o.Command)},
		Input:   Input{Source: "user-request", Goal: cmp.Or(o.Goal, o.Title, o.Command)},
		Scope:   Scope{Description: cmp.Or(o.Scope, "current project"), Paths: []string{}},
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
		c.StopConditions = DefaultStopConditions()
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

// LoopID is Citadel's loop id: type, slug of the title, and the time with
// ':' and '.' as '-'.
func LoopID(typ, source string, now time.Time) string {
	stamp := strings.NewReplacer(":", "-", ".", "-").Replace(loop.ISOTime(now))
	return Slugify(typ) + "-" + Slugify(source) + "-" + stamp
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// View is the record as a loop event's snapshot shows it, before any run.
func (c Contract) View() loop.View {
	return loop.View{Framework: loop.Citadel, ID: c.ID, Title: c.Title, Type: c.Type, Status: c.Status, NativeStatus: c.Status,
		Path: c.StatePath, MaxIterations: new(int64(c.Budget.MaxAttempts))}
}

// WritePlan writes c, a contract planned from a template, as a new record
// under h's project root (CreateContract) and records the plan in the loop
// event journal. It returns the record's path.
func WritePlan(ctx context.Context, h *loop.History, c Contract, now time.Time) (string, error) {
	path, err := CreateContract(ctx, h.Root, c)
	if err != nil {
		return "", err
	}
	e := loop.EventFor(c.View(), loop.EventPlan, now)
	e.Detail = "planned from template " + deref(c.Template)
	return path, h.Append(ctx, e)
}

// RecordPath is the path of the Citadel record with id under root.
func RecordPath(root, id string) string { return filepath.Join(root, LoopsDir, id+".json") }

// CreateContract writes a new record under root, atomically and under its
// lock. An existing record with the same id is an error.
func CreateContract(ctx context.Context, root string, c Contract) (string, error) {
	if err := loop.CheckID(c.ID); err != nil {
		return "", err
	}
	path := RecordPath(root, c.ID)
	data, err := c.Bytes()
	if err != nil {
		return "", err
	}
	unlock, err := loop.Lock(ctx, root, path)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Lstat(path); err == nil {
		return "", fmt.Errorf("%s already exists: pick another --id", loop.Rel(root, path))
	}
	st, err := loop.ParseState(path, data)
	if err != nil {
		return "", err
	}
	st.Root = root
	return path, st.Write()
}

// RecordStatus reads and checks a record's status word (Citadel's
// normalizeStatus lower-cases it).
func RecordStatus(st *loop.State) (string, error) {
	s, _, err := st.String("status")
	if err != nil {
		return "", err
	}
	norm := strings.ToLower(strings.TrimSpace(s))
	if norm == "" {
		norm = "planned"
	}
	if !loop.IsStatus(norm) {
		return "", fmt.Errorf("%s: status %q is not a loop status (allowed: %s)", st.Path, s, strings.Join(loop.Statuses(), ", "))
	}
	return norm, nil
}

// AddNote appends a note to a record's notes (made when absent): when, who,
// and the text. Notes are where a contract keeps what people and tools say
// about the loop; stopReason keeps the stop word alone.
func AddNote(st *loop.State, ts, by, text string) error {
	note := map[string]string{"at": ts, "by": by, "text": text}
	if raw, ok := st.Raw("notes"); ok && len(raw) > 0 && raw[0] == '[' {
		return st.AppendAt([]string{"notes"}, note)
	}
	return st.Set("notes", []any{note})
}

// indent renders v as JSON.stringify(v, null, 2) + "\n" does.
func indent(v any) ([]byte, error) {
	raw, err := loop.Marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
