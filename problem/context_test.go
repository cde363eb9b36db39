package problem

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestFromContext: each way a context ends is its one code and detail, and the problem's cause
// still says which it was.
func TestFromContext(t *testing.T) {
	past := func() context.Context {
		ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
		t.Cleanup(cancel)
		return ctx
	}
	canceled := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	// A request's context derives from the server's: a shutdown reaches it through its parent.
	child := func(parent context.Context) context.Context {
		ctx, cancel := context.WithTimeout(parent, time.Hour)
		t.Cleanup(cancel)
		return ctx
	}
	tests := []struct {
		name   string
		ctx    context.Context
		code   Code // "" means nil
		detail string
		is     []error
	}{
		{"alive", context.Background(), "", "", nil},
		{"deadline", past(), ModelTimeout, "the request deadline passed before this page was read", []error{context.DeadlineExceeded}},
		{"deadline with a cause", func() context.Context {
			ctx, cancel := context.WithTimeoutCause(context.Background(), 0, errors.New("own"))
			t.Cleanup(cancel)
			return ctx
		}(), ModelTimeout, "the request deadline passed before this page was read", []error{context.DeadlineExceeded}},
		{"caller gone", canceled(nil), Canceled, "the caller went away before this page was read", []error{context.Canceled}},
		{"shutdown", canceled(Shutdown), Canceled, "the server shut down before this page was read", []error{context.Canceled, Shutdown}},
		{"shutdown of the parent", child(canceled(Shutdown)), Canceled, "the server shut down before this page was read", []error{context.Canceled, Shutdown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := FromContext(tt.ctx, "before this page was read")
			if tt.code == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Code != tt.code || pe.Detail != tt.detail {
				t.Fatalf("got %#v, want %s %q", err, tt.code, tt.detail)
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("%v does not wrap %v", err, target)
				}
			}
			// What the work returned, ctx's error wrapped, gets the same code (a shutdown's detail
			// needs the context: its cause is not in ctx.Err()).
			if got := Ended(fmt.Errorf("work: %w", tt.ctx.Err()), "before this page was read"); CodeOf(got) != tt.code {
				t.Errorf("Ended(ctx.Err()) is %v, want %s", got, tt.code)
			}
		})
	}
}

// TestEnded: an error that is no context's end, or one already mapped, is left as it is.
func TestEnded(t *testing.T) {
	plain := errors.New("disk on fire")
	mapped := &Error{Code: Overloaded, Detail: "busy", Err: context.DeadlineExceeded}
	tests := []struct {
		name string
		err  error
		want error // nil: a new problem of code
		code Code
	}{
		{"nil", nil, nil, ""},
		{"plain", plain, plain, Internal},
		{"already mapped", mapped, mapped, Overloaded},
		{"wrapped mapped", fmt.Errorf("x: %w", mapped), nil, Overloaded},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), nil, ModelTimeout},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), nil, Canceled},
		{"shutdown", Shutdown, nil, Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Ended(tt.err, "while waiting")
			if tt.want != nil && got != tt.want {
				t.Errorf("got %v, want %v as it is", got, tt.want)
			}
			if tt.err == nil && got != nil {
				t.Errorf("got %v for nil", got)
			}
			if tt.code != "" && CodeOf(got) != tt.code {
				t.Errorf("code %s, want %s", CodeOf(got), tt.code)
			}
		})
	}
}
