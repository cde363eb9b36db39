package extract

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

// TestCanceledPage: a caller who goes away while a page's model call runs ends the request as
// canceled (problem.FromContext), and so does the page's meta, which the metrics count: the
// page was no internal_error.
func TestCanceledPage(t *testing.T) {
	f := fakeopenai.New(t)
	arrived := make(chan struct{})
	f.Default(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	})
	c, err := vision.New(vision.Config{BaseURL: f.URL, Model: "m", Tries: 1})
	if err != nil {
		t.Fatal(err)
	}
	metas := make(chan schema.PageMeta, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-arrived
		cancel()
	}()
	_, err = New(Config{Model: c, Prep: fakePrep{}, Observer: observerFunc(func(p schema.PageMeta) { metas <- p })}).
		Extract(ctx, owned([][]byte{[]byte("p")}), check.Context{})
	if problem.CodeOf(err) != problem.Canceled || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want canceled wrapping context.Canceled", err)
	}
	if p := <-metas; p.Error != problem.Canceled {
		t.Errorf("page meta error %q, want canceled", p.Error)
	}
}
