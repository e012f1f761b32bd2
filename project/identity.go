package project

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// IdentityFile holds the project's stable identity: the id a hub knows it
// by, whatever directory or machine it is checked out in.
const IdentityFile = ".claude/orbit-project.json"

// Identity is what IdentityFile holds.
type Identity struct {
	// ID names the project in a hub: lower-case letters, digits, '.', '_'
	// and '-', at most 64 characters.
	ID string `json:"id"`
	// Name is a label for people (the directory's name when created).
	Name    string `json:"name"`
	Created string `json:"created"`
}

// CheckID says why id cannot name a project, or returns nil. "*" (every
// project) is never an id.
func CheckID(id string) error {
	if !IsName(id, false) {
		return fmt.Errorf("project id %q: want 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit", id)
	}
	return nil
}

// ErrNoIdentity is returned by ReadIdentity when the project has none yet.
var ErrNoIdentity = errors.New("project has no identity")

// maxIdentityBytes bounds the identity file's size.
const maxIdentityBytes = 4 << 10

// ReadIdentity reads the project's identity file.
func (p Project) ReadIdentity() (Identity, error) {
	data, err := ReadFile(p.Root, IdentityFile, maxIdentityBytes)
	if errors.Is(err, os.ErrNotExist) {
		return Identity{}, fmt.Errorf("%w: %s is missing (run `orbit init` to create it)", ErrNoIdentity, IdentityFile)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("read: %w", err)
	}
	var id Identity
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&id); err != nil {
		return Identity{}, fmt.Errorf("%s: not a JSON object with an \"id\": %v", IdentityFile, err)
	}
	if err := CheckID(id.ID); err != nil {
		return Identity{}, fmt.Errorf("%s: %w", IdentityFile, err)
	}
	return id, nil
}

// EnsureIdentity returns the project's identity, creating the file with a
// new random id when there is none. It never replaces an existing file: two
// processes racing to create it agree on the one that landed first.
func (p Project) EnsureIdentity(now time.Time) (id Identity, created bool, err error) {
	id, err = p.ReadIdentity()
	if !errors.Is(err, ErrNoIdentity) {
		return id, false, err
	}
	id = Identity{ID: NewID(), Name: filepath.Base(p.Root), Created: now.UTC().Format(time.RFC3339)}
	data, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return Identity{}, false, err
	}
	// Write beside it, then link into place: the file appears whole or not
	// at all, and link fails rather than replace one that appeared meanwhile.
	d, err := OpenDir(p.Root, filepath.Dir(IdentityFile), true)
	if err != nil {
		return Identity{}, false, fmt.Errorf("create %s: %w", IdentityFile, err)
	}
	defer d.Close()
	tmp, err := d.CreateTemp(".orbit-project.json.tmp-", 0o644)
	if err != nil {
		return Identity{}, false, fmt.Errorf("create %s: %w", IdentityFile, err)
	}
	defer d.Remove(filepath.Base(tmp.Name()))
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return Identity{}, false, fmt.Errorf("create %s: %w", IdentityFile, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return Identity{}, false, fmt.Errorf("create %s: %w", IdentityFile, err)
	}
	if err := tmp.Close(); err != nil {
		return Identity{}, false, fmt.Errorf("create %s: %w", IdentityFile, err)
	}
	if err := d.Link(filepath.Base(tmp.Name()), filepath.Base(IdentityFile)); errors.Is(err, os.ErrExist) {
		id, err = p.ReadIdentity()
		return id, false, err
	} else if err != nil {
		return Identity{}, false, fmt.Errorf("create %s: %w", IdentityFile, err)
	}
	d.Sync()
	return id, true, nil
}

// NewID returns a random project id: 16 base32 characters (80 bits).
func NewID() string {
	b := make([]byte, 10)
	rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// IsName reports whether s can name a project or a remote: safe in a URL, a
// file name and a log line. That is 1 to 64 of a-z (and A-Z when upper),
// 0-9, '.', '_' and '-', starting with a letter or a digit. (A loop, not a
// regexp: compiling one at start-up cost every hook 0.17 ms.)
func IsName(s string, upper bool) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case upper && 'A' <= c && c <= 'Z':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
