package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/problem"
)

// slots is a Splitter whose uploads "doc:N" are documents of N pages, each prepared under one
// of its decoding slots, as intake's are: a page that finds no slot before its context's
// deadline is overloaded, as intake's acquire says; one that has its slot works until its
// context ends.
type slots struct{ sem chan struct{} }

func (s slots) Prepare(ctx context.Context, data []byte) (intake.Page, error) {
	return s.PreparePage(ctx, data, 0)
}

func (s slots) Split(_ context.Context, data []byte) (int, error) {
	var n int
	if _, err := fmt.Sscanf(string(data), "doc:%d", &n); err != nil {
		return 1, nil
	}
	return n, nil
}

func (s slots) PreparePage(ctx context.Context, _ []byte, _ int) (intake.Page, error) {
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		return intake.Page{}, &problem.Error{Code: problem.Overloaded, Detail: "the server is busy preparing other images; retry shortly", Err: ctx.Err()}
	}
	<-ctx.Done() // a page slower than the deadline
	return intake.Page{}, fmt.Errorf("slots: the request ended while its image was being decoded: %w", ctx.Err())
}

// TestOwnWork: a request whose deadline passes while its own pages hold the decoding slots
// and its other pages wait for them starved itself, and so does one whose page ran past the
// deadline: pages_too_slow (413), this request's work, not 503 overloaded ("scale out"). A
// request none of whose pages found a slot, all held by others, is the service's load: still
// overloaded.
func TestOwnWork(t *testing.T) {
	tests := []struct {
		name   string
		upload string
		others int // slots held by other requests
		code   problem.Code
		detail string
	}{
		{"its pages wait on each other", "doc:3", 0, problem.PagesTooSlow, "(0 done, 1 under way, 2 waiting for a decoding slot held by its other pages)"},
		{"its one page runs past the deadline", "doc:1", 0, problem.PagesTooSlow, "the request deadline passed while its 1 page was being prepared"},
		{"others hold every slot", "doc:3", 1, problem.Overloaded, "the server is busy"},
		{"others hold every slot, one page", "page", 1, problem.Overloaded, "the server is busy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sl := slots{sem: make(chan struct{}, 1)}
			for range tt.others {
				sl.sem <- struct{}{}
			}
			s := New(Config{Model: byName(), Prep: sl})
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			_, err := s.Extract(ctx, owned([][]byte{[]byte(tt.upload)}), check.Context{})
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != tt.code || !strings.Contains(pe.Detail, tt.detail) {
				t.Fatalf("err = %v, want %s with %q", err, tt.code, tt.detail)
			}
			if tt.code == problem.PagesTooSlow && problem.Lookup(pe.Code).Status != 413 {
				t.Errorf("status %d", problem.Lookup(pe.Code).Status)
			}
		})
	}
}
