package apiclient_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	_ "image/jpeg" // intake may send a page on as JPEG
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openapi_types "github.com/oapi-codegen/runtime/types"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/apiclient"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/vision"
)

// env is the server running over real HTTP, wired as in production behind /v1/extract (the
// go-openai client against a fake model, the real intake, extract and draft), and the generated
// client pointed at it.
type env struct {
	client *apiclient.ClientWithResponses
	model  *fakeopenai.Server // nil without a model
}

func newEnv(t *testing.T, withModel bool) *env {
	t.Helper()
	cfg := server.Config{NotConfigured: "set OCR_MODEL", Spec: ocrdraft.Spec}
	e := &env{}
	if withModel {
		e.model = fakeopenai.New(t)
		vc, err := vision.New(vision.Config{BaseURL: e.model.URL, APIKey: "sk-test", Model: "test-vl", Tries: 1})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Extractor = extract.New(extract.Config{
			Model: vc, Prep: intake.New(intake.Limits{}, nil), Builder: draft.New(lexicon.Default()),
			ModelName: "test-vl", OutputMode: "prompt",
		})
	}
	srv := httptest.NewServer(server.New(cfg))
	t.Cleanup(srv.Close)
	c, err := apiclient.NewClientWithResponses(srv.URL, apiclient.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	e.client = c
	return e
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// num is a nullable number as the contract writes it; digits compare as text.
func num(n *json.Number) string {
	if n == nil {
		return "null"
	}
	return n.String()
}

func ptr[T any](v T) *T { return &v }

// byName finds an indicator by its name.
func byName(t *testing.T, d apiclient.OcrDraft, name string) apiclient.OcrIndicator {
	t.Helper()
	for _, ind := range d.Indicators {
		if ind.ItemName == name {
			return ind
		}
	}
	t.Fatalf("no indicator %q in %d", name, len(d.Indicators))
	return apiclient.OcrIndicator{}
}

// sameJSON reports, as a diff, whether a and b are the same JSON, numbers compared as written.
func sameJSON(t *testing.T, a, b []byte) string {
	t.Helper()
	decode := func(in []byte) any {
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%v: %.80s", err, in)
		}
		return v
	}
	return cmp.Diff(decode(a), decode(b))
}

// TestParse replays a captured reply through the typed client: the typed draft equals the golden
// one, numbers keep their printed digits, and re-encoding the typed draft gives the server's JSON.
func TestParse(t *testing.T) {
	e := newEnv(t, false)
	res, err := e.client.ParseReplyWithTextBodyWithResponse(ctx(t), string(readFile(t, "../../testdata/replies/gpt4o-clean-full-41.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
		t.Fatalf("status %d: %s", res.StatusCode(), res.Body)
	}
	got := res.JSON200
	if got.Meta.Stage != "strict" || got.Meta.Truncated || len(got.Warnings) != 0 {
		t.Errorf("meta = %+v, warnings = %+v; want strict, not truncated, none", got.Meta, got.Warnings)
	}

	var golden struct {
		Result struct{ Draft apiclient.OcrDraft }
	}
	if err := json.Unmarshal(readFile(t, "../../draft/testdata/golden/gpt4o-clean-full-41.golden.json"), &golden); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(golden.Result.Draft, got.Draft); diff != "" {
		t.Errorf("draft differs from the golden file (-want +got):\n%s", diff)
	}

	digits := []struct{ name, value, low, high string }{
		{"尿比重(SG)", "1.020", "1.003", "1.030"},
		{"酸碱度(pH)", "6.0", "4.5", "8.0"},
		{"尿素(Urea)", "5.20", "3.10", "8.00"},
		{"空腹血糖(GLU)", "5.60", "3.9", "6.1"},
		{"高密度脂蛋白胆固醇(HDL-C)", "1.20", "1.04", "null"},
		{"癌胚抗原(CEA)", "null", "0", "5"},
	}
	for _, tt := range digits {
		ind := byName(t, got.Draft, tt.name)
		if v, lo, hi := num(ind.ValueNum), num(ind.RefLow), num(ind.RefHigh); v != tt.value || lo != tt.low || hi != tt.high {
			t.Errorf("%s = %s (%s–%s), want %s (%s–%s)", tt.name, v, lo, hi, tt.value, tt.low, tt.high)
		}
	}

	var raw struct{ Draft json.RawMessage }
	if err := json.Unmarshal(res.Body, &raw); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(got.Draft)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameJSON(t, raw.Draft, again); diff != "" {
		t.Errorf("the typed draft re-encodes differently (-server +client):\n%s", diff)
	}
}

// TestParseJSON sends the JSON form with a finish reason, and reads a refusal's problem.
func TestParseJSON(t *testing.T) {
	e := newEnv(t, false)
	cut := string(readFile(t, "../../testdata/replies/gpt4o-full-report-cut.length.txt"))
	res, err := e.client.ParseReplyWithResponse(ctx(t), apiclient.ParseReplyJSONRequestBody{Reply: cut, FinishReason: ptr("length")})
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON200 == nil {
		t.Fatalf("status %d: %s", res.StatusCode(), res.Body)
	}
	if !res.JSON200.Meta.Truncated || len(res.JSON200.Warnings) != 1 || res.JSON200.Warnings[0].Code != "output_truncated" {
		t.Errorf("meta = %+v, warnings = %+v; want truncated with output_truncated", res.JSON200.Meta, res.JSON200.Warnings)
	}
	if v := num(byName(t, res.JSON200.Draft, "尿素(Urea)").ValueNum); v != "5.20" {
		t.Errorf("尿素(Urea) = %s, want 5.20", v)
	}

	res, err = e.client.ParseReplyWithResponse(ctx(t), apiclient.ParseReplyJSONRequestBody{Reply: "抱歉，图片太模糊，无法识别。"})
	if err != nil {
		t.Fatal(err)
	}
	p := res.ApplicationproblemJSON422
	if p == nil || p.Code != "reply_unparseable" || p.Status != http.StatusUnprocessableEntity {
		t.Errorf("a refusal: %d %+v, want 422 reply_unparseable", res.StatusCode(), p)
	}
}

// TestValidate round-trips a draft: what /v1/parse returned, sent back as a person confirmed it,
// comes back unchanged; a reversed range comes back swapped, digits kept.
func TestValidate(t *testing.T) {
	e := newEnv(t, false)
	parsed, err := e.client.ParseReplyWithTextBodyWithResponse(ctx(t), string(readFile(t, "../../testdata/replies/gpt4o-clean-full-41.txt")))
	if err != nil || parsed.JSON200 == nil {
		t.Fatalf("parse: %v %s", err, parsed.Body)
	}
	sent := parsed.JSON200.Draft
	res, err := e.client.ValidateDraftWithResponse(ctx(t), sent)
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON200 == nil {
		t.Fatalf("status %d: %s", res.StatusCode(), res.Body)
	}
	if diff := cmp.Diff(sent, res.JSON200.Draft); diff != "" || len(res.JSON200.Warnings) != 0 {
		t.Errorf("a valid draft did not come back unchanged (-sent +got):\n%s\nwarnings: %+v", diff, res.JSON200.Warnings)
	}

	swapped := apiclient.OcrDraft{
		Title: ptr("肾功能"), CheckupDate: &openapi_types.Date{Time: time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)},
		Indicators: []apiclient.OcrIndicator{{
			ItemName: "尿素", ValueNum: ptr(json.Number("5.20")), Unit: ptr("mmol/L"),
			RefLow: ptr(json.Number("8.00")), RefHigh: ptr(json.Number("3.10")),
		}},
	}
	res, err = e.client.ValidateDraftWithResponse(ctx(t), swapped)
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON200 == nil {
		t.Fatalf("status %d: %s", res.StatusCode(), res.Body)
	}
	ind := res.JSON200.Draft.Indicators[0]
	if lo, hi := num(ind.RefLow), num(ind.RefHigh); lo != "3.10" || hi != "8.00" {
		t.Errorf("range = %s–%s, want 3.10–8.00", lo, hi)
	}
	if w := res.JSON200.Warnings; len(w) != 1 || w[0].Code != "reference_range_swapped" {
		t.Errorf("warnings = %+v, want reference_range_swapped", w)
	}
}

// TestValidateInvalid: a draft that breaks the contract is a typed 422 invalid_draft problem
// listing every field, whether the typed client sent it or a raw body did.
func TestValidateInvalid(t *testing.T) {
	e := newEnv(t, false)
	tests := []struct {
		name string
		send func(context.Context) (*apiclient.ValidateDraftHTTPResponse, error)
		want []string
	}{
		{"typed: nameless", func(c context.Context) (*apiclient.ValidateDraftHTTPResponse, error) {
			return e.client.ValidateDraftWithResponse(c, apiclient.OcrDraft{
				Indicators: []apiclient.OcrIndicator{{ItemName: "", ValueNum: ptr(json.Number("1.020"))}},
			})
		}, []string{"indicators[0].itemName"}},
		{"typed: year out of range, unit too long", func(c context.Context) (*apiclient.ValidateDraftHTTPResponse, error) {
			return e.client.ValidateDraftWithResponse(c, apiclient.OcrDraft{
				ReportYear: ptr(1800),
				Indicators: []apiclient.OcrIndicator{{ItemName: "比重", ValueNum: ptr(json.Number("1.020")), Unit: ptr(strings.Repeat("u", 51))}},
			})
		}, []string{"reportYear", "indicators[0].unit"}},
		{"raw: wrong types, impossible date, unknown key", func(c context.Context) (*apiclient.ValidateDraftHTTPResponse, error) {
			body := `{"checkupDate":"2026-02-30","reportYear":"2026","extra":1,"indicators":[{"itemName":" ","valueNum":"5.6"}]}`
			return e.client.ValidateDraftWithBodyWithResponse(c, "application/json", strings.NewReader(body))
		}, []string{"title", "hospital", "checkupDate", "reportYear", "indicators[0].itemName", "indicators[0].itemGroup", "indicators[0].valueNum",
			"indicators[0].valueText", "indicators[0].unit", "indicators[0].refLow", "indicators[0].refHigh",
			"extra"}}, // the service's keys (printedFlag, refText, page, analyte) may be left out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.send(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			p := res.ApplicationproblemJSON422
			if res.StatusCode() != http.StatusUnprocessableEntity || p == nil {
				t.Fatalf("status %d: %s", res.StatusCode(), res.Body)
			}
			if p.Code != "invalid_draft" || p.Status != 422 || p.Errors == nil {
				t.Fatalf("problem = %+v, want invalid_draft with errors", p)
			}
			var paths []string
			for _, f := range *p.Errors {
				paths = append(paths, f.Path)
			}
			if diff := cmp.Diff(tt.want, paths); diff != "" {
				t.Errorf("error paths (-want +got):\n%s", diff)
			}
			if p.RequestId == nil || res.Headers422 == nil || res.Headers422.XRequestId == nil || *p.RequestId != *res.Headers422.XRequestId {
				t.Errorf("requestId %v does not match the X-Request-Id header %+v", p.RequestId, res.Headers422)
			}
		})
	}
}

// pageImage is a small valid PNG, width pixels wide: a white page with a dark band. The fake
// model tells pages apart by their width.
func pageImage(width int) []byte {
	m := image.NewGray(image.Rect(0, 0, width, 160))
	for i := range m.Pix {
		m.Pix[i] = 0xff
	}
	for y := 40; y < 50; y++ {
		for x := 10; x < width-10; x++ {
			m.SetGray(x, y, color.Gray{Y: 0x20})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// byWidth answers each chat completion with the reply for the width of the page it carries, so
// that concurrent pages get their own replies whatever order they arrive in.
func byWidth(replies map[int]string) fakeopenai.Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		var req openai.ChatCompletionRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err == nil {
			for _, m := range req.Messages {
				for _, part := range m.MultiContent {
					if part.ImageURL == nil {
						continue
					}
					_, data, _ := strings.Cut(part.ImageURL.URL, ",")
					img, _ := base64.StdEncoding.DecodeString(data)
					if cfg, _, err := image.DecodeConfig(bytes.NewReader(img)); err == nil {
						if reply, ok := replies[cfg.Width]; ok {
							fakeopenai.Complete(fakeopenai.Response{Content: reply, PromptTokens: 900, CompletionTokens: 100})(w, r)
							return
						}
					}
				}
			}
		}
		fakeopenai.Error(http.StatusBadRequest, "no page of a known width")(w, r)
	}
}

func multipartBody(t *testing.T, pages ...[]byte) (io.Reader, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i, p := range pages {
		fw, err := w.CreateFormFile("image", "page"+string(rune('1'+i))+".png")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &b, w.FormDataContentType()
}

// TestExtract sends two pages as multipart through the generated client; the fake model reads
// each, and the merged draft and meta come back typed.
func TestExtract(t *testing.T) {
	e := newEnv(t, true)
	page1, page2 := pageImage(120), pageImage(121)
	e.model.Default(byWidth(map[int]string{
		120: `{"title":"尿常规","hospital":"北京大学第一医院","checkupDate":"2026-03-05","reportYear":null,"indicators":[
			{"itemName":"比重","itemGroup":"尿常规","valueNum":1.020,"valueText":null,"unit":null,"refLow":1.003,"refHigh":1.030}]}`,
		121: `{"title":"尿常规","hospital":null,"checkupDate":null,"reportYear":null,"indicators":[
			{"itemName":"比重","itemGroup":"尿常规","valueNum":1.020,"valueText":null,"unit":null,"refLow":1.003,"refHigh":1.030},
			{"itemName":"pH","itemGroup":"尿常规","valueNum":6.0,"valueText":null,"unit":null,"refLow":4.5,"refHigh":8.0}]}`,
	}))
	body, ct := multipartBody(t, page1, page2)
	res, err := e.client.ExtractDraftWithBodyWithResponse(ctx(t), nil, ct, body)
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON200 == nil {
		t.Fatalf("status %d: %s", res.StatusCode(), res.Body)
	}
	got := res.JSON200

	d := got.Draft
	if d.Title == nil || *d.Title != "尿常规" || d.Hospital == nil || *d.Hospital != "北京大学第一医院" ||
		d.CheckupDate == nil || d.CheckupDate.String() != "2026-03-05" || d.ReportYear == nil || *d.ReportYear != 2026 {
		t.Errorf("header = %v %v %v %v, want page 1's, the year from its date", d.Title, d.Hospital, d.CheckupDate, d.ReportYear)
	}
	var inds []string
	for _, ind := range d.Indicators {
		inds = append(inds, ind.ItemName+" "+num(ind.ValueNum)+" "+num(ind.RefLow)+"–"+num(ind.RefHigh))
	}
	if diff := cmp.Diff([]string{"比重 1.020 1.003–1.030", "pH 6.0 4.5–8.0"}, inds); diff != "" {
		t.Errorf("indicators, in page order, the repeat dropped (-want +got):\n%s", diff)
	}
	if w := got.Warnings; len(w) != 1 || w[0].Code != "duplicate_indicator" || w[0].Path == nil || *w[0].Path != "pages[1].indicators[0]" {
		t.Errorf("warnings = %+v, want duplicate_indicator at pages[1].indicators[0]", w)
	}

	m := got.Meta
	if m.Model != "test-vl" || m.OutputMode != "prompt" || m.Attempts != 2 || m.FinishReason == nil || *m.FinishReason != "stop" ||
		m.Usage != (apiclient.Usage{PromptTokens: 1800, CompletionTokens: 200}) || len(m.PromptVersion) == 0 || m.DurationMs < 0 {
		t.Errorf("meta = %+v", m)
	}
	if len(m.Pages) != 2 {
		t.Fatalf("meta.pages = %+v, want 2", m.Pages)
	}
	for i, want := range []struct{ bytesIn, indicators int }{{len(page1), 1}, {len(page2), 2}} {
		p := m.Pages[i]
		if p.BytesIn != want.bytesIn || p.BytesSent <= 0 || p.Indicators != want.indicators || p.Attempts != 1 ||
			p.Stage != "strict" || p.Truncated || p.Error != nil || p.Usage.PromptTokens != 900 {
			t.Errorf("pages[%d] = %+v, want %d bytes in, %d indicators", i, p, want.bytesIn, want.indicators)
		}
	}
	if e.model.Calls() != 2 {
		t.Errorf("model calls = %d, want 2", e.model.Calls())
	}
}

// TestExtractJSON sends a page as the typed JSON body, base64 by encoding/json.
func TestExtractJSON(t *testing.T) {
	e := newEnv(t, true)
	e.model.Default(byWidth(map[int]string{120: `{"title":null,"hospital":null,"checkupDate":null,"reportYear":null,"indicators":[
		{"itemName":"空腹血糖","itemGroup":null,"valueNum":5.60,"valueText":null,"unit":"mmol/L","refLow":3.9,"refHigh":6.1}]}`}))
	page := pageImage(120)
	body := apiclient.ExtractDraftJSONRequestBody{Images: []apiclient.PageImage{{Data: page}}}
	sex := "female" // the Patient-Sex header: read by the checks, harmless here
	res, err := e.client.ExtractDraftWithResponse(ctx(t), &apiclient.ExtractDraftParams{PatientSex: &sex}, body)
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON200 == nil {
		t.Fatalf("status %d: %s", res.StatusCode(), res.Body)
	}
	if inds := res.JSON200.Draft.Indicators; len(inds) != 1 || num(inds[0].ValueNum) != "5.60" || res.JSON200.Meta.Pages[0].BytesIn != len(page) {
		t.Errorf("draft = %+v, meta = %+v", res.JSON200.Draft, res.JSON200.Meta)
	}
}

// TestProblems: error responses decode into the generated Problem, with the code to switch on
// and the request id of the X-Request-Id header.
func TestProblems(t *testing.T) {
	noModel, withModel := newEnv(t, false), newEnv(t, true)
	type got struct {
		status    int
		problem   *apiclient.Problem
		requestID *string
	}
	tests := []struct {
		name   string
		call   func(context.Context) (got, error)
		status int
		code   apiclient.ProblemCode
	}{
		{"extract without a model", func(c context.Context) (got, error) {
			body, ct := multipartBody(t, pageImage(120))
			res, err := noModel.client.ExtractDraftWithBodyWithResponse(c, nil, ct, body)
			if err != nil {
				return got{}, err
			}
			g := got{status: res.StatusCode(), problem: res.ApplicationproblemJSON503}
			if res.Headers503 != nil {
				g.requestID = res.Headers503.XRequestId
			}
			return g, nil
		}, http.StatusServiceUnavailable, "model_not_configured"},
		{"readyz without a model", func(c context.Context) (got, error) {
			res, err := noModel.client.ReadyzWithResponse(c)
			if err != nil {
				return got{}, err
			}
			g := got{status: res.StatusCode(), problem: res.ApplicationproblemJSON503}
			if res.Headers503 != nil {
				g.requestID = res.Headers503.XRequestId
			}
			return g, nil
		}, http.StatusServiceUnavailable, "model_not_configured"},
		{"a Word file", func(c context.Context) (got, error) {
			body, ct := multipartBody(t, []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00report.docx"))
			res, err := withModel.client.ExtractDraftWithBodyWithResponse(c, nil, ct, body)
			if err != nil {
				return got{}, err
			}
			g := got{status: res.StatusCode(), problem: res.ApplicationproblemJSON415}
			if res.Headers415 != nil {
				g.requestID = res.Headers415.XRequestId
			}
			return g, nil
		}, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"a JSON body without images", func(c context.Context) (got, error) {
			res, err := withModel.client.ExtractDraftWithResponse(c, nil, apiclient.ExtractDraftJSONRequestBody{})
			if err != nil {
				return got{}, err
			}
			g := got{status: res.StatusCode(), problem: res.ApplicationproblemJSON400}
			if res.Headers400 != nil {
				g.requestID = res.Headers400.XRequestId
			}
			return g, nil
		}, http.StatusBadRequest, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := tt.call(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if g.status != tt.status || g.problem == nil {
				t.Fatalf("status %d, problem %+v; want %d with a problem", g.status, g.problem, tt.status)
			}
			p := g.problem
			if p.Code != tt.code || p.Status != tt.status || p.Title == "" || p.Type == "" || p.Detail == "" {
				t.Errorf("problem = %+v, want code %s, status %d, and a title, type and detail", p, tt.code, tt.status)
			}
			if problem.Lookup(problem.Code(p.Code)).Code != problem.Code(p.Code) {
				t.Errorf("code %q is not in the problem table", p.Code)
			}
			if p.RequestId == nil || g.requestID == nil || *p.RequestId == "" || *p.RequestId != *g.requestID {
				t.Errorf("requestId %v, X-Request-Id %v: want the same, non-empty", p.RequestId, g.requestID)
			}
			if tt.code == "model_not_configured" && p.Detail != "set OCR_MODEL" {
				t.Errorf("detail = %q, want the configured hint", p.Detail)
			}
		})
	}

	res, err := noModel.client.HealthzWithResponse(ctx(t))
	if err != nil || res.JSON200 == nil || res.JSON200.Status != "ok" {
		t.Errorf("healthz: %v %+v", err, res)
	}
}

// TestLaterCodes: a client generated from today's spec reads the answers of a later server,
// whose warning, problem and stage codes it has never seen, instead of failing on them.
func TestLaterCodes(t *testing.T) {
	later := http.NewServeMux()
	later.HandleFunc("POST /v1/parse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"draft": {"title": null, "hospital": null, "checkupDate": null, "reportYear": null,
			"indicators": [{"itemName": "钾", "itemGroup": null, "valueNum": 45, "valueText": null, "unit": "mmol/L", "refLow": 3.5, "refHigh": 5.3}]},
			"warnings": [{"code": "value_implausible_someday", "path": "indicators[0].valueNum", "message": "m"}],
			"meta": {"stage": "guessed_someday", "truncated": false}}`)
	})
	later.HandleFunc("POST /v1/validate", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		io.WriteString(w, `{"type": "urn:ocrdraft:problem:draft_stale_someday", "title": "t", "status": 422,
			"detail": "d", "code": "draft_stale_someday"}`)
	})
	srv := httptest.NewServer(later)
	defer srv.Close()
	c, err := apiclient.NewClientWithResponses(srv.URL, apiclient.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := c.ParseReplyWithTextBodyWithResponse(context.Background(), "x")
	if err != nil || pr.JSON200 == nil {
		t.Fatalf("parse answer with a later warning code: %v", err)
	}
	if pr.JSON200.Warnings[0].Code != "value_implausible_someday" || pr.JSON200.Meta.Stage != "guessed_someday" {
		t.Errorf("codes = %q, %q", pr.JSON200.Warnings[0].Code, pr.JSON200.Meta.Stage)
	}
	vr, err := c.ValidateDraftWithResponse(context.Background(), apiclient.OcrDraft{Indicators: []apiclient.OcrIndicator{}})
	if err != nil || vr.ApplicationproblemJSON422 == nil || vr.ApplicationproblemJSON422.Code != "draft_stale_someday" {
		t.Fatalf("problem with a later code: %v %+v", err, vr)
	}
}
