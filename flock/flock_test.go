package flock

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// open gives a descriptor of its own on path: flock(2) locks belong to an
// open file, so two opens in one process contend as two processes do.
func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func setWait(t *testing.T, d time.Duration) {
	old := Wait
	Wait = d
	t.Cleanup(func() { Wait = old })
}

func TestLockWaitsForTheHolder(t *testing.T) {
	setWait(t, 30*time.Second)
	path := filepath.Join(t.TempDir(), "j.lock")
	holder, waiter, other := open(t, path), open(t, path), open(t, path)
	if ok, err := TryLock(holder); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	got := make(chan error, 1)
	go func() { got <- Lock(waiter) }()
	select {
	case err := <-got:
		t.Fatalf("Lock returned %v while another open file held the lock", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := Unlock(holder); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock after the holder let go: %v", err)
	}
	if ok, _ := TryLock(other); ok {
		t.Fatal("a third open file took the lock the waiter holds")
	}
	if err := Unlock(waiter); err != nil {
		t.Fatal(err)
	}
	if ok, _ := TryLock(other); !ok {
		t.Fatal("the lock is still held after the waiter unlocked")
	}
}

// A waiter that gave up must not keep the lock it gets later: its file stays
// open here, so only the abandoned wait letting go frees the lock.
func TestLockGivesUpNamingTheFileAndLetsGoLater(t *testing.T) {
	setWait(t, 100*time.Millisecond)
	path := filepath.Join(t.TempDir(), "j.lock")
	holder, waiter, other := open(t, path), open(t, path), open(t, path)
	if ok, err := TryLock(holder); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	err := Lock(waiter)
	if err == nil || !strings.Contains(err.Error(), "j.lock: another process still holds it") {
		t.Fatalf("Lock with the file held = %v, want a timeout naming the file", err)
	}
	if err := Unlock(holder); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ok, _ := TryLock(other); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock stayed held after the waiter gave up and the holder let go")
		}
		time.Sleep(time.Millisecond)
	}
}

// Many writers on one lock: each gets it every time, and never two at once.
func TestLockExcludesUnderContention(t *testing.T) {
	setWait(t, 30*time.Second)
	path := filepath.Join(t.TempDir(), "j.lock")
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		f := open(t, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := Lock(f); err != nil {
					errs <- err
					return
				}
				n := inside.Add(1)
				if n > maxInside.Load() {
					maxInside.Store(n)
				}
				time.Sleep(50 * time.Microsecond)
				inside.Add(-1)
				if err := Unlock(f); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := maxInside.Load(); m != 1 {
		t.Fatalf("%d writers held the lock at once", m)
	}
}
