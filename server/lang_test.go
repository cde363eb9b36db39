package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/server"
)

// langReply has a lost decimal point (586 beside 3.1–5.2) and a range written backwards.
const langReply = `{"title":"血脂四项","hospital":null,"checkupDate":null,"reportYear":null,"indicators":[
 {"itemName":"总胆固醇","itemGroup":"血脂","valueNum":586,"valueText":null,"unit":"mmol/L","refText":"3.1-5.2"},
 {"itemName":"甘油三酯","itemGroup":"血脂","valueNum":1.2,"valueText":null,"unit":"mmol/L","refLow":1.7,"refHigh":0.4}]}`

var hanRE = regexp.MustCompile(`\p{Han}`)

// TestLang: warnings' messages follow Accept-Language (zh* Chinese, en* English, anything else
// the configured default, zh-CN when unset), on /v1/parse and /v1/validate; problems stay English.
func TestLang(t *testing.T) {
	for _, c := range []struct {
		lang, accept string
		zh           bool
	}{
		{"", "", true},
		{"", "en", false},
		{"", "en-US,en;q=0.9", false},
		{"", "zh-CN", true},
		{"", "fr-FR", true},
		{"en", "", false},
		{"en", "zh-TW,zh;q=0.9,en;q=0.8", true},
		{"en", "fr", false},
		{"zh-CN", "en-GB;q=0.5, zh;q=0.4", false},
	} {
		h := server.New(server.Config{Lang: c.lang})
		req := httptest.NewRequest(http.MethodPost, "/v1/parse", strings.NewReader(langReply))
		req.Header.Set("Content-Type", "text/plain")
		if c.accept != "" {
			req.Header.Set("Accept-Language", c.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var res struct {
			Warnings []struct {
				Code    string            `json:"code"`
				Message string            `json:"message"`
				Params  map[string]string `json:"params"`
			} `json:"warnings"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &res); rec.Code != http.StatusOK || err != nil || len(res.Warnings) < 2 {
			t.Fatalf("%q %q: %d %s", c.lang, c.accept, rec.Code, rec.Body)
		}
		if !strings.Contains(rec.Header().Get("Vary"), "Accept-Language") {
			t.Errorf("%q %q: no Vary: Accept-Language", c.lang, c.accept)
		}
		for _, w := range res.Warnings {
			// An English message still names the item in Chinese: look past the params.
			rest := w.Message
			for _, v := range w.Params {
				rest = strings.ReplaceAll(rest, v, "")
			}
			if got := hanRE.MatchString(rest); got != c.zh {
				t.Errorf("Config.Lang %q, Accept-Language %q: %s: %q", c.lang, c.accept, w.Code, w.Message)
			}
		}
		if c.zh && !strings.Contains(rec.Body.String(), "总胆固醇：数值 586 mmol/L 超出") {
			t.Errorf("zh: %s", rec.Body)
		}
	}

	// /v1/validate, and a problem, which stays English.
	h := server.New(server.Config{})
	draft := `{"title":null,"hospital":null,"checkupDate":null,"reportYear":null,"indicators":[
	 {"itemName":"总胆固醇","itemGroup":null,"valueNum":586,"valueText":null,"unit":"mmol/L","refLow":3.1,"refHigh":5.2,"printedFlag":null,"refText":null,"page":null,"analyte":null}]}`
	req := httptest.NewRequest(http.MethodPost, "/v1/validate", strings.NewReader(draft))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Language", "zh-CN")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), "总胆固醇：数值 586 偏离参考范围") && !strings.Contains(rec.Body.String(), "总胆固醇：数值 586 mmol/L 超出") {
		t.Errorf("validate zh: %s", rec.Body)
	}
	req = httptest.NewRequest(http.MethodPost, "/v1/parse", strings.NewReader("no JSON here at all"))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Accept-Language", "zh-CN")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnprocessableEntity || hanRE.MatchString(rec.Body.String()) {
		t.Errorf("problem: %d %s", rec.Code, rec.Body)
	}
}

// TestLangExtract: /v1/extract's warnings follow Accept-Language too (zh-CN when none).
func TestLangExtract(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Default(fakeopenai.Reply(sexReply))
	img := map[string]any{"images": []map[string]string{{"data": b64(page)}}}
	for _, c := range []struct{ accept, want string }{
		{"", "男女不同"},
		{"zh-HK", "男女不同"},
		{"en-US", "differs for men and women"},
	} {
		req := jsonReq("/v1/extract", img)
		if c.accept != "" {
			req.Header.Set("Accept-Language", c.accept)
		}
		if rec := e.do(req); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("Accept-Language %q: %d, no %q in %s", c.accept, rec.Code, c.want, rec.Body)
		}
	}
}
