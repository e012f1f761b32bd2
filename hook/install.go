package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/jsonedit"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/orbitloop"
	"github.com/orbit-loop/orbit/project"
)

// What `orbit init --claude` adds to a project, and what --uninstall takes
// away again: orbit's hooks in one of Claude Code's settings files, its MCP
// server in .mcp.json (--mcp), its derived files in .claude/.gitignore, and,
// when the ORBIT CEO loop's own Stop hook is replaced, a record of it.

// LocalSettingsFile is Claude Code's personal settings for the project
// (not committed: Claude Code has git ignore it).
const LocalSettingsFile = ".claude/settings.local.json"

// GitignoreFile is where orbit lists its derived files.
const GitignoreFile = ".claude/.gitignore"

// ReplacedFile records the Stop hooks `orbit init --claude
// --replace-ceo-hook` replaced or removed, so that --uninstall puts them
// back.
const ReplacedFile = ".claude/orbit-replaced-hooks.json"

// CEOStopScript is the ORBIT CEO loop's own Stop hook, which orbit hook
// stop replaces: both block, and both would advance the iteration.
const CEOStopScript = "ceo-loop-stop.sh"

// ignoreHeader opens orbit's lines in .claude/.gitignore.
const ignoreHeader = "# orbit's derived files (orbit init --claude; orbit init --claude --uninstall removes these lines)"

// Ignored are orbit's derived files, as patterns of .claude/.gitignore:
// the index (and SQLite's -wal and -shm), the locks, the hook log, and the
// dated backups orbit keeps before it rewrites a file it cannot parse.
var Ignored = []string{
	"/" + path.Base(project.IndexFile) + "*",
	"/" + path.Base(loop.LocksDir) + "/",
	"/" + path.Base(orbitloop.LockFile),
	"/" + path.Base(project.HookLogFile),
	"/" + path.Base(project.ProgressFile) + ".orbit-backup-*",
	"/" + path.Base(project.StateFile) + ".malformed-*",
}

// localIgnored is the pattern of settings.local.json, which orbit adds
// when it creates that file (Claude Code has git ignore the one it
// creates; orbit's must not be committed either).
var localIgnored = "/" + path.Base(LocalSettingsFile)

// SetupOptions say what `orbit init --claude` does.
type SetupOptions struct {
	Root string
	Bin  string // how hooks run orbit ("orbit", or an absolute path)
	// Local registers the hooks in .claude/settings.local.json rather than
	// the shared .claude/settings.json.
	Local bool
	// MCP also registers orbit's MCP server in .mcp.json.
	MCP bool
	// ReplaceCEOHook replaces the ORBIT CEO loop's ceo-loop-stop.sh Stop
	// hook by orbit's; without it, a project that has one is refused.
	ReplaceCEOHook bool
}

// Change is one file a setup writes, or removes (New nil and Remove).
type Change struct {
	Rel      string // relative to the project root
	Old, New []byte
	Created  bool // the file did not exist
	Remove   bool // the file goes: nothing is left in it but what orbit put there
	What     []string
}

// Setup is what `orbit init --claude` (or --uninstall) does to a project's
// files: the changes, what was there already, and warnings.
type Setup struct {
	Changes  []Change
	Exists   []string // "file: what", already as orbit would make it
	Warnings []string
}

// CEOHookError refuses a setup that would leave the ORBIT CEO loop's own
// Stop hook beside orbit's.
type CEOHookError struct {
	File    string // relative to the project root
	Line    int
	Event   string
	Command string
}

func (e *CEOHookError) Error() string {
	return fmt.Sprintf("%s:%d: hooks.%s runs %q, the ORBIT CEO loop's own Stop hook, which orbit hook stop replaces "+
		"(two blocking Stop hooks race, and both would advance the iteration); nothing was changed: "+
		"`orbit init --claude --replace-ceo-hook` replaces it (`orbit init --claude --uninstall` puts it back)",
		e.File, e.Line, e.Event, e.Command)
}

// settingsDoc is one of the project's settings files, parsed for edits.
type settingsDoc struct {
	rel    string
	old    []byte
	exists bool
	doc    *jsonedit.Doc // an empty object when the file is absent or empty
	what   []string
}

func readSettingsDoc(root, rel string) (*settingsDoc, error) {
	data, err := project.ReadFile(root, rel, MaxSettingsBytes)
	s := &settingsDoc{rel: rel, old: data, exists: err == nil}
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if s.doc, err = parseSettings(filepath.Join(root, rel), data); err != nil {
		return nil, err
	}
	return s, nil
}

// parseSettings parses a settings file's bytes for edits: an empty file is
// an empty object; a malformed one an error naming path, line and column.
func parseSettings(path string, data []byte) (*jsonedit.Doc, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	} else if _, err := loop.ParseObject(path, "settings file", data); err != nil {
		return nil, err
	}
	doc, err := jsonedit.ParseDoc(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// change is the file's change, or false when its bytes stay as they are.
func (s *settingsDoc) change() (Change, bool) {
	out := s.doc.Bytes()
	if !s.exists && len(s.what) == 0 || bytes.Equal(out, s.old) {
		return Change{}, false
	}
	c := Change{Rel: s.rel, Old: s.old, New: out, Created: !s.exists, What: s.what}
	if root := s.doc.Root(); s.exists && root.Kind == '{' && len(root.Members) == 0 {
		c.New, c.Remove = nil, true
	}
	return c, true
}

// hookRef is one hook entry of a settings file.
type hookRef struct {
	event   string
	group   *jsonedit.Node // its matcher group
	entry   *jsonedit.Node
	typ     string
	command string
	line    int
}

// hookRefs lists a settings document's hook entries, in file order.
func hookRefs(doc *jsonedit.Doc) []hookRef {
	hooks := doc.Find("hooks")
	if hooks == nil || hooks.Kind != '{' {
		return nil
	}
	data := doc.Bytes()
	lines := jsonedit.NewLines(data)
	var refs []hookRef
	for _, m := range hooks.Members {
		if m.Val.Kind != '[' {
			continue
		}
		for _, g := range m.Val.Elems {
			hs := g.Get("hooks")
			if hs == nil || hs.Kind != '[' {
				continue
			}
			for _, h := range hs.Elems {
				refs = append(refs, hookRef{event: m.Key, group: g, entry: h, typ: h.Get("type").Str(data),
					command: h.Get("command").Str(data), line: lines.Line(h.Start)})
			}
		}
	}
	return refs
}

// classified is a settings document's hooks sorted by what orbit makes of
// them.
type classified struct {
	orbit  map[string]hookRef // event -> orbit's hook for it (the first)
	ceo    []hookRef          // Stop hooks running the ORBIT CEO loop's script
	others []hookRef          // other Stop command hooks: they race with orbit's
}

func classify(doc *jsonedit.Doc) classified {
	c := classified{orbit: map[string]hookRef{}}
	for _, r := range hookRefs(doc) {
		for _, ev := range Events {
			if _, seen := c.orbit[ev.Event]; !seen && r.event == ev.Event && IsOrbitHook(r.command, ev.Sub) {
				c.orbit[ev.Event] = r
			}
		}
		switch {
		case r.event != "Stop" || r.typ != "command" || IsOrbitHook(r.command, "stop"):
		case isCEOStop(r.command):
			c.ceo = append(c.ceo, r)
		default:
			c.others = append(c.others, r)
		}
	}
	return c
}

// isCEOStop reports whether a hook command runs the ORBIT CEO loop's Stop
// hook script.
func isCEOStop(command string) bool {
	for _, f := range strings.Fields(command) {
		if filepath.Base(strings.Trim(f, `"'`)) == CEOStopScript {
			return true
		}
	}
	return false
}

// orbitEntry is orbit's hook entry for a subcommand.
func orbitEntry(bin, sub string) hookEntry {
	return hookEntry{Type: "command", Command: bin + " hook " + sub, Timeout: Timeout}
}

// replaced is one hook --replace-ceo-hook took out, as ReplacedFile keeps it.
type replaced struct {
	File  string `json:"file"`
	Event string `json:"event"`
	// Hook is the entry's JSON exactly as it was written.
	Hook string `json:"hook"`
	// By is orbit's command put in its place ("" when the entry was
	// removed: orbit's hook was registered elsewhere).
	By string `json:"by,omitempty"`
	// Group is the matcher group removed with it, as written (when the
	// hook was its only one).
	Group string `json:"group,omitempty"`
	// Matcher is the JSON of the group's matcher, when the group stays.
	Matcher string `json:"matcher,omitempty"`
}

type replacedRecord struct {
	Note     string     `json:"note"`
	Replaced []replaced `json:"replaced"`
}

func readReplaced(root string) (replacedRecord, []byte, error) {
	var r replacedRecord
	data, err := project.ReadFile(root, ReplacedFile, MaxSettingsBytes)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil, nil
	}
	if err != nil {
		return r, nil, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, nil, fmt.Errorf("%s: %v", ReplacedFile, err)
	}
	return r, data, nil
}

// PlanInstall says what `orbit init --claude` does: orbit's hooks for the
// events no settings file of the project registers them for yet (in
// settings.json, or settings.local.json with Local), the ORBIT CEO loop's
// ceo-loop-stop.sh replaced (with ReplaceCEOHook; without it, a
// *CEOHookError and nothing changes), orbit's derived files in
// .claude/.gitignore, and with MCP its server in .mcp.json. Every edit
// keeps the bytes of what the user wrote. home ("" for none) is where the
// user's settings and plugins are looked at, for warnings.
func PlanInstall(opts SetupOptions, home string) (*Setup, error) {
	files := []string{SettingsFile, LocalSettingsFile}
	docs := make([]*settingsDoc, len(files))
	for i, rel := range files {
		d, err := readSettingsDoc(opts.Root, rel)
		if err != nil {
			return nil, err
		}
		docs[i] = d
	}
	target := docs[0]
	if opts.Local {
		target = docs[1]
	}
	set := &Setup{}
	registered := map[string]string{} // event -> file
	type hit struct {
		doc *settingsDoc
		ref hookRef
	}
	var ceo []hit
	for _, d := range docs {
		c := classify(d.doc)
		for _, ev := range Events {
			r, ok := c.orbit[ev.Event]
			if !ok {
				continue
			}
			if _, seen := registered[ev.Event]; !seen {
				registered[ev.Event] = d.rel
			}
			if want := opts.Bin + " hook " + ev.Sub; r.command != want {
				set.Warnings = append(set.Warnings, fmt.Sprintf("%s: hooks.%s already runs %q (not %q); left as it is", d.rel, ev.Event, r.command, want))
			}
		}
		for _, r := range c.ceo {
			ceo = append(ceo, hit{d, r})
		}
		for _, r := range c.others {
			set.Warnings = append(set.Warnings, fmt.Sprintf("%s: hooks.Stop also runs %q: two blocking Stop hooks race (each blocks the stop and re-feeds its own prompt), so remove it if it drives a loop", d.rel, r.command))
		}
	}
	if len(ceo) > 0 && !opts.ReplaceCEOHook {
		h := ceo[0]
		return nil, &CEOHookError{File: h.doc.rel, Line: h.ref.line, Event: h.ref.event, Command: h.ref.command}
	}
	// The ORBIT CEO loop's Stop hook: the first takes orbit's command in
	// place (its file, its group, its other fields kept), unless orbit's
	// Stop hook is registered already; any other goes.
	var record []replaced
	for _, h := range ceo {
		// Nodes move with each edit: take the first of the loop's hooks
		// left in the file (those before it were replaced or removed).
		var ref *hookRef
		for _, r := range hookRefs(h.doc.doc) {
			if r.event == h.ref.event && isCEOStop(r.command) {
				ref = &r
				break
			}
		}
		if ref == nil {
			continue
		}
		data := h.doc.doc.Bytes()
		rec := replaced{File: h.doc.rel, Event: ref.event, Hook: string(data[ref.entry.Start:ref.entry.End])}
		if _, ok := registered["Stop"]; !ok {
			rec.By = opts.Bin + " hook stop"
			if err := h.doc.doc.SetIn(ref.entry, []jsonedit.KV{{Key: "command", Val: jsonedit.Quote(rec.By)}, {Key: "timeout", Val: fmt.Sprint(Timeout)}}); err != nil {
				return nil, fmt.Errorf("%s: %w", h.doc.rel, err)
			}
			registered["Stop"] = h.doc.rel
			h.doc.what = append(h.doc.what, fmt.Sprintf("replaced %q on Stop by %s (--uninstall puts it back)", ref.command, rec.By))
		} else {
			if len(ref.group.Get("hooks").Elems) == 1 {
				rec.Group = string(data[ref.group.Start:ref.group.End])
			} else if m := ref.group.Get("matcher"); m != nil {
				rec.Matcher = string(data[m.Start:m.End])
			}
			if err := removeHook(h.doc.doc, *ref); err != nil {
				return nil, fmt.Errorf("%s: %w", h.doc.rel, err)
			}
			h.doc.what = append(h.doc.what, fmt.Sprintf("removed %q from Stop: orbit's Stop hook is in %s (--uninstall puts it back)", ref.command, registered["Stop"]))
		}
		record = append(record, rec)
	}
	// orbit's hooks, for the events no file registers them for.
	var added []string
	for _, ev := range Events {
		if _, ok := registered[ev.Event]; ok {
			continue
		}
		if err := appendHook(target.doc, ev.Event, orbitEntry(opts.Bin, ev.Sub)); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(opts.Root, target.rel), err)
		}
		added = append(added, ev.Event)
	}
	if len(added) > 0 {
		target.what = append(target.what, fmt.Sprintf("added orbit's %s %s (%s hook …, timeout %ds)", joinAnd(added), plural(len(added), "hook", "hooks"), opts.Bin, Timeout))
	}
	for _, d := range docs {
		c, ok := d.change()
		if ok {
			set.Changes = append(set.Changes, c)
		} else if regs := eventsIn(registered, d.rel); len(regs) > 0 {
			set.Exists = append(set.Exists, fmt.Sprintf("%s: orbit's %s %s registered", d.rel, joinAnd(regs), plural(len(regs), "hook", "hooks")))
		}
	}
	if len(record) > 0 {
		c, err := recordReplaced(opts.Root, record)
		if err != nil {
			return nil, err
		}
		set.Changes = append(set.Changes, c)
	}
	patterns := Ignored
	if opts.Local && !docs[1].exists {
		patterns = append(slices.Clone(Ignored), localIgnored)
	}
	if c, ok, err := ignoreDerived(opts.Root, patterns); err != nil {
		return nil, err
	} else if ok {
		set.Changes = append(set.Changes, c)
	} else {
		set.Exists = append(set.Exists, GitignoreFile+": orbit's derived files ignored")
	}
	if opts.MCP {
		old, err := ReadSettings(opts.Root, MCPFile)
		if err != nil {
			return nil, err
		}
		out, changes, warns, err := InstallMCP(filepath.Join(opts.Root, MCPFile), old, opts.Bin)
		if err != nil {
			return nil, err
		}
		set.Warnings = append(set.Warnings, warns...)
		if len(changes) > 0 {
			set.Changes = append(set.Changes, Change{Rel: MCPFile, Old: old, New: out, Created: old == nil, What: changes})
		} else if len(warns) == 0 {
			set.Exists = append(set.Exists, MCPFile+": orbit's MCP server registered")
		}
	}
	for _, w := range PluginStopHooks(opts.Root, home) {
		set.Warnings = append(set.Warnings, w)
	}
	if home != "" {
		user := filepath.Join(home, ".claude", "settings.json")
		if data, err := ReadSettings("", user); err == nil && len(data) > 0 {
			if doc, err := jsonedit.ParseDoc(data); err == nil {
				for _, r := range hookRefs(doc) {
					if r.event == "Stop" && isCEOStop(r.command) {
						set.Warnings = append(set.Warnings, fmt.Sprintf("%s:%d: your user settings run %q at every Stop of every project: remove it there (orbit edits the project's files only)", user, r.line, r.command))
					}
				}
			}
		}
	}
	return set, nil
}

// eventsIn lists the events registered in file, in Events' order.
func eventsIn(registered map[string]string, file string) []string {
	var out []string
	for _, ev := range Events {
		if registered[ev.Event] == file {
			out = append(out, ev.Event)
		}
	}
	return out
}

func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func plural(n int, one, many string) string { return journal.Plural(n, one, many) }

// appendHook adds a matcher group holding entry to hooks.<event>, creating
// what is missing on the way.
func appendHook(d *jsonedit.Doc, event string, entry hookEntry) error {
	if n := d.Find("hooks"); n == nil || n.Kind == 'n' {
		if err := d.Set([]string{"hooks"}, []byte("{}")); err != nil {
			return err
		}
	} else if n.Kind != '{' {
		return fmt.Errorf("\"hooks\" must be an object, not %s", jsonedit.KindName(n))
	}
	raw, err := jsonedit.Marshal(matcherGroup{Hooks: []hookEntry{entry}})
	if err != nil {
		return err
	}
	if n := d.Find("hooks", event); n != nil && n.Kind == '[' {
		return d.Append([]string{"hooks", event}, raw)
	} else if n != nil && n.Kind != 'n' {
		return fmt.Errorf("hooks.%s must be an array, not %s", event, jsonedit.KindName(n))
	}
	return d.Set([]string{"hooks", event}, []byte("["+string(raw)+"]"))
}

// removeHook removes a hook entry, and with it its group, the event's
// array and the hooks object when it leaves them empty.
func removeHook(d *jsonedit.Doc, r hookRef) error {
	n := r.entry
	if hs := r.group.Get("hooks"); len(hs.Elems) == 1 {
		n = r.group
		if arr := d.Find("hooks", r.event); arr != nil && len(arr.Elems) == 1 {
			n = arr
			if hooks := d.Find("hooks"); len(hooks.Members) == 1 {
				n = hooks
			}
		}
	}
	return d.Remove(n)
}

// recordReplaced adds the hooks replaced to ReplacedFile.
func recordReplaced(root string, add []replaced) (Change, error) {
	rec, old, err := readReplaced(root)
	if err != nil {
		return Change{}, err
	}
	rec.Note = "the Stop hooks `orbit init --claude --replace-ceo-hook` replaced; `orbit init --claude --uninstall` puts them back and removes this file"
	rec.Replaced = append(rec.Replaced, add...)
	out, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return Change{}, err
	}
	return Change{Rel: ReplacedFile, Old: old, New: append(out, '\n'), Created: old == nil,
		What: []string{fmt.Sprintf("%d replaced %s kept for --uninstall", len(add), plural(len(add), "hook", "hooks"))}}, nil
}

// ignoreDerived adds orbit's derived files to .claude/.gitignore, after
// the user's lines (none of which changes); false when all are there.
func ignoreDerived(root string, patterns []string) (Change, bool, error) {
	old, err := project.ReadFile(root, GitignoreFile, MaxSettingsBytes)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Change{}, false, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var missing []string
	for _, p := range patterns {
		if !have[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return Change{}, false, nil
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteByte('\n')
	}
	if !have[ignoreHeader] {
		b.WriteString(ignoreHeader + "\n")
	}
	for _, p := range missing {
		b.WriteString(p + "\n")
	}
	return Change{Rel: GitignoreFile, Old: old, New: b.Bytes(), Created: old == nil,
		What: []string{fmt.Sprintf("ignored orbit's derived files (%s)", strings.Join(missing, " "))}}, true, nil
}

// PlanUninstall says what `orbit init --claude --uninstall` does: orbit's
// hooks out of both settings files (and the groups, arrays and objects
// they leave empty), the hooks it replaced put back as they were written,
// its MCP server out of .mcp.json, its lines out of .claude/.gitignore; a
// file left with nothing in it is removed. Nothing else the files hold
// changes.
func PlanUninstall(root string) (*Setup, error) {
	rec, recData, err := readReplaced(root)
	if err != nil {
		return nil, err
	}
	set := &Setup{}
	for _, rel := range []string{SettingsFile, LocalSettingsFile} {
		d, err := readSettingsDoc(root, rel)
		if err != nil {
			return nil, err
		}
		// A replaced hook takes its place back from orbit's entry.
		for _, r := range rec.Replaced {
			if r.File != rel || r.By == "" {
				continue
			}
			for _, h := range hookRefs(d.doc) {
				if h.event == r.Event && IsOrbitHook(h.command, "stop") {
					if err := d.doc.Replace(h.entry, []byte(r.Hook)); err != nil {
						return nil, fmt.Errorf("%s: put back %s: %w", rel, ReplacedFile, err)
					}
					d.what = append(d.what, fmt.Sprintf("put back %s on %s", hookCommand(r.Hook), r.Event))
					break
				}
			}
		}
		removed := 0
		for {
			var found *hookRef
			for _, h := range hookRefs(d.doc) {
				for _, ev := range Events {
					if h.event == ev.Event && IsOrbitHook(h.command, ev.Sub) {
						found = &h
						break
					}
				}
				if found != nil {
					break
				}
			}
			if found == nil {
				break
			}
			if err := removeHook(d.doc, *found); err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			removed++
		}
		if removed > 0 {
			d.what = append(d.what, fmt.Sprintf("removed orbit's %d %s", removed, plural(removed, "hook", "hooks")))
		}
		for _, r := range rec.Replaced {
			if r.File != rel || r.By != "" {
				continue
			}
			g := r.Group
			switch {
			case g != "":
			case r.Matcher != "":
				g = `{"matcher": ` + r.Matcher + `, "hooks": [` + r.Hook + `]}`
			default:
				g = `{"hooks": [` + r.Hook + `]}`
			}
			if err := appendRaw(d.doc, r.Event, []byte(g)); err != nil {
				return nil, fmt.Errorf("%s: put back %s: %w", rel, ReplacedFile, err)
			}
			d.what = append(d.what, fmt.Sprintf("put back %s on %s", hookCommand(r.Hook), r.Event))
		}
		if c, ok := d.change(); ok {
			set.Changes = append(set.Changes, c)
		}
	}
	if recData != nil {
		set.Changes = append(set.Changes, Change{Rel: ReplacedFile, Old: recData, Remove: true, What: []string{"the hooks put back"}})
	}
	if c, ok, err := uninstallMCP(root); err != nil {
		return nil, err
	} else if ok {
		set.Changes = append(set.Changes, c)
	}
	old, err := project.ReadFile(root, GitignoreFile, MaxSettingsBytes)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	// settings.local.json's line goes only with the file.
	localStays := false
	if _, err := os.Lstat(filepath.Join(root, LocalSettingsFile)); err == nil {
		localStays = !slices.ContainsFunc(set.Changes, func(c Change) bool { return c.Rel == LocalSettingsFile && c.Remove })
	}
	if out, n := unignoreDerived(old, localStays); n > 0 {
		c := Change{Rel: GitignoreFile, Old: old, New: out, What: []string{fmt.Sprintf("removed orbit's %d %s", n, plural(n, "line", "lines"))}}
		if len(bytes.TrimSpace(out)) == 0 {
			c.New, c.Remove = nil, true
		}
		set.Changes = append(set.Changes, c)
	}
	return set, nil
}

// hookCommand is the command of a hook entry's JSON, for messages.
func hookCommand(raw string) string {
	var h hookEntry
	if json.Unmarshal([]byte(raw), &h) == nil && h.Command != "" {
		return fmt.Sprintf("%q", h.Command)
	}
	return raw
}

// appendRaw appends a matcher group's JSON to hooks.<event>.
func appendRaw(d *jsonedit.Doc, event string, raw []byte) error {
	if n := d.Find("hooks"); n == nil || n.Kind != '{' {
		if err := d.Set([]string{"hooks"}, []byte("{}")); err != nil {
			return err
		}
	}
	if n := d.Find("hooks", event); n != nil && n.Kind == '[' {
		return d.Append([]string{"hooks", event}, raw)
	}
	return d.Set([]string{"hooks", event}, []byte("["+string(raw)+"]"))
}

// uninstallMCP removes orbit's server from .mcp.json (registered under
// orbit's name only: a server the user named otherwise is theirs).
func uninstallMCP(root string) (Change, bool, error) {
	d, err := readSettingsDoc(root, MCPFile)
	if err != nil {
		return Change{}, false, err
	}
	name, command, err := RegisteredMCP(d.old)
	if err != nil || name != MCPServerName {
		return Change{}, false, err
	}
	n := d.doc.Find("mcpServers", name)
	if servers := d.doc.Find("mcpServers"); len(servers.Members) == 1 {
		n = servers
	}
	if err := d.doc.Remove(n); err != nil {
		return Change{}, false, fmt.Errorf("%s: %w", MCPFile, err)
	}
	d.what = append(d.what, fmt.Sprintf("removed mcpServers.%s (%s)", name, command))
	c, ok := d.change()
	return c, ok, nil
}

// unignoreDerived removes orbit's block from a .gitignore: its header and
// the lines of Ignored (and settings.local.json's, unless keepLocal) right
// after it. n is how many lines went.
func unignoreDerived(data []byte, keepLocal bool) (out []byte, n int) {
	lines := strings.SplitAfter(string(data), "\n")
	var b strings.Builder
	inBlock := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == ignoreHeader:
			inBlock = true
			n++
			continue
		case inBlock && (slices.Contains(Ignored, t) || t == localIgnored && !keepLocal):
			n++
			continue
		}
		inBlock = false
		b.WriteString(l)
	}
	return []byte(b.String()), n
}

// Apply writes a setup's changes (each file atomically) and removes the
// files it empties.
func (s *Setup) Apply(root string) error {
	for _, c := range s.Changes {
		if c.Remove {
			d, err := project.OpenDir(root, filepath.Dir(filepath.Join(root, c.Rel)), false)
			if err != nil {
				return err
			}
			err = d.Remove(filepath.Base(c.Rel))
			d.Close()
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove %s: %w", c.Rel, err)
			}
			continue
		}
		if err := journal.WriteFileAtomic(root, filepath.Join(root, c.Rel), c.New, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Registered is a hook a settings file registers.
type Registered struct {
	File    string // relative to the project root, or absolute outside it
	Line    int
	Command string
}

// Registration is what the project's settings files (settings.json, then
// settings.local.json) register.
type Registration struct {
	Orbit  map[string]Registered // event -> orbit's hook for it
	CEO    []Registered          // Stop hooks running ceo-loop-stop.sh
	Others []Registered          // other blocking Stop hooks
}

// ReadRegistration reads what the project's settings files register. A
// file that is not valid JSON is an error naming it.
func ReadRegistration(root string) (Registration, error) {
	reg := Registration{Orbit: map[string]Registered{}}
	for _, rel := range []string{SettingsFile, LocalSettingsFile} {
		d, err := readSettingsDoc(root, rel)
		if err != nil {
			return reg, err
		}
		c := classify(d.doc)
		for ev, r := range c.orbit {
			if _, ok := reg.Orbit[ev]; !ok {
				reg.Orbit[ev] = Registered{rel, r.line, r.command}
			}
		}
		for _, r := range c.ceo {
			reg.CEO = append(reg.CEO, Registered{rel, r.line, r.command})
		}
		for _, r := range c.others {
			reg.Others = append(reg.Others, Registered{rel, r.line, r.command})
		}
	}
	return reg, nil
}

// Driver says which hook drives the loop at event (Stop, or SubagentStop
// when a subagent runs it): orbit's hook or the ORBIT CEO loop's
// ceo-loop-stop.sh, registered in the project's settings files, the
// user's (under home, "" to skip) or an enabled plugin's hooks. "" when
// none does: the loop would end at the agent's first stop.
func Driver(root, home, event string) string {
	sub := Subcommand(event)
	docs := []struct{ root, path string }{{root, filepath.Join(root, SettingsFile)}, {root, filepath.Join(root, LocalSettingsFile)}}
	if home != "" {
		docs = append(docs, struct{ root, path string }{"", filepath.Join(home, ".claude", "settings.json")})
	}
	for _, f := range docs {
		data, err := ReadSettings(f.root, f.path)
		if err != nil || len(data) == 0 {
			continue
		}
		doc, err := jsonedit.ParseDoc(data)
		if err != nil {
			continue
		}
		for _, r := range hookRefs(doc) {
			if r.event == event && (IsOrbitHook(r.command, sub) || isCEOStop(r.command)) {
				return fmt.Sprintf("%s: %s", f.path, r.command)
			}
		}
	}
	for _, p := range pluginHooks(root, home) {
		for _, cmd := range p.commands[event] {
			if IsOrbitHook(cmd, sub) || isCEOStop(cmd) {
				return fmt.Sprintf("plugin %s: %s", p.name, cmd)
			}
		}
	}
	return ""
}

// Subcommand is orbit's hook subcommand for a hook event ("stop" for Stop).
func Subcommand(event string) string {
	for _, ev := range Events {
		if ev.Event == event {
			return ev.Sub
		}
	}
	return ""
}
