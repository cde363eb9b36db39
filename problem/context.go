package problem

import (
	"context"
	"errors"
	"fmt"
)

// Shutdown is the cause with which a server cancels the requests still running when it stops
// (context.WithCancelCause): FromContext tells them from a caller's going away by it. It wraps
// context.Canceled, so that code reading context.Cause sees a cancellation still.
var Shutdown = fmt.Errorf("the server shut down: %w", context.Canceled)

// FromContext is the problem for work that ctx's end stopped, what saying where it stopped
// ("before this page was read", "while waiting for a turn"), or nil while ctx has not ended.
// It is the one mapping of a context's end to a problem, from the three ways a context ends:
//
//   - its deadline passed: model_timeout (504), "the request deadline passed " + what;
//   - the caller went away: canceled (499, seen only in logs and metrics), "the caller went
//     away " + what;
//   - the server shut down (cause Shutdown): canceled too, "the server shut down " + what.
//
// The problem's cause (Err) wraps ctx's error and, for a shutdown, Shutdown, so that
// errors.Is(err, context.Canceled) holds of it as of ctx.Err().
func FromContext(ctx context.Context, what string) error {
	if ctx.Err() == nil {
		return nil
	}
	return ended(ctx.Err(), context.Cause(ctx), what)
}

// Ended is err mapped as FromContext maps a context's end, when err is one (it wraps
// context.DeadlineExceeded or context.Canceled; a shutdown when it wraps Shutdown too); err as
// it is otherwise, a *Error (already mapped, such as an overloaded wait that the deadline cut
// short) included; nil for nil.
func Ended(err error, what string) error {
	var pe *Error
	if err == nil || errors.As(err, &pe) {
		return err
	}
	return ended(err, err, what)
}

func ended(err, cause error, what string) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: ModelTimeout, Detail: "the request deadline passed " + what, Err: err}
	case errors.Is(cause, Shutdown):
		if !errors.Is(err, Shutdown) {
			err = fmt.Errorf("%w (%w)", err, Shutdown)
		}
		return &Error{Code: Canceled, Detail: "the server shut down " + what, Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: Canceled, Detail: "the caller went away " + what, Err: err}
	}
	return err
}
