package extract

import (
	"context"
	"errors"
	"github.com/ocrdraft/ocrdraft/check"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

const good = `{"indicators":[{"itemName":"TC","valueNum":5.6}]}`

type prepFunc func(ctx context.Context, data []byte) (intake.Page, error)

func (f prepFunc) Prepare(ctx context.Context, data []byte) (intake.Page, error) { return f(ctx, data) }

// TestPanics: a panic anywhere in a request's work — a page's model call, its observer, a page
// being prepared, on any page of several — is internal_error for that request, with the panic
// and its stack in the cause for the server's log; the process, and this test, go on.
func TestPanics(t *testing.T) {
	fine := func(context.Context, string, int) (vision.Reply, error) { return reply(good), nil }
	tests := []struct {
		name  string
		pages int
		model func(ctx context.Context, page string, call int) (vision.Reply, error)
		obs   Observer
		prep  Preparer
	}{
		{name: "model", pages: 1, model: func(context.Context, string, int) (vision.Reply, error) { panic("model boom") }},
		{name: "model on page 2 of 3", pages: 3, model: func(_ context.Context, page string, _ int) (vision.Reply, error) {
			if page == "page1" {
				panic(errors.New("model boom"))
			}
			return reply(good), nil
		}},
		{name: "observer", pages: 2, model: fine, obs: observerFunc(func(schema.PageMeta) { panic("observer boom") })},
		{name: "preparer", pages: 2, model: fine, prep: prepFunc(func(ctx context.Context, data []byte) (intake.Page, error) {
			if string(data) == "page1" {
				var m map[string]int
				m["x"] = 1 // a nil map write: a runtime error, as a real bug would be
			}
			return fakePrep{}.Prepare(ctx, data)
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Model: &fakeModel{answer: tt.model}, Prep: fakePrep{}, Observer: tt.obs}
			if tt.prep != nil {
				cfg.Prep = tt.prep
			}
			var images [][]byte
			for i := range tt.pages {
				images = append(images, []byte("page"+string(rune('0'+i))))
			}
			_, err := New(cfg).Extract(t.Context(), owned(images), check.Context{})
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != problem.Internal {
				t.Fatalf("err = %v, want internal_error", err)
			}
			if strings.Contains(pe.Detail, "boom") {
				t.Errorf("detail %q shows the panic to the caller", pe.Detail)
			}
			if msg := err.Error(); !strings.Contains(msg, "boom") && !strings.Contains(msg, "nil map") || !strings.Contains(msg, "goroutine") {
				t.Errorf("cause %q: want the panic value and its stack", msg)
			}
		})
	}
}

// TestUsageSums: the counts summed across pages and re-asks saturate, never wrap negative.
func TestUsageSums(t *testing.T) {
	m := &fakeModel{answer: func(_ context.Context, _ string, call int) (vision.Reply, error) {
		r := reply(good)
		if call == 1 {
			r = reply("no JSON here") // re-asked
		}
		r.PromptTokens, r.CompletionTokens = math.MaxInt, -5
		return r, nil
	}}
	res, err := New(Config{Model: m, Prep: fakePrep{}}).Extract(t.Context(), owned([][]byte{[]byte("a"), []byte("b")}), check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Meta.Usage; u.PromptTokens != math.MaxInt || u.CompletionTokens != 0 {
		t.Errorf("usage = %+v, want saturated prompt tokens and no negative count", u)
	}
	for i, p := range res.Meta.Pages {
		if p.Usage.PromptTokens != math.MaxInt || p.Attempts != 2 {
			t.Errorf("page %d: %+v", i+1, p)
		}
	}
}

// TestUpstreamReplies runs the real client against the fake: odd replies from the endpoint
// reach the draft as warnings or clear errors, never as a panic or a silent empty page.
func TestUpstreamReplies(t *testing.T) {
	tests := []struct {
		name    string
		answer  fakeopenai.Answer
		err     problem.Code
		detail  string
		excerpt string // the problem's Excerpt
		warn    string
	}{
		{name: "negative usage", answer: fakeopenai.Complete(fakeopenai.Response{Content: good, PromptTokens: -1, CompletionTokens: -7})},
		{name: "content as parts", answer: fakeopenai.Complete(fakeopenai.Response{Parts: []string{`{"indicators":[{"itemName":"TC",`, `"valueNum":5.6}]}`}})},
		{name: "refusal", answer: fakeopenai.Complete(fakeopenai.Response{Refusal: "I can't help with\nthat."}),
			err: problem.ModelOutputUnparseable, detail: "the model refused to read the page", excerpt: "I can't help with that."},
		{name: "content_filter", answer: fakeopenai.Complete(fakeopenai.Response{Content: good, FinishReason: "content_filter"}),
			warn: "output_interrupted"},
		{name: "content_filter and nothing", answer: fakeopenai.Complete(fakeopenai.Response{FinishReason: "content_filter"}),
			err: problem.ModelOutputUnparseable, detail: "content_filter"},
		{name: "100 MB reply", answer: fakeopenai.Huge(http.StatusOK, 100<<20), err: problem.ModelUnavailable, detail: "larger than 4 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Default(tt.answer)
			c, err := vision.New(vision.Config{BaseURL: f.URL, Model: "m", Tries: 1})
			if err != nil {
				t.Fatal(err)
			}
			var pages atomic.Int32
			obs := observerFunc(func(p schema.PageMeta) {
				if p.Usage.PromptTokens < 0 || p.Usage.CompletionTokens < 0 {
					t.Errorf("observer got %+v", p.Usage)
				}
				pages.Add(1)
			})
			res, err := New(Config{Model: c, Prep: fakePrep{}, Observer: obs}).Extract(t.Context(), owned([][]byte{[]byte("p")}), check.Context{})
			if pages.Load() != 1 {
				t.Errorf("observer saw %d pages", pages.Load())
			}
			if tt.err != "" {
				var pe *problem.Error
				if !errors.As(err, &pe) || pe.Code != tt.err || !strings.Contains(pe.Detail, tt.detail) || pe.Excerpt != tt.excerpt {
					t.Fatalf("err = %v, want %s with %q", err, tt.err, tt.detail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if names(res.Draft) != "TC" {
				t.Errorf("draft %+v", res.Draft)
			}
			var warns []string
			for _, w := range res.Warnings {
				warns = append(warns, string(w.Code))
			}
			if strings.Join(warns, ",") != tt.warn {
				t.Errorf("warnings %v, want %q", warns, tt.warn)
			}
		})
	}
}
