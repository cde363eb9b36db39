package review_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	ocrdraft "github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
	"github.com/ocrdraft/ocrdraft/jobs"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/vision"
)

// chromium is Debian's browser, which .ci/run installs.
const chromium = "/usr/bin/chromium"

// wasm is the PDF decoder's runtime, compiled once for the tests that read a PDF.
var wasm = intake.NewRuntime("")

// browser starts a headless Chromium for the test, in a fresh profile, and returns a context of
// its first tab; without Chromium the test skips, unless OCR_BROWSER_TESTS=1 requires it.
func browser(t *testing.T) context.Context { return browserIn(t, "en-US") }

// browserIn is browser with the browser's language lang.
func browserIn(t *testing.T, lang string) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("OCR_BROWSER_TESTS") == "1" {
			t.Fatalf("OCR_BROWSER_TESTS=1 and %s is missing: apt-get install chromium", chromium)
		}
		t.Skipf("%s is missing (apt-get install chromium); OCR_BROWSER_TESTS=1 makes this a failure", chromium)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("lang", lang), chromedp.Flag("accept-lang", lang), chromedp.WindowSize(1280, 800),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no deadline of its own
		t.Fatal(err)
	}
	return ctx
}

// tab opens a new tab of the browser of ctx, recording every request it makes and the errors it
// meets: an uncaught exception, a console error, a log entry of level error (a refusal by the
// CSP, a failed load).
func tab(t *testing.T, ctx context.Context, opts ...chromedp.ContextOption) (context.Context, *requests) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(ctx, opts...)
	t.Cleanup(cancel)
	reqs := &requests{}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			reqs.add(ev.Request.URL)
		case *cdpruntime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			reqs.fail(fmt.Sprintf("%s at %s:%d:%d", msg, d.URL, d.LineNumber+1, d.ColumnNumber+1))
		case *cdplog.EventEntryAdded: // a refusal by the CSP, among others
			// Not the page's faults: the browser's own ask for /favicon.ico, which the service does
			// not serve, and the API's answers of 4xx, which the page shows (a 422 of /v1/validate).
			e := ev.Entry
			if e.Level == cdplog.EntryLevelError && !strings.HasSuffix(e.URL, "/favicon.ico") && !(e.Source == cdplog.EntrySourceNetwork && strings.Contains(e.URL, "/v1/")) {
				reqs.fail(string(ev.Entry.Source) + ": " + ev.Entry.Text)
			}
		case *cdpruntime.EventConsoleAPICalled:
			if string(ev.Type) == "error" {
				reqs.fail("console.error")
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelT)
	return tctx, reqs
}

// requests are the URLs a tab asked for, and the script errors it met.
type requests struct {
	mu     sync.Mutex
	urls   []string
	errors []string
}

func (r *requests) add(u string) { r.mu.Lock(); r.urls = append(r.urls, u); r.mu.Unlock() }
func (r *requests) fail(e string) {
	r.mu.Lock()
	r.errors = append(r.errors, e)
	r.mu.Unlock()
}

// check fails t for any request to an origin not in allowed (blob: URLs are the page's own) and
// for any script error.
func (r *requests) check(t *testing.T, allowed ...string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range r.urls {
		if strings.HasPrefix(u, "blob:") || slices.ContainsFunc(allowed, func(o string) bool { return u == o || strings.HasPrefix(u, o+"/") }) {
			continue
		}
		t.Errorf("a request left the origin: %s", u)
	}
	for _, e := range r.errors {
		t.Errorf("script error: %s", e)
	}
}

func (r *requests) saw(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.urls, func(u string) bool { return strings.HasSuffix(u, path) })
}

// service is the whole API on a test server, the fake model answering replies in order (one
// page at a time, so in page order).
type service struct {
	*httptest.Server
	model *fakeopenai.Server
	jobs  *jobs.Service // nil: /v1/jobs answers jobs_not_configured
	mu    sync.Mutex
	paths []string // each request's path, and its method and path ("DELETE /v1/jobs/job_…")
}

func newService(t *testing.T, cfg server.Config) *service { return newServiceJobs(t, cfg, false) }

// newServiceJobs is newService, with /v1/jobs run on SQLite in a temporary directory when
// withJobs (as the server tests' jobs option does).
func newServiceJobs(t *testing.T, cfg server.Config, withJobs bool) *service {
	t.Helper()
	model := fakeopenai.New(t)
	client, err := vision.New(vision.Config{BaseURL: model.URL, APIKey: "sk-test", Model: "test-vl"})
	if err != nil {
		t.Fatal(err)
	}
	ext := extract.New(extract.Config{
		Model: client, Prep: intake.New(intake.Limits{}, wasm), Builder: draft.New(lexicon.Default()),
		ModelName: "test-vl", OutputMode: "prompt", Concurrency: 1,
	})
	cfg.Extractor = ext
	cfg.Spec = ocrdraft.Spec
	s := &service{model: model}
	if withJobs {
		js, err := jobs.Open(context.Background(), jobs.Config{
			Reader: ext, Dir: t.TempDir(), Key: bytes.Repeat([]byte{1}, jobs.KeySize), PollInterval: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = js.Close(ctx)
		})
		cfg.Jobs, s.jobs = js, js
	}
	srv := server.New(cfg)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *service) served(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.paths, path)
}

// shots is the folder the screenshots go to: OCR_SCREENSHOTS, else one the test removes.
func shots(t *testing.T) string {
	dir := os.Getenv("OCR_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// shot writes a screenshot of the tab's whole page as dir/name.png.
func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100) /* 100: PNG */)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// view writes a screenshot of what the tab shows (1280x800 less the browser's own bar).
func view(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func testdata(parts ...string) string {
	p, _ := filepath.Abs(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	return p
}

// eval runs a script in the tab and returns its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// poll waits until the script is true in the tab, failing the test at the tab's deadline with
// what it waited for.
func poll(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s: %v", js, err)
	}
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// choose picks files in the page's file input and starts the read.
func choose(t *testing.T, ctx context.Context, files ...string) {
	t.Helper()
	do(t, ctx,
		chromedp.WaitVisible(chromedp.ID("files")),
		chromedp.SetUploadFiles(chromedp.ID("files"), files),
	)
	poll(t, ctx, fmt.Sprintf(`document.querySelectorAll("#file-list li").length === %d`, len(files)))
}

// photoReply is a photo's page: its glucose range printed upside down, which the checks
// warn about at its refLow, and a value printed with a trailing zero.
const photoReply = `{"title":"血脂四项","hospital":"杭州市第一人民医院","checkupDate":"2026-03-05","indicators":[
 {"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L","refLow":3.1,"refHigh":5.2,"refText":"3.1-5.2","printedFlag":"high"},
 {"itemName":"空腹血糖","valueNum":5.60,"unit":"mmol/L","refLow":6.1,"refHigh":3.9,"refText":"6.1-3.9"},
 {"itemName":"尿蛋白","valueNum":null,"valueText":"阴性(-)","refText":"阴性"}]}`

// TestReviewPhoto: a photo chosen, its page image and rows shown, the warning marked at its
// field and reached with j, a value edited, Enter accepting a field, confirmed through
// /v1/validate, the confirmed draft keeping the printed digits; the CSP header on the page; no
// request leaving the origin.
func TestReviewPhoto(t *testing.T) {
	ctx := browser(t)
	dir := shots(t)
	svc := newService(t, server.Config{})
	svc.model.Queue(fakeopenai.Reply(photoReply))
	page, reqs := tab(t, ctx)

	resp, err := chromedp.Run(page, chromedp.NavigateResponse(svc.URL+"/review"))
	if err != nil {
		t.Fatal(err)
	}
	csp, _ := resp.Headers["Content-Security-Policy"].(string)
	if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	choose(t, page, testdata("images", "scan.jpg"))
	shot(t, page, dir, "1-chosen")
	do(t, page, chromedp.Click(chromedp.ID("read")))
	poll(t, page, `!document.getElementById("review-step").hidden`)
	poll(t, page, `[...document.images].every(i => i.complete && i.naturalWidth > 0) && document.images.length === 1`)
	shot(t, page, dir, "2-review")
	do(t, page, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	shot(t, page, dir, "2-review-phone")
	// At a phone's width the page does not scroll sideways (only the rows' table does).
	if w := eval[int](t, page, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("at 390 px wide the page is %d px wide", w)
	}
	do(t, page, chromedp.EmulateViewport(1280, 800))

	if n := eval[int](t, page, `document.querySelectorAll("tr.row").length`); n != 3 {
		t.Errorf("%d rows shown, want 3", n)
	}
	// The swapped range is marked at its field, its message described by the field.
	warned := eval[string](t, page, `(() => { const f = document.querySelector('[data-path="indicators[1].refLow"]');
		const ids = (f.getAttribute("aria-describedby") || "").split(" ");
		return f.getAttribute("aria-invalid") + "|" + ids.map(id => document.getElementById(id).textContent).join(" "); })()`)
	if !strings.HasPrefix(warned, "true|") || !strings.Contains(warned, "6.1") {
		t.Errorf("indicators[1].refLow: aria-invalid and its message %q, want true and the swapped range's", warned)
	}
	// Outside a field, j goes to the first field with a warning.
	do(t, page, chromedp.Click(chromedp.ID("review-title")), chromedp.KeyEvent("j"))
	if got := eval[string](t, page, `document.activeElement.dataset.path || ""`); got != "indicators[1].refLow" {
		t.Errorf("after j, the focus is on %q, want indicators[1].refLow", got)
	}
	// Swap the range back by hand, accept the field with Enter.
	do(t, page,
		chromedp.SetValue(chromedp.CSS(`[data-path="indicators[1].refLow"]`), "3.9"),
		chromedp.SetValue(chromedp.CSS(`[data-path="indicators[1].refHigh"]`), "6.10"),
		chromedp.Focus(chromedp.CSS(`[data-path="indicators[1].refLow"]`)),
		chromedp.KeyEvent("\r"),
	)
	if eval[bool](t, page, `document.querySelector('[data-path="indicators[1].refLow"]').classList.contains("accepted")`) != true {
		t.Error("Enter did not accept the field")
	}
	shot(t, page, dir, "3-edited")
	// Escape leaves the field for its row.
	do(t, page, chromedp.Focus(chromedp.CSS(`[data-path="indicators[2].unit"]`)), chromedp.KeyEvent("\x1b"))
	if got := eval[string](t, page, `document.activeElement.matches("tr.row") ? document.activeElement.dataset.row : document.activeElement.tagName`); got != "2" {
		t.Errorf("after Escape the focus is on %q, want row 2", got)
	}
	do(t, page, chromedp.Click(chromedp.ID("confirm")))
	poll(t, page, `!document.getElementById("done-step").hidden`)
	shot(t, page, dir, "4-confirmed")
	if !svc.served("/v1/validate") {
		t.Error("confirmed without /v1/validate")
	}
	// Without jobs, the page asked /v1/jobs, was answered jobs_not_configured and read the
	// report through /v1/extract.
	if !svc.served("POST /v1/jobs") || !svc.served("POST /v1/extract") {
		t.Error("without jobs, the page did not try /v1/jobs and fall back to /v1/extract")
	}
	got := eval[string](t, page, `document.getElementById("done-json").textContent`)
	for _, want := range []string{`"refLow": 3.9`, `"refHigh": 6.10`, `"valueNum": 5.60`} {
		if !strings.Contains(got, want) {
			t.Errorf("confirmed draft lacks %s:\n%s", want, got)
		}
	}
	reqs.check(t, svc.URL)
}

// pdfReplies are digital.pdf's two pages as a model reads them (the fixture extract's tests
// read too), one value of page 2 misread (1.27 for the printed 1.21): value_not_on_page at
// indicators[7].valueNum.
func pdfReplies(t *testing.T) []string {
	b, err := os.ReadFile(testdata("documents", "digital.replies.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pages []json.RawMessage
	if err := json.Unmarshal(b, &pages); err != nil || len(pages) != 2 {
		t.Fatalf("digital.replies.json: %d pages, %v", len(pages), err)
	}
	misread := strings.Replace(string(pages[1]), `"valueNum": 1.21`, `"valueNum": 1.27`, 1)
	if misread == string(pages[1]) {
		t.Fatal("digital.replies.json no longer reads 1.21")
	}
	return []string{string(pages[0]), misread}
}

// TestReviewPDF: a PDF of two pages chosen, both page images shown (a browser cannot show the
// PDF itself), the text layer's boxes drawn for the focused row and a box's click focusing its
// field, the misread value reached with j, a value that is no number refused by /v1/validate at
// its field, then fixed and confirmed.
func TestReviewPDF(t *testing.T) {
	if raced() {
		t.Skip("PDFium's compile takes a minute under the race detector; CI runs this test without it")
	}
	ctx := browser(t)
	dir := shots(t)
	svc := newService(t, server.Config{})
	replies := pdfReplies(t)
	svc.model.Queue(fakeopenai.Reply(replies[0]), fakeopenai.Reply(replies[1]))
	page, reqs := tab(t, ctx)
	do(t, page, chromedp.Navigate(svc.URL+"/review"))
	choose(t, page, testdata("documents", "digital.pdf"))
	do(t, page, chromedp.Click(chromedp.ID("read")))
	poll(t, page, `!document.getElementById("review-step").hidden`)
	poll(t, page, `document.images.length === 2 && [...document.images].every(i => i.complete && i.naturalWidth > 0)`)
	if n := eval[int](t, page, `document.querySelectorAll("section.page").length * 100 + document.querySelectorAll("tr.row").length`); n != 209 {
		t.Errorf("%d pages and %d rows shown, want 2 and 9", n/100, n%100)
	}
	// Every row's numbers are boxed on its page, the focused row's marked; a box's click focuses
	// its field, whichever row has the focus.
	do(t, page, chromedp.Focus(chromedp.CSS(`[data-path="indicators[0].itemName"]`)))
	poll(t, page, `document.querySelectorAll('section[data-page="1"] .box.current').length >= 1`)
	if n := eval[int](t, page, `document.querySelectorAll('.box.current:not([data-row="0"])').length`); n != 0 {
		t.Errorf("%d boxes of other rows are marked as the focused row's", n)
	}
	shot(t, page, dir, "pdf-1-boxes")
	other := eval[string](t, page, `(document.querySelector('.box:not(.current)') || {dataset: {}}).dataset.path || ""`)
	if other == "" {
		t.Fatal("only the focused row's numbers are boxed")
	}
	do(t, page, chromedp.Click(chromedp.CSS(`.box[data-path="`+other+`"]`)))
	if got := eval[string](t, page, `document.activeElement.dataset.path || ""`); got != other {
		t.Errorf("a click on the box of %s focused %q", other, got)
	}
	do(t, page, chromedp.Click(chromedp.CSS(`.box[data-path="indicators[0].valueNum"]`)))
	if got := eval[string](t, page, `document.activeElement.dataset.path || ""`); got != "indicators[0].valueNum" {
		t.Errorf("a click on the box of indicators[0].valueNum focused %q", got)
	}
	// j from there reaches the misread value on page 2.
	do(t, page, chromedp.Click(chromedp.ID("review-title")))
	for range 10 {
		if eval[string](t, page, `document.activeElement.dataset.path || ""`) == "indicators[7].valueNum" {
			break
		}
		do(t, page, chromedp.KeyEvent("j"))
	}
	if got := eval[string](t, page, `document.activeElement.dataset.path + "=" + document.activeElement.value`); got != "indicators[7].valueNum=1.27" {
		t.Fatalf("after j, the focus is at %q, want indicators[7].valueNum=1.27 (the letter not typed into it)", got)
	}
	shot(t, page, dir, "pdf-2-warning")
	view(t, page, dir, "pdf-2-warning-1280x800") // docs/review.png
	// Not a number: /v1/validate refuses it, shown at its field.
	do(t, page, chromedp.SetValue(chromedp.CSS(`[data-path="indicators[7].valueNum"]`), "1.2l"), chromedp.Click(chromedp.ID("confirm")))
	poll(t, page, `document.querySelector('[data-path="indicators[7].valueNum"]').classList.contains("problem")`)
	shot(t, page, dir, "pdf-3-problem")
	if !eval[bool](t, page, `!document.getElementById("error").hidden && document.getElementById("done-step").hidden`) {
		t.Error("a refused draft is not said to be refused")
	}
	do(t, page, chromedp.SetValue(chromedp.CSS(`[data-path="indicators[7].valueNum"]`), "1.21"), chromedp.Click(chromedp.ID("confirm")))
	poll(t, page, `!document.getElementById("done-step").hidden`)
	shot(t, page, dir, "pdf-4-confirmed")
	if got := eval[string](t, page, `document.getElementById("done-json").textContent`); !strings.Contains(got, `"valueNum": 1.21`) || !strings.Contains(got, `"refLow": 3.50`) {
		t.Errorf("confirmed draft:\n%s", got)
	}
	reqs.check(t, svc.URL)
}

// parent serves a page, on an origin of its own, that frames the review page and keeps what it
// is posted.
func parent(t *testing.T, review string) *httptest.Server {
	t.Helper()
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>health app</title><body>
<script>window.got = []; window.framed = false;
window.addEventListener("message", (e) => { window.got.push({origin: e.origin, type: e.data && e.data.type, json: e.data && e.data.json}); });</script>
<iframe id="review" src="%s/review" width="1200" height="760"></iframe>
<script>document.getElementById("review").addEventListener("load", () => { window.framed = true; });</script>`, review)
	}))
	t.Cleanup(p.Close)
	return p
}

// local is u with 127.0.0.1 written localhost: another site than the service's, as an app
// framing the page is.
func local(u string) string { return strings.Replace(u, "127.0.0.1", "localhost", 1) }

// TestReviewEmbedded: framed by an origin of OCR_REVIEW_EMBEDDERS, the page posts the confirmed
// draft to that origin; framed by a stranger, the browser refuses to show it (frame-ancestors):
// its script never loads.
func TestReviewEmbedded(t *testing.T) {
	ctx := browser(t)
	dir := shots(t)
	// The app's origin must be known before the service starts: a listener first.
	app := httptest.NewUnstartedServer(nil)
	appURL := local("http://" + app.Listener.Addr().String())
	svc := newService(t, server.Config{ReviewEmbedders: []string{appURL}})
	svc.model.Queue(fakeopenai.Reply(photoReply))
	app.Config.Handler = parent(t, svc.URL).Config.Handler
	app.Start()
	t.Cleanup(app.Close)

	page, reqs := tab(t, ctx)
	do(t, page, chromedp.Navigate(appURL+"/"))
	poll(t, page, `window.framed`)
	var frame context.Context
	infos, err := chromedp.Targets(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if info.Type == "iframe" && strings.HasPrefix(info.URL, svc.URL+"/review") {
			frame, _ = tab(t, ctx, chromedp.WithTargetID(info.TargetID))
		}
	}
	if frame == nil {
		t.Fatalf("no frame of %s/review among %d targets", svc.URL, len(infos))
	}
	choose(t, frame, testdata("images", "scan.jpg"))
	do(t, frame, chromedp.Click(chromedp.ID("read")))
	poll(t, frame, `!document.getElementById("review-step").hidden`)
	shot(t, page, dir, "embedded-1-review")
	do(t, frame, chromedp.Click(chromedp.ID("confirm")))
	poll(t, page, `window.got.length > 0`)
	shot(t, page, dir, "embedded-2-confirmed")
	got := eval[[]map[string]string](t, page, `window.got`)
	if len(got) != 1 || got[0]["origin"] != svc.URL || got[0]["type"] != "ocrdraft.confirmed" || !strings.Contains(got[0]["json"], `"valueNum": 5.60`) {
		t.Errorf("the app got %v; want one ocrdraft.confirmed from %s with the draft", got, svc.URL)
	}
	reqs.check(t, appURL, svc.URL)

	// A stranger's page: the frame's document comes, but the browser does not show it, so its
	// script is never asked for.
	stranger := parent(t, svc.URL)
	strangerURL := local(stranger.URL)
	before := len(svc.paths)
	page2, reqs2 := tab(t, ctx)
	do(t, page2, chromedp.Navigate(strangerURL+"/"))
	poll(t, page2, `window.framed`)
	shot(t, page2, dir, "embedded-3-stranger")
	svc.mu.Lock()
	after := slices.Clone(svc.paths[before:])
	svc.mu.Unlock()
	if !slices.Contains(after, "/review") || slices.Contains(after, "/review/review.js") {
		t.Errorf("framed by a stranger, the service was asked for %v; want /review and not its script", after)
	}
	reqs2.mu.Lock()
	refused := slices.ContainsFunc(reqs2.errors, func(e string) bool { return strings.Contains(e, "frame-ancestors") })
	reqs2.mu.Unlock()
	if !refused {
		t.Errorf("the browser did not say it refused the frame for frame-ancestors: %q", reqs2.errors)
	}
}

// TestReviewKey: with OCR_API_KEYS set the page asks for a key first, keeps it in
// sessionStorage only and sends it as the bearer.
func TestReviewKey(t *testing.T) {
	ctx := browser(t)
	dir := shots(t)
	svc := newService(t, server.Config{APIKeys: []string{"k-review"}})
	svc.model.Queue(fakeopenai.Reply(photoReply))
	page, reqs := tab(t, ctx)
	do(t, page, chromedp.Navigate(svc.URL+"/review"), chromedp.WaitVisible(chromedp.ID("key")))
	shot(t, page, dir, "key-1-asked")
	do(t, page, chromedp.SendKeys(chromedp.ID("key"), "k-review"), chromedp.KeyEvent("\r"))
	choose(t, page, testdata("images", "scan.jpg"))
	do(t, page, chromedp.Click(chromedp.ID("read")))
	poll(t, page, `!document.getElementById("review-step").hidden`)
	if got := eval[string](t, page, `sessionStorage.getItem("ocrdraft.apiKey") + "|" + localStorage.length`); got != "k-review|0" {
		t.Errorf("sessionStorage key and localStorage length %q, want k-review|0", got)
	}
	reqs.check(t, svc.URL)
}

// raced reports whether this binary was built with -race.
func raced() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"})
}

// rows is a page's reply of n rows, the first of them on a range printed upside down.
func rows(page, n int) string {
	var b strings.Builder
	b.WriteString(`{"title":"血常规","indicators":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		lo, hi := "3.5", "9.5"
		if i == 0 {
			lo, hi = "9.5", "3.5"
		}
		fmt.Fprintf(&b, `{"itemName":"项目%d-%d","valueNum":%d.%02d,"unit":"g/L","refLow":%s,"refHigh":%s,"refText":"%s-%s"}`, page, i, 4+i%5, i, lo, hi, lo, hi)
	}
	b.WriteString("]}")
	return b.String()
}

// TestReviewForty: a report of 40 rows on two pages, in a browser whose language is Chinese:
// the page speaks Chinese and so do the warnings (the API's, asked in the page's language); the
// DOM is built once, and typing in a field changes no element of it (no re-render per key).
// How long the build took is logged, not asserted.
func TestReviewForty(t *testing.T) {
	ctx := browserIn(t, "zh-CN")
	dir := shots(t)
	svc := newService(t, server.Config{})
	svc.model.Queue(fakeopenai.Reply(rows(1, 20)), fakeopenai.Reply(rows(2, 20)))
	page, reqs := tab(t, ctx)
	do(t, page, chromedp.Navigate(svc.URL+"/review"))
	choose(t, page, testdata("images", "scan.jpg"), testdata("images", "scan.bmp"))
	do(t, page, chromedp.Click(chromedp.ID("read")))
	poll(t, page, `!document.getElementById("review-step").hidden`)
	if n := eval[int](t, page, `document.querySelectorAll("tr.row").length`); n != 40 {
		t.Fatalf("%d rows shown, want 40", n)
	}
	if got := eval[string](t, page, `document.getElementById("confirm").textContent + "|" + document.documentElement.lang`); got != "确认|zh-CN" {
		t.Errorf("confirm button and language %q, want 确认|zh-CN", got)
	}
	msg := eval[string](t, page, `document.getElementById(document.querySelector('[data-path="indicators[0].refLow"]').getAttribute("aria-describedby")).textContent`)
	if !strings.Contains(msg, "参考范围") {
		t.Errorf("the warning of indicators[0].refLow reads %q, want it in Chinese", msg)
	}
	t.Logf("the review of 40 rows on two pages was built in %.1f ms", eval[float64](t, page, `performance.getEntriesByName("ocrdraft:review")[0].duration`))
	eval[bool](t, page, `window.mutations = 0; new MutationObserver((ms) => { window.mutations += ms.length; }).observe(document.getElementById("pages"), {childList: true, subtree: true, characterData: true}); true`)
	do(t, page, chromedp.Click(chromedp.CSS(`[data-path="indicators[25].valueText"]`)), chromedp.SendKeys(chromedp.CSS(`[data-path="indicators[25].valueText"]`), "阴性 negative"))
	if got := eval[string](t, page, `document.querySelector('[data-path="indicators[25].valueText"]').value + "|" + window.mutations`); got != "阴性 negative|0" {
		t.Errorf("after typing, the field and the DOM changes are %q, want the text and 0", got)
	}
	view(t, page, dir, "forty-zh")
	reqs.check(t, svc.URL)
}

// held is a model answer that waits until release is closed (or the request ends).
func held(release <-chan struct{}, a fakeopenai.Answer) fakeopenai.Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		a(w, r)
	}
}

// TestReviewJob: with jobs on, the page reads the report as a job: it shows pages done of
// pages (a determinate progress, "1 / 2") while the second page is read, then the rows and both
// page images as /v1/extract's answer shows them, and deletes the job once its result is shown.
func TestReviewJob(t *testing.T) {
	ctx := browser(t)
	dir := shots(t)
	svc := newServiceJobs(t, server.Config{}, true)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	svc.model.Queue(fakeopenai.Reply(photoReply), held(release, fakeopenai.Reply(rows(2, 3))))
	page, reqs := tab(t, ctx)
	do(t, page, chromedp.Navigate(svc.URL+"/review"))
	choose(t, page, testdata("images", "scan.jpg"), testdata("images", "scan.bmp"))
	do(t, page, chromedp.SetValue(chromedp.ID("sex"), "female"), chromedp.Click(chromedp.ID("read")))
	poll(t, page, `(() => { const b = document.getElementById("progress-bar");
		return !document.getElementById("progress-step").hidden && b.max === 2 && b.value === 1 &&
			document.getElementById("progress-text").textContent.includes("1 / 2"); })()`)
	shot(t, page, dir, "job-1-progress")
	once.Do(func() { close(release) })
	poll(t, page, `!document.getElementById("review-step").hidden`)
	poll(t, page, `document.images.length === 2 && [...document.images].every(i => i.complete && i.naturalWidth > 0)`)
	shot(t, page, dir, "job-2-review")
	if n := eval[int](t, page, `document.querySelectorAll("tr.row").length`); n != 6 {
		t.Errorf("%d rows shown, want 6", n)
	}
	if svc.served("/v1/extract") {
		t.Error("with jobs on, the page asked /v1/extract too")
	}
	// The job is deleted once its result is shown: the DELETE came, and the job is gone.
	var id string
	testwait.For(t, "the page's DELETE of its job", func() bool {
		svc.mu.Lock()
		defer svc.mu.Unlock()
		for _, p := range svc.paths {
			if rest, ok := strings.CutPrefix(p, "DELETE /v1/jobs/"); ok {
				id = rest
			}
		}
		return id != ""
	})
	// The request is seen as it arrives: the job is gone once it has been handled.
	testwait.For(t, "the job gone after the page's DELETE", func() bool {
		_, err := svc.jobs.Get(context.Background(), "", id)
		return problem.CodeOf(err) == problem.JobNotFound
	})
	reqs.check(t, svc.URL)
}
