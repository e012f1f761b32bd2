package hub_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/hub"
	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
)

// pages reads GET path and every page its Link headers lead to, with
// token: the body of each must be a JSON array, and a page shorter than
// limit the last.
func pages(t *testing.T, h http.Handler, path, token string, limit int) (items []map[string]any, n int) {
	t.Helper()
	for path != "" {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "localhost"
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		var page []map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatalf("GET %s: the page is not a JSON array: %v\n%.200s", path, err, w.Body)
		}
		n++
		items = append(items, page...)
		link := w.Header().Get("Link")
		path = ""
		if link != "" {
			next, ok := strings.CutSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			if !ok || len(page) != limit {
				t.Fatalf("GET %s: Link %q after %d items (limit %d)", path, link, len(page), limit)
			}
			path = next
		}
	}
	return items, n
}

// TestDecisionsPagedLikeServe: the hub pages GET /api/v1/decisions as
// orbit serve does, a JSON array with the next page in the Link header,
// and each item is the decision in serve's form with its project beside
// it.
func TestDecisionsPagedLikeServe(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s *hub.Store) {
		a := newProject(t, "proj-a", map[string]string{project.DecisionsFile: synthJournal(t, 40, 1)})
		url := serve(t, s)
		a.push(t, url, adminToken)
		h := hub.NewServer(s, hub.Config{Admin: adminToken, Now: func() time.Time { return testNow }}).Handler()
		fromHub, n := pages(t, h, "/api/v1/decisions?project=proj-a&limit=15", adminToken, 15)
		if len(fromHub) != 40 || n != 3 {
			t.Fatalf("hub: %d decisions in %d pages; want 40 in 3", len(fromHub), n)
		}

		srv, err := server.New(context.Background(), a.local(t), server.Config{Token: "page-test-token-0123456789abcdef", Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		fromServe, _ := pages(t, srv.Handler(), "/api/v1/decisions?limit=15", "", 15)
		if len(fromServe) != 40 {
			t.Fatalf("orbit serve: %d decisions; want 40", len(fromServe))
		}
		for i := range fromHub {
			if p := fromHub[i]["project"]; p != "proj-a" {
				t.Errorf("hub item %d: project %v; want proj-a", i, p)
			}
			delete(fromHub[i], "project")
			if !reflect.DeepEqual(fromHub[i], fromServe[i]) {
				t.Errorf("item %d differs:\nhub   %v\nserve %v", i, fromHub[i], fromServe[i])
			}
		}
	})
}
