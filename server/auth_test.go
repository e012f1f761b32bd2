package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
)

// Off loopback, the dashboard's reads carry the token as a cookie (an
// EventSource or an <img> cannot send a header); a write never accepts it.
func TestTokenCookieForReadsOnly(t *testing.T) {
	e := newEnv(t, synthJournal(t, 20), server.Config{Addr: "0.0.0.0:0", Token: testToken})
	e.serve()
	do := func(method, path, cookie, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "orbit_token", Value: cookie})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		method, path, cookie, body string
		want                       int
	}{
		{"GET", "/api/v1/trust", testToken, "", 200},
		{"GET", "/api/v1/trust/chart.svg", testToken, "", 200},
		{"GET", "/api/v1/trust", "wrong", "", 401},
		{"GET", "/api/v1/trust", "", "", 401},
		{"GET", "/metrics", "", "", 401},
		{"GET", "/metrics", testToken, "", 200},
		{"GET", "/healthz", "", "", 200},
		{"GET", "/", "", "", 200},
		{"POST", "/api/v1/decisions", testToken, `{"title":"x","category":"quality","impact":"low","reversible":true}`, 401},
	} {
		if got := do(tt.method, tt.path, tt.cookie, tt.body); got != tt.want {
			t.Errorf("%s %s with cookie %q: status %d; want %d", tt.method, tt.path, tt.cookie, got, tt.want)
		}
	}
	if n := len(e.lines(project.DecisionsFile)); n != 20 {
		t.Errorf("the journal has %d lines; want the 20 it started with (a cookie-only write must record nothing)", n)
	}
}
