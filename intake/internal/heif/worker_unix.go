//go:build unix

package heif

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// stopAtCPULimit makes the worker exit with workerExitWork when its RLIMIT_CPU is reached (Go
// would otherwise ignore SIGXCPU).
func stopAtCPULimit() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGXCPU)
	go func() {
		<-c
		os.Exit(workerExitWork)
	}()
}

// limitCPU sets the worker's soft RLIMIT_CPU to what it has used and budget, rounded up to
// the second (the limit's unit), and a second more: the backstop of the parent's meter, and the
// bound where the parent cannot read a process's CPU time (systems without /proc).
func limitCPU(budget time.Duration) {
	var ru syscall.Rusage
	var rl syscall.Rlimit
	if budget <= 0 || syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil || syscall.Getrlimit(syscall.RLIMIT_CPU, &rl) != nil {
		return
	}
	used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	soft := uint64((used+budget+time.Second-1)/time.Second) + 1
	if soft < rl.Max {
		rl.Cur = soft
		syscall.Setrlimit(syscall.RLIMIT_CPU, &rl)
	}
}
