package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/schema"
)

// sexReply has a haemoglobin whose printed range differs for men and women.
const sexReply = `{"title":"血常规","hospital":null,"checkupDate":null,"reportYear":null,"indicators":[
 {"itemName":"血红蛋白","itemGroup":"血常规","valueNum":128,"valueText":null,"unit":"g/L","refLow":null,"refHigh":null,"refText":"男：130-175；女：115-150"}]}`

// bounds returns the first indicator's bounds and the range_sex_specific warning's sex param,
// or ok false while draft does not yet keep refText (the evidence work): then only the model's
// requests and the log are checked.
func bounds(t *testing.T, rec *httptest.ResponseRecorder) (lo, hi, sex string, ok bool) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var res struct {
		Draft    schema.OcrDraft
		Warnings []schema.Warning
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	ind := res.Draft.Indicators[0]
	if ind.RefText == nil {
		t.Log("draft does not keep refText yet: the bounds are not checked")
		return "", "", "", false
	}
	if ind.RefLow != nil {
		lo = ind.RefLow.String()
	}
	if ind.RefHigh != nil {
		hi = ind.RefHigh.String()
	}
	found := false
	for _, w := range res.Warnings {
		if w.Code == schema.RangeSexSpecific {
			found = true
			sex = w.Params["sex"]
		}
	}
	if !found {
		t.Errorf("no range_sex_specific warning: %s", rec.Body)
	}
	return lo, hi, sex, true
}

// TestSexContext: the caller's sex picks the printed range on /v1/extract (multipart field and
// JSON context) and /v1/parse, and never reaches the model or the log.
func TestSexContext(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Default(fakeopenai.Reply(sexReply))

	// Multipart: a sex field beside the image.
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("sex", "female")
	fw, _ := w.CreateFormFile("image", "page1.png")
	fw.Write(page)
	w.Close()
	req := httptest.NewRequest(http.MethodPost, "/v1/extract", &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if lo, hi, sex, ok := bounds(t, e.do(req)); ok && (lo != "115" || hi != "150" || sex != "female") {
		t.Errorf("multipart female: bounds %s–%s, sex %q", lo, hi, sex)
	}

	// The Patient-Sex header, beside a multipart body with no sex field (what a client generated
	// from today's spec sends), and beside a JSON body.
	b.Reset()
	w = multipart.NewWriter(&b)
	fw, _ = w.CreateFormFile("image", "page1.png")
	fw.Write(page)
	w.Close()
	req = httptest.NewRequest(http.MethodPost, "/v1/extract", &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Patient-Sex", "female")
	if lo, hi, sex, ok := bounds(t, e.do(req)); ok && (lo != "115" || hi != "150" || sex != "female") {
		t.Errorf("header female, multipart: bounds %s–%s, sex %q", lo, hi, sex)
	}
	req = jsonReq("/v1/extract", map[string]any{"images": []map[string]string{{"data": b64(page)}}})
	req.Header.Set("Patient-Sex", "Male")
	if lo, hi, sex, ok := bounds(t, e.do(req)); ok && (lo != "130" || hi != "175" || sex != "male") {
		t.Errorf("header male, JSON: bounds %s–%s, sex %q", lo, hi, sex)
	}

	// JSON, with the image as base64.
	img := map[string]any{"images": []map[string]string{{"data": b64(page)}}, "context": map[string]string{"sex": "male"}}
	if lo, hi, sex, ok := bounds(t, e.do(jsonReq("/v1/extract", img))); ok && (lo != "130" || hi != "175" || sex != "male") {
		t.Errorf("JSON male: bounds %s–%s, sex %q", lo, hi, sex)
	}
	// No sex: the bounds are null.
	delete(img, "context")
	if lo, hi, sex, ok := bounds(t, e.do(jsonReq("/v1/extract", img))); ok && (lo != "" || hi != "" || sex != "") {
		t.Errorf("no sex: bounds %s–%s, sex %q", lo, hi, sex)
	}
	// /v1/parse.
	if lo, hi, _, ok := bounds(t, e.do(jsonReq("/v1/parse", map[string]any{"reply": sexReply, "context": map[string]string{"sex": "female"}}))); ok && (lo != "115" || hi != "150") {
		t.Errorf("parse female: bounds %s–%s", lo, hi)
	}

	for _, r := range e.model.Requests() {
		if s := strings.ToLower(string(r.Body)); strings.Contains(s, "female") || strings.Contains(s, "\"sex\"") {
			t.Errorf("the model was told the sex: %.300s", r.Body)
		}
	}
	// Not a bare "sex": a random request id may spell it (…wrvrosexcet…).
	if l := strings.ToLower(e.log.String()); strings.Contains(l, "female") || strings.Contains(l, "\"male\"") ||
		strings.Contains(l, "\"sex\"") || strings.Contains(l, "patient-sex") || strings.Contains(l, "sex=") || strings.Contains(l, "sex:") {
		t.Errorf("the log holds the sex:\n%s", l)
	}
}

// TestSexInvalid: a sex other than male or female is the caller's mistake, and is not echoed;
// so is a header given twice, or a header and a body that disagree.
func TestSexInvalid(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Default(fakeopenai.Reply(sexReply))
	withHeader := func(req *http.Request, vs ...string) *http.Request {
		for _, v := range vs {
			req.Header.Add("Patient-Sex", v)
		}
		return req
	}
	img := []map[string]string{{"data": b64(page)}}
	for _, req := range []*http.Request{
		jsonReq("/v1/extract", map[string]any{"images": img, "context": map[string]string{"sex": "intersex-x"}}),
		jsonReq("/v1/parse", map[string]any{"reply": sexReply, "context": map[string]string{"sex": "intersex-x"}}),
		withHeader(jsonReq("/v1/extract", map[string]any{"images": img}), "intersex-x"),
		withHeader(jsonReq("/v1/extract", map[string]any{"images": img}), "male", "male"),
		withHeader(jsonReq("/v1/extract", map[string]any{"images": img, "context": map[string]string{"sex": "female"}}), "male"),
	} {
		rec := e.do(req)
		if rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), "intersex-x") {
			t.Errorf("%s: status %d: %s", req.URL.Path, rec.Code, rec.Body)
		}
	}
	if e.model.Calls() != 0 {
		t.Errorf("%d model calls for a bad request", e.model.Calls())
	}
}

// TestValidateChecks: a confirmed draft gets the review warnings, and keeps its values.
func TestValidateChecks(t *testing.T) {
	e := newEnv(t, options{})
	draft := `{"title":null,"hospital":null,"checkupDate":null,"reportYear":null,"indicators":[
	 {"itemName":"总胆固醇","itemGroup":null,"valueNum":586,"valueText":null,"unit":"mmol/L","refLow":3.1,"refHigh":5.2,"printedFlag":null,"refText":null,"page":null,"analyte":null},
	 {"itemName":"葡萄糖","itemGroup":null,"valueNum":5.6,"valueText":null,"unit":"mmol/L","refLow":70,"refHigh":110,"printedFlag":null,"refText":"70-110 mg/dL","page":null,"analyte":null}]}`
	req := httptest.NewRequest(http.MethodPost, "/v1/validate", strings.NewReader(draft))
	req.Header.Set("Content-Type", "application/json")
	rec := e.do(req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var res schema.Result
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	codes := map[schema.WarningCode]bool{}
	for _, w := range res.Warnings {
		codes[w.Code] = true
	}
	if !codes[schema.ValueImplausible] || !codes[schema.RangeImplausible] {
		t.Errorf("warnings %v: want value_implausible and range_implausible", res.Warnings)
	}
	if g := res.Draft.Indicators[1]; g.RefLow == nil || g.RefLow.String() != "70" {
		t.Errorf("a confirmed draft's bounds changed: %v", g.RefLow)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
