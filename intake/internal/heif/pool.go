//go:build unix

package heif

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ocrdraft/ocrdraft/intake/internal/cpuclock"
)

// Pool decodes HEICs in worker processes: this executable started again, which serves decode
// jobs (worker.go), so that a decode can be stopped at once, by killing its process, where
// libheif's WebAssembly cannot be interrupted in this one (wazero without
// WithCloseOnContextDone). Each job's worker is metered: its CPU time, read from
// /proc/<pid>/stat every MeterTick, is held to the job's budget, and the worker is killed past
// it (ErrWork) or when the job's ctx ends; either way what the job held is free when Decode
// returns. A worker gets none of this process's environment (it holds secrets) but the two
// variables that make it a worker, its stderr goes nowhere (health data is never logged), and on
// Linux it dies with its parent (Pdeathsig; strictly, with the thread that started it, which Go
// does not end while the process runs unless a goroutine exits locked to it, as none here does).
// A worker lives on between jobs, idle (at most idle of them are kept): each file still gets a
// fresh instance of the module, in memory capped as in-process (Decoder), and the worker hands
// its heap back to the system after each job. A worker compiles the module at its start from
// the compilation cache directory it is given (a load, tens of ms) or, without one, from a
// private directory that the first worker fills and Close removes.
//
// Where /proc cannot be read (systems other than Linux), the worker sets its own RLIMIT_CPU
// for each job (its budget rounded up to the second, and a second more) and exits at it; ctx
// still kills it at once. A Pool is safe for concurrent use.
type Pool struct {
	idleMax int
	mu      sync.Mutex
	dir     string // compiled code; made on first use when own
	own     bool
	idle    []*worker
	live    map[*worker]struct{}
	closed  bool
	stats   PoolStats // of the workers that have ended

	unmetered bool // tests: as where /proc cannot be read, the worker's RLIMIT_CPU the only bound
}

// PoolStats is what a pool's workers have cost, for benchmarks and tests: the workers started,
// their CPU time (the ended ones' and the live ones' so far), and the largest resident memory
// any of them reached.
type PoolStats struct {
	Started int
	CPU     time.Duration
	PeakRSS int64 // bytes
}

type worker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// MeterTick is how often a job's worker's CPU time is read: a job is stopped at most this much
// past its budget (and the kernel's 10 ms clock tick).
const MeterTick = 20 * time.Millisecond

// workerStart bounds a worker's start (exec and the module loaded or compiled).
const workerStart = time.Minute

// ErrWork is a decode stopped at its CPU budget.
var ErrWork = errors.New("heic: the decode took more than its CPU time")

// ErrStart is a worker that could not be started; the caller may decode in its own process.
var ErrStart = errors.New("heic: no worker process")

// NewPool returns a pool that keeps at most idle workers between jobs, whose compiled code is
// kept in cacheDir, or, if "", in a directory of its own. Nothing is started yet.
func NewPool(cacheDir string, idle int) *Pool {
	return &Pool{idleMax: max(idle, 1), dir: cacheDir, own: cacheDir == "", live: map[*worker]struct{}{}}
}

// Warm starts a worker, if none is idle, and keeps it idle: what a process does before
// serving, so that its first HEIC does not wait for the module to compile.
func (p *Pool) Warm(ctx context.Context) error {
	w, err := p.get(ctx)
	if err != nil {
		return err
	}
	p.put(w)
	return nil
}

// Decode is Decoder.Decode in a worker, its CPU time held to budget: past it, ErrWork. When
// ctx ends, the worker is killed and Decode returns ctx's error at once. An error wrapping
// ErrStart says no worker could be started (nothing was decoded).
func (p *Pool) Decode(ctx context.Context, data []byte, limit int64, budget time.Duration) (image.Image, error) {
	h, err := DecodeConfig(data)
	if err != nil {
		return nil, err
	}
	if pl := h.Plan(); pl.Items > MaxItems || pl.Pictures > MaxPictures || pl.Waste {
		return nil, ErrPictures
	}
	if uint64(len(data)) > 1<<32-1 {
		return nil, errors.New("heic: the file is too large for a worker")
	}
	for attempt := 0; ; attempt++ {
		w, fresh, err := p.take(ctx)
		if err != nil {
			return nil, err
		}
		m, answered, err := p.run(ctx, w, data, limit, budget)
		if err != nil && !answered && !fresh && attempt == 0 && ctx.Err() == nil {
			continue // an idle worker that had gone: once more, with a new one
		}
		return m, err
	}
}

// run runs one job in w and gives w back (idle) or ends it.
func (p *Pool) run(ctx context.Context, w *worker, data []byte, limit int64, budget time.Duration) (image.Image, bool, error) {
	pid := w.cmd.Process.Pid
	base, metered := cpuclock.Process(pid)
	metered = metered && !p.unmetered
	type result struct {
		m        image.Image
		answered bool
		err      error
	}
	done := make(chan result, 1)
	go func() {
		if err := writeJob(w.in, data, limit, budget); err != nil {
			done <- result{err: err}
			return
		}
		m, answered, err := readAnswer(ctx, w.out, limit)
		done <- result{m, answered, err}
	}()
	tick := time.NewTicker(MeterTick)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			var de decodeError
			if r.err == nil || errors.Is(r.err, ErrMemory) || errors.Is(r.err, ErrPictures) || errors.As(r.err, &de) {
				p.put(w)
				return r.m, r.answered, r.err
			}
			st := p.end(w)
			if st != nil && st.ExitCode() == workerExitWork {
				return nil, true, ErrWork
			}
			return nil, r.answered, fmt.Errorf("heic: the worker failed (%v): %w", st, r.err)
		case <-ctx.Done():
			p.end(w)
			<-done
			return nil, true, ctx.Err()
		case <-tick.C:
			if !metered {
				continue
			}
			if used, ok := cpuclock.Process(pid); ok && used-base > budget {
				p.end(w)
				<-done
				return nil, true, ErrWork
			}
		}
	}
}

// take is an idle worker, or a new one (fresh).
func (p *Pool) take(ctx context.Context) (w *worker, fresh bool, err error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w = p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, false, nil
	}
	p.mu.Unlock()
	w, err = p.start(ctx)
	return w, true, err
}

func (p *Pool) get(ctx context.Context) (*worker, error) {
	w, _, err := p.take(ctx)
	return w, err
}

// put keeps w idle, or ends it when the pool is full or closed.
func (p *Pool) put(w *worker) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < p.idleMax {
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.end(w)
}

// end kills w and waits for it, counting what it cost.
func (p *Pool) end(w *worker) *os.ProcessState {
	w.cmd.Process.Kill()
	w.in.Close()
	w.cmd.Wait()
	st := w.cmd.ProcessState
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.live, w)
	if st != nil {
		p.stats.CPU += st.UserTime() + st.SystemTime()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			p.stats.PeakRSS = max(p.stats.PeakRSS, maxRSSBytes(ru))
		}
	}
	return st
}

// start starts a worker and waits for it to be ready.
func (p *Pool) start(ctx context.Context) (*worker, error) {
	dir, err := p.cacheDir()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	cmd := exec.Command(exe)
	cmd.Args = []string{"ocrdraft-heic-worker"}
	cmd.Env = []string{workerEnv + "=1", workerCacheEnv + "=" + dir}
	cmd.Dir = dir
	cmd.SysProcAttr = sysProcAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	// Stderr nil: the null device.
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	w := &worker{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	p.mu.Lock()
	p.live[w] = struct{}{}
	p.stats.Started++
	p.mu.Unlock()
	ready := make(chan error, 1)
	go func() {
		t, err := w.out.ReadByte()
		switch {
		case err != nil:
		case t == msgFailed:
			text, _ := readText(w.out, 1<<12)
			err = errors.New(text)
		case t != msgReady:
			err = fmt.Errorf("the worker said %q", t)
		}
		ready <- err
	}()
	timer := time.NewTimer(workerStart)
	defer timer.Stop()
	select {
	case err := <-ready:
		if err == nil {
			return w, nil
		}
		st := p.end(w)
		return nil, fmt.Errorf("%w: it ended (%v) before it was ready: %v", ErrStart, st, err)
	case <-ctx.Done():
		p.end(w)
		<-ready
		return nil, ctx.Err()
	case <-timer.C:
		p.end(w)
		<-ready
		return nil, fmt.Errorf("%w: not ready after %v", ErrStart, workerStart)
	}
}

// privatePrefix names the pools' own directories: the process's id follows, so that one left by
// a process that is gone (killed before its Close) is removed by the next.
const privatePrefix = "ocrdraft-heic-"

func (p *Pool) cacheDir() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return "", errors.New("the pool is closed")
	}
	if p.dir != "" || !p.own {
		return p.dir, nil
	}
	removeStale()
	dir, err := os.MkdirTemp("", privatePrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	p.dir = dir
	return dir, nil
}

// removeStale removes the private directories of processes that are gone.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), privatePrefix+"*-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(d), privatePrefix), "-", 2)[0])
		if err == nil && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(d)
		}
	}
}

// Stats is what the pool's workers have cost so far.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	for w := range p.live {
		pid := w.cmd.Process.Pid
		if c, ok := cpuclock.Process(pid); ok {
			s.CPU += c
		}
		s.PeakRSS = max(s.PeakRSS, peakRSS(pid))
	}
	return s
}

// Close ends the idle workers (a job's worker ends with its job) and removes the pool's own
// directory; later decodes fail with ErrStart.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	dir := p.dir
	p.mu.Unlock()
	for _, w := range idle {
		p.end(w)
	}
	if p.own && dir != "" {
		return os.RemoveAll(dir)
	}
	return nil
}
