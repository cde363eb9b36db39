package extract

import (
	"context"
	"github.com/ocrdraft/ocrdraft/check"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

// fakePrep accepts any image whose first byte is not 'x' and names the page by its bytes.
type fakePrep struct{}

func (fakePrep) Prepare(ctx context.Context, data []byte) (intake.Page, error) {
	if len(data) == 0 || data[0] == 'x' {
		return intake.Page{}, problem.Errorf(problem.ImageUnreadable, "the file is empty")
	}
	return intake.Page{MIME: "image/png", Data: data, BytesIn: len(data), BytesOut: len(data)}, nil
}

// fakeModel answers from a function of the page's bytes and the call number for that page,
// recording requests.
type fakeModel struct {
	mu     sync.Mutex
	calls  map[string]int
	reqs   []vision.Request
	answer func(ctx context.Context, page string, call int) (vision.Reply, error)
}

func (m *fakeModel) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	page := string(req.Images[0].Bytes())
	m.mu.Lock()
	if m.calls == nil {
		m.calls = map[string]int{}
	}
	m.calls[page]++
	call := m.calls[page]
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.answer(ctx, page, call)
}

func reply(text string) vision.Reply {
	return vision.Reply{Text: text, FinishReason: "stop", Model: "fake-vl", PromptTokens: 10, CompletionTokens: 5}
}

func names(d schema.OcrDraft) string {
	var s []string
	for _, ind := range d.Indicators {
		s = append(s, ind.ItemName)
	}
	return strings.Join(s, ",")
}

// TestPagesRunConcurrently: page 1's call answers only once page 2's call has arrived, so the
// test passes only if the calls overlap; page 2 answers first, and the draft is still in page
// order.
func TestPagesRunConcurrently(t *testing.T) {
	both := make(chan struct{})
	var once sync.Once
	var arrived sync.WaitGroup
	arrived.Add(2)
	go func() { arrived.Wait(); once.Do(func() { close(both) }) }()
	m := &fakeModel{answer: func(ctx context.Context, page string, call int) (vision.Reply, error) {
		arrived.Done()
		select {
		case <-both:
		case <-ctx.Done():
			return vision.Reply{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return vision.Reply{}, problem.Errorf(problem.ModelTimeout, "the pages were not read concurrently")
		}
		if page == "p1" {
			time.Sleep(10 * time.Millisecond) // answer after page 2
		}
		return reply(`{"title":"血常规","indicators":[{"itemName":"` + page + `","valueNum":1}]}`), nil
	}}
	var seen []schema.PageMeta
	var mu sync.Mutex
	s := New(Config{Model: m, Prep: fakePrep{}, ModelName: "cfg", OutputMode: "prompt", Observer: observerFunc(func(p schema.PageMeta) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	})})
	res, err := s.Extract(t.Context(), owned([][]byte{[]byte("p1"), []byte("p2")}), check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Draft); got != "p1,p2" {
		t.Errorf("indicators = %s, want p1,p2 (page order)", got)
	}
	if res.Meta.Attempts != 2 || res.Meta.Model != "fake-vl" || len(res.Meta.Pages) != 2 || res.Meta.Usage.PromptTokens != 20 {
		t.Errorf("meta = %+v", res.Meta)
	}
	if len(seen) != 2 {
		t.Errorf("observer saw %d pages, want 2", len(seen))
	}
}

type observerFunc func(schema.PageMeta)

func (f observerFunc) Page(p schema.PageMeta) { f(p) }

func TestExtract(t *testing.T) {
	refusal := "抱歉，图片太模糊，无法识别。"
	good := `{"indicators":[{"itemName":"TC","valueNum":5.6}]}`
	tests := []struct {
		name     string
		pages    []string
		max      int
		answer   func(ctx context.Context, page string, call int) (vision.Reply, error)
		calls    int
		want     string // indicator names
		warn     []schema.WarningCode
		err      problem.Code
		attempts int
	}{
		{name: "a refusal is asked again in the same conversation", pages: []string{"p"},
			answer: func(_ context.Context, _ string, call int) (vision.Reply, error) {
				if call == 1 {
					return reply(refusal), nil
				}
				return reply(good), nil
			}, calls: 2, want: "TC", attempts: 2},
		{name: "refusals up to the attempt limit", pages: []string{"p"}, max: 3,
			answer: func(context.Context, string, int) (vision.Reply, error) { return reply(refusal), nil },
			calls:  3, err: problem.ModelOutputUnparseable},
		{name: "a reply cut at the token limit is salvaged, not asked again", pages: []string{"p"},
			answer: func(context.Context, string, int) (vision.Reply, error) {
				r := reply(`{"indicators":[{"itemName":"TC","valueNum":5.6},{"itemName":"TG","valueNum":1.`)
				r.FinishReason = "length"
				return r, nil
			}, calls: 1, want: "TC", warn: []schema.WarningCode{schema.OutputTruncated}, attempts: 1},
		{name: "a cut reply with nothing complete is not asked again", pages: []string{"p"},
			answer: func(context.Context, string, int) (vision.Reply, error) {
				r := reply(`{"indicators":[{"itemName":"T`)
				r.FinishReason = "length"
				return r, nil
			}, calls: 1, err: problem.ModelOutputUnparseable},
		{name: "a bad page stops the request before any model call", pages: []string{"p", "x"},
			answer: func(context.Context, string, int) (vision.Reply, error) { return reply(good), nil },
			calls:  0, err: problem.ImageUnreadable},
		{name: "an upstream error is not asked again", pages: []string{"p"},
			answer: func(context.Context, string, int) (vision.Reply, error) {
				return vision.Reply{}, problem.Errorf(problem.ModelRejected, "401")
			}, calls: 1, err: problem.ModelRejected},
		{name: "one failed page of two is a warning", pages: []string{"bad", "good"},
			answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
				if page == "bad" {
					return vision.Reply{}, problem.Errorf(problem.ModelUnavailable, "500")
				}
				return reply(good), nil
			}, calls: 2, want: "TC", warn: []schema.WarningCode{schema.PageFailed}, attempts: 2},
		{name: "no pages", pages: nil, err: problem.InvalidRequest},

		// Finish reasons other than stop and length, and refusals.
		{name: "content_filter with usable content is a warning", pages: []string{"p"},
			answer: func(context.Context, string, int) (vision.Reply, error) {
				r := reply(good)
				r.FinishReason = "content_filter"
				return r, nil
			}, calls: 1, want: "TC", warn: []schema.WarningCode{schema.OutputInterrupted}, attempts: 1},
		{name: "content_filter cutting the reply warns twice", pages: []string{"p"},
			answer: func(context.Context, string, int) (vision.Reply, error) {
				r := reply(`{"indicators":[{"itemName":"TC","valueNum":5.6},{"itemName":"TG","valueNum":1.`)
				r.FinishReason = "content_filter"
				return r, nil
			}, calls: 1, want: "TC", warn: []schema.WarningCode{schema.OutputInterrupted, schema.OutputTruncated}, attempts: 1},
		{name: "content_filter with nothing usable fails, not asked again", pages: []string{"p"},
			answer: func(context.Context, string, int) (vision.Reply, error) {
				r := reply("")
				r.FinishReason = "content_filter"
				return r, nil
			}, calls: 1, err: problem.ModelOutputUnparseable},
		{name: "tool_calls with nothing usable fails", pages: []string{"p"},
			answer: func(context.Context, string, int) (vision.Reply, error) {
				r := reply("")
				r.FinishReason = "tool_calls"
				return r, nil
			}, calls: 1, err: problem.ModelOutputUnparseable},
		{name: "an odd page's warning carries its page path", pages: []string{"odd", "good"},
			answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
				r := reply(good)
				if page == "odd" {
					r.FinishReason = "unknown"
				}
				return r, nil
			}, calls: 2, want: "TC", warn: []schema.WarningCode{schema.OutputInterrupted, schema.DuplicateIndicator}, attempts: 2},
		{name: "a refusal field fails the page, not asked again", pages: []string{"p"},
			answer: func(context.Context, string, int) (vision.Reply, error) {
				r := reply("")
				r.Refusal = "I can't help with that."
				return r, nil
			}, calls: 1, err: problem.ModelOutputUnparseable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{answer: tt.answer}
			s := New(Config{Model: m, Prep: fakePrep{}, MaxAttempts: tt.max})
			var images [][]byte
			for _, p := range tt.pages {
				images = append(images, []byte(p))
			}
			res, err := s.Extract(t.Context(), owned(images), check.Context{})
			if len(m.reqs) != tt.calls {
				t.Errorf("model calls = %d, want %d", len(m.reqs), tt.calls)
			}
			if tt.err != "" {
				if problem.CodeOf(err) != tt.err {
					t.Fatalf("err = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res.Draft); got != tt.want {
				t.Errorf("indicators = %s, want %s", got, tt.want)
			}
			var codes []schema.WarningCode
			for _, w := range res.Warnings {
				codes = append(codes, w.Code)
			}
			if strings.Join(toStrings(codes), ",") != strings.Join(toStrings(tt.warn), ",") {
				t.Errorf("warnings = %v, want %v", codes, tt.warn)
			}
			if res.Meta.Attempts != tt.attempts {
				t.Errorf("attempts = %d, want %d", res.Meta.Attempts, tt.attempts)
			}
		})
	}
}

func toStrings(cs []schema.WarningCode) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

// TestReask: the second call carries the first reply and a correction.
func TestReask(t *testing.T) {
	m := &fakeModel{answer: func(_ context.Context, _ string, call int) (vision.Reply, error) {
		if call == 1 {
			return reply("Sure! Here you go."), nil
		}
		return reply(`[{"itemName":"TC","valueNum":5.6}]`), nil
	}}
	if _, err := New(Config{Model: m, Prep: fakePrep{}}).Extract(t.Context(), owned([][]byte{[]byte("p")}), check.Context{}); err != nil {
		t.Fatal(err)
	}
	if len(m.reqs) != 2 || m.reqs[0].Retry != "" || m.reqs[1].Previous != "Sure! Here you go." || m.reqs[1].Retry == "" {
		t.Errorf("requests = %+v", m.reqs)
	}
}

// TestRetryMemory: a page that does not fit the retry memory is let go of once it has been sent,
// so its memory can be reclaimed while the model works; a page that fits is kept until the
// model has answered. Either way its share of the caller's upload memory is given back before
// the model answers. The real model client runs against the fake endpoint.
func TestRetryMemory(t *testing.T) {
	const size = 1 << 20
	for _, fits := range []bool{false, true} {
		f := fakeopenai.New(t)
		f.Forget()
		arrived, answer := make(chan struct{}), make(chan struct{})
		f.Default(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{} // the fake has read the whole body by now
			<-answer
			fakeopenai.Reply(`{"indicators":[{"itemName":"TC","valueNum":5.6}]}`)(w, r)
		})
		client, err := vision.New(vision.Config{BaseURL: f.URL, Model: "m", Tries: 3})
		if err != nil {
			t.Fatal(err)
		}
		mem := int64(size - 1)
		if fits {
			mem = size
		}
		var seen schema.PageMeta
		svc := New(Config{Model: client, Prep: fakePrep{}, RetryMemory: mem, Observer: observerFunc(func(p schema.PageMeta) { seen = p })})
		uploads := budget.New(2 * size)
		held, _ := uploads.TryTake(size + 100) // the body: the page and 100 bytes around it
		pages, page := upload(size, held)
		done := make(chan error, 1)
		go func() {
			_, err := svc.Extract(t.Context(), pages, check.Context{})
			done <- err
		}()
		<-arrived
		collected := false
		for range 20 {
			runtime.GC()
			if collected = page.Value() == nil; collected || fits {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if held.Held() != 100 {
			t.Errorf("fits %v: %d bytes of the upload still held while the model works, want the 100 around the page", fits, held.Held())
		}
		close(answer)
		if err := <-done; err != nil {
			t.Fatalf("fits %v: %v", fits, err)
		}
		if collected == fits {
			t.Errorf("fits %v: the page was collected during the model call: %v", fits, collected)
		}
		if seen.SentOnce == fits {
			t.Errorf("fits %v: meta says sent once: %v", fits, seen.SentOnce)
		}
		if h, ok := svc.retry.TryTake(mem); !ok {
			t.Errorf("fits %v: retry memory still taken after the call", fits)
		} else {
			h.Close()
		}
		// The 100 around the page are the caller's (the server's) to give back, not Extract's.
		if held.Held() != 100 {
			t.Errorf("fits %v: %d bytes of the upload held after Extract returned, want the 100 around the page", fits, held.Held())
		}
		held.Close()
		if h, ok := uploads.TryTake(2 * size); !ok {
			t.Errorf("fits %v: upload memory still held after Extract returned", fits)
		} else {
			h.Close()
		}
	}
}

// upload returns a page image the caller holds no other reference to, and a weak pointer to it.
func upload(n int, h *budget.Hold) ([]*budget.Bytes, weak.Pointer[byte]) {
	data := make([]byte, n)
	data[0] = 'p'
	return counted(h, [][]byte{data}), weak.Make(&data[0])
}

// owned is images as uploads counted in no memory, as the CLI hands them to Extract.
func owned(images [][]byte) []*budget.Bytes { return counted(nil, images) }

// counted is images as uploads each counted as its length in h, as the server hands them to
// Extract (having given back the share of the body around them).
func counted(h *budget.Hold, images [][]byte) []*budget.Bytes {
	uploads := make([]*budget.Bytes, len(images))
	for i, img := range images {
		uploads[i] = budget.NewBytes(img, h, int64(len(img)))
	}
	return uploads
}

// TestSentOnceIsNotRetried: a page sent once gets one call, whether the endpoint fails or the
// reply cannot be used.
func TestSentOnceIsNotRetried(t *testing.T) {
	tests := []struct {
		answer fakeopenai.Answer
		code   problem.Code
	}{
		{fakeopenai.ServerError(), problem.ModelUnavailable},
		{fakeopenai.RateLimited("1"), problem.ModelRateLimited},
		{fakeopenai.Reply("抱歉，图片太模糊，无法识别。"), problem.ModelOutputUnparseable},
	}
	for _, tt := range tests {
		f := fakeopenai.New(t)
		f.Default(tt.answer)
		client, err := vision.New(vision.Config{BaseURL: f.URL, Model: "m", Tries: 3})
		if err != nil {
			t.Fatal(err)
		}
		svc := New(Config{Model: client, Prep: fakePrep{}, RetryMemory: 1, MaxAttempts: 3})
		_, err = svc.Extract(t.Context(), owned([][]byte{[]byte("page")}), check.Context{})
		if code := problem.CodeOf(err); code != tt.code || f.Calls() != 1 {
			t.Errorf("want %s: got %v after %d calls, want 1 call", tt.code, err, f.Calls())
		}
	}
}
