package orbitloop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

// ID is the ORBIT loop's id in the unified view.
const ID = "orbit"

// IsID reports whether id names the ORBIT loop: its id, or framework:id.
func IsID(id string) bool { return id == ID || id == loop.ORBIT+":"+ID }

// View reads the ORBIT loop as the unified view shows it: ok is false
// when there is no state file, and err says why a state file that is not
// JSON cannot be read (a field of the wrong type is a warning of the view).
func View(root string, now time.Time) (v loop.View, ok bool, err error) {
	path := filepath.Join(root, project.StateFile)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return v, false, nil
	}
	o, st, err := ceo.ReadLoopState(root, path)
	if st == nil {
		return v, false, err
	}
	v = loop.View{Framework: loop.ORBIT, ID: ID, Title: "ORBIT CEO loop", Path: project.StateFile}
	v.AddFile(root, path)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			v.Note(strings.TrimPrefix(line, path+": "))
		}
	}
	if _, _, berr := st.Bool("active"); berr != nil {
		raw, _ := st.Raw("active")
		v.NativeStatus, v.Status = "active "+string(raw), loop.Unknown
	} else if o.Active {
		v.NativeStatus, v.Status = "active", "running"
		v.Controls = []string{"stop"}
	} else {
		v.NativeStatus, v.Status = "inactive", "stopped"
		if o.StopReason != "" {
			v.NativeStatus += " (" + o.StopReason + ")"
			if loop.IsStopReason(o.StopReason) {
				v.Status = o.StopReason
			} else {
				v.Warnf("stop_reason %q is not in the shared stop vocabulary", o.StopReason)
			}
		}
	}
	if _, ok, _ := st.Int("iteration"); ok {
		v.Iteration = new(o.Iteration)
	}
	if _, ok, _ := st.Int("max_iterations"); ok {
		v.MaxIterations = new(o.MaxIterations)
	}
	if v.Iteration != nil && v.MaxIterations != nil && *v.MaxIterations > 0 && *v.Iteration > *v.MaxIterations {
		v.Warnf("iteration %d is past the cap of %d", *v.Iteration, *v.MaxIterations)
	}
	if o.BudgetTokens > 0 {
		v.BudgetUsed, v.BudgetLimit, v.BudgetUnit = new(float64(o.TokensUsed)), new(float64(o.BudgetTokens)), "tokens"
	}
	v.CheckTime("started_at", o.StartedAt)
	last, _, _ := st.String("last_stop_at")
	v.UpdatedAt = loop.Latest(o.StoppedAt, last, o.StartedAt)
	if d := o.Deadline(); o.Active && !d.IsZero() && now.After(d) {
		v.Warnf("the time limit (%d minutes from %s) has passed but the loop is active", o.TimeLimitMinutes, o.StartedAt)
	}
	v.AddDetail("started at", o.StartedAt)
	if o.TimeLimitMinutes > 0 {
		v.AddDetail("time limit", fmt.Sprintf("%d minutes", o.TimeLimitMinutes))
	}
	v.AddDetail("trust level", o.TrustLevel)
	v.AddDetail("decisions", fmt.Sprintf("%d correct, %d incorrect", o.Correct, o.Incorrect))
	v.AddDetail("stopped at", o.StoppedAt)
	lk, lerr := ReadLock(root)
	switch {
	case lerr != nil:
		v.Warnf("%v", lerr)
	case lk == nil:
	default:
		v.AddFile(root, filepath.Join(root, LockFile))
		v.AddDetail("lock", fmt.Sprintf("%s (pid %d on %s), heartbeat %s", lk.Owner, lk.PID, lk.Host, lk.HeartbeatAt.UTC().Format(time.RFC3339)))
		switch {
		case !o.Active:
			v.Warnf("%s is left behind: the loop is not active", LockFile)
		case lk.Stale(now):
			v.Warnf("stale lock: %s's heartbeat is %s old (stale after %s)", lk.Owner, now.Sub(lk.HeartbeatAt).Round(time.Second), loop.StaleAfter)
		}
	}
	return v, true, nil
}
