// Command loadtest measures the service under many concurrent single-page requests against a
// fake model that answers after a fixed delay. It is not part of go test.
//
//	go run ./cmd/loadtest                  # the README's three scenarios, 500 requests or clients
//	go run ./cmd/loadtest -n 200 -inflight 64 -sustain 10s
//
// It builds ./cmd/ocrdraft (run it from the repository root, or pass -bin), starts the binary on
// 127.0.0.1 with its model pointed at a fake OpenAI-compatible server in this process, and sends
// requests, each with the same ~1 MB JPEG, in one of two ways:
//
//   - a burst: all n requests in the same instant, the worst case for queueing and memory;
//   - sustained: requests at a constant rate of n per model delay, so that n are in flight at
//     any time, measured for -sustain after a warm-up of -warmup in which the rate climbs from
//     zero. As in wrk2, the sending does not wait for answers, so a slow answer cannot hide the
//     requests it would have delayed.
//
// It reports the answers by code, the latency, the service's overhead (latency minus the model's
// delay, as the client sees it and as the server logged it), the most calls the fake saw at
// once, the waits in the server's queues, the CPU time of the server and of this tool, and the
// server process's peak RSS (VmHWM from /proc/PID/status). This tool runs on one CPU's worth of
// threads (-procs) so as not to crowd the server it measures. Everything stays on loopback,
// and both the request count and the run time are bounded.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const (
	maxRequests = 2000
	callerKey   = "load-test-key"
)

func main() {
	n := flag.Int("n", 500, fmt.Sprintf("requests in a burst, and in flight when sustained (at most %d)", maxRequests))
	inflight := flag.Int("inflight", 0, "run the burst and the sustained scenario with this OCR_MAX_INFLIGHT, instead of the README's three scenarios")
	sustain := flag.Duration("sustain", 20*time.Second, "how long the sustained scenario is measured, after its warm-up; 0 skips it")
	warmup := flag.Duration("warmup", 0, "the sustained scenario's warm-up, in which the rate climbs to full, not measured; 0 means five model delays")
	delay := flag.Duration("model-delay", 2*time.Second, "how long the fake model takes to answer")
	bin := flag.String("bin", "", "the ocrdraft binary; empty builds ./cmd/ocrdraft")
	limit := flag.Duration("timeout", 3*time.Minute, "bound on the whole run")
	memLimit := flag.String("gomemlimit", "", "GOMEMLIMIT for the server, such as 400MiB; empty leaves Go's default")
	procs := flag.Int("procs", 1, "GOMAXPROCS of this tool (the load generator and the fake model need about half a CPU at 250 requests/s); 0 leaves Go's default")
	flag.Parse()
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	if *n < 1 || *n > maxRequests {
		fmt.Fprintf(os.Stderr, "loadtest: -n must be 1 to %d\n", maxRequests)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *limit)
	defer cancel()
	if *warmup <= 0 {
		*warmup = 5 * *delay
	}
	if err := run(ctx, *n, *inflight, *delay, *sustain, *warmup, *bin, *memLimit); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

type scenario struct {
	name     string
	inflight int           // OCR_MAX_INFLIGHT; 0 leaves the default
	sustain  time.Duration // 0 is a burst
	warmup   time.Duration // before sustain, not measured
}

func run(ctx context.Context, n, inflight int, delay, sustain, warmup time.Duration, bin, memLimit string) error {
	if bin == "" {
		dir, err := os.MkdirTemp("", "loadtest")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "ocrdraft")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/ocrdraft")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build ./cmd/ocrdraft (run from the repository root, or pass -bin): %w", err)
		}
	}
	burst := func(inflight int, limit string) scenario {
		return scenario{name: fmt.Sprintf("burst: %d requests at once, OCR_MAX_INFLIGHT=%s", n, limit), inflight: inflight}
	}
	sustained := func(inflight int) scenario {
		return scenario{
			name: fmt.Sprintf("sustained: %.0f requests/s (%d in flight), measured for %v after a %v warm-up, OCR_MAX_INFLIGHT=%d",
				float64(n)/delay.Seconds(), n, sustain, warmup, inflight),
			inflight: inflight, sustain: sustain, warmup: warmup,
		}
	}
	scenarios := []scenario{burst(512, "512"), sustained(512), burst(0, "default (32)")}
	if inflight > 0 {
		scenarios = []scenario{burst(inflight, strconv.Itoa(inflight)), sustained(inflight)}
	}
	if sustain <= 0 {
		scenarios = slices.DeleteFunc(scenarios, func(sc scenario) bool { return sc.warmup > 0 })
	}

	photo := photo()
	body, contentType := multipartBody(photo)
	fmt.Printf("page: %d×%d JPEG, %d bytes (sent to the model as is); model delay %v; %d CPUs\n",
		photoW, photoH, len(photo), delay, numCPU())

	var failed []string
	for _, sc := range scenarios {
		if err := ctx.Err(); err != nil {
			return err
		}
		bad, err := runScenario(ctx, sc, bin, n, delay, memLimit, body, contentType)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		// With room for every request in flight, anything but a 200 is a failure; with less,
		// 503 overloaded is the point.
		if sc.inflight >= n && bad > 0 {
			failed = append(failed, fmt.Sprintf("%s: %d answers were not 200", sc.name, bad))
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

// runScenario runs one scenario and reports it, and returns how many answers were not 200.
func runScenario(ctx context.Context, sc scenario, bin string, n int, delay time.Duration, memLimit string, body []byte, contentType string) (notOK int, err error) {
	model, err := startModel(delay)
	if err != nil {
		return 0, err
	}
	defer model.close()

	env := map[string]string{
		"OCR_LISTEN_ADDR":    "127.0.0.1:0",
		"OCR_MODEL":          "load-vl",
		"OCR_MODEL_BASE_URL": model.url,
		"OCR_MODEL_API_KEY":  "sk-load",
		"OCR_API_KEYS":       callerKey,
	}
	if sc.inflight > 0 {
		env["OCR_MAX_INFLIGHT"] = strconv.Itoa(sc.inflight)
	}
	if memLimit != "" {
		env["GOMEMLIMIT"] = memLimit
	}
	srv, err := startServer(ctx, bin, env)
	if err != nil {
		return 0, err
	}
	defer srv.stop()

	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: n, MaxIdleConnsPerHost: n, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}}
	defer client.CloseIdleConnections()
	url := "http://" + srv.addr + "/v1/extract"

	// One request first, so that the measured burst does not include the first call's setup.
	if r := send(ctx, client, url, body, contentType); r.status != http.StatusOK {
		return 0, fmt.Errorf("warm-up request: %d %s %v", r.status, r.code, r.err)
	}
	model.peak.Store(0)
	cpu0, own0 := procCPU(srv.cmd.Process.Pid), procCPU(os.Getpid())
	busy0, total0 := machineCPU()

	var results []result
	var mu sync.Mutex
	var wg sync.WaitGroup
	var inFlight, peakInFlight atomic.Int32
	fire := func(warm bool) {
		wg.Go(func() {
			now := inFlight.Add(1)
			for p := peakInFlight.Load(); now > p && !peakInFlight.CompareAndSwap(p, now); p = peakInFlight.Load() {
			}
			r := send(ctx, client, url, body, contentType)
			inFlight.Add(-1)
			r.warm = warm
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		})
	}
	t0 := time.Now()
	if sc.sustain == 0 {
		for range n {
			fire(false)
		}
	} else {
		// A constant rate of n per model delay, so that n requests are in flight, paced as wrk2
		// paces them: the clock does not wait for answers, so a slow answer cannot hide the
		// requests it would have delayed. During the warm-up the rate climbs from zero: started
		// at full rate, a cold process (no connections, a small heap) falls behind, and the
		// answers to the late requests then come back together every model delay, an echo that
		// takes many seconds to fade.
		rate, w := float64(n)/delay.Seconds(), sc.warmup.Seconds()
		for k := 1; ctx.Err() == nil; k++ {
			// The k-th request: on the ramp, rate·t²/(2w) requests have been sent by time t.
			at := math.Sqrt(2 * w * float64(k) / rate)
			if at > w {
				at = w + (float64(k)-rate*w/2)/rate
			}
			d := time.Duration(at * float64(time.Second))
			if d >= sc.warmup+sc.sustain {
				break
			}
			time.Sleep(time.Until(t0.Add(d)))
			fire(d < sc.warmup)
		}
	}
	wg.Wait()
	wall := time.Since(t0)
	// The server's own view: from a request's arrival to its answer, minus the model's delay.
	// The upload and the client's share of the CPUs are not in it.
	if sc.sustain > 0 {
		time.Sleep(100 * time.Millisecond) // the last log lines
		if ds := srv.durations(t0.Add(sc.warmup+delay), t0.Add(sc.warmup+sc.sustain+delay)); len(ds) > 0 {
			over := make([]time.Duration, len(ds))
			for i, d := range ds {
				over[i] = d - delay
			}
			defer fmt.Printf("as the server logged them (%d answers in the same window): overhead p50 %v p99 %v max %v\n",
				len(ds), pct(over, 50), pct(over, 99), pct(over, 100))
		}
	}

	cpu, own := procCPU(srv.cmd.Process.Pid)-cpu0, procCPU(os.Getpid())-own0
	busy1, total1 := machineCPU()
	hwm, rss := procMem(srv.cmd.Process.Pid)
	ownHWM, _ := procMem(os.Getpid())
	report(sc, results, delay, wall, model.peak.Load(), hwm, rss, ownHWM)
	if sc.sustain > 0 {
		fmt.Printf("most requests in flight at once: %d\n", peakInFlight.Load())
	}
	fmt.Printf("waits in the server's queues (whole run): %s\n", queueWaits(ctx, client, "http://"+srv.addr+"/metrics"))
	per := func(d time.Duration) time.Duration {
		return (d / time.Duration(max(1, len(results)))).Round(100 * time.Microsecond)
	}
	fmt.Printf("CPU: server %v (%v per request); load generator and fake model %v (%v per request)\n",
		cpu.Round(10*time.Millisecond), per(cpu), own.Round(10*time.Millisecond), per(own))
	if total1 > total0 {
		fmt.Printf("the machine's CPUs were %.0f%% busy\n", 100*float64(busy1-busy0)/float64(total1-total0))
	}
	for _, r := range results {
		if r.err != nil || r.status != http.StatusOK {
			notOK++
		}
	}
	return notOK, nil
}

type result struct {
	status     int
	code       string
	retryAfter string
	latency    time.Duration
	err        error
	warm       bool // sent during a sustained scenario's warm-up
}

func send(ctx context.Context, client *http.Client, url string, body []byte, contentType string) result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return result{err: err}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+callerKey)
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return result{err: err, latency: time.Since(start)}
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	r := result{status: res.StatusCode, latency: time.Since(start), err: err, retryAfter: res.Header.Get("Retry-After")}
	if res.StatusCode != http.StatusOK {
		var doc struct{ Code string }
		_ = json.Unmarshal(b, &doc)
		r.code = doc.Code
	}
	return r
}

func report(sc scenario, results []result, delay, wall time.Duration, peak int32, hwm, rss, ownHWM int64) {
	byCode := map[string]int{}
	var ok, warm, overloaded []time.Duration
	retryAfter := map[string]int{}
	for _, r := range results {
		switch {
		case r.err != nil:
			byCode["transport: "+shortErr(r.err)]++
		case r.status == http.StatusOK:
			if r.warm {
				warm = append(warm, r.latency)
				byCode["200 ok (warm-up)"]++
				continue
			}
			ok = append(ok, r.latency)
			byCode["200 ok"]++
		default:
			byCode[fmt.Sprintf("%d %s", r.status, r.code)]++
			if r.code == "overloaded" {
				overloaded = append(overloaded, r.latency)
				retryAfter[r.retryAfter]++
			}
		}
	}
	fmt.Printf("\n== %s\n", sc.name)
	fmt.Printf("requests %d in %v; answers: %s\n", len(results), wall.Round(time.Millisecond), fmtCounts(byCode))
	if sc.sustain > 0 {
		fmt.Printf("measured: %d answers in %v after the warm-up, %.0f/s\n", len(results)-len(warm), sc.sustain, float64(len(results)-len(warm))/sc.sustain.Seconds())
	}
	latencies := func(what string, ls []time.Duration) {
		over := make([]time.Duration, len(ls))
		for i, l := range ls {
			over[i] = l - delay
		}
		fmt.Printf("%s: latency p50 %v p99 %v max %v; overhead (latency − %v model) p50 %v p99 %v max %v\n",
			what, pct(ls, 50), pct(ls, 99), pct(ls, 100), delay, pct(over, 50), pct(over, 99), pct(over, 100))
	}
	if len(ok) > 0 {
		latencies("200s", ok)
	}
	if len(warm) > 0 {
		latencies("200s during the warm-up", warm)
	}
	if len(overloaded) > 0 {
		fmt.Printf("overloaded: latency min %v p50 %v p99 %v max %v; Retry-After %s\n",
			pct(overloaded, 0), pct(overloaded, 50), pct(overloaded, 99), pct(overloaded, 100), fmtCounts(retryAfter))
	}
	fmt.Printf("most model calls at once (seen by the fake model): %d\n", peak)
	fmt.Printf("server peak RSS (VmHWM) %.0f MB, RSS after the burst %.0f MB; load generator peak RSS %.0f MB\n",
		float64(hwm)/1e6, float64(rss)/1e6, float64(ownHWM)/1e6)
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return s[i].Round(time.Millisecond)
}

func fmtCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// queueWaits sums up the server's ocrdraft_queue_wait_seconds histogram: how many waited in
// each queue, and for how long on average.
func queueWaits(ctx context.Context, client *http.Client, url string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := client.Do(req)
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer res.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		return "unknown: " + err.Error()
	}
	count, sum := map[string]float64{}, map[string]float64{}
	if f := families["ocrdraft_queue_wait_seconds"]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "queue" {
					count[l.GetValue()] = float64(m.GetHistogram().GetSampleCount())
					sum[l.GetValue()] = m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	if len(count) == 0 {
		return "none"
	}
	var parts []string
	for _, q := range slices.Sorted(maps.Keys(count)) {
		p := fmt.Sprintf("%s ×%.0f", q, count[q])
		if count[q] > 0 {
			p += fmt.Sprintf(" (mean %v)", time.Duration(sum[q]/count[q]*float64(time.Second)).Round(100*time.Microsecond))
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// procMem reads a process's peak and current resident set size, in bytes, from /proc.
func procMem(pid int) (hwm, rss int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch name {
		case "VmHWM":
			hwm = kb << 10
		case "VmRSS":
			rss = kb << 10
		}
	}
	return hwm, rss
}

// procCPU reads a process's user and system CPU time from /proc/PID/stat (in clock ticks of
// 1/100 s, as on every Linux the tool runs on).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces; the fields after it are fixed.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// machineCPU reads the busy and total time of all CPUs, in clock ticks, from /proc/stat.
func machineCPU() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return max(1, strings.Count(string(b), "processor\t:"))
}

// server is a running ocrdraft process.
type server struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}

	mu    sync.Mutex
	times []served // from the server's log lines
}

// served is one answered /v1/extract as the server logged it.
type served struct {
	at       time.Time // when the line was written: the answer
	duration time.Duration
	status   int
}

// durations returns the durations the server logged for 200s answered between from and to.
func (s *server) durations(from, to time.Time) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ds []time.Duration
	for _, t := range s.times {
		if t.status == http.StatusOK && !t.at.Before(from) && !t.at.After(to) {
			ds = append(ds, t.duration)
		}
	}
	return ds
}

// startServer runs bin serve with env (and none of this process's OCR_ variables), and waits for
// its "listening" log line.
func startServer(ctx context.Context, bin string, env map[string]string) (*server, error) {
	cmd := exec.Command(bin, "serve")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OCR_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		defer close(s.done)
		dec := json.NewDecoder(stderr)
		for {
			var line struct {
				Msg, Addr, Route string
				Time             time.Time
				Status           int
				DurationMs       float64
			}
			if err := dec.Decode(&line); err != nil {
				_, _ = io.Copy(io.Discard, stderr)
				return
			}
			switch {
			case line.Msg == "listening":
				addrc <- line.Addr
			case line.Msg == "request" && line.Route == "/v1/extract":
				s.mu.Lock()
				s.times = append(s.times, served{line.Time, time.Duration(line.DurationMs * float64(time.Millisecond)), line.Status})
				s.mu.Unlock()
			}
		}
	}()
	select {
	case s.addr = <-addrc:
		return s, nil
	case <-s.done:
		_ = cmd.Wait()
		return nil, errors.New("the server exited before listening")
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, errors.New("the server did not start listening")
}

// stop sends SIGTERM, as an orchestrator does, and waits for the exit.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { <-s.done; exited <- s.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest: the server's exit:", err)
		}
	case <-time.After(40 * time.Second):
		_ = s.cmd.Process.Kill()
	}
}

// fakeModel is a minimal OpenAI-compatible endpoint: it reads and drops the request, waits, and
// answers one fixed draft. It keeps nothing, so its memory stays flat under load.
type fakeModel struct {
	url  string
	srv  *http.Server
	now  atomic.Int32
	peak atomic.Int32
}

const modelReply = `{"title":"血脂四项","hospital":null,"checkupDate":"2026-03-05","reportYear":2026,"indicators":[` +
	`{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.86,"valueText":null,"unit":"mmol/L","refLow":null,"refHigh":5.2},` +
	`{"itemName":"甘油三酯","itemGroup":"血脂","valueNum":1.52,"valueText":null,"unit":"mmol/L","refLow":null,"refHigh":1.7}]}`

func startModel(delay time.Duration) (*fakeModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	completion, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-load", "object": "chat.completion", "created": time.Now().Unix(), "model": "load-vl",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": modelReply}}},
		"usage": map[string]int{"prompt_tokens": 1500, "completion_tokens": 150, "total_tokens": 1650},
	})
	m := &fakeModel{url: "http://" + ln.Addr().String() + "/v1"}
	m.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := m.now.Add(1)
		defer m.now.Add(-1)
		for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
		}
		// A large buffer, pooled: io.Discard's own is 8 KB, and the fake shares the CPUs with
		// the server.
		buf := bufs.Get().(*[]byte)
		_, _ = io.CopyBuffer(struct{ io.Writer }{io.Discard}, r.Body, *buf)
		bufs.Put(buf)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(completion)
	})}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *fakeModel) close() { _ = m.srv.Close() }

var bufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// The page: an upright colour photo of a printed page, 1600×1200, with sensor-like noise so
// that it stays about 1 MB as a JPEG. It is generated the same way every run.
const photoW, photoH = 1600, 1200

func photo() []byte {
	r := rand.New(rand.NewPCG(7, 11))
	m := image.NewRGBA(image.Rect(0, 0, photoW, photoH))
	const noise = 30
	for y := range photoH {
		for x := range photoW {
			base := 228
			if y > 80 && y%36 < 12 && x > 60 && x < photoW-60 && x%110 < 85 { // lines of "text"
				base = 50
			}
			v := min(max(base+r.IntN(2*noise+1)-noise, 0), 255)
			m.SetRGBA(x, y, color.RGBA{uint8(min(v+6, 255)), uint8(v), uint8(max(v-10, 0)), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 92}); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func multipartBody(page []byte) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	fw, _ := w.CreateFormFile("image", "page.jpg")
	_, _ = fw.Write(page)
	_ = w.Close()
	return b.Bytes(), w.FormDataContentType()
}
