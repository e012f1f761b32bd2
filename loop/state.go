package loop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/jsonedit"
	"github.com/orbit-loop/orbit/project"
)

// ErrNoState reports that the project has no state file (no loop started).
var ErrNoState = errors.New("no loop state file")

// State is a JSON object file that orbit edits in place (the ORBIT loop
// state file, the frameworks' loop records): setting or deleting a field
// changes the bytes of that field only, and every other byte (other
// fields, their order, blank lines, inline objects, indentation) stays as
// it was. The zero State (a Path alone) is a new, empty object.
type State struct {
	// Root is the project the file belongs to ("" for none): the file is
	// read and written as every project file is (project.OpenFile).
	Root string
	Path string
	doc  *jsonedit.Doc
}

// d is the state's document, an empty object when new.
func (s *State) d() *jsonedit.Doc {
	if s.doc == nil {
		s.doc, _ = jsonedit.ParseDoc([]byte("{}\n"))
	}
	return s.doc
}

// MaxStateBytes bounds a state file orbit reads.
const MaxStateBytes = 4 << 20

// ReadState reads the state file at path (absolute, or relative to root).
// A missing file is ErrNoState; a malformed one is an error naming the file
// and the position.
func ReadState(root, path string) (*State, error) {
	path = project.Abs(root, path)
	data, err := project.ReadFile(root, path, MaxStateBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoState)
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	st, err := ParseState(path, data)
	if st != nil {
		st.Root = root
	}
	return st, err
}

// ParseState parses a state file's bytes.
func ParseState(path string, data []byte) (*State, error) {
	return ParseObject(path, "state file", data)
}

// ParseObject parses any JSON object into an ordered State; what names the
// kind of file in errors ("settings file").
func ParseObject(path, what string, data []byte) (*State, error) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	fail := func(err error) error {
		// The decoder's offsets are relative to what each call saw; a
		// whole-document parse gives the position in the file.
		off := dec.InputOffset()
		var whole any
		var se *json.SyntaxError
		if werr := json.Unmarshal(data, &whole); errors.As(werr, &se) {
			// Offset counts the bytes read, the offending one included.
			off = se.Offset
			if off > 0 && off <= int64(len(data)) && se.Error() != "unexpected end of JSON input" {
				off--
			}
		}
		line, col := Position(data, off)
		return fmt.Errorf("%s:%d:%d: invalid %s: %v", path, line, col, what, strings.TrimPrefix(err.Error(), "json: "))
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fail(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fail(fmt.Errorf("want a JSON object"))
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return nil, fail(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fail(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fail(fmt.Errorf("unexpected data after the object"))
	}
	doc, err := jsonedit.ParseDoc(data)
	if err != nil {
		return nil, fail(err)
	}
	return &State{Path: path, doc: doc}, nil
}

// Position is the line and column (from 1) of the byte at offset off in data.
func Position(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func (s *State) get(key string) (json.RawMessage, bool) {
	raw, ok := s.d().Raw(key)
	return json.RawMessage(raw), ok
}

// Set sets a field to v, keeping its place (new fields go last, laid out
// like the one before). v is encoded as Marshal does ("<promise>" stays
// greppable).
func (s *State) Set(key string, v any) error { return s.SetAt([]string{key}, v) }

// SetAt sets the field at path (keys from the top; the objects on the way
// must exist) to v.
func (s *State) SetAt(path []string, v any) error {
	raw, err := Marshal(v)
	if err != nil {
		return fmt.Errorf("set %s in %s: %w", strings.Join(path, "."), s.Path, err)
	}
	if err := s.d().Set(path, raw); err != nil {
		return fmt.Errorf("%s: %w", s.Path, err)
	}
	return nil
}

// AppendAt appends v to the array at path, laid out like its elements.
func (s *State) AppendAt(path []string, v any) error {
	raw, err := Marshal(v)
	if err != nil {
		return fmt.Errorf("append to %s in %s: %w", strings.Join(path, "."), s.Path, err)
	}
	if err := s.d().Append(path, raw); err != nil {
		return fmt.Errorf("%s: %w", s.Path, err)
	}
	return nil
}

// Int reads an integer field; ok is false when it is absent or null.
func (s *State) Int(key string) (v int64, ok bool, err error) {
	raw, found := s.get(key)
	if !found || string(raw) == "null" {
		return 0, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, false, fmt.Errorf("%s: %s is %s, want an integer", s.Path, key, raw)
	}
	return v, true, nil
}

// Bool reads a boolean field.
func (s *State) Bool(key string) (v bool, ok bool, err error) {
	raw, found := s.get(key)
	if !found || string(raw) == "null" {
		return false, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, false, fmt.Errorf("%s: %s is %s, want true or false", s.Path, key, raw)
	}
	return v, true, nil
}

// String reads a string field.
func (s *State) String(key string) (v string, ok bool, err error) {
	return s.StringAt(key)
}

// StringAt reads the string field at path.
func (s *State) StringAt(path ...string) (v string, ok bool, err error) {
	raw, found := s.RawAt(path...)
	if !found || string(raw) == "null" {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false, fmt.Errorf("%s: %s is %s, want a string", s.Path, strings.Join(path, "."), raw)
	}
	return v, true, nil
}

// Bytes is the file's content: as read, with the edits made.
func (s *State) Bytes() []byte { return s.d().Bytes() }

// Delete removes a field (no-op when absent).
func (s *State) Delete(key string) { s.DeleteAt(key) }

// DeleteAt removes the field at path (no-op when absent).
func (s *State) DeleteAt(path ...string) error {
	if err := s.d().Delete(path...); err != nil {
		return fmt.Errorf("%s: %w", s.Path, err)
	}
	return nil
}

// Write replaces the state file atomically with the state's bytes.
func (s *State) Write() error { return journal.WriteFileAtomic(s.Root, s.Path, s.Bytes(), 0o644) }

// Raw returns a field's JSON as written.
func (s *State) Raw(key string) (json.RawMessage, bool) { return s.get(key) }

// RawAt returns the JSON of the field at path as written.
func (s *State) RawAt(path ...string) (json.RawMessage, bool) {
	raw, ok := s.d().Raw(path...)
	return json.RawMessage(raw), ok
}

// SetRaw sets a field to JSON given as bytes (checked).
func (s *State) SetRaw(key string, raw []byte) error {
	if !json.Valid(raw) {
		return fmt.Errorf("set %s in %s: not JSON", key, s.Path)
	}
	if err := s.d().Set([]string{key}, bytes.TrimSpace(raw)); err != nil {
		return fmt.Errorf("%s: %w", s.Path, err)
	}
	return nil
}

// Marshal encodes v as JSON the way Node's JSON.stringify does (the
// frameworks' own scripts write their files with it): no HTML escaping of
// <, > and &.
func Marshal(v any) (json.RawMessage, error) { return jsonedit.Marshal(v) }

// LocksDir holds the locks orbit takes to rewrite files that belong to
// other frameworks: in orbit's own directory, never beside the user's
// files (which the frameworks list, and the user sees in git status).
const LocksDir = ".claude/orbit-locks"

// LockPath is the lock orbit takes to rewrite the file at path under root:
// one lock file in LocksDir per file, named for the file's path relative to
// root (a hash of it, then its name for people), so that every orbit
// process editing the file takes the same lock.
func LockPath(root, path string) string {
	rel := Rel(root, path)
	sum := sha256.Sum256([]byte(rel))
	return filepath.Join(root, filepath.FromSlash(LocksDir), hex.EncodeToString(sum[:8])+"-"+filepath.Base(path)+".lock")
}

// Lock takes the lock of the file at path under root (LockPath) and returns
// the function that releases it.
func Lock(ctx context.Context, root, path string) (unlock func() error, err error) {
	return flock.Path(ctx, root, LockPath(root, path))
}

// removeLegacyLock removes the empty .{name}.lock an earlier orbit left
// beside the file at path.
func removeLegacyLock(path string) {
	legacy := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
	if fi, err := os.Lstat(legacy); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		os.Remove(legacy)
	}
}

// Edit rewrites the JSON object file at path under root, under its lock
// (Lock): fn edits the object read fresh from disk, and the result replaces
// the file atomically (temp file, fsync, rename). Only the fields fn sets
// or deletes change: every other byte stays as it was.
func Edit(ctx context.Context, root, path string, fn func(*State) error) error {
	unlock, err := Lock(ctx, root, path)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := ReadState(root, path)
	if errors.Is(err, ErrNoState) {
		return fmt.Errorf("%s: the loop's file is gone", path)
	}
	if err != nil {
		return err
	}
	before := string(st.Bytes())
	if err := fn(st); err != nil {
		return err
	}
	if string(st.Bytes()) != before {
		if err := st.Write(); err != nil {
			return err
		}
	}
	removeLegacyLock(path)
	return nil
}

// CheckID refuses a loop id that is not a plain file name: loop ids name
// files in the frameworks' registry directories, and must not escape them.
func CheckID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return fmt.Errorf("loop id %q: must be a file name (no slashes, not starting with a dot)", id)
	}
	return nil
}
