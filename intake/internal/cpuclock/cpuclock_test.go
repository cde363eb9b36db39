package cpuclock

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// TestThread: a thread's clock counts its own work, read from another thread, and not the
// time it sleeps.
func TestThread(t *testing.T) {
	done, read := make(chan Clock), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c, ok := Thread()
		if !ok {
			close(done)
			return
		}
		done <- c
		start := time.Now()
		for n := 0; time.Since(start) < 200*time.Millisecond; n++ { // spin
		}
		time.Sleep(200 * time.Millisecond)
		done <- c
		<-read // the thread lives, and does nothing, while it is read
	}()
	c, ok := <-done
	if !ok {
		t.Skip("no thread CPU clock on " + runtime.GOOS)
	}
	before := c.Used()
	<-done
	used := c.Used() - before
	close(read)
	// it spun about 200 ms (less if it waited for a core) and slept 200 ms
	if used <= 0 || used > 300*time.Millisecond {
		t.Fatalf("the thread used %v; want its spin (up to 200ms), not its sleep", used)
	}
}

// TestProcess: a child process's clock counts its work, read from outside while it runs.
func TestProcess(t *testing.T) {
	if _, ok := Process(os.Getpid()); !ok {
		t.Skip("no process CPU clock on " + runtime.GOOS)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSpin$")
	cmd.Env = []string{"CPUCLOCK_SPIN=1"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	buf := make([]byte, 1)
	if _, err := out.Read(buf); err != nil { // it has spun 300 ms
		t.Fatal(err)
	}
	used, ok := Process(cmd.Process.Pid)
	if !ok || used < 200*time.Millisecond || used > 2*time.Second {
		t.Fatalf("the child used %v (%v); want its spin of 300ms or so", used, ok)
	}
}

// TestSpin is TestProcess's child: it spins 300 ms of CPU, says so, and sleeps.
func TestSpin(t *testing.T) {
	if os.Getenv("CPUCLOCK_SPIN") == "" {
		t.Skip("TestProcess's child")
	}
	runtime.LockOSThread()
	c, _ := Thread()
	for start := c.Used(); c.Used()-start < 300*time.Millisecond; {
	}
	os.Stdout.Write([]byte{1})
	time.Sleep(time.Minute)
}
