// Package flock owns orbit's advisory file locks: the exclusive flock(2) that
// serialises appenders on a journal and migrations or rebuilds of an index.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/orbit-loop/orbit/project"
)

// Lock takes an exclusive flock on f, waiting until it is free.
func Lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			if err != nil {
				return fmt.Errorf("lock %s: %w", f.Name(), err)
			}
			return nil
		}
	}
}

// TryLock takes an exclusive flock on f without waiting. It reports false when
// another descriptor holds the lock.
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	default:
		return false, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
}

// Unlock releases a lock taken with Lock or TryLock.
func Unlock(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", f.Name(), err)
	}
	return nil
}

// Path locks the file at path (absolute, or relative to the project root;
// created if absent, never written) and returns the function that unlocks
// and closes it. It polls until ctx is done, so a caller can bound how long
// it waits. The lock file is opened as every file under a project is
// (project.OpenFile): a link in its place is refused, never followed.
func Path(ctx context.Context, root, path string) (unlock func() error, err error) {
	f, err := project.OpenFile(root, path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	delay := time.Millisecond
	for {
		ok, err := TryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return func() error {
				uerr := Unlock(f)
				if cerr := f.Close(); uerr == nil {
					uerr = cerr
				}
				return uerr
			}, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}
