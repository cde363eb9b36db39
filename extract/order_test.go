package extract

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/vision"
)

// heldModel records the page of each call as it starts and holds the call until the test
// releases that page, counting the calls under way.
type heldModel struct {
	entered chan int // the page (0-based) of each call, as it starts
	release []chan struct{}

	mu        sync.Mutex
	now, most int
}

func newHeld(n int) *heldModel {
	m := &heldModel{entered: make(chan int, n), release: make([]chan struct{}, n)}
	for i := range m.release {
		m.release[i] = make(chan struct{})
	}
	return m
}

func (m *heldModel) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	name := strings.TrimSpace(string(req.Images[0].Bytes()))
	i, err := strconv.Atoi(strings.TrimPrefix(name, "p"))
	if err != nil {
		return vision.Reply{}, err
	}
	i--
	m.mu.Lock()
	m.now++
	m.most = max(m.most, m.now)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.now--
		m.mu.Unlock()
	}()
	m.entered <- i
	select {
	case <-m.release[i]:
	case <-ctx.Done():
		return vision.Reply{}, ctx.Err()
	}
	return reply(`{"indicators":[{"itemName":"` + name + `","valueNum":1}]}`), nil
}

// pageUploads is n pages p1…pn: a document of all but the last, then the last as a photo.
func pageUploads(n int) (images [][]byte, want string) {
	names := make([]string, n)
	for i := range names {
		names[i] = "p" + strconv.Itoa(i+1)
	}
	if n > 1 {
		images = append(images, []byte("doc:"+strings.Join(names[:n-1], ",")))
	}
	images = append(images, []byte(names[n-1]))
	return images, strings.Join(names, ",")
}

// TestPagesStartInOrder: the model calls start in page order, whatever order they end in. The
// first Concurrency pages are under way together; then each call the test lets end, the
// latest first, lets exactly the next page's call start, and never more than Concurrency run
// at once (with 1, strictly one after another).
func TestPagesStartInOrder(t *testing.T) {
	tests := []struct{ pages, conc int }{
		{1, 1}, {2, 1}, {3, 1}, {7, 1},
		{3, 2}, {6, 2}, {5, 3}, {9, 4}, {3, 8},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d pages, %d at once", tt.pages, tt.conc), func(t *testing.T) {
			m := newHeld(tt.pages)
			images, want := pageUploads(tt.pages)
			svc := New(Config{Model: m, Prep: &fakeDocs{}, Concurrency: tt.conc})
			type result struct {
				res Response
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := svc.Extract(t.Context(), owned(images), check.Context{})
				done <- result{res, err}
			}()

			// Which of the first pages starts first is a race between calls under way
			// together; that they are the first pages is not.
			first := min(tt.conc, tt.pages)
			running := map[int]bool{}
			for range first {
				running[<-m.entered] = true
			}
			var under []int
			for i := range running {
				under = append(under, i+1)
			}
			slices.Sort(under)
			if len(under) != first || under[first-1] != first {
				t.Errorf("calls under way for pages %v, want the first %d", under, first)
			}
			next := first
			for range tt.pages {
				last := -1
				for i := range running {
					last = max(last, i)
				}
				delete(running, last)
				close(m.release[last])
				if next < tt.pages {
					got := <-m.entered
					if got != next {
						t.Errorf("page %d ended; the next call is for page %d, want %d", last+1, got+1, next+1)
					}
					running[got] = true
					next++
				}
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got := names(r.res.Draft); got != want {
				t.Errorf("indicators %s, want %s", got, want)
			}
			if len(m.entered) != 0 || m.most > tt.conc {
				t.Errorf("%d calls more than pages; %d calls at once, want at most %d", len(m.entered), m.most, tt.conc)
			}
		})
	}
}

// TestPagesReachEndpointInOrder: with one page at a time, the endpoint hears a document's pages
// in order, through the real client.
func TestPagesReachEndpointInOrder(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.Reply(`{"indicators":[{"itemName":"TC","valueNum":5.6}]}`))
	client, err := vision.New(vision.Config{BaseURL: f.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	images, want := pageUploads(5)
	svc := New(Config{Model: client, Prep: &fakeDocs{}, Concurrency: 1})
	if _, err := svc.Extract(t.Context(), owned(images), check.Context{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.Requests() {
		got = append(got, sentPage(t, r))
	}
	if strings.Join(got, ",") != want {
		t.Errorf("the endpoint heard pages %v, want %s", got, want)
	}
}

// sentPage is the name of the page a request carried (fakeDocs's page bytes are its name).
func sentPage(t *testing.T, r fakeopenai.Request) string {
	t.Helper()
	for _, msg := range r.Chat.Messages {
		for _, part := range msg.MultiContent {
			if part.ImageURL == nil {
				continue
			}
			_, data, ok := strings.Cut(part.ImageURL.URL, ";base64,")
			b, err := base64.StdEncoding.DecodeString(data)
			if !ok || err != nil {
				t.Fatalf("an image that is not a base64 data URL: %.40q", part.ImageURL.URL)
			}
			return strings.TrimSpace(string(b))
		}
	}
	t.Fatal("a request without an image")
	return ""
}
