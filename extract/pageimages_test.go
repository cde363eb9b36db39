package extract

import (
	"context"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/vision"
)

// TestPageImages: asked for, every page's image as sent comes back in page order, stays counted
// in the upload memory until the answer is closed, and is lent to every call (re-asked even when
// the retry memory is full); not asked for, none comes and nothing is kept; more than
// MaxPageImageBytes is refused before any model call.
func TestPageImages(t *testing.T) {
	reask := func(_ context.Context, _ string, call int) (vision.Reply, error) {
		if call == 1 {
			return reply("Sure!"), nil
		}
		return reply(good), nil
	}
	tests := []struct {
		name  string
		opts  Options
		max   int64
		pages []string
		code  problem.Code
		want  []string // the images returned
	}{
		{"asked", Options{PageImages: true}, 0, []string{"p1", "p22"}, "", []string{"p1", "p22"}},
		{"not asked", Options{}, 0, []string{"p1", "p22"}, "", nil},
		{"too large", Options{PageImages: true}, 4, []string{"p1", "p22"}, problem.PayloadTooLarge, nil},
	}
	for _, tt := range tests {
		uploads := budget.New(1 << 20)
		var images [][]byte
		for _, p := range tt.pages {
			images = append(images, []byte(p))
		}
		held, _ := uploads.TryTake(5)
		m := &fakeModel{answer: reask}
		if !tt.opts.PageImages {
			m.answer = func(context.Context, string, int) (vision.Reply, error) { return reply(good), nil }
		}
		// Retry memory of 1 byte: a page not kept is sent once, and so not re-asked.
		svc := New(Config{Model: m, Prep: fakePrep{}, RetryMemory: 1, MaxPageImageBytes: tt.max})
		res, err := svc.ExtractWith(t.Context(), counted(held, images), check.Context{}, tt.opts)
		if problem.CodeOf(err) != tt.code && (err != nil || tt.code != "") {
			t.Fatalf("%s: %v, want %q", tt.name, err, tt.code)
		}
		if tt.code != "" {
			if len(m.reqs) != 0 {
				t.Errorf("%s: %d model calls before the refusal", tt.name, len(m.reqs))
			}
			continue
		}
		if len(res.PageImages) != len(tt.want) {
			t.Fatalf("%s: %d page images, want %d", tt.name, len(res.PageImages), len(tt.want))
		}
		for i, im := range res.PageImages {
			if string(im.Data) != tt.want[i] || im.Page != i+1 || im.MediaType != "image/png" {
				t.Errorf("%s: page image %d is page %d, %s, %q; want page %d, image/png, %q", tt.name, i, im.Page, im.MediaType, im.Data, i+1, tt.want[i])
			}
		}
		if tt.opts.PageImages {
			if m.calls["p1"] != 2 {
				t.Errorf("%s: page 1 asked %d times, want 2: a kept page is re-asked, its image lent", tt.name, m.calls["p1"])
			}
			if got := uploads.InUse(); got != 5 {
				t.Errorf("%s: %d bytes of upload memory in use before the answer is closed, want the pages' 5", tt.name, got)
			}
		}
		res.Close()
		if uploads.InUse() != 0 || svc.retry.InUse() != 0 {
			t.Errorf("%s: %d bytes of upload memory, %d of retry memory in use once closed", tt.name, uploads.InUse(), svc.retry.InUse())
		}
	}
}
