// Package tooltest owns how tests find the peer tools they compare orbit
// with (jq, python3, node): skipped, saying so, where a tool is missing on a
// developer's machine, failed where CI promised it (ORBIT_REQUIRE_TOOLS=1,
// set by .ci/run after installing them), so a skip cannot hide there.
package tooltest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Require returns the path of each tool, in order. A missing tool skips the
// test, or fails it when ORBIT_REQUIRE_TOOLS=1.
func Require(tb testing.TB, tools ...string) []string {
	tb.Helper()
	paths := make([]string, len(tools))
	for i, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			if os.Getenv("ORBIT_REQUIRE_TOOLS") == "1" {
				tb.Fatalf("%s is not installed, and ORBIT_REQUIRE_TOOLS=1 says it must be (.ci/run installs it)", tool)
			}
			skip(tb, fmt.Sprintf("%s is not installed (apt-get install %s); ORBIT_REQUIRE_TOOLS=1 makes this a failure", tool, tool))
		}
		paths[i] = p
	}
	return paths
}

// Nobody is the uid tests give files to when they need a file another user
// owns.
const Nobody = 65534

// Root skips the test, saying why, unless it runs as root: only root can
// give a directory to another user (chown), which the test needs to prove
// orbit refuses a project someone else owns. CI runs it as root.
func Root(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		skip(tb, "needs root to chown a directory to another user (uid 65534); run the tests as root to include it")
	}
}

// RequirePath is Require for what a setup step installs rather than a
// package (a node_modules tree npm ci fills): a missing path skips the
// test, saying how to install it, or fails it when ORBIT_REQUIRE_TOOLS=1.
func RequirePath(tb testing.TB, path, install string) {
	tb.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	if os.Getenv("ORBIT_REQUIRE_TOOLS") == "1" {
		tb.Fatalf("%s is missing, and ORBIT_REQUIRE_TOOLS=1 says it must be there (%s; .ci/run does)", path, install)
	}
	skip(tb, fmt.Sprintf("%s is missing (%s); ORBIT_REQUIRE_TOOLS=1 makes this a failure", path, install))
}
