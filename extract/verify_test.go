package extract

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/prompt"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

// Lines that tell the two prompts apart at the fake.
const (
	firstAsks  = "transcribe it as JSON"
	secondAsks = "Copy it out row by row"
)

func TestPromptMarkers(t *testing.T) {
	if !strings.Contains(prompt.Render(), firstAsks) || strings.Contains(prompt.Second(), firstAsks) ||
		!strings.Contains(prompt.Second(), secondAsks) || strings.Contains(prompt.Render(), secondAsks) {
		t.Fatal("the markers do not tell the prompts apart")
	}
}

// sizedPrep is fakePrep with a page size, for boxes: 1000×1400 pixels as sent.
type sizedPrep struct{}

func (sizedPrep) Prepare(ctx context.Context, data []byte) (intake.Page, error) {
	return intake.Page{MIME: "image/png", Data: data, BytesIn: len(data), BytesOut: len(data), Width: 1000, Height: 1400}, nil
}

// verifyEnv is a service over the real client against the fake, reading twice.
func verifyEnv(t *testing.T, f *fakeopenai.Server, cfg Config) *Service {
	t.Helper()
	c, err := vision.New(vision.Config{BaseURL: f.URL, Model: "first-vl", Tries: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = c
	if cfg.Prep == nil {
		cfg.Prep = sizedPrep{}
	}
	return New(cfg)
}

func run(t *testing.T, s *Service, pages ...string) Response {
	t.Helper()
	var b [][]byte
	for _, p := range pages {
		b = append(b, []byte(p))
	}
	res, err := s.Extract(t.Context(), owned(b), check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const lipids = `{"indicators":[
 {"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L","refText":"3.1-5.2"},
 {"itemName":"甘油三酯","valueNum":1.42,"unit":"mmol/L","refText":"0.56-1.70"},
 {"itemName":"空腹血糖","valueNum":5.0,"unit":"mmol/L","refText":"3.9-6.1"}]}`

// got lists a response's warnings of the second read as code@path first/second.
func got(res Response) []string {
	var out []string
	for _, w := range res.Warnings {
		switch w.Code {
		case schema.ReadsDisagree, schema.ReadOnce, schema.PageNotVerified:
			p := "null"
			if w.Path != nil {
				p = *w.Path
			}
			s := string(w.Code) + "@" + p
			if w.Code == schema.ReadsDisagree {
				s += " " + w.Params["first"] + "/" + w.Params["second"]
			}
			if w.Code == schema.ReadOnce {
				s += " " + w.Params["read"] + ":" + w.Params["itemName"]
			}
			out = append(out, s)
		}
	}
	return out
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestVerifyAll: every page is read twice; each field the reads give differently is
// reads_disagree at that field of the returned draft (page 2's rows rebased after page 1's),
// with both readings as printed; 5.0 and 5.00 agree; a row only one read has is read_once; the
// draft is the first read's; meta counts the second reads per page and in total.
func TestVerifyAll(t *testing.T) {
	f := fakeopenai.New(t)
	f.Route(fakeopenai.Asking(secondAsks), fakeopenai.Complete(fakeopenai.Response{Content: `{"results":[
 {"name":"总胆固醇","result":"5.36","unit":"mmol/L","range":"3.1-5.2"},
 {"name":"甘油三酯","result":"1.42","unit":"mmol/l","range":"0.56–1.70"},
 {"name":"空腹血糖","result":"5.00","unit":"mmol/L","range":"3.9-6.1"}]}`, PromptTokens: 700, CompletionTokens: 90}),
		fakeopenai.Complete(fakeopenai.Response{Content: `{"results":[
 {"name":"总胆固醇","result":"4.86","unit":"mg/dL","range":"3.1-5.7"},
 {"name":"甘油三酯","result":"1.42","unit":"mmol/L","range":"0.56-1.70"},
 {"name":"空腹血糖","result":"5.0","unit":"mmol/L","range":"3.9-6.1"},
 {"name":"尿酸","result":"300","unit":"μmol/L","range":"150-420"}]}`, PromptTokens: 700, CompletionTokens: 90}))
	f.Route(fakeopenai.Both(fakeopenai.Asking(firstAsks), holds("p2")), fakeopenai.Complete(fakeopenai.Response{Content: strings.ReplaceAll(lipids, "5.86", "4.86"), PromptTokens: 1000, CompletionTokens: 200}))
	f.Route(fakeopenai.Asking(firstAsks), fakeopenai.Complete(fakeopenai.Response{Content: lipids, PromptTokens: 1000, CompletionTokens: 200}))
	s := verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyAll}, Concurrency: 1})
	res := run(t, s, "p1", "p2")
	same(t, "warnings", got(res), []string{
		"reads_disagree@indicators[0].valueNum 5.86/5.36",
		"reads_disagree@indicators[3].unit mmol/L/mg/dL",
		"reads_disagree@indicators[3].refText 3.1-5.2/3.1-5.7",
		"read_once@pages[1] second:尿酸",
	})
	if v := res.Draft.Indicators[0].ValueNum.String(); v != "5.86" {
		t.Errorf("valueNum %s, want the first read's 5.86", v)
	}
	for i, m := range res.Meta.Pages {
		want := schema.VerifyDisagreed
		if m.Verify == nil || m.Verify.Status != want || m.Verify.Attempts != 1 || m.Verify.Usage.PromptTokens != 700 || m.Verify.Model == "" {
			t.Errorf("page %d verify meta %+v, want %s, 1 attempt, 700 prompt tokens", i+1, m.Verify, want)
		}
		if m.Width != 1000 || m.Height != 1400 {
			t.Errorf("page %d size %d×%d, want the image sent's 1000×1400", i+1, m.Width, m.Height)
		}
	}
	if v := res.Meta.Verify; v == nil || v.Pages != 2 || v.Attempts != 2 || v.Usage.CompletionTokens != 180 || v.Mode != "all" {
		t.Errorf("meta.verify %+v, want 2 pages, 2 attempts, 180 completion tokens", v)
	}
	if res.Meta.Attempts != 2 || res.Meta.Usage.PromptTokens != 2000 {
		t.Errorf("meta attempts %d, usage %+v: the first reads' alone", res.Meta.Attempts, res.Meta.Usage)
	}
	if f.Calls() != 4 {
		t.Errorf("%d calls, want 4", f.Calls())
	}
}

// TestVerifyAgree: two reads that agree (up to decimals as printed, case of units, the dash of a
// range) flag nothing.
func TestVerifyAgree(t *testing.T) {
	f := fakeopenai.New(t)
	f.Route(fakeopenai.Asking(secondAsks), fakeopenai.Reply(`{"results":[
 {"name":"总胆固醇","result":"5.860","unit":"mmol/L","range":"3.1–5.2"},
 {"name":"甘油三酯","result":"1.42","unit":"MMOL/L","range":"0.56-1.70"},
 {"name":"空腹血糖","result":"5.00","unit":"mmol/L","range":"3.9-6.1"}]}`))
	f.Route(fakeopenai.Asking(firstAsks), fakeopenai.Reply(lipids))
	res := run(t, verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyAll}}), "p")
	same(t, "warnings", got(res), nil)
	if v := res.Meta.Pages[0].Verify; v == nil || v.Status != schema.VerifyAgreed {
		t.Errorf("verify meta %+v, want agreed", v)
	}
}

// TestVerifyFailed: a second read that fails, is unreadable, or is refused leaves the draft as
// the first read gave it, with page_not_verified, and never fails the request.
func TestVerifyFailed(t *testing.T) {
	for name, a := range map[string]fakeopenai.Answer{
		"server error": fakeopenai.ServerError(),
		"no JSON":      fakeopenai.Reply("I cannot read this page."),
		"refused":      fakeopenai.Complete(fakeopenai.Response{Refusal: "no"}),
	} {
		t.Run(name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Route(fakeopenai.Asking(secondAsks), a)
			f.Route(fakeopenai.Asking(firstAsks), fakeopenai.Reply(lipids))
			res := run(t, verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyAll}}), "p")
			same(t, "warnings", got(res), []string{"page_not_verified@null"})
			if len(res.Draft.Indicators) != 3 || res.Draft.Indicators[0].ValueNum.String() != "5.86" {
				t.Errorf("draft %s changed", names(res.Draft))
			}
			if v := res.Meta.Pages[0].Verify; v == nil || v.Status != schema.VerifyFailed || v.Error == "" {
				t.Errorf("verify meta %+v, want failed with its code", v)
			}
		})
	}
}

// TestVerifyDeadline: a second read that does not answer ends before the request's deadline, and
// the request answers the first read's draft with page_not_verified.
func TestVerifyDeadline(t *testing.T) {
	f := fakeopenai.New(t)
	f.Route(fakeopenai.Asking(secondAsks), func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	f.Route(fakeopenai.Asking(firstAsks), fakeopenai.Reply(lipids))
	s := verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyAll}})
	ctx, cancel := context.WithTimeout(t.Context(), 2e9)
	defer cancel()
	res, err := s.Extract(ctx, owned([][]byte{[]byte("p")}), check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "warnings", got(res), []string{"page_not_verified@null"})
	if v := res.Meta.Pages[0].Verify; v == nil || v.Error != problem.ModelTimeout {
		t.Errorf("verify meta %+v, want model_timeout", v)
	}
}

// TestVerifyFlagged: only the page the checks flag (a value no patient has) is read again.
func TestVerifyFlagged(t *testing.T) {
	f := fakeopenai.New(t)
	f.Route(fakeopenai.Asking(secondAsks), fakeopenai.Reply(`{"results":[{"name":"空腹血糖","result":"5.1","unit":"mmol/L"}]}`))
	f.Route(fakeopenai.Both(fakeopenai.Asking(firstAsks), holds("bad")),
		fakeopenai.Reply(`{"indicators":[{"itemName":"空腹血糖","valueNum":510,"unit":"mmol/L"}]}`))
	f.Route(fakeopenai.Asking(firstAsks), fakeopenai.Reply(lipids))
	res := run(t, verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyFlagged}}), "good", "bad")
	seconds := 0
	for _, r := range f.Requests() {
		if fakeopenai.Asking(secondAsks)(r) {
			seconds++
			if !strings.Contains(string(r.Body), b64("bad")) {
				t.Error("a page nothing flagged was read again")
			}
		}
	}
	if seconds != 1 {
		t.Errorf("%d second reads, want 1 (the flagged page)", seconds)
	}
	same(t, "warnings", got(res), []string{"reads_disagree@indicators[3].valueNum 510/5.1"})
	if v := res.Meta.Pages[0].Verify; v == nil || v.Status != schema.VerifySkipped || v.Attempts != 0 {
		t.Errorf("page 1 verify meta %+v, want skipped", v)
	}
	if v := res.Meta.Verify; v == nil || v.Pages != 1 {
		t.Errorf("meta.verify %+v, want 1 page", v)
	}
}

// holds matches the requests that carry the page whose bytes are page.
func holds(page string) fakeopenai.Match {
	return func(r fakeopenai.Request) bool { return strings.Contains(string(r.Body), b64(page)) }
}

func b64(s string) string {
	b, _ := json.Marshal([]byte(s))
	return strings.Trim(string(b), `"`)
}

// TestVerifyModel: the second read goes to the second model (routed by name at one endpoint),
// and meta names it.
func TestVerifyModel(t *testing.T) {
	f := fakeopenai.New(t)
	f.Route(fakeopenai.ForModel("second-vl"), fakeopenai.Reply(`{"results":[{"name":"总胆固醇","result":"5.36","unit":"mmol/L","range":"3.1-5.2"}]}`))
	f.Route(fakeopenai.ForModel("first-vl"), fakeopenai.Reply(`{"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L","refText":"3.1-5.2"}]}`))
	v, err := vision.New(vision.Config{BaseURL: f.URL, Model: "second-vl", Tries: 1})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyAll, Model: v}}), "p")
	same(t, "warnings", got(res), []string{"reads_disagree@indicators[0].valueNum 5.86/5.36"})
	for _, r := range f.Requests() {
		if second := fakeopenai.Asking(secondAsks)(r); second != (r.Chat.Model == "second-vl") {
			t.Errorf("model %s got the %v prompt", r.Chat.Model, map[bool]string{true: "second", false: "first"}[second])
		}
	}
	if m := res.Meta.Pages[0].Verify.Model; m != "second-vl" {
		t.Errorf("verify model %q", m)
	}
}

// TestVerifyConcurrent: with all, the two reads of a page are at the model at once: the first
// read answers only once the second has arrived, which it would never do if they ran one after
// the other. With no retry memory (the page handed over), both calls still get the whole image,
// and its memory is given back.
func TestVerifyConcurrent(t *testing.T) {
	for _, mem := range []int64{0, 1} {
		f := fakeopenai.New(t)
		arrived := make(chan struct{})
		f.Route(fakeopenai.Asking(secondAsks), func(w http.ResponseWriter, r *http.Request) {
			close(arrived)
			fakeopenai.Reply(`{"results":[{"name":"总胆固醇","result":"5.86","unit":"mmol/L","range":"3.1-5.2"}]}`)(w, r)
		})
		f.Route(fakeopenai.Asking(firstAsks), func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-arrived:
			case <-r.Context().Done():
				return
			}
			fakeopenai.Reply(`{"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L","refText":"3.1-5.2"}]}`)(w, r)
		})
		s := verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyAll}, RetryMemory: mem})
		res := run(t, s, "the page's bytes")
		same(t, "warnings", got(res), nil)
		for _, r := range f.Requests() {
			if !strings.Contains(string(r.Body), b64("the page's bytes")) {
				t.Errorf("retry memory %d: a call lacked the image", mem)
			}
		}
		if sentOnce := res.Meta.Pages[0].Verify != nil && mem == 1; sentOnce && s.retry.InUse() != 0 {
			t.Errorf("retry memory in use %d after the request", s.retry.InUse())
		}
	}
}

// TestVerifyOff: with verification and boxes off, meta has no verify, one call is made per page,
// and the prompt says nothing of boxes.
func TestVerifyOff(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.Reply(lipids))
	res := run(t, verifyEnv(t, f, Config{}), "p")
	if res.Meta.Verify != nil || res.Meta.Pages[0].Verify != nil || f.Calls() != 1 {
		t.Errorf("verification off: meta %+v, %d calls", res.Meta.Verify, f.Calls())
	}
	if body := strings.ToLower(string(f.Requests()[0].Body)); strings.Contains(body, "box") {
		t.Error("with boxes off, the prompt speaks of boxes")
	}
	if len(res.Meta.Evidence) != 0 {
		t.Errorf("evidence %+v without boxes or a text layer", res.Meta.Evidence)
	}
}

// TestModelBoxes: a row's box, in each convention, maps exactly to the pixels of the 1000×1400
// image sent, as evidence at the row with source model; a box off the page, inverted, of zero
// area, malformed or under another convention's key is dropped, and every row is kept as read.
func TestModelBoxes(t *testing.T) {
	rows := func(key string, boxes ...string) string {
		var b strings.Builder
		b.WriteString(`{"indicators":[`)
		for i, box := range boxes {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"itemName":"项目` + string(rune('A'+i)) + `","valueNum":1.0`)
			if box != "" {
				b.WriteString(`,"` + key + `":` + box)
			}
			b.WriteString("}")
		}
		b.WriteString("]}")
		return b.String()
	}
	want := []string{"indicators[0] 1 100,140 200×70"}
	bad := []string{"[-10,140,300,210]", "[300,210,100,140]", "[100,140,100,210]", `[1,2,3]`, `"x"`, `[1,2,"a",4]`, ""}
	for _, tt := range []struct {
		conv  prompt.Boxes
		key   string
		good  string
		wrong string // in another convention's key
	}{
		{prompt.BoxesPixels, "bbox_2d", "[100,140,300,210]", `"box_2d":[100,140,300,210]`},
		{prompt.BoxesThousandths, "bbox_2d", "[100,100,300,150]", `"box_2d":[100,100,300,150]`},
		{prompt.BoxesGemini, "box_2d", "[100,100,150,300]", `"bbox_2d":[100,100,150,300]`},
	} {
		t.Run(string(tt.conv), func(t *testing.T) {
			f := fakeopenai.New(t)
			reply := rows(tt.key, append([]string{tt.good}, bad...)...)
			reply = strings.Replace(reply, `"valueNum":1.0}]}`, `"valueNum":1.0,`+tt.wrong+`}]}`, 1)
			f.Default(fakeopenai.Reply(reply))
			res := run(t, verifyEnv(t, f, Config{Boxes: tt.conv}), "p")
			var ev []string
			for _, e := range res.Meta.Evidence {
				if e.Source != schema.SourceModel {
					t.Errorf("evidence %+v is not the model's", e)
				}
				ev = append(ev, e.Path+" "+itoa(e.Page)+" "+itoa(e.Box.X)+","+itoa(e.Box.Y)+" "+itoa(e.Box.W)+"×"+itoa(e.Box.H))
			}
			same(t, "evidence", ev, want)
			if n := len(res.Draft.Indicators); n != 1+len(bad) {
				t.Errorf("%d rows, want every row kept", n)
			}
			for _, w := range res.Warnings {
				if w.Code != schema.NameUnknown {
					t.Errorf("a box is no data, yet %s at %v", w.Code, *w.Path)
				}
			}
			if p := f.Requests()[0].Chat.Messages[0].MultiContent; !strings.Contains(p[len(p)-1].Text, tt.key) {
				t.Error("the prompt does not ask for the box")
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestVerifyCost measures, at the fake, what each read sends besides the image (the prompt and
// the request's JSON) and what a second read of the lipid panel answers, for docs/verify.md:
// go test ./extract -run TestVerifyCost -v. The second prompt, which echoes no schema, is the
// shorter.
func TestVerifyCost(t *testing.T) {
	f := fakeopenai.New(t)
	f.Route(fakeopenai.Asking(secondAsks), fakeopenai.Reply(`{"results":[{"name":"总胆固醇","result":"5.86","unit":"mmol/L","range":"3.1-5.2"},{"name":"甘油三酯","result":"1.42","unit":"mmol/L","range":"0.56-1.70"},{"name":"空腹血糖","result":"5.0","unit":"mmol/L","range":"3.9-6.1"}]}`))
	f.Route(fakeopenai.Asking(firstAsks), fakeopenai.Reply(lipids))
	run(t, verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyAll}}), "p")
	sizes := map[bool]int{}
	for _, r := range f.Requests() {
		sizes[fakeopenai.Asking(secondAsks)(r)] = len(r.Body) - len(b64("p"))
	}
	t.Logf("request without the image: first read %d bytes, second read %d bytes; prompts %d and %d characters (%d bytes, %d bytes); boxes add %d bytes",
		sizes[false], sizes[true], len([]rune(prompt.Render())), len([]rune(prompt.Second())), len(prompt.Render()), len(prompt.Second()),
		len(prompt.First(prompt.BoxesThousandths))-len(prompt.Render()))
	if sizes[true] >= sizes[false] {
		t.Errorf("the second read sends %d bytes besides the image, the first %d", sizes[true], sizes[false])
	}
}

// TestVerifyFlaggedTextLayer: on a digital PDF's page, a value its text layer does not print
// flags the page for a second read; one that prints every value does not.
func TestVerifyFlaggedTextLayer(t *testing.T) {
	const printed = "text:总胆固醇 5.86 mmol/L 3.1-5.2"
	for _, tt := range []struct {
		value   string
		seconds int
	}{{"5.86", 0}, {"5.36", 1}} {
		f := fakeopenai.New(t)
		f.Route(fakeopenai.Asking(secondAsks), fakeopenai.Reply(`{"results":[{"name":"总胆固醇","result":"5.86","unit":"mmol/L","range":"3.1-5.2"}]}`))
		f.Route(fakeopenai.Asking(firstAsks), fakeopenai.Reply(`{"indicators":[{"itemName":"总胆固醇","valueNum":`+tt.value+`,"unit":"mmol/L","refText":"3.1-5.2"}]}`))
		run(t, verifyEnv(t, f, Config{Verify: Verify{Mode: VerifyFlagged}, Prep: textPrep{}}), printed)
		n := 0
		for _, r := range f.Requests() {
			if fakeopenai.Asking(secondAsks)(r) {
				n++
			}
		}
		if n != tt.seconds {
			t.Errorf("value %s: %d second reads, want %d", tt.value, n, tt.seconds)
		}
	}
}

// panicky panics on the second read: a bug, which fails the request as internal_error, not a
// page_not_verified warning on a draft.
type panicky struct{ first Model }

func (p panicky) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	if req.Prompt == prompt.Second() {
		panic("boom")
	}
	return p.first.Complete(ctx, req)
}

func TestVerifyPanic(t *testing.T) {
	s := New(Config{Model: constModel{lipids}, Prep: fakePrep{}, Verify: Verify{Mode: VerifyAll, Model: panicky{constModel{lipids}}}})
	_, err := s.Extract(t.Context(), owned([][]byte{[]byte("p")}), check.Context{})
	if problem.CodeOf(err) != problem.Internal || !strings.Contains(err.(*problem.Error).Err.Error(), "boom") {
		t.Errorf("err = %v, want internal_error with the panic", err)
	}
}

// TestVerifyFirstFails: a page whose first read fails after its second read answered is a
// failed page, and the second read's tokens are still in its meta: they were spent.
func TestVerifyFirstFails(t *testing.T) {
	answered := make(chan struct{})
	second := modelFunc(func(ctx context.Context, req vision.Request) (vision.Reply, error) {
		defer close(answered)
		return vision.Reply{Text: `{"results":[{"name":"总胆固醇","result":"5.86"}]}`, FinishReason: "stop", PromptTokens: 700}, nil
	})
	first := modelFunc(func(ctx context.Context, req vision.Request) (vision.Reply, error) {
		req.Images[0].Sent() // as the transport does once the request is written
		<-answered
		return vision.Reply{}, problem.Errorf(problem.ModelUnavailable, "down")
	})
	metas := make(chan schema.PageMeta, 1)
	s := New(Config{Model: first, Prep: fakePrep{}, Verify: Verify{Mode: VerifyAll, Model: second},
		Observer: observerFunc(func(p schema.PageMeta) { metas <- p })})
	_, err := s.Extract(t.Context(), owned([][]byte{[]byte("p")}), check.Context{})
	if problem.CodeOf(err) != problem.ModelUnavailable {
		t.Fatalf("err %v, want the first read's model_unavailable", err)
	}
	m := <-metas
	if m.Error == "" || m.Verify == nil || m.Verify.Status != schema.VerifyFailed || m.Verify.Attempts != 1 || m.Verify.Usage.PromptTokens != 700 {
		t.Errorf("failed page's meta %+v, verify %+v", m, m.Verify)
	}
}

type modelFunc func(ctx context.Context, req vision.Request) (vision.Reply, error)

func (f modelFunc) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	return f(ctx, req)
}
