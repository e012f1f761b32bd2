package server

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// hub fans sync notifications out to the dashboards' event streams.
type hub struct {
	mu     sync.Mutex
	subs   map[chan string]bool
	closed bool
}

func newHub() *hub { return &hub{subs: map[chan string]bool{}} }

func (h *hub) subscribe() (chan string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	c := make(chan string, 8)
	h.subs[c] = true
	return c, true
}

func (h *hub) unsubscribe(c chan string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[c] {
		delete(h.subs, c)
		close(c)
	}
}

// publish sends data to every subscriber; a slow one misses it (the next
// event tells it to refresh anyway).
func (h *hub) publish(data string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- data:
		default:
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for c := range h.subs {
		delete(h.subs, c)
		close(c)
	}
}

// handleEvents streams server-sent events: "sync" whenever the index
// changes, a comment every 15 s to keep proxies from closing the stream.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	client := clientOf(r)
	if !s.streams.acquire(client) {
		w.Header().Set("Retry-After", "30")
		problem(w, r, http.StatusServiceUnavailable, "too many event streams",
			fmt.Sprintf("at most %d streams at once, %d per client address: close another dashboard, or poll the API", s.cfg.MaxStreams, s.cfg.MaxStreamsPerClient))
		return
	}
	defer s.streams.release(client)
	c, ok := s.hub.subscribe()
	if !ok {
		problem(w, r, http.StatusServiceUnavailable, "shutting down", "")
		return
	}
	defer s.hub.unsubscribe(c)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "event: hello\ndata: {\"generation\":%d}\n\n", s.gen.Load())
	rc.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		select {
		case <-r.Context().Done():
			return
		case data, ok := <-c:
			if !ok {
				return
			}
			if _, err := fmt.Fprintf(w, "event: sync\ndata: %s\n\n", data); err != nil {
				return
			}
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		rc.Flush()
	}
}
