package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/problem"
)

// slowDocs is a Splitter and Refuser whose uploads name what they do: "zip" is refused from
// its bytes, "bad-split" fails to split and "bad-page" to prepare, at once; "slow-split" and
// "slow-page" work until their context ends (or for a long while, which no test waits out),
// and record whether it ended; anything else is one page, as fakePrep.
type slowDocs struct {
	mu       sync.Mutex
	calls    []string // "split slow-split", "prepare slow-page" …
	canceled []string // the slow calls whose context ended
}

const slowWork = 20 * time.Second

func (d *slowDocs) record(list *[]string, s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	*list = append(*list, s)
}

func (d *slowDocs) slow(ctx context.Context, what string) error {
	select {
	case <-ctx.Done():
		d.record(&d.canceled, what)
		return fmt.Errorf("slowDocs: %w", ctx.Err())
	case <-time.After(slowWork):
		return nil
	}
}

func (d *slowDocs) Refuse(data []byte) error {
	if string(data) == "zip" {
		return problem.Errorf(problem.UnsupportedMediaType, "the file is a ZIP archive")
	}
	return nil
}

func (d *slowDocs) Prepare(ctx context.Context, data []byte) (intake.Page, error) {
	return d.PreparePage(ctx, data, 0)
}

func (d *slowDocs) Split(ctx context.Context, data []byte) (int, error) {
	d.record(&d.calls, "split "+string(data))
	switch string(data) {
	case "bad-split":
		return 0, problem.Errorf(problem.ImageUnreadable, "the document is damaged")
	case "slow-split":
		if err := d.slow(ctx, "split slow-split"); err != nil {
			return 0, err
		}
	}
	return 1, nil
}

func (d *slowDocs) PreparePage(ctx context.Context, data []byte, _ int) (intake.Page, error) {
	d.record(&d.calls, "prepare "+string(data))
	switch string(data) {
	case "bad-page":
		return intake.Page{}, problem.Errorf(problem.ImageTooLarge, "the image is too large")
	case "slow-page":
		if err := d.slow(ctx, "prepare slow-page"); err != nil {
			return intake.Page{}, err
		}
	}
	return fakePrep{}.Prepare(ctx, data)
}

// TestRefusedAtOnce: a refused upload is answered without waiting for its siblings' work. One
// refused from its bytes (a ZIP beside two heavy PDFs) is refused before any upload is split or
// prepared; one refused while splitting or preparing stops the others' work, whose contexts
// end, rather than waiting for it to finish.
func TestRefusedAtOnce(t *testing.T) {
	tests := []struct {
		name     string
		uploads  []string
		code     problem.Code
		detail   string
		calls    []string // made, in any order
		canceled []string
	}{
		{"a ZIP beside slow documents", []string{"slow-split", "slow-page", "zip"}, problem.UnsupportedMediaType, "page 3: the file is a ZIP",
			nil, nil},
		{"refused while splitting", []string{"slow-split", "bad-split"}, problem.ImageUnreadable, "file 2: the document is damaged", // the first was not counted
			[]string{"split slow-split", "split bad-split"}, []string{"split slow-split"}},
		{"refused while preparing", []string{"slow-page", "bad-page"}, problem.ImageTooLarge, "page 2: the image is too large",
			[]string{"split slow-page", "split bad-page", "prepare slow-page", "prepare bad-page"}, []string{"prepare slow-page"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &slowDocs{}
			s := New(Config{Model: byName(), Prep: d})
			images := make([][]byte, len(tt.uploads))
			for i, u := range tt.uploads {
				images[i] = []byte(u)
			}
			_, err := s.Extract(t.Context(), owned(images), check.Context{})
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != tt.code || !strings.HasPrefix(pe.Detail, tt.detail) {
				t.Fatalf("err = %v, want %s %q", err, tt.code, tt.detail)
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			if !sameSet(d.calls, tt.calls) {
				t.Errorf("calls %q, want %q", d.calls, tt.calls)
			}
			if !sameSet(d.canceled, tt.canceled) {
				t.Errorf("work stopped: %q, want %q", d.canceled, tt.canceled)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}
