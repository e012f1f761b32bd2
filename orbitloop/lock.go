package orbitloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orbit-loop/orbit/ceo"
	"github.com/orbit-loop/orbit/flock"
	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

// LockFile is the ORBIT loop's session lock, relative to the project root,
// beside its state file.
const LockFile = ".claude/orbit-loop.lock"

// Lock says which session drives a loop. It lives in a JSON file; every
// read-modify-write of it happens under an flock on the file beside it, so
// two hooks never both believe they own the loop.
type Lock struct {
	Owner       string    `json:"owner"`
	PID         int       `json:"pid"`
	Host        string    `json:"host"`
	AcquiredAt  time.Time `json:"acquired_at"`
	HeartbeatAt time.Time `json:"heartbeat_at"`
	// Told lists sessions already told that another session owns the loop.
	Told []string `json:"told,omitempty"`
}

// Stale reports whether the heartbeat is older than loop.StaleAfter at now.
func (l Lock) Stale(now time.Time) bool { return now.Sub(l.HeartbeatAt) > loop.StaleAfter }

// Claim is the result of trying to take a loop's lock.
type Claim struct {
	// Held is true when the caller owns the lock now.
	Held bool
	// Stolen names the previous owner of a stale lock that was taken.
	Stolen string
	// Other is the live lock of another session when Held is false.
	Other Lock
	// AlreadyTold: the caller was told of the conflict before.
	AlreadyTold bool
}

// Acquire takes or refreshes the lock of the project at root for owner: it
// takes a free lock, refreshes its own, steals one whose heartbeat is
// stale, and otherwise reports the other owner (recording that this owner
// was told).
func Acquire(ctx context.Context, root, owner string, pid int, host string, now time.Time) (Claim, error) {
	unlock, err := flock.Path(ctx, root, LockFile+".flock")
	if err != nil {
		return Claim{}, err
	}
	defer unlock()
	cur, err := readLock(root)
	if err != nil {
		return Claim{}, err
	}
	var c Claim
	switch {
	case cur == nil || cur.Owner == "" || cur.Owner == owner:
	case cur.Stale(now):
		c.Stolen = cur.Owner
		cur = nil
	default:
		c.Other = *cur
		for _, t := range cur.Told {
			if t == owner {
				c.AlreadyTold = true
			}
		}
		if !c.AlreadyTold {
			cur.Told = append(cur.Told, owner)
			if err := writeLock(root, cur); err != nil {
				return c, err
			}
		}
		return c, nil
	}
	l := Lock{Owner: owner, PID: pid, Host: host, AcquiredAt: now, HeartbeatAt: now}
	if cur != nil && cur.Owner == owner {
		l.AcquiredAt = cur.AcquiredAt
	}
	if err := writeLock(root, &l); err != nil {
		return c, err
	}
	c.Held = true
	return c, nil
}

// Release frees the lock if owner holds it ("" releases any, a lock
// nobody can read included: it protects nothing).
func Release(ctx context.Context, root, owner string) error {
	unlock, err := flock.Path(ctx, root, LockFile+".flock")
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := readLock(root)
	switch {
	case err != nil && owner != "":
		return err
	case err == nil && cur == nil:
		return nil
	case err == nil && owner != "" && cur.Owner != owner:
		return nil
	}
	d, err := project.OpenDir(root, filepath.Dir(LockFile), false)
	if err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	defer d.Close()
	if err := d.Remove(filepath.Base(LockFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}

// ReadLock reads the lock of the project at root (nil when there is none).
func ReadLock(root string) (*Lock, error) { return readLock(root) }

// maxLockBytes bounds the lock file orbit reads.
const maxLockBytes = 64 << 10

func readLock(root string) (*Lock, error) {
	path := filepath.Join(root, LockFile)
	data, err := project.ReadFile(root, LockFile, maxLockBytes)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(bytes.TrimSpace(data)) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	var l Lock
	if err := json.Unmarshal(data, &l); err != nil {
		// A lock nobody can read protects nothing: say so, treat as free.
		return nil, fmt.Errorf("read lock %s: %v (delete it, or `orbit loop stop`, to free the loop)", path, err)
	}
	return &l, nil
}

func writeLock(root string, l *Lock) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return journal.WriteFileAtomic(root, LockFile, append(data, '\n'), 0o644)
}

// Status is the ORBIT loop as `orbit loop status --json` shows it: what
// its state file says, and who holds its lock (nil: nobody).
type Status struct {
	ceo.LoopInfo
	Lock *Lock `json:"lock"`
	// LockErr is a lock file that cannot be read: reported, the state
	// still shown.
	LockErr error `json:"-"`
}

// ReadStatus reads the ORBIT loop's state and lock in the project at root.
func ReadStatus(root string) (Status, error) {
	var s Status
	var err error
	if s.LoopInfo, _, err = ceo.ReadLoopState(root, project.StateFile); err != nil {
		return s, err
	}
	s.Lock, s.LockErr = ReadLock(root)
	return s, nil
}
