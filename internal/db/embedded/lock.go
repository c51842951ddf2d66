package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// The embedded cluster is shared by every clearing process on one home, and
// they agree through two flock(2) files:
//
//   - the control lock, held exclusively while a process creates, starts or
//     stops the server, so that these never overlap;
//   - the users lock, held shared by every process that uses the server.
//
// A process that closes takes the control lock, drops its shared lock and
// tries an exclusive, non-blocking lock on the users file: it succeeds only
// when no other process still uses the server, and only then is the server
// stopped. New users join under the control lock, so none can slip in
// between that test and the stop. The kernel drops a process's flocks when
// it dies, however it dies, so a SIGKILLed process never counts as a user
// and never holds the control lock: nothing is left to clean up by hand.
//
// flock rather than fcntl locks: fcntl locks belong to the process, so two
// users inside one process (tests, or a future library caller) would not
// exclude each other, and closing any descriptor of the file would drop them.
const (
	controlLockName = "embedded.lock"
	usersLockName   = "embedded.users"
)

// lockFile opens path, creating it, and takes a flock on it: how is
// syscall.LOCK_EX or syscall.LOCK_SH. It polls rather than blocks, so that
// ctx and deadline are honoured; a blocking flock cannot be interrupted. The
// lock lasts until the returned file is closed. The first attempt is made
// even when ctx is already done, so that an uncontended lock never fails.
func lockFile(ctx context.Context, path string, how int, deadline time.Time) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("embedded: lock: %w", err)
	}
	wait := time.Millisecond
	for {
		err := flock(f, how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("embedded: lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("embedded: %s is still held by another clearing process after waiting until %s; "+
				"if that process hangs, stop it: %w", path, deadline.Format(time.TimeOnly), ErrServer)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("embedded: waiting for %s: %w", path, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 25*time.Millisecond)
	}
}

// soleUser reports whether no process but the caller holds the users lock
// at path. The caller must hold the control lock and must already have
// dropped its own shared lock.
func soleUser(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("embedded: lock: %w", err)
	}
	defer f.Close()
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	default:
		return false, fmt.Errorf("embedded: lock %s: %w", path, err)
	}
}

// flock calls flock(2), retrying when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
