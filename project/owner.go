package project

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// SafeDirectoryEnv names the environment variable that lists project roots
// trusted whoever owns them (paths separated by the system's list
// separator, ":"; "*" trusts every root), as git's safe.directory does.
const SafeDirectoryEnv = "ORBIT_SAFE_DIRECTORY"

// ErrNotSafe is wrapped by the refusal of a project another user controls.
var ErrNotSafe = errors.New("project not safe")

// Owner is who a project must belong to: the current user. A project root,
// its .claude/ or its .orbit/ owned by another user, or writable by every
// user, is refused (its files would become this user's prompts, and orbit
// would write where another user can plant links), unless the root is
// listed in Safe.
type Owner struct {
	// UID is the user the project must belong to (os.Geteuid()).
	UID int
	// Safe lists roots trusted as they are ("*" for all): the
	// ORBIT_SAFE_DIRECTORY variable and --safe-directory flags.
	Safe []string
}

// CurrentOwner is the check for the user running orbit, trusting the roots
// listed in the value of ORBIT_SAFE_DIRECTORY (env) and in flags.
func CurrentOwner(env string, flags []string) Owner {
	o := Owner{UID: os.Geteuid(), Safe: append([]string(nil), flags...)}
	for _, p := range filepath.SplitList(env) {
		if p = strings.TrimSpace(p); p != "" {
			o.Safe = append(o.Safe, p)
		}
	}
	return o
}

// trusted reports whether root is listed as safe.
func (o Owner) trusted(root string) bool {
	c := canonical(root)
	for _, s := range o.Safe {
		if s == "*" || canonical(s) == c {
			return true
		}
	}
	return false
}

// Check refuses the project at root when the root, its .claude/ or its
// .orbit/ is owned by another user or writable by every user, unless the
// root is trusted. The error is one line naming the directory, why, and
// the override.
func (o Owner) Check(root string) error {
	if o.trusted(root) {
		return nil
	}
	for _, d := range []string{root, filepath.Join(root, ".claude"), filepath.Join(root, ".orbit")} {
		var st unix.Stat_t
		err := unix.Lstat(d, &st)
		if d == root {
			err = unix.Stat(d, &st) // the root may be reached through a link
		}
		if errors.Is(err, unix.ENOENT) && d != root {
			continue
		}
		if err != nil {
			return fmt.Errorf("project %s: %w", d, err)
		}
		override := fmt.Sprintf("if you trust it, set %s=%s or pass --safe-directory %s", SafeDirectoryEnv, root, root)
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK && d != root:
			return fmt.Errorf("%w: %s is a symbolic link; orbit follows no link inside a project", ErrNotSafe, d)
		case int(st.Uid) != o.UID:
			return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d), and orbit would run its text as your loop's prompt; %s", ErrNotSafe, d, st.Uid, o.UID, override)
		case st.Mode&0o002 != 0:
			return fmt.Errorf("%w: %s is writable by every user (mode %04o), so another user could plant files in it; `chmod o-w %s`, or %s", ErrNotSafe, d, st.Mode&0o7777, d, override)
		}
	}
	return nil
}
