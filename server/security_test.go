package server_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orbit-loop/orbit/project"
	"github.com/orbit-loop/orbit/server"
)

// boundAs is a loopback listener that says it bound another address: the
// server then behaves as it does off loopback, and the test still reaches
// it on 127.0.0.1.
type boundAs struct {
	net.Listener
	addr net.Addr
}

func (l boundAs) Addr() net.Addr { return l.addr }

// serveAs runs the server on a loopback port that reports addr as bound.
func (e *env) serveAs(addr string) {
	e.tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.tb.Fatal(err)
	}
	e.url = "http://" + ln.Addr().String()
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		e.tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Run(ctx, boundAs{ln, tcp}) }()
	e.tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.tb.Errorf("Run: %v", err)
		}
	})
}

// call sends a request with the given headers and cookies and returns it
// read whole.
func (e *env) call(method, path string, header map[string]string, cookies []*http.Cookie, body string) response {
	e.tb.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.tb.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() && b.Len() < 1<<20 {
		b.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(path, "/api/v1/events") {
			break // a stream: its first line is enough
		}
	}
	return response{status: res.StatusCode, header: res.Header, body: []byte(b.String())}
}

const decideBody = `{"title":"x","category":"quality","impact":"low","reversible":true}`

// TestOffLoopbackCredentials: off loopback every endpoint but /healthz
// (and the dashboard's static files, which hold no data) needs the token;
// the dashboard trades it for an HttpOnly read session; a cookie never
// allows a write, and the token itself is never accepted as a cookie.
func TestOffLoopbackCredentials(t *testing.T) {
	e := newEnv(t, synthJournal(t, 20), server.Config{Addr: "10.1.2.3:7777", Token: testToken})
	e.serveAs("10.1.2.3:7777")
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	// The session, traded for the token.
	s := e.call("POST", "/api/v1/session", map[string]string{"Authorization": "bearer " + testToken}, nil, "")
	wantStatus(t, "POST /api/v1/session", s, 204)
	var sess *http.Cookie
	for _, c := range (&http.Response{Header: s.header}).Cookies() {
		if c.Name == "orbit_session" {
			sess = c
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Path != "/" || len(sess.Value) < 32 || strings.Contains(sess.Value, testToken) {
		t.Fatalf("session cookie = %+v; want an HttpOnly, SameSite=Strict cookie of its own", sess)
	}
	tokenCookie := &http.Cookie{Name: "orbit_token", Value: testToken}
	forged := &http.Cookie{Name: "orbit_session", Value: strings.Repeat("0", 32)}
	for _, tt := range []struct {
		method, path string
		header       map[string]string
		cookies      []*http.Cookie
		body         string
		want         int
	}{
		{"GET", "/healthz", nil, nil, "", 200},
		{"GET", "/", nil, nil, "", 200},
		{"GET", "/api/v1/trust", nil, nil, "", 401},
		{"GET", "/readyz", nil, nil, "", 401},
		{"GET", "/metrics", nil, nil, "", 401},
		{"GET", "/api/v1/openapi.json", nil, nil, "", 401},
		{"GET", "/api/v1/trust", bearer, nil, "", 200},
		{"GET", "/api/v1/trust", map[string]string{"Authorization": "BEARER " + testToken}, nil, "", 200},
		{"GET", "/api/v1/trust", map[string]string{"Authorization": "Bearer wrong-token-wrong-token-wrong-token"}, nil, "", 401},
		{"GET", "/api/v1/trust", nil, []*http.Cookie{tokenCookie}, "", 401},
		{"GET", "/api/v1/trust", nil, []*http.Cookie{forged}, "", 401},
		{"GET", "/api/v1/trust", nil, []*http.Cookie{sess}, "", 200},
		{"GET", "/api/v1/trust/chart.svg", nil, []*http.Cookie{sess}, "", 200},
		{"GET", "/api/v1/events", nil, []*http.Cookie{sess}, "", 200},
		{"GET", "/readyz", nil, []*http.Cookie{sess}, "", 200},
		{"POST", "/api/v1/decisions", nil, []*http.Cookie{sess, tokenCookie}, decideBody, 401},
		{"POST", "/api/v1/session", nil, []*http.Cookie{sess}, "", 401},
		// Off loopback any Host is fine: the token is the guard.
		{"GET", "/api/v1/trust", map[string]string{"Authorization": "Bearer " + testToken, "Host": "orbit.example:7777"}, nil, "", 200},
	} {
		if got := e.call(tt.method, tt.path, tt.header, tt.cookies, tt.body); got.status != tt.want {
			t.Errorf("%s %s (header %v, cookies %d): status %d; want %d", tt.method, tt.path, tt.header, len(tt.cookies), got.status, tt.want)
		}
	}
	if n := len(e.lines(project.DecisionsFile)); n != 20 {
		t.Errorf("the journal has %d lines; want the 20 it started with (a cookie-only write records nothing)", n)
	}
}

// TestLoopbackHostCheck: on loopback a request must name this server in
// its Host (DNS rebinding: a page of evil.example resolved to 127.0.0.1
// sends Host evil.example); no session cookie is ever set there.
func TestLoopbackHostCheck(t *testing.T) {
	e := newEnv(t, synthJournal(t, 5), server.Config{})
	e.serve()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(e.url, "http://"))
	for _, tt := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, 200},
		{"localhost:" + port, 200},
		{"LOCALHOST:" + port, 200},
		{"[::1]:" + port, 200},
		{"127.0.0.2:" + port, 200},
		{"evil.example:" + port, 421},
		{"127.0.0.1.nip.io:" + port, 421},
		{"localhost.evil.example:" + port, 421},
		{"localhost:1", 421},
		{"localhost", 421},
		{"10.0.0.1:" + port, 421},
	} {
		for _, path := range []string{"/api/v1/decisions", "/api/v1/queue", "/healthz", "/"} {
			r := e.call("GET", path, map[string]string{"Host": tt.host}, nil, "")
			if r.status != tt.want {
				t.Errorf("GET %s with Host %q: status %d; want %d", path, tt.host, r.status, tt.want)
			}
			if tt.want == 421 && strings.Contains(string(r.body), `"items"`) {
				t.Errorf("GET %s with Host %q answered data: %s", path, tt.host, r.body)
			}
		}
	}
	r := e.call("POST", "/api/v1/session", map[string]string{"Authorization": "Bearer " + testToken}, nil, "")
	if r.status != 204 || r.header.Get("Set-Cookie") != "" {
		t.Errorf("POST /api/v1/session on loopback: %d, Set-Cookie %q; want 204 and no cookie", r.status, r.header.Get("Set-Cookie"))
	}
}

// TestBoundAddressDecidesLoopback: a server whose listener bound an
// address off loopback (whatever name it was asked for) needs a token.
func TestBoundAddressDecidesLoopback(t *testing.T) {
	for _, addr := range []string{"localhost:7777", "0.0.0.0:7777", "orbit.example:7777"} {
		if server.IsLoopback(addr) {
			t.Errorf("IsLoopback(%q) = true; a name or a wildcard is not a loopback address", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:7777", "[::1]:7777", "127.9.9.9:1"} {
		if !server.IsLoopback(addr) {
			t.Errorf("IsLoopback(%q) = false", addr)
		}
	}
	e := newEnv(t, "", server.Config{Addr: "127.0.0.1:7777", Token: "", Now: nil})
	// newEnv gives the test token; a server without one given must not
	// serve off loopback.
	ix := e.ix
	srv, err := server.New(e.ctx, ix, server.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = srv.Run(e.ctx, boundAs{ln, &net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 7777}})
	if err == nil || !strings.Contains(err.Error(), "192.168.1.5:7777 is not a loopback address") || !strings.Contains(err.Error(), "--token") {
		t.Errorf("Run off loopback without a token = %v; want a refusal asking for --token", err)
	}
}

func TestWeakTokensRefused(t *testing.T) {
	e := newEnv(t, "", server.Config{})
	for _, tok := range []string{"a", " ", strings.Repeat("a", 31), strings.Repeat("a", 31) + " ", strings.Repeat("é", 20)} {
		if _, err := server.New(e.ctx, e.ix, server.Config{Addr: "0.0.0.0:7777", Token: tok}); err == nil {
			t.Errorf("server.New with token %q: accepted; want refused", tok)
		}
	}
	tok, err := server.NewToken()
	if err != nil || server.CheckToken(tok) != nil || len(tok) < 32 {
		t.Errorf("NewToken() = %q, %v; want a token CheckToken accepts", tok, err)
	}
}

// TestFramingHeaders: no page of another site may frame any answer.
func TestFramingHeaders(t *testing.T) {
	e := newEnv(t, synthJournal(t, 3), server.Config{})
	e.serve()
	for _, path := range []string{"/", "/app.js", "/api/v1/trust", "/api/v1/nope", "/healthz"} {
		r := e.call("GET", path, nil, nil, "")
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q; want frame-ancestors 'none'", path, csp)
		}
		if xfo := r.header.Get("X-Frame-Options"); xfo != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q; want DENY", path, xfo)
		}
	}
}

// TestEventStreamCaps: streams past the caps are refused with 503.
func TestEventStreamCaps(t *testing.T) {
	e := newEnv(t, synthJournal(t, 3), server.Config{MaxStreams: 3, MaxStreamsPerClient: 2})
	e.serve()
	open := func() (*http.Response, error) {
		return http.Get(e.url + "/api/v1/events")
	}
	var held []*http.Response
	defer func() {
		for _, r := range held {
			r.Body.Close()
		}
	}()
	for i := range 2 {
		r, err := open()
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("stream %d: %v, %v", i+1, r, err)
		}
		held = append(held, r)
	}
	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 503 || r.Header.Get("Retry-After") == "" {
		t.Errorf("a third stream from one client: %d (Retry-After %q); want 503 with Retry-After", r.StatusCode, r.Header.Get("Retry-After"))
	}
	// Closing one frees its slot.
	held[0].Body.Close()
	held = held[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := open()
		if err == nil && r.StatusCode == 200 {
			held = append(held, r)
			break
		}
		if r != nil {
			r.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream closed did not free its slot")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProblemPathsRelative: a problem detail names the project's files
// relative to its root, even from the token-free /readyz.
func TestProblemPathsRelative(t *testing.T) {
	e := newEnv(t, synthJournal(t, 3), server.Config{})
	e.serve()
	journal := e.proj.Path(project.DecisionsFile)
	os.Rename(journal, journal+".real")
	if err := os.Symlink(journal+".real", journal); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var r response
	for time.Now().Before(deadline) {
		if r = e.get("/readyz"); r.status == 503 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	p := r.problem(t)
	if r.status != 503 || !strings.Contains(p.Detail, ".claude/ceo-loop-decisions.jsonl: a symbolic link") || strings.Contains(p.Detail, e.proj.Root) {
		t.Errorf("/readyz = %d %+v; want 503 naming .claude/ceo-loop-decisions.jsonl without %s", r.status, p, e.proj.Root)
	}
}

// TestReadyzStuckWriter: a write that holds the index past StuckAfter
// (here: the journal's lock held by a hung process) makes /readyz say so.
func TestReadyzStuckWriter(t *testing.T) {
	e := newEnv(t, synthJournal(t, 3), server.Config{StuckAfter: 200 * time.Millisecond})
	e.serve()
	f, err := os.OpenFile(e.proj.Path(project.DecisionsFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	posted := make(chan response, 1)
	go func() { posted <- e.post("/api/v1/decisions", decideBody) }()
	deadline := time.Now().Add(10 * time.Second)
	var r response
	for time.Now().Before(deadline) {
		if r = e.get("/readyz"); r.status == 503 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p := r.problem(t); r.status != 503 || p.Title != "not ready: the writer is stuck" {
		t.Errorf("/readyz while the journal is locked = %d %+v; want 503, the writer stuck", r.status, p)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if got := <-posted; got.status != 201 {
		t.Errorf("the decision after the lock was released: %s", got)
	}
	if r := e.get("/readyz"); r.status != 200 {
		t.Errorf("/readyz after: %s", r)
	}
}

// TestTLS: with a certificate and key the server speaks HTTPS only, and
// the session cookie is Secure.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	e := newEnv(t, synthJournal(t, 3), server.Config{Addr: "10.1.2.3:7777", Token: testToken, TLSCert: certFile, TLSKey: keyFile})
	e.serveAs("10.1.2.3:7777")
	addr := strings.TrimPrefix(e.url, "http://")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "orbit.test"}}}
	req, _ := http.NewRequest("POST", "https://"+addr+"/api/v1/session", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("HTTPS: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 204 || !strings.Contains(res.Header.Get("Set-Cookie"), "Secure") {
		t.Errorf("POST /api/v1/session over TLS: %d, Set-Cookie %q; want 204 and a Secure cookie", res.StatusCode, res.Header.Get("Set-Cookie"))
	}
	if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Errorf("plain HTTP answered 200 on a TLS server")
		}
	}
	if _, err := server.New(e.ctx, e.ix, server.Config{Addr: "127.0.0.1:0", TLSCert: certFile, TLSKey: filepath.Join(dir, "missing.pem")}); err == nil || !strings.Contains(err.Error(), "--tls-cert/--tls-key") {
		t.Errorf("a missing key: %v; want an error naming the flags", err)
	}
}

// selfSigned writes a self-signed certificate for orbit.test and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "orbit.test"}, DNSNames: []string{"orbit.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestMaxConns: past MaxConns open connections, the next waits (in the
// kernel's backlog) until one closes: a flood costs bounded memory.
func TestMaxConns(t *testing.T) {
	e := newEnv(t, synthJournal(t, 3), server.Config{MaxConns: 2})
	e.serve()
	addr := strings.TrimPrefix(e.url, "http://")
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	time.Sleep(100 * time.Millisecond) // let the server accept both
	client := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	if res, err := client.Get(e.url + "/healthz"); err == nil {
		res.Body.Close()
		t.Fatalf("a third connection was served while two were open (MaxConns 2)")
	}
	idle[0].Close()
	client.Timeout = 10 * time.Second
	res, err := client.Get(e.url + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("after one closed: %v, %v; want served", res, err)
	}
	res.Body.Close()
	idle[1].Close()
}
