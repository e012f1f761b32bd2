//go:build browser

package browser_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// orbitBin is the orbit binary under test, built by TestMain.
var orbitBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orbit-browser-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	orbitBin = filepath.Join(dir, "orbit")
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", orbitBin, "github.com/orbit-loop/orbit/cmd/orbit")
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

// chromium finds the browser: $ORBIT_CHROMIUM, else Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ORBIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium: install Debian's chromium package (apt-get install chromium) or set ORBIT_CHROMIUM")
	return ""
}

// artifacts is the directory screenshots are saved to.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ORBIT_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		t.Fatal(err)
	}
	return abs
}

// orbit runs the binary to completion and returns its combined output;
// exit statuses up to maxOK count as success.
func orbit(t *testing.T, maxOK int, args ...string) string {
	t.Helper()
	cmd := exec.Command(orbitBin, args...)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() <= maxOK {
		err = nil
	}
	if err != nil {
		t.Fatalf("orbit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// cleanEnv is the environment without orbit's overrides.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ORBIT_") {
			env = append(env, kv)
		}
	}
	return env
}

// demoProject builds `orbit demo`'s project in a temporary directory.
func demoProject(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	orbit(t, 0, "demo", "--dir", dir)
	return dir
}

// served is a running `orbit serve`.
type served struct {
	base  string // http://host:port
	url   string // the dashboard URL it printed, with #token=
	token string
}

var servedLine = regexp.MustCompile(`on (http://([^/\s]+)/)#token=([0-9a-f]+)`)

// serve starts `orbit serve` on the project at root and waits for the URL
// it prints; the server is interrupted (SIGINT) when the test ends and must
// stop cleanly.
func serve(t *testing.T, root string, args ...string) served {
	t.Helper()
	cmd := exec.Command(orbitBin, append([]string{"--root", root, "serve", "--poll", "100ms"}, args...)...)
	cmd.Env = cleanEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		log bytes.Buffer
	)
	found := make(chan []string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := servedLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m:
				default:
				}
			}
		}
	}()
	output := func() string {
		mu.Lock()
		defer mu.Unlock()
		return log.String()
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { <-drained; done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("orbit serve after SIGINT: %v\n%s", err, output())
			} else if !strings.Contains(output(), "orbit serve: stopped") {
				t.Errorf("orbit serve exited without saying it stopped:\n%s", output())
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("orbit serve still running 20s after SIGINT:\n%s", output())
		}
	})
	select {
	case m := <-found:
		host := m[2]
		// An unspecified address is reached on loopback.
		host = strings.Replace(strings.Replace(host, "0.0.0.0:", "127.0.0.1:", 1), "[::]:", "127.0.0.1:", 1)
		base := "http://" + host
		return served{base: base, url: base + "/#token=" + m[3], token: m[3]}
	case <-time.After(60 * time.Second):
		t.Fatalf("orbit serve printed no URL within 60s:\n%s", output())
	}
	return served{}
}

// getJSON decodes GET base+path, sending the token.
func (s served) getJSON(t *testing.T, path string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", s.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode == 200 && v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, data)
		}
	}
	return res.StatusCode
}

// browser starts headless Chromium with a fresh profile for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	return browserWith(t)
}

// browserWith is browser with more command-line options.
func browserWith(t *testing.T, more ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium makes scratch directories in $TMPDIR and leaves them:
		// in the test's own, they go with it.
		chromedp.Env("TMPDIR=" + t.TempDir()),
	}
	opts = append(opts, more...)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	// Start the browser now, without a deadline (a deadline on the first
	// Run would bound the browser's life).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// tab opens a new tab of the browser, bounded to a minute.
func tab(t *testing.T, bctx context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	tctx, tcancel := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(tcancel)
	return tctx
}

// waitFor polls a JavaScript predicate in the page until it holds, failing
// the test with what after timeout.
func waitFor(t *testing.T, ctx context.Context, what, predicate string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({level: document.getElementById("level")?.textContent, updated: document.getElementById("updated")?.textContent, live: document.getElementById("live")?.textContent, alert: document.getElementById("alert")?.textContent})`))
		t.Fatalf("%s: %v (page: %s)", what, err, state)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshot saves the whole page as a PNG in the artifacts directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// headline is the part of GET /api/v1/trust the headline shows.
type headline struct {
	Level     string `json:"level"`
	Decisions int    `json:"decisions"`
	Alert     bool   `json:"alert"`
	AlertText string `json:"alert_text"`
}

const (
	chartLoaded = `(() => { const img = document.getElementById("chart"); return img.complete && img.naturalWidth > 0 && img.getBoundingClientRect().width > 0; })()`
	levelShown  = `["standard", "demoted", "elevated"].includes(document.getElementById("level").textContent)`
)

// TestDashboard opens the dashboard of the demo project on a laptop and a
// phone: the headline shows the API's trust level, the charts render, the
// tables fill, the event stream is live; a line appended by hand shows up
// without a reload.
func TestDashboard(t *testing.T) {
	root := demoProject(t)
	s := serve(t, root)
	bctx := browser(t)
	for _, vp := range []struct {
		name          string
		width, height int64
		opts          []chromedp.EmulateViewportOption
	}{
		{"laptop", 1280, 900, nil},
		{"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateScale(2), chromedp.EmulateMobile}},
	} {
		t.Run(vp.name, func(t *testing.T) {
			var want headline
			if code := s.getJSON(t, "/api/v1/trust", &want); code != 200 {
				t.Fatalf("GET /api/v1/trust: %d", code)
			}
			ctx := tab(t, bctx)
			if err := chromedp.Do(ctx,
				chromedp.EmulateViewport(vp.width, vp.height, vp.opts...),
				chromedp.Navigate(s.url),
			); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the headline shows the trust level", levelShown, 15*time.Second)
			waitFor(t, ctx, "the chart <img> loads", chartLoaded, 15*time.Second)
			waitFor(t, ctx, "the decisions table fills", `document.querySelectorAll("#decisions-table tr").length === 25`, 15*time.Second)
			waitFor(t, ctx, "the event stream is live", `document.getElementById("live").textContent === "live"`, 15*time.Second)
			waitFor(t, ctx, "every panel loads", `document.getElementById("updated").textContent.startsWith("updated ")`, 15*time.Second)
			if got := eval[string](t, ctx, `document.getElementById("level").textContent`); got != want.Level {
				t.Errorf("headline level %q; want the API's %q", got, want.Level)
			}
			if got := eval[string](t, ctx, `document.getElementById("decisions").textContent`); got != fmt.Sprint(want.Decisions) {
				t.Errorf("headline decisions %q; want %d", got, want.Decisions)
			}
			if got := eval[bool](t, ctx, `document.getElementById("alert").hidden`); got == want.Alert {
				t.Errorf("alert banner hidden = %v with the API's alert %v", got, want.Alert)
			}
			// The token moved from the URL to the session.
			if got := eval[string](t, ctx, `(sessionStorage.getItem("orbit-token") || "") + "|" + location.hash`); got != s.token+"|" {
				t.Errorf("token in session | hash = %q; want %q", got, s.token+"|")
			}
			// No horizontal scrolling of the page itself.
			if over := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); over {
				w := eval[int](t, ctx, `document.documentElement.scrollWidth`)
				t.Errorf("the page is %dpx wide in a %dpx viewport", w, vp.width)
			}
			screenshot(t, ctx, "dashboard-"+vp.name+".png")

			if vp.name != "laptop" {
				return
			}
			// A line another tool appends arrives through the event stream.
			line, err := journal.Marshal(&journal.Decision{ID: "iter-90-1", Iteration: 90, TS: "2026-03-09T12:00:00Z", Tier: "auto_approve", Depth: "trivial",
				Category: "quality", Input: "Appended by hand while the dashboard is open", Decision: "APPROVED", Reason: "echo >>",
				Verification: "PENDING", Retrograde: journal.Retrograde{Outcome: journal.OutcomeNA}})
			if err != nil {
				t.Fatal(err)
			}
			appendFile(t, filepath.Join(root, project.DecisionsFile), line)
			waitFor(t, ctx, "the appended decision shows without a reload",
				fmt.Sprintf(`document.getElementById("decisions").textContent === "%d" && document.querySelector("#decisions-table tr td").textContent === "iter-90-1"`, want.Decisions+1),
				15*time.Second)
			// Precedent search from the search box.
			if err := chromedp.Do(ctx,
				chromedp.SetValue(chromedp.ID("q"), "Postgres state storage"),
				chromedp.Click(chromedp.CSS(`#search button[type="submit"]`)),
			); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "precedent search fills the table", `document.querySelectorAll("#decisions-table tr").length > 0 && document.querySelectorAll("#decisions-table tr").length <= 10 && document.querySelector("#decisions-table tr td").textContent !== "iter-90-1"`, 15*time.Second)
		})
	}
}

func appendFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// demotedProject is a project whose journal, written by hand, is demoted
// with the last 10 scored decisions at 40%: 24 decisions, 14 of the first
// 14 correct, then 4 of 10.
func demotedProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	var decisions, outcomes bytes.Buffer
	last10 := []bool{true, false, false, true, false, false, true, false, true, false}
	for i := 1; i <= 24; i++ {
		id := fmt.Sprintf("iter-%d-1", i)
		conf := 0.9
		line, err := journal.Marshal(&journal.Decision{ID: id, Iteration: int64(i), TS: fmt.Sprintf("2026-03-08T10:%02d:00Z", i), Tier: "quick_review", Depth: "light",
			Category: "architecture", Input: fmt.Sprintf("Architecture choice number %d", i), Decision: "APPROVED", Reason: "looked right",
			Verification: "PENDING", Retrograde: journal.Retrograde{Outcome: journal.OutcomeNA}, Confidence: &conf})
		if err != nil {
			t.Fatal(err)
		}
		decisions.Write(line)
		outcome := journal.OutcomeCorrect
		if i > 14 && !last10[i-15] {
			outcome = journal.OutcomeIncorrect
		}
		line, err = journal.Marshal(&journal.OutcomeRecord{TS: fmt.Sprintf("2026-03-08T11:%02d:00Z", i), DecisionID: id, Outcome: outcome, Evidence: "checked by hand"})
		if err != nil {
			t.Fatal(err)
		}
		outcomes.Write(line)
	}
	for rel, data := range map[string][]byte{project.DecisionsFile: decisions.Bytes(), project.RetroFile: outcomes.Bytes()} {
		if err := os.WriteFile(filepath.Join(root, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestAlertBanner: a demoted journal whose last 10 are below 60% shows the
// trust calibration alert.
func TestAlertBanner(t *testing.T) {
	root := demotedProject(t)
	orbit(t, 0, "--root", root, "init")
	s := serve(t, root)
	var h headline
	s.getJSON(t, "/api/v1/trust", &h)
	if h.Level != "demoted" || !h.Alert {
		t.Fatalf("the hand-written journal is %s, alert %v; want demoted with the alert", h.Level, h.Alert)
	}
	ctx := tab(t, browser(t))
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.url)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the alert banner appears",
		`!document.getElementById("alert").hidden && document.getElementById("alert").textContent.includes("TRUST CALIBRATION ALERT") && document.getElementById("alert").getBoundingClientRect().height > 0`,
		15*time.Second)
	waitFor(t, ctx, "the chart <img> loads", chartLoaded, 15*time.Second)
	if got := eval[string](t, ctx, `document.getElementById("level").textContent + " " + document.getElementById("level").className`); got != "demoted level demoted" {
		t.Errorf("headline level = %q; want demoted, styled demoted", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("alert").textContent`); got != h.AlertText {
		t.Errorf("banner = %q; want the API's alert_text %q", got, h.AlertText)
	}
	screenshot(t, ctx, "alert-laptop.png")
}

// loopsAPI returns the loops GET /api/v1/loops lists.
func loopsAPI(t *testing.T, s served) []map[string]any {
	t.Helper()
	var loops []map[string]any
	code := s.getJSON(t, "/api/v1/loops", &loops)
	if code != 200 {
		t.Fatalf("GET /api/v1/loops: status %d; want 200", code)
	}
	return loops
}

// orbitLoopActive reads "active" from the ORBIT loop's state file.
func orbitLoopActive(t *testing.T, root string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, project.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Active *bool `json:"active"`
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Active == nil {
		t.Fatalf("state file %s: %v, active %v", data, err, st.Active)
	}
	return *st.Active
}

// TestStopLoop: the Stop button of the ORBIT loop, confirmed, stops the loop
// in its state file.
func TestStopLoop(t *testing.T) {
	root := demoProject(t)
	orbit(t, 0, "--root", root, "loop", "start", "--max-iterations", "30", "--force")
	if !orbitLoopActive(t, root) {
		t.Fatal("orbit loop start left the loop inactive")
	}
	s := serve(t, root)
	loops := loopsAPI(t, s)
	var orbitLoop map[string]any
	for _, l := range loops {
		if l["framework"] == "orbit" {
			orbitLoop = l
		}
	}
	if orbitLoop == nil {
		t.Fatalf("GET /api/v1/loops lists no orbit loop: %v", loops)
	}
	ctx := tab(t, browser(t))
	// confirm() blocks the page, and the click with it, until answered.
	var dialogs []string
	var dmu sync.Mutex
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			dmu.Lock()
			dialogs = append(dialogs, string(ev.Type)+": "+ev.Message)
			dmu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.url)); err != nil {
		t.Fatal(err)
	}
	const stopButton = `[...document.querySelectorAll("#loops tr")].filter((tr) => tr.cells[0] && tr.cells[0].textContent === "orbit").map((tr) => [...tr.querySelectorAll("button")].find((b) => b.textContent === "Stop")).find((b) => b)`
	waitFor(t, ctx, "the loops panel shows the ORBIT loop with a Stop button",
		`!document.getElementById("loops-card").hidden && !!(`+stopButton+`)`, 15*time.Second)
	screenshot(t, ctx, "loops-before-stop.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.JSPath(stopButton))); err != nil {
		t.Fatalf("click Stop: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for orbitLoopActive(t, root) {
		if time.Now().After(deadline) {
			dmu.Lock()
			t.Fatalf("the ORBIT loop is still active 10s after Stop was clicked and confirmed (dialogs: %q)", dialogs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	dmu.Lock()
	if len(dialogs) == 0 || !strings.HasPrefix(dialogs[0], "confirm") {
		t.Errorf("dialogs = %q; want a confirm before stopping", dialogs)
	}
	dmu.Unlock()
	waitFor(t, ctx, "the ORBIT loop shows as stopped, without a Stop button",
		`!(`+stopButton+`)`, 15*time.Second)
	screenshot(t, ctx, "loops-after-stop.png")
}

// TestDashboardOffLoopback: served off loopback with a token, the dashboard
// opened from the URL orbit serve prints (#token=) reads the API.
func TestDashboardOffLoopback(t *testing.T) {
	root := demoProject(t)
	token := "5eb1c0ffee5eb1c0ffee5eb1c0ffee5eb1c0ffee"
	s := serve(t, root, "--addr", "0.0.0.0:0", "--token", token)
	if s.token != token {
		t.Fatalf("orbit serve printed token %q; want %q", s.token, token)
	}
	ctx := tab(t, browser(t))
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.url)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { screenshot(t, ctx, "dashboard-off-loopback.png") })
	waitFor(t, ctx, "off loopback, the headline shows the trust level (the dashboard must send the token it was given)", levelShown, 10*time.Second)
	waitFor(t, ctx, "off loopback, the chart <img> loads", chartLoaded, 10*time.Second)
	waitFor(t, ctx, "off loopback, the event stream is live", `document.getElementById("live").textContent === "live"`, 10*time.Second)
	// The token is in no cookie: the page's script sees none (the read
	// session is HttpOnly), and any other service on this host would
	// receive every cookie of it, ports notwithstanding.
	if c := eval[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("document.cookie = %q; want no cookie a script can read (the token in none)", c)
	}
}

// TestDNSRebinding: a page of evil.example, whose name the attacker made
// resolve to 127.0.0.1 (Chromium's host resolver rules stand in for the
// rebinding DNS server), runs its script in its own origin and fetches the
// API of the orbit serve listening there: every request is refused (421),
// and no data reaches the page. The dashboard's own origin still reads.
func TestDNSRebinding(t *testing.T) {
	root := demoProject(t)
	s := serve(t, root)
	port := s.base[strings.LastIndex(s.base, ":")+1:]
	ctx := tab(t, browserWith(t, chromedp.Flag("host-resolver-rules", "MAP evil.example 127.0.0.1")))
	evil := "http://evil.example:" + port + "/"
	if err := chromedp.Do(ctx, chromedp.Navigate(evil)); err != nil {
		t.Fatal(err)
	}
	if origin := eval[string](t, ctx, `location.origin`); origin != "http://evil.example:"+port {
		t.Fatalf("the page's origin is %q; want the attacker's", origin)
	}
	steal := `(async () => {
		const out = [];
		for (const p of ["/api/v1/queue", "/api/v1/decisions", "/api/v1/trust", "/api/v1/loops", "/metrics", "/readyz", "/"]) {
			const r = await fetch(p);
			out.push(p + " " + r.status + " " + (await r.text()).replace(/\s+/g, " ").slice(0, 200));
		}
		return out.join("\n");
	})()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](steal, func(p *runtime.EvaluateParams) { await := true; p.AwaitPromise = &await }))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(got, "\n") {
		if !strings.Contains(line, " 421 ") || strings.Contains(line, `"pending"`) || strings.Contains(line, `"items"`) || strings.Contains(line, "orbit_") {
			t.Errorf("the attacker's page read %q; want 421 and no data", line)
		}
	}
	// The dashboard, opened as orbit serve printed it, still reads.
	own := tab(t, browserWith(t))
	if err := chromedp.Do(own, chromedp.Navigate(s.url)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, own, "the dashboard on its own origin shows the trust level", levelShown, 10*time.Second)
}
