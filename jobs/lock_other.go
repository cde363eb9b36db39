//go:build !unix

package jobs

import "errors"

// errNoLock says the directory could not be held alone, so orphans are left to River.
var errNoLock = errors.New("jobs: no lock on this system")

// lockDir is a no-op where flock is not: one process per OCR_JOBS_DIR is then the operator's to
// keep, and pages a killed process left running wait for River's rescue (RescueAfter).
func lockDir(string) (func(), error) { return nil, errNoLock }
