package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/project"
)

// File is where a project keeps its remotes: names, hub URLs and where each
// one's token is read from (never the token itself).
const File = ".claude/orbit-remotes.json"

// Remote is a hub a project pushes to.
type Remote struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// TokenFile is a file holding the token (mode 0600); empty: the token
	// comes from ORBIT_TOKEN or --token-file when pushing.
	TokenFile string `json:"token_file,omitempty"`
}

type config struct {
	Remotes []Remote `json:"remotes"`
}

// maxConfigBytes bounds the remotes file.
const maxConfigBytes = 64 << 10

// List returns the project's remotes, in the order added.
func List(p project.Project) ([]Remote, error) {
	c, err := read(p)
	return c.Remotes, err
}

// Get returns the remote called name; with name "" the only remote, if
// there is exactly one.
func Get(p project.Project, name string) (Remote, error) {
	rs, err := List(p)
	if err != nil {
		return Remote{}, err
	}
	if name == "" {
		switch len(rs) {
		case 0:
			return Remote{}, errors.New("no remote: add one with `orbit remote add NAME URL`")
		case 1:
			return rs[0], nil
		}
		return Remote{}, fmt.Errorf("%d remotes (%s): name the one to use", len(rs), strings.Join(names(rs), ", "))
	}
	for _, r := range rs {
		if r.Name == name {
			return r, nil
		}
	}
	return Remote{}, fmt.Errorf("no remote %q (remotes: %s)", name, orNone(names(rs)))
}

// Add records a remote. The URL is the hub's base (http or https, no
// credentials, no query); a token file, when given, must exist with mode
// 0600.
func Add(p project.Project, r Remote) error {
	if !project.IsName(r.Name, true) {
		return fmt.Errorf("remote name %q: want 1 to 64 of A-Z, a-z, 0-9, '.', '_', '-'", r.Name)
	}
	u, err := CheckURL(r.URL)
	if err != nil {
		return err
	}
	r.URL = u
	if r.TokenFile != "" {
		if _, err := ReadTokenFile(r.TokenFile); err != nil {
			return err
		}
	}
	c, err := read(p)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(c.Remotes, func(x Remote) bool { return x.Name == r.Name }) {
		return fmt.Errorf("remote %q exists (remove it first to change it)", r.Name)
	}
	c.Remotes = append(c.Remotes, r)
	return write(p, c)
}

// Remove forgets a remote.
func Remove(p project.Project, name string) error {
	c, err := read(p)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(c.Remotes, func(x Remote) bool { return x.Name == name })
	if i < 0 {
		return fmt.Errorf("no remote %q (remotes: %s)", name, orNone(names(c.Remotes)))
	}
	c.Remotes = slices.Delete(c.Remotes, i, i+1)
	return write(p, c)
}

// CheckURL validates a hub URL and returns it without a trailing slash.
func CheckURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("URL %q: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("URL %q: want http:// or https://", raw)
	case u.Host == "":
		return "", fmt.Errorf("URL %q: no host", raw)
	case u.User != nil:
		return "", fmt.Errorf("URL %q: carries credentials; a token goes in ORBIT_TOKEN or a --token-file, never in a URL", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("URL %q: no query or fragment, please (a token goes in ORBIT_TOKEN or a --token-file)", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func names(rs []Remote) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func read(p project.Project) (config, error) {
	var c config
	data, err := project.ReadFile(p.Root, File, maxConfigBytes)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%s: %v (fix or remove the file)", File, err)
	}
	return c, nil
}

func write(p project.Project, c config) error {
	if c.Remotes == nil {
		c.Remotes = []Remote{}
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return journal.WriteFileAtomic(p.Root, File, append(data, '\n'), 0o644)
}

// TokenEnv is the variable a token may come from.
const TokenEnv = "ORBIT_TOKEN"

// ReadTokenFile reads a token from a file that only its owner may read or
// write (mode 0600 or stricter): a token is a password.
func ReadTokenFile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("token file %s: mode %04o lets others read it; run `chmod 600 %s`", path, perm, path)
	}
	data, err := project.ReadFile("", path, 4<<10)
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("token file %s: want the token alone on one line", path)
	}
	return tok, nil
}

// Token picks the token for r: --token-file (flag) first, then the
// environment (ORBIT_TOKEN), then the remote's own token file.
func Token(r Remote, flagFile string, getenv func(string) string) (string, error) {
	switch {
	case flagFile != "":
		return ReadTokenFile(flagFile)
	case getenv(TokenEnv) != "":
		return strings.TrimSpace(getenv(TokenEnv)), nil
	case r.TokenFile != "":
		return ReadTokenFile(r.TokenFile)
	}
	return "", fmt.Errorf("no token for remote %q: set %s, or pass --token-file FILE (mode 0600), or `orbit remote add %s URL --token-file FILE`", r.Name, TokenEnv, r.Name)
}
