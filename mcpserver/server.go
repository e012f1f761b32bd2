package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orbit-loop/orbit/db"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/knowledge"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/report"
)

// Options are what the server's tools depend on: how the CLI finds the
// project and opens its index, so that a tool sees exactly what the
// command it mirrors would.
type Options struct {
	// Project finds the project.
	Project func() (project.Project, error)
	// Index opens the project's index; Synced opens it and syncs it with
	// the journal files first; Knowledge opens it and syncs the knowledge
	// files.
	Index     func(ctx context.Context) (*journal.Index, error)
	Synced    func(ctx context.Context) (*journal.Index, error)
	Knowledge func(ctx context.Context) (*knowledge.Index, error)
	// Done closes what a call opened; it runs after every tool call, so
	// that the index is never held open between calls (another process
	// may delete or rebuild it).
	Done func() error
	// DropIndex removes an index a call found damaged (SQLite notices a
	// bad page only when a query reaches it); the call then runs again on
	// a fresh one, which its sync rebuilds from the files, unless it had
	// written already.
	DropIndex func(cause error) error
	Now       func() time.Time
	Version   string
}

// instructions is what the server tells a client about itself.
const instructions = "orbit is this project's decision journal for agent loops (.claude/ceo-loop-decisions.jsonl). " +
	"Record each decision with decide and each verdict on an earlier one with retro; work the pending queue with queue."

// New returns orbit's MCP server over opts.
func New(opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "orbit", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		// Tools only: no logging capability (the SDK's default).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	h := &handlers{opts: opts}
	for _, t := range tools {
		s.AddTool(&mcp.Tool{Name: t.name, Description: t.desc, InputSchema: t.schema.JSON()}, h.handler(t))
	}
	return s
}

// Run serves the tools over one connection (stdio: the process's stdin and
// stdout) until the client closes it or ctx is done.
func Run(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := New(opts).Run(ctx, t)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// tool is one of the server's tools: its name, description and input
// schema as the client sees them, and what it does.
type tool struct {
	name   string
	desc   string
	schema object
	run    func(ctx context.Context, h *handlers, args json.RawMessage) (result, error)
}

// result is what a tool answers: the value the mirrored command prints
// with --json (only fields, when given, as --json=fields), and a short text
// rendering of it.
type result struct {
	value  any
	text   string
	fields []string
}

type handlers struct {
	opts Options
	// mu runs one call at a time: the index is opened, used and closed by
	// each call (a client waits for its answers anyway).
	mu sync.Mutex
}

// handler runs a tool's call. Its answer is two text blocks: the short
// rendering, then the JSON. (No structuredContent: Claude Code shows only
// that to the model when it is present, and the TypeScript SDK refuses a
// JSON array there.) An error is a tool error carrying its one-line
// message, for the model to read and correct.
func (h *handlers) handler(t tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		r, err := h.call(ctx, t, req.Params.Arguments)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: oneLine(err.Error())}}}, nil
		}
		data, err := report.JSONFields(r.value, r.fields)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: strings.TrimRight(r.text, "\n")},
			&mcp.TextContent{Text: string(data)},
		}}, nil
	}
}

// call runs a tool once, and again on a fresh index when it found the
// index damaged before writing anything (as a command does). When it had
// written, what it wrote stands: the index is rebuilt and the call
// succeeds with a note instead of its usual answer.
func (h *handlers) call(ctx context.Context, t tool, args json.RawMessage) (result, error) {
	writes := journal.Writes()
	r, err := h.run(ctx, t, args)
	if !db.IsCorrupt(err) || h.opts.DropIndex == nil {
		return r, err
	}
	if err := h.opts.DropIndex(err); err != nil {
		return result{}, err
	}
	if journal.Writes() == writes {
		return h.run(ctx, t, args)
	}
	if _, err := h.opts.Synced(ctx); err != nil {
		h.opts.Done()
		return result{}, err
	}
	if err := h.opts.Done(); err != nil {
		return result{}, err
	}
	return result{text: "what this call wrote to the journal stands; the index has been rebuilt from the files (the latest records are in the journal)"}, nil
}

// run runs a tool and closes what it opened.
func (h *handlers) run(ctx context.Context, t tool, args json.RawMessage) (result, error) {
	r, err := t.run(ctx, h, args)
	if derr := h.opts.Done(); err == nil && derr != nil {
		err = derr
	}
	return r, err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// decode reads a call's arguments into v (a struct of the schema's
// properties), refusing an argument the tool does not have or a value of
// the wrong type with a one-line message that names it.
func decode(raw json.RawMessage, v any, schema object) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("argument %s is a JSON %s, want %s", te.Field, te.Value, jsonType(te.Type.String()))
	case errors.As(err, &te):
		return fmt.Errorf("the arguments are a JSON %s, want an object", te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("unknown argument %s (arguments: %s)", strings.TrimPrefix(err.Error(), "json: unknown field "), strings.Join(schema.names(), ", "))
	}
	return fmt.Errorf("arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonType names a Go type as the JSON a client sends.
func jsonType(goType string) string {
	goType = strings.TrimPrefix(goType, "*")
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return goType
}
