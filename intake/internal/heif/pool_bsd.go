//go:build unix && !linux

package heif

import (
	"os"
	"runtime"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func executable() (string, error) { return os.Executable() }

// maxRSSBytes is a rusage's peak resident memory: in bytes on macOS, KiB on the BSDs.
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}

func peakRSS(int) int64 { return 0 }
