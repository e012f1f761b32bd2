package server_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
)

// eventually polls cond for up to 10 s.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// sseEvent is one server-sent event.
type sseEvent struct{ name, data string }

// readEvents sends the events of the stream at url to the returned channel
// until ctx ends.
func readEvents(t *testing.T, ctx context.Context, url string) <-chan sseEvent {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %s, Content-Type %q; want 200 text/event-stream", url, res.Status, res.Header.Get("Content-Type"))
	}
	ch := make(chan sseEvent, 16)
	go func() {
		defer close(ch)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || ev.data != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch
}

func nextEvent(t *testing.T, ch <-chan sseEvent, within time.Duration) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the event stream ended")
		}
		return ev
	case <-time.After(within):
		t.Fatalf("no event within %s", within)
	}
	return sseEvent{}
}

// TestEvents: a client gets "hello", then "sync" once a line appended by
// hand is picked up by the poller.
func TestEvents(t *testing.T) {
	e := newEnv(t, synthJournal(t, 10), server.Config{})
	e.serve()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch := readEvents(t, ctx, e.url+"/api/v1/events")
	hello := nextEvent(t, ch, 5*time.Second)
	if hello.name != "hello" || !strings.Contains(hello.data, `"generation"`) {
		t.Fatalf("first event = %+v; want hello with the generation", hello)
	}
	// Nothing changes: no sync event.
	select {
	case ev := <-ch:
		t.Fatalf("event %+v before anything changed", ev)
	case <-time.After(200 * time.Millisecond):
	}
	e.appendRecords(project.DecisionsFile, ptr(fixedDecision("iter-500-1", 500, "quality")))
	ev := nextEvent(t, ch, 10*time.Second)
	if ev.name != "sync" || !strings.Contains(ev.data, `"generation"`) || ev.data == hello.data {
		t.Fatalf("event after an append = %+v; want sync with a new generation (hello was %s)", ev, hello.data)
	}
	if !e.indexed("iter-500-1") {
		t.Errorf("iter-500-1 is not indexed when the sync event arrives")
	}
	// A decision posted through the API is announced too.
	r := e.post("/api/v1/decisions", validDecision)
	wantStatus(t, "POST decisions", r, 201)
	if ev := nextEvent(t, ch, 10*time.Second); ev.name != "sync" {
		t.Errorf("event after a POST = %+v; want sync", ev)
	}
}

// TestEventsEndOnShutdown: shutting down ends open streams, so Run returns
// promptly.
func TestEventsEndOnShutdown(t *testing.T) {
	e := newEnv(t, synthJournal(t, 10), server.Config{})
	stop := e.serve()
	ch := readEvents(t, t.Context(), e.url+"/api/v1/events")
	nextEvent(t, ch, 5*time.Second)
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %s to return with an open event stream", d)
	}
	select {
	case _, ok := <-ch:
		if ok {
			// drain: the stream must end
			for range ch {
			}
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the event stream is still open after shutdown")
	}
}
