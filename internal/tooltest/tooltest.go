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
