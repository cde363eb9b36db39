package extract

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/vision"
)

// TestMemoryReturns: whatever way a request ends — answered, a page refused, the model failing,
// re-asked, panicking, the caller gone, the deadline passed — no byte of the upload memory or
// the retry memory is still counted when Extract returns; with pages kept for retries and with
// pages handed over to their calls, through the fake model and through the real client.
func TestMemoryReturns(t *testing.T) {
	type answer func(ctx context.Context, page string, call int) (vision.Reply, error)
	block := func(ctx context.Context, _ string, _ int) (vision.Reply, error) {
		<-ctx.Done()
		return vision.Reply{}, ctx.Err()
	}
	tests := []struct {
		name   string
		pages  []string
		answer answer
		cancel bool         // the caller goes away while the calls wait
		code   problem.Code // "" for a draft; "any" for a failure of any kind
	}{
		{"answered", []string{"p1", "p2", "p3"}, func(context.Context, string, int) (vision.Reply, error) { return reply(good), nil }, false, ""},
		{"page refused", []string{"p1", "x2"}, nil, false, problem.ImageUnreadable},
		{"model fails", []string{"p1"}, func(context.Context, string, int) (vision.Reply, error) {
			return vision.Reply{}, problem.Errorf(problem.ModelUnavailable, "down")
		}, false, problem.ModelUnavailable},
		{"re-asked", []string{"p1"}, func(_ context.Context, _ string, call int) (vision.Reply, error) {
			if call == 1 {
				return reply("Sure!"), nil
			}
			return reply(good), nil
		}, false, ""},
		{"model panics", []string{"p1", "p2"}, func(context.Context, string, int) (vision.Reply, error) { panic("boom") }, false, problem.Internal},
		{"caller gone", []string{"p1", "p2", "p3"}, block, true, ""},
		{"deadline", []string{"p1", "p2", "p3"}, block, false, "any"},
	}
	for _, tt := range tests {
		for _, fits := range []bool{true, false} {
			uploads := budget.New(1 << 20)
			var images [][]byte
			size := int64(0)
			for _, p := range tt.pages {
				images = append(images, []byte(p))
				size += int64(len(p))
			}
			held, _ := uploads.TryTake(size + 10)
			held.Give(10) // the body around the images, given back before Extract as the server does
			mem := int64(1 << 20)
			if !fits {
				mem = 1
			}
			svc := New(Config{Model: &fakeModel{answer: tt.answer}, Prep: fakePrep{}, RetryMemory: mem, Concurrency: 1})
			ctx, cancel := context.WithCancel(t.Context())
			switch {
			case tt.cancel:
				time.AfterFunc(10*time.Millisecond, cancel)
			case tt.code == "any": // the deadline passes while the calls wait
				cancel()
				ctx, cancel = context.WithTimeout(t.Context(), 20*time.Millisecond)
			}
			_, err := svc.Extract(ctx, counted(held, images), check.Context{})
			cancel()
			want := tt.code
			if tt.name == "re-asked" && !fits {
				want = problem.ModelOutputUnparseable // a page handed over is not re-asked
			}
			switch {
			case tt.cancel:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("%s, fits %v: %v, want the cancellation", tt.name, fits, err)
				}
			case want == "any":
				if err == nil {
					t.Errorf("%s, fits %v: a draft, want a failure", tt.name, fits)
				}
			case (err == nil) != (want == "") || err != nil && problem.CodeOf(err) != want:
				t.Errorf("%s, fits %v: %v, want %q", tt.name, fits, err, want)
			}
			if uploads.InUse() != 0 || svc.retry.InUse() != 0 {
				t.Errorf("%s, fits %v: %d bytes of upload memory and %d of retry memory in use after Extract returned", tt.name, fits, uploads.InUse(), svc.retry.InUse())
			}
		}
	}

	// The real client, its endpoint failing or answering.
	for _, a := range []fakeopenai.Answer{fakeopenai.Reply(good), fakeopenai.ServerError(), fakeopenai.HangUp()} {
		for _, fits := range []bool{true, false} {
			f := fakeopenai.New(t)
			f.Default(a)
			client, err := vision.New(vision.Config{BaseURL: f.URL, Model: "m", Tries: 2})
			if err != nil {
				t.Fatal(err)
			}
			mem := int64(1 << 20)
			if !fits {
				mem = 1
			}
			uploads := budget.New(1 << 20)
			held, _ := uploads.TryTake(4)
			svc := New(Config{Model: client, Prep: fakePrep{}, RetryMemory: mem})
			svc.Extract(t.Context(), counted(held, [][]byte{[]byte("p1"), []byte("p2")}), check.Context{})
			if uploads.InUse() != 0 || svc.retry.InUse() != 0 {
				t.Errorf("real client, fits %v: %d bytes of upload memory and %d of retry memory in use after Extract returned", fits, uploads.InUse(), svc.retry.InUse())
			}
		}
	}
}

// TestUnsentPageLetGo: a page handed over whose call fails before a byte of it is written gives
// its memory back when that call ends, not when the request does: the other pages may keep the
// model for a long time yet.
func TestUnsentPageLetGo(t *testing.T) {
	during := make(chan int64, 1)
	var uploads *budget.Budget
	m := &fakeModel{answer: func(ctx context.Context, page string, _ int) (vision.Reply, error) {
		if page == "p1" {
			return vision.Reply{}, problem.Errorf(problem.ModelUnavailable, "connection refused")
		}
		during <- uploads.InUse()
		return reply(good), nil
	}}
	uploads = budget.New(1 << 20)
	held, _ := uploads.TryTake(4)
	// One page at a time: page 2's call starts once page 1's has ended and its page let go.
	svc := New(Config{Model: m, Prep: fakePrep{}, RetryMemory: 1, Concurrency: 1})
	res, err := svc.Extract(t.Context(), counted(held, [][]byte{[]byte("p1"), []byte("p2")}), check.Context{})
	if err != nil || len(res.Warnings) == 0 {
		t.Fatalf("%v, %v; want a page_failed warning", err, res.Warnings)
	}
	if got := <-during; got != 2 {
		t.Errorf("%d bytes of upload memory in use during page 2's call, want 2 (page 2's own)", got)
	}
}

// TestRetriedPageKept: a page the retry memory holds keeps its bytes until its last call:
// every re-ask sends them, counted in the retry memory alone; a page handed over is its one
// call's, counted in the upload memory until that call lets go of it.
func TestRetriedPageKept(t *testing.T) {
	uploads, retry := budget.New(1<<20), (*budget.Budget)(nil)
	type seen struct {
		data, handed bool
		up, kept     int64
	}
	var calls []seen
	m := &fakeModel{answer: nil}
	m.answer = func(_ context.Context, _ string, call int) (vision.Reply, error) {
		req := m.reqs[len(m.reqs)-1]
		calls = append(calls, seen{data: string(req.Images[0].Bytes()) == "p1", handed: req.Images[0].Body != nil,
			up: uploads.InUse(), kept: retry.InUse()})
		if call < 3 {
			return reply("Sure!"), nil
		}
		return reply(good), nil
	}
	for _, fits := range []bool{true, false} {
		calls = nil
		m.calls = nil
		mem := int64(1 << 20)
		if !fits {
			mem = 1
		}
		svc := New(Config{Model: m, Prep: fakePrep{}, RetryMemory: mem, MaxAttempts: 3})
		retry = svc.retry
		held, _ := uploads.TryTake(2)
		_, err := svc.Extract(t.Context(), counted(held, [][]byte{[]byte("p1")}), check.Context{})
		if fits {
			if err != nil || len(calls) != 3 {
				t.Fatalf("kept: %v after %d calls, want a draft after 3", err, len(calls))
			}
			for i, c := range calls {
				if !c.data || c.handed || c.up != 0 || c.kept != 2 {
					t.Errorf("kept, call %d: bytes there %v, handed over %v, upload memory %d, retry memory %d; want true, false, 0, 2", i+1, c.data, c.handed, c.up, c.kept)
				}
			}
		} else {
			if problem.CodeOf(err) != problem.ModelOutputUnparseable || len(calls) != 1 {
				t.Fatalf("handed over: %v after %d calls, want model_output_unparseable after 1", err, len(calls))
			}
			if c := calls[0]; !c.data || !c.handed || c.up != 2 || c.kept != 0 {
				t.Errorf("handed over: bytes there %v, handed over %v, upload memory %d, retry memory %d; want true, true, 2, 0", c.data, c.handed, c.up, c.kept)
			}
		}
		if uploads.InUse() != 0 || retry.InUse() != 0 {
			t.Errorf("fits %v: memory in use after Extract: %d, %d", fits, uploads.InUse(), retry.InUse())
		}
	}
}
