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

// Wait bounds how long Lock waits for another holder to let go: a process
// hung while holding a journal's lock must not hang every orbit after it.
var Wait = 30 * time.Second

// Lock takes an exclusive flock on f, waiting until it is free, at most
// Wait; then it fails naming the file.
func Lock(f *os.File) error {
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	return wait(ctx, f)
}

// wait polls for the lock on f until ctx is done.
func wait(ctx context.Context, f *os.File) error {
	delay := time.Millisecond
	for {
		ok, err := TryLock(f)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lock %s: another process still holds it (%w)", f.Name(), ctx.Err())
		case <-time.After(delay):
		}
		if delay < 10*time.Millisecond {
			delay *= 2
		}
	}
}

// TryLock takes an exclusive flock on f without waiting. It reports false when
// another descriptor holds the lock.
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	for errors.Is(err, syscall.EINTR) {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
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
// and closes it. It waits until ctx is done, and at most Wait. The lock file
// is opened as every file under a project is (project.OpenFile): a link in
// its place is refused, never followed.
func Path(ctx context.Context, root, path string) (unlock func() error, err error) {
	f, err := project.OpenFile(root, path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	if err := wait(ctx, f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		uerr := Unlock(f)
		if cerr := f.Close(); uerr == nil {
			uerr = cerr
		}
		return uerr
	}, nil
}
