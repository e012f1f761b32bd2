// Package flock owns orbit's advisory file locks: the exclusive flock(2) that
// serialises appenders on a journal and migrations or rebuilds of an index.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
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

// wait takes the lock on f, waiting in the kernel until it is free or ctx is
// done. Waiting in flock(2) rather than polling matters under contention: a
// poller that sleeps between tries loses the lock, again and again, to
// processes that arrive while it sleeps, and with a dozen hooks writing at
// once on a busy machine it starved past Wait (the reliability suite's
// parallel hooks saw it). A blocked flock(2) cannot be interrupted, so it
// runs on a duplicate of f's descriptor (a lock belongs to the open file,
// which both share): if ctx ends first, wait returns and the abandoned
// waiter lets the lock go the moment it gets it.
func wait(ctx context.Context, f *os.File) error {
	if ok, err := TryLock(f); err != nil || ok {
		return err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	var (
		mu        sync.Mutex
		abandoned bool
		done      = make(chan error, 1)
	)
	go func() {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		for errors.Is(err, syscall.EINTR) {
			err = syscall.Flock(fd, syscall.LOCK_EX)
		}
		mu.Lock()
		if abandoned && err == nil {
			syscall.Flock(fd, syscall.LOCK_UN)
		}
		syscall.Close(fd)
		done <- err // buffered: sent before the waiter can look again
		mu.Unlock()
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		return nil
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		select {
		case err := <-done: // taken as the wait ended: keep it
			if err != nil {
				return fmt.Errorf("lock %s: %w", f.Name(), err)
			}
			return nil
		default:
			abandoned = true
			return fmt.Errorf("lock %s: another process still holds it (%w)", f.Name(), ctx.Err())
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
