package heif

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr makes a worker die with its parent.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// executable is this process's executable as it was started, even if its file has since been
// replaced (an upgrade in place): exec'd by the child of fork, /proc/self/exe is still this
// process's. Without /proc, its path.
func executable() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// maxRSSBytes is a rusage's peak resident memory: Linux counts it in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss * 1024 }

// peakRSS is a live process's peak resident memory (VmHWM), 0 if unknown.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte("VmHWM:"))
	if !ok {
		return 0
	}
	f := bytes.Fields(rest)
	if len(f) == 0 {
		return 0
	}
	kib, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return kib * 1024
}
