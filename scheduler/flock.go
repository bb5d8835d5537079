package scheduler

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is returned (wrapped) by LockFile when another process holds
// the lock.
var ErrLocked = errors.New("locked by another process")

// FileLock is an exclusive lock on a file, held until Unlock or the end of
// the process.
type FileLock struct {
	f *os.File
}

// LockFile makes this process the only scheduler on a SQLite state file:
// it takes an exclusive, non-blocking flock on dbPath+".lock" (creating it)
// and writes its pid there. A second process on the same file gets an
// error wrapping ErrLocked that names the holder's pid. The kernel drops
// the lock when the process dies, so a crash never leaves it stale.
func LockFile(dbPath string) (*FileLock, error) {
	path := dbPath + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock scheduler state %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock scheduler state %s: another deskbot%s already runs the scheduler on this database; with SQLite only one process may, use PostgreSQL for several replicas: %w", path, holder, ErrLocked)
		}
		return nil, fmt.Errorf("lock scheduler state %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &FileLock{f: f}, nil
}

// Unlock releases the lock.
func (l *FileLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
