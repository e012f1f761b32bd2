package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// What guards the server, in one place: the Host check against DNS
// rebinding, the bearer token and the dashboard's session, the headers
// every answer carries, and the caps on event streams.

// MinTokenLen is the shortest bearer token accepted: 32 characters, 128
// bits as hex (the generated ones are 48 hex characters, 192 bits).
const MinTokenLen = 32

// CheckToken refuses a token too short to resist guessing, or holding
// characters that cannot travel in a header.
func CheckToken(tok string) error {
	if len(tok) < MinTokenLen {
		return fmt.Errorf("the token is %d characters; at least %d are needed (128 bits as hex): `orbit serve --new-token` prints one", len(tok), MinTokenLen)
	}
	for _, c := range tok {
		if c <= ' ' || c > '~' {
			return fmt.Errorf("the token holds %q: use printable ASCII without spaces (`orbit serve --new-token` prints one)", c)
		}
	}
	return nil
}

// IsLoopback reports whether addr (host:port) is a loopback IP address.
// A name is not trusted: "localhost" may resolve elsewhere, so a server
// asked to listen on a name checks the address it bound.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// BearerToken returns the request's bearer token ("" without one); the
// scheme is case-insensitive (RFC 7235).
func BearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// csp is the Content-Security-Policy of every answer: the dashboard's own
// files only, and no page of another site may frame it (clickjacking).
const csp = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// setHeaders sets the headers every answer carries.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// rootKey carries the project root in a request's context: problem
// details name files relative to it.
type rootKey struct{}

// secure wraps the whole surface: the common headers, the Host check on a
// loopback server, and the project root for problem details.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w.Header())
		if s.loopback.Load() {
			if err := checkHost(r, s.tls != nil); err != nil {
				problem(w, r, http.StatusMisdirectedRequest, "misdirected request", err.Error())
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), rootKey{}, s.proj.Root)))
	})
}

// checkHost refuses a request whose Host is not this loopback server: a
// page of another site whose name was made to resolve to 127.0.0.1 (DNS
// rebinding) sends its own name. Accepted: localhost or a loopback
// address, with the port the connection arrived on.
func checkHost(r *http.Request, tls bool) error {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, ""
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	want := ""
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(local.String()); err == nil {
			want = p
		}
	}
	ip := net.ParseIP(host)
	okHost := strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback())
	okPort := port == want || (port == "" && (want == "80" && !tls || want == "443" && tls))
	if want == "" {
		// Not from a listener (a handler called in-process): the name
		// alone is checked.
		okPort = true
	}
	if okHost && okPort {
		return nil
	}
	return fmt.Errorf("Host %q is not this server: on loopback it answers only to localhost or a loopback address on port %s (a page of another site resolved to 127.0.0.1 is refused)", r.Host, want)
}

// scope is what a credential allows.
type scope int

const (
	noAccess scope = iota
	readScope
	writeScope
)

// sessionCookie is the dashboard's read session off loopback: an
// EventSource or an <img> cannot send a header, so the page trades the
// token (sent once, as a header) for this HttpOnly cookie, which reads
// accept and writes never do. On loopback there is none: reads need no
// credential there.
const sessionCookie = "orbit_session"

// sessionTTL is how long a dashboard session lasts.
const sessionTTL = 12 * time.Hour

// maxSessions bounds the sessions kept (the oldest go first).
const maxSessions = 1000

// sessions are the dashboard's read sessions, by random id.
type sessions struct {
	mu sync.Mutex
	m  map[string]time.Time // id -> expiry
}

func (ss *sessions) create(now time.Time) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	id := hex.EncodeToString(b)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[string]time.Time{}
	}
	for k, exp := range ss.m {
		if !exp.After(now) {
			delete(ss.m, k)
		}
	}
	for len(ss.m) >= maxSessions {
		oldest, at := "", time.Time{}
		for k, exp := range ss.m {
			if oldest == "" || exp.Before(at) {
				oldest, at = k, exp
			}
		}
		delete(ss.m, oldest)
	}
	ss.m[id] = now.Add(sessionTTL)
	return id, nil
}

func (ss *sessions) valid(id string, now time.Time) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	exp, ok := ss.m[id]
	return ok && exp.After(now)
}

// access is what the request's credentials allow: the bearer token all, a
// session cookie reads.
func (s *Server) access(r *http.Request) scope {
	if tok := BearerToken(r); tok != "" {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1 {
			return writeScope
		}
		return noAccess
	}
	if c, err := r.Cookie(sessionCookie); err == nil && s.sessions.valid(c.Value, time.Now()) {
		return readScope
	}
	return noAccess
}

// handleSession trades the bearer token for the dashboard's read session
// cookie off loopback (HttpOnly, SameSite=Strict, Secure under TLS); on
// loopback it sets none, reads needing no credential there.
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	if s.loopback.Load() {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	id, err := s.sessions.create(time.Now())
	if err != nil {
		problem(w, r, http.StatusInternalServerError, "internal error", err.Error())
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", MaxAge: int(sessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.tls != nil})
	w.WriteHeader(http.StatusNoContent)
}

// streams caps the event streams open at once, in total and per client
// address: each holds a goroutine and buffers until its client leaves.
type streams struct {
	mu        sync.Mutex
	total     int
	perClient map[string]int
	max, per  int
}

// acquire takes a stream slot for client; false when a cap is reached.
func (st *streams) acquire(client string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.total >= st.max || st.perClient[client] >= st.per {
		return false
	}
	if st.perClient == nil {
		st.perClient = map[string]int{}
	}
	st.total++
	st.perClient[client]++
	return true
}

func (st *streams) release(client string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.total--
	if st.perClient[client]--; st.perClient[client] <= 0 {
		delete(st.perClient, client)
	}
}

// clientOf is the address a request came from, without its port.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limitListener accepts at most n connections open at once; the next
// Accept waits until one closes.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, sem: make(chan struct{}, n)}
}

type limited struct {
	net.Listener
	sem chan struct{}
}

func (l *limited) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.sem })}, nil
}

type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
