package project_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/internal/tooltest"
	"github.com/orbit-loop/orbit/project"
)

func TestOwnerCheck(t *testing.T) {
	me := os.Geteuid()
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string)
		owner   func(root string) project.Owner
		wantErr string // "" for accepted
	}{
		{name: "mine", setup: func(*testing.T, string) {}, owner: func(string) project.Owner { return project.Owner{UID: me} }},
		{name: "another user's (injected uid)", setup: func(*testing.T, string) {},
			owner:   func(string) project.Owner { return project.Owner{UID: me + 1} },
			wantErr: "is owned by uid"},
		{name: "another user's, listed as safe", setup: func(*testing.T, string) {},
			owner: func(root string) project.Owner { return project.Owner{UID: me + 1, Safe: []string{root}} }},
		{name: "another user's, every root safe", setup: func(*testing.T, string) {},
			owner: func(string) project.Owner { return project.Owner{UID: me + 1, Safe: []string{"*"}} }},
		{name: "world-writable root", setup: func(t *testing.T, root string) { chmod(t, root, 0o777) },
			owner: func(string) project.Owner { return project.Owner{UID: me} }, wantErr: "is writable by every user (mode 0777)"},
		{name: "world-writable .claude", setup: func(t *testing.T, root string) { chmod(t, filepath.Join(root, ".claude"), 0o777) },
			owner: func(string) project.Owner { return project.Owner{UID: me} }, wantErr: ".claude is writable by every user"},
		{name: "sticky world-writable .orbit", setup: func(t *testing.T, root string) {
			mkdir(t, root, ".orbit")
			chmod(t, filepath.Join(root, ".orbit"), os.ModeSticky|0o777)
		}, owner: func(string) project.Owner { return project.Owner{UID: me} }, wantErr: ".orbit is writable by every user (mode 1777)"},
		{name: "group-writable is accepted", setup: func(t *testing.T, root string) { chmod(t, root, 0o775) },
			owner: func(string) project.Owner { return project.Owner{UID: me} }},
		{name: ".claude a link", setup: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, ".claude"))
			link(t, t.TempDir(), root, ".claude")
		}, owner: func(string) project.Owner { return project.Owner{UID: me} }, wantErr: ".claude is a symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mkdir(t, root, ".claude")
			tt.setup(t, root)
			err := tt.owner(root).Check(root)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Check = %v; want accepted", err)
				}
				return
			}
			if !errors.Is(err, project.ErrNotSafe) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check = %v; want a refusal saying %q", err, tt.wantErr)
			}
			// One line, naming the override when one applies.
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if !strings.Contains(tt.wantErr, "symbolic link") && !strings.Contains(err.Error(), "ORBIT_SAFE_DIRECTORY="+root) || !strings.Contains(tt.wantErr, "symbolic link") && !strings.Contains(err.Error(), "--safe-directory "+root) {
				t.Errorf("error %q does not name the override", err)
			}
		})
	}
}

// TestOwnerCheckRealOtherUser gives the project to nobody for real.
func TestOwnerCheckRealOtherUser(t *testing.T) {
	tooltest.Root(t)
	root := t.TempDir()
	mkdir(t, root, ".claude")
	for _, d := range []string{".claude", ""} {
		if err := os.Chown(filepath.Join(root, d), tooltest.Nobody, tooltest.Nobody); err != nil {
			t.Fatal(err)
		}
	}
	err := project.CurrentOwner("", nil).Check(root)
	if !errors.Is(err, project.ErrNotSafe) || !strings.Contains(err.Error(), "is owned by uid 65534, not by you (uid 0)") {
		t.Errorf("Check = %v; want refused as nobody's", err)
	}
	if err := project.CurrentOwner(root, nil).Check(root); err != nil {
		t.Errorf("Check with ORBIT_SAFE_DIRECTORY=%s: %v", root, err)
	}
	if err := project.CurrentOwner("/elsewhere:"+root, nil).Check(root); err != nil {
		t.Errorf("Check with a list in ORBIT_SAFE_DIRECTORY: %v", err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
