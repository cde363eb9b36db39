//go:build unix

package jobs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes OCR_JOBS_DIR for this process alone: SQLite's database is one process's (several
// replicas share a Postgres instead), and holding it alone is what lets a process that starts
// take up at once the pages a killed one left running (orphans). The lock goes with the process,
// however it ends.
func lockDir(dir string) (release func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "jobs.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("jobs: OCR_JOBS_DIR: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("jobs: OCR_JOBS_DIR %s is in use by another ocrdraft process: one process per directory (several replicas share a Postgres, OCR_JOBS_DATABASE_URL)", dir)
		}
		return nil, fmt.Errorf("jobs: OCR_JOBS_DIR: locking it: %w", err)
	}
	return func() { f.Close() }, nil
}

// errNoLock is lockDir's error where it cannot lock; never on unix.
var errNoLock = errors.New("jobs: no lock on this system")
