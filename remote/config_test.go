package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"https://orbit.example.com/", "https://orbit.example.com", ""},
		{"http://127.0.0.1:7777", "http://127.0.0.1:7777", ""},
		{"ftp://x", "", "want http:// or https://"},
		{"https://u:secret@x", "", "carries credentials"},
		{"https://x/?token=abc", "", "no query"},
		{"https:///path", "", "no host"},
	} {
		got, err := CheckURL(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("CheckURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckURL(%q) = %v; want an error saying %q", tc.in, err, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("CheckURL(%q) error repeats the password: %v", tc.in, err)
		}
	}
}

// TestToken: --token-file first, then ORBIT_TOKEN, then the remote's file;
// a file others may read is refused.
func TestToken(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flag := file("flag", "from-flag\n", 0o600)
	own := file("own", "from-remote", 0o400)
	open := file("open", "x", 0o640)
	env := func(v string) func(string) string { return func(string) string { return v } }
	r := Remote{Name: "hub", TokenFile: own}
	for _, tc := range []struct {
		name     string
		flagFile string
		env      string
		r        Remote
		want     string
		err      string
	}{
		{"flag wins", flag, "from-env", r, "from-flag", ""},
		{"env next", "", "from-env", r, "from-env", ""},
		{"remote's file last", "", "", r, "from-remote", ""},
		{"none", "", "", Remote{Name: "hub"}, "", "no token"},
		{"readable by others", open, "", r, "", "chmod 600"},
		{"missing", filepath.Join(dir, "nope"), "", r, "", "no such file"},
	} {
		got, err := Token(tc.r, tc.flagFile, env(tc.env))
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("%s: Token = %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: Token = %q, %v; want an error saying %q", tc.name, got, err, tc.err)
		}
	}
}
