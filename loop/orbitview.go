package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
)

// The ORBIT loop's files (seed 000), relative to the project root.
const (
	OrbitStateFile = ".claude/ceo-loop-state.json"
	// OrbitLockFile is the loop's session lock (the hook package's LockFile).
	OrbitLockFile = ".claude/orbit-loop.lock"
)

// OrbitID is the ORBIT loop's id in the unified view.
const OrbitID = "orbit"

func scanOrbit(root string, now time.Time, s *Scan) {
	path := filepath.Join(root, OrbitStateFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return
	}
	o, st, err := ReadOrbit(path)
	if st == nil {
		if err != nil {
			s.problem(root, path, err)
		}
		return
	}
	v := View{Framework: ORBIT, ID: OrbitID, Title: "ORBIT CEO loop", Path: OrbitStateFile}
	v.file(root, path)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			v.note(strings.TrimPrefix(line, path+": "))
		}
	}
	if _, _, berr := st.Bool("active"); berr != nil {
		raw, _ := st.Raw("active")
		v.NativeStatus, v.Status = "active "+string(raw), Unknown
	} else if o.Active {
		v.NativeStatus, v.Status = "active", "running"
		v.Controls = []string{"stop"}
	} else {
		v.NativeStatus, v.Status = "inactive", "stopped"
		if o.StopReason != "" {
			v.NativeStatus += " (" + o.StopReason + ")"
			if IsStopReason(o.StopReason) {
				v.Status = o.StopReason
			} else {
				v.warn("stop_reason %q is not in the shared stop vocabulary", o.StopReason)
			}
		}
	}
	if _, ok, _ := st.Int("iteration"); ok {
		v.Iteration = i64(o.Iteration)
	}
	if _, ok, _ := st.Int("max_iterations"); ok {
		v.MaxIterations = i64(o.MaxIterations)
	}
	if v.Iteration != nil && v.MaxIterations != nil && *v.MaxIterations > 0 && *v.Iteration > *v.MaxIterations {
		v.warn("iteration %d is past the cap of %d", *v.Iteration, *v.MaxIterations)
	}
	if o.BudgetTokens > 0 {
		v.BudgetUsed, v.BudgetLimit, v.BudgetUnit = f64(float64(o.TokensUsed)), f64(float64(o.BudgetTokens)), "tokens"
	}
	v.checkTime("started_at", o.StartedAt)
	last, _, _ := st.String("last_stop_at")
	v.UpdatedAt = latest(o.StoppedAt, last, o.StartedAt)
	if d := o.Deadline(); o.Active && !d.IsZero() && now.After(d) {
		v.warn("the time limit (%d minutes from %s) has passed but the loop is active", o.TimeLimitMinutes, o.StartedAt)
	}
	v.detail("started at", o.StartedAt)
	if o.TimeLimitMinutes > 0 {
		v.detail("time limit", fmt.Sprintf("%d minutes", o.TimeLimitMinutes))
	}
	v.detail("trust level", o.TrustLevel)
	v.detail("decisions", fmt.Sprintf("%d correct, %d incorrect", o.Correct, o.Incorrect))
	v.detail("stopped at", o.StoppedAt)
	lockPath := filepath.Join(root, OrbitLockFile)
	lk, lerr := ReadLock(lockPath)
	switch {
	case lerr != nil:
		v.warn("%v", lerr)
	case lk == nil:
	default:
		v.file(root, lockPath)
		v.detail("lock", fmt.Sprintf("%s (pid %d on %s), heartbeat %s", lk.Owner, lk.PID, lk.Host, lk.HeartbeatAt.UTC().Format(time.RFC3339)))
		switch {
		case !o.Active:
			v.warn("%s is left behind: the loop is not active", OrbitLockFile)
		case lk.Stale(now):
			v.warn("stale lock: %s's heartbeat is %s old (stale after %s)", lk.Owner, now.Sub(lk.HeartbeatAt).Round(time.Second), StaleAfter)
		}
	}
	s.Loops = append(s.Loops, v)
}

// StopOrbit stops the ORBIT loop as `orbit loop stop` does: inactive with
// the stop word, under the state file's lock, and frees the session lock.
func StopOrbit(ctx context.Context, root, status string, now time.Time) (from string, err error) {
	path := filepath.Join(root, OrbitStateFile)
	unlock, err := flock.Path(ctx, path+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	o, st, err := ReadOrbit(path)
	if err != nil {
		return "", err
	}
	if !o.HasState {
		return "", fmt.Errorf("no ORBIT loop here: %s does not exist (`orbit loop start` starts one)", OrbitStateFile)
	}
	from = "inactive"
	if o.Active {
		from = "active"
	}
	if err := Stop(st, status, now); err != nil {
		return "", err
	}
	if err := st.Write(); err != nil {
		return "", err
	}
	return from, Release(ctx, filepath.Join(root, OrbitLockFile), "")
}

// OrbitView reads the ORBIT loop as the unified view shows it (ok false
// when there is no state file).
func OrbitView(root string, now time.Time) (View, bool) {
	var s Scan
	scanOrbit(root, now, &s)
	if len(s.Loops) == 0 {
		return View{}, false
	}
	return s.Loops[0], true
}

// RecoverState replaces a state file that is not JSON with an empty state,
// so that the loop can be stopped or restarted: the file's bytes are first
// saved beside it (ceo-loop-state.json.malformed-{time}), whose path is
// returned. Nothing is lost; the fields the broken file held can be copied
// back by hand.
func RecoverState(path string, now time.Time) (*State, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("recover %s: %w", path, err)
	}
	backup := path + ".malformed-" + now.UTC().Format("20060102T150405Z")
	if err := journal.WriteFileAtomic(backup, data, 0o644); err != nil {
		return nil, "", err
	}
	st, err := ParseState(path, []byte("{}"))
	return st, backup, err
}
