package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// orbitBin is the orbit binary under test, built by TestMain: the tests
// drive the real `orbit mcp` through real MCP clients.
var orbitBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orbit-mcp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	orbitBin = filepath.Join(dir, "orbit")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	build := exec.Command(goTool, "build", "-o", orbitBin, "./cmd/orbit")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build orbit: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// project is a temporary orbit project on disk.
type project struct {
	tb   testing.TB
	root string
}

const (
	journalRel = ".claude/ceo-loop-decisions.jsonl"
	retroRel   = ".claude/ceo-loop-retrograde.jsonl"
	pendingRel = ".claude/ceo-decisions-pending.json"
	stateRel   = ".claude/ceo-loop-state.json"
)

// newProject is a project holding the command tests' journal (six
// decisions over three iterations) and seed 000's example queue of four.
func newProject(tb testing.TB) *project {
	tb.Helper()
	p := &project{tb: tb, root: tb.TempDir()}
	if err := os.Mkdir(p.path(".claude"), 0o755); err != nil {
		tb.Fatal(err)
	}
	p.write(journalRel, p.fixture("cmd", "journal.jsonl"))
	p.write(pendingRel, p.fixture("hooks", "pending-4.json"))
	return p
}

func (p *project) path(rel string) string { return filepath.Join(p.root, filepath.FromSlash(rel)) }

func (p *project) fixture(elem ...string) string {
	p.tb.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "testdata"}, elem...)...))
	if err != nil {
		p.tb.Fatal(err)
	}
	return string(b)
}

func (p *project) write(rel, content string) {
	p.tb.Helper()
	if err := os.WriteFile(p.path(rel), []byte(content), 0o644); err != nil {
		p.tb.Fatal(err)
	}
}

func (p *project) read(rel string) string {
	p.tb.Helper()
	b, err := os.ReadFile(p.path(rel))
	if err != nil {
		p.tb.Fatal(err)
	}
	return string(b)
}

// lines are the non-empty lines of a file.
func (p *project) lines(rel string) []string {
	p.tb.Helper()
	var out []string
	for _, l := range strings.Split(p.read(rel), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// orbit runs the binary in the project, stdin given, and returns stdout;
// any exit status but want fails the test.
func (p *project) orbit(stdin string, want int, args ...string) string {
	p.tb.Helper()
	cmd := exec.Command(orbitBin, append([]string{"--root", p.root}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.tb.Fatalf("orbit %s: %v", strings.Join(args, " "), err)
	}
	if code != want {
		p.tb.Fatalf("orbit %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, want, out.String(), errOut.String())
	}
	return out.String()
}

// indexed is what the index holds of a decision: `orbit log --json`.
type indexed struct {
	ID        string `json:"id"`
	Iteration int64  `json:"iteration"`
	Tier      string `json:"tier"`
	Depth     string `json:"depth"`
	Category  string `json:"category"`
	Input     string `json:"input"`
	Decision  string `json:"decision"`
	Outcome   string `json:"outcome"`
	RequestID string `json:"request_id"`
}

// decisions reads the index through `orbit log --json`, by id.
func (p *project) decisions() map[string]indexed {
	p.tb.Helper()
	var rows []indexed
	if err := json.Unmarshal([]byte(p.orbit("", 0, "log", "--limit", "0", "--json")), &rows); err != nil {
		p.tb.Fatal(err)
	}
	out := map[string]indexed{}
	for _, r := range rows {
		out[r.ID] = r
	}
	return out
}

// connect starts `orbit mcp` in the project over the command transport and
// connects the Go SDK's client to it.
func (p *project) connect(ctx context.Context) *mcp.ClientSession {
	p.tb.Helper()
	return p.connectLogging(ctx, &testWriter{tb: p.tb})
}

// connectLogging is connect with the server's stderr going to stderr.
func (p *project) connectLogging(ctx context.Context, stderr io.Writer) *mcp.ClientSession {
	p.tb.Helper()
	cmd := exec.Command(orbitBin, "mcp", "--root", p.root)
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "orbit-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		p.tb.Fatalf("connect to orbit mcp: %v", err)
	}
	p.tb.Cleanup(func() { s.Close() })
	return s
}

// testWriter logs what the server writes on stderr.
type testWriter struct{ tb testing.TB }

func (w *testWriter) Write(b []byte) (int, error) {
	w.tb.Logf("orbit mcp stderr: %s", bytes.TrimRight(b, "\n"))
	return len(b), nil
}

// call calls a tool and returns its text rendering and its JSON, failing
// the test on a protocol error or, unless wantErr, a tool error.
func call(tb testing.TB, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (text string, data json.RawMessage, isErr bool) {
	tb.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("call %s: %v", name, err)
	}
	if res.StructuredContent != nil {
		tb.Errorf("call %s: structuredContent %v; orbit answers in text blocks only", name, res.StructuredContent)
	}
	if res.IsError {
		if len(res.Content) != 1 {
			tb.Fatalf("call %s: error with %d content blocks; want one", name, len(res.Content))
		}
		return res.Content[0].(*mcp.TextContent).Text, nil, true
	}
	if len(res.Content) != 2 {
		tb.Fatalf("call %s: %d content blocks; want the text and the JSON", name, len(res.Content))
	}
	text = res.Content[0].(*mcp.TextContent).Text
	raw := res.Content[1].(*mcp.TextContent).Text
	if !json.Valid([]byte(raw)) {
		tb.Fatalf("call %s: second block is not JSON: %s", name, raw)
	}
	return text, json.RawMessage(raw), false
}

// mustCall is call that fails on a tool error.
func mustCall(tb testing.TB, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any, v any) string {
	tb.Helper()
	text, data, isErr := call(tb, ctx, s, name, args)
	if isErr {
		tb.Fatalf("call %s %v: tool error %q", name, args, text)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			tb.Fatalf("call %s: %v\n%s", name, err, data)
		}
	}
	return text
}

func testContext(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	tb.Cleanup(cancel)
	return ctx
}
