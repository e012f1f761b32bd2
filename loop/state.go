package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
)

// ErrNoState reports that the project has no state file (no loop started).
var ErrNoState = errors.New("no loop state file")

// field is one top-level member of the state object, its value kept raw.
type field struct {
	key string
	raw json.RawMessage
}

// State is the ORBIT loop state file as an ordered object: reading and
// writing it back changes only the fields set, keeps the others' values and
// their order.
type State struct {
	Path   string
	fields []field
}

// ReadState reads the state file at path. A missing file is ErrNoState; a
// malformed one is an error naming the file and the position.
func ReadState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoState)
	}
	if err != nil {
		return nil, fmt.Errorf("read state %s: %w", path, err)
	}
	return ParseState(path, data)
}

// ParseState parses a state file's bytes.
func ParseState(path string, data []byte) (*State, error) {
	return ParseObject(path, "state file", data)
}

// ParseObject parses any JSON object into an ordered State; what names the
// kind of file in errors ("settings file").
func ParseObject(path, what string, data []byte) (*State, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
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
	s := &State{Path: path}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fail(err)
		}
		s.set(key, raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fail(fmt.Errorf("unexpected data after the object"))
	}
	return s, nil
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

func (s *State) set(key string, raw json.RawMessage) {
	for i := range s.fields {
		if s.fields[i].key == key {
			s.fields[i].raw = raw
			return
		}
	}
	s.fields = append(s.fields, field{key: key, raw: raw})
}

func (s *State) get(key string) (json.RawMessage, bool) {
	for _, f := range s.fields {
		if f.key == key {
			return f.raw, true
		}
	}
	return nil, false
}

// Set sets a field to v, keeping its place (new fields go last). v is
// encoded as Marshal does ("<promise>" stays greppable).
func (s *State) Set(key string, v any) error {
	raw, err := Marshal(v)
	if err != nil {
		return fmt.Errorf("set %s in %s: %w", key, s.Path, err)
	}
	s.set(key, raw)
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
	raw, found := s.get(key)
	if !found || string(raw) == "null" {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false, fmt.Errorf("%s: %s is %s, want a string", s.Path, key, raw)
	}
	return v, true, nil
}

// Bytes renders the state as the seed writes it: a two-space indented object.
func (s *State) Bytes() []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, f := range s.fields {
		k, _ := json.Marshal(f.key)
		b.WriteString("  ")
		b.Write(k)
		b.WriteString(": ")
		var v bytes.Buffer
		if json.Indent(&v, f.raw, "  ", "  ") != nil {
			v.Reset()
			v.Write(f.raw)
		}
		b.Write(v.Bytes())
		if i < len(s.fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// Delete removes a field (no-op when absent).
func (s *State) Delete(key string) {
	for i, f := range s.fields {
		if f.key == key {
			s.fields = append(s.fields[:i], s.fields[i+1:]...)
			return
		}
	}
}

// Write replaces the state file atomically with the state's bytes.
func (s *State) Write() error { return journal.WriteFileAtomic(s.Path, s.Bytes(), 0o644) }

// Raw returns a field's JSON as written.
func (s *State) Raw(key string) (json.RawMessage, bool) { return s.get(key) }

// SetRaw sets a field to JSON given as bytes (checked).
func (s *State) SetRaw(key string, raw []byte) error {
	if !json.Valid(raw) {
		return fmt.Errorf("set %s in %s: not JSON", key, s.Path)
	}
	s.set(key, append(json.RawMessage(nil), bytes.TrimSpace(raw)...))
	return nil
}

// Marshal encodes v as JSON the way Node's JSON.stringify does (the
// frameworks' own scripts write their files with it): no HTML escaping of
// <, > and &.
func Marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// LockPath is the lock orbit takes to rewrite another framework's file:
// a hidden file beside it (.{name}.lock), so that the frameworks' own
// listings (every *.json of a directory) never see it. The ORBIT state
// file keeps its own lock, ceo-loop-state.json.lock.
func LockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
}

// Edit rewrites the JSON object file at path under its lock (LockPath):
// fn edits the ordered object read fresh from disk, and the result replaces
// the file atomically (temp file, fsync, rename). Fields fn leaves alone
// keep their values and order.
func Edit(ctx context.Context, path string, fn func(*State) error) error {
	unlock, err := flock.Path(ctx, LockPath(path))
	if err != nil {
		return err
	}
	defer unlock()
	st, err := ReadState(path)
	if errors.Is(err, ErrNoState) {
		return fmt.Errorf("%s: the loop's file is gone", path)
	}
	if err != nil {
		return err
	}
	if err := fn(st); err != nil {
		return err
	}
	return st.Write()
}

// CheckID refuses a loop id that is not a plain file name: loop ids name
// files in the frameworks' registry directories, and must not escape them.
func CheckID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return fmt.Errorf("loop id %q: must be a file name (no slashes, not starting with a dot)", id)
	}
	return nil
}
