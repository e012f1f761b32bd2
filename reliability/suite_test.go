//go:build reliability

package reliability

import "testing"

// The attacks, in the order (go test runs tests in the order they
// are declared). Each writes its rows of RELIABILITY.md.

// TestParallelHooks: 16 processes x 500 decisions on one project, with
// readers and writers of every kind alongside (parallel_test.go).
func TestParallelHooks(t *testing.T) { parallelHooks(t) }

// TestKill9: SIGKILL at random moments of decide and retro, and torn
// fragments (kill_test.go).
func TestKill9(t *testing.T) { kill9(t) }

// TestLostIndex: the index deleted, truncated, overwritten, with stale WAL
// files (index_test.go).
func TestLostIndex(t *testing.T) { lostIndex(t) }

// TestTampering: past journal lines edited, deleted, reordered, truncated
// (tamper_test.go).
func TestTampering(t *testing.T) { tampering(t) }

// TestHostileInput: the corpus in testdata/bad (hostile_test.go).
func TestHostileInput(t *testing.T) { hostileInput(t) }

// TestFuzzTargets: every fuzz target for -fuzzfor (fuzz_test.go).
func TestFuzzTargets(t *testing.T) { fuzzTargetsRun(t) }

// TestFleet: 20 projects pushing to two hub processes on one PostgreSQL
// while 8 clients read, pushers and a hub SIGKILLed (fleet_test.go).
func TestFleet(t *testing.T) { fleet(t) }

// TestSecurity: issue 16's attacks on a checkout, another user's project,
// the agent's prompt, waits, and orbit serve (security_test.go).
func TestSecurity(t *testing.T) { security(t) }
