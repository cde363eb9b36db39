package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

// TestLogSaysWhatUpstreamSaid: a failed model call's log line carries the endpoint's status
// and its error's type and code, so that an operator sees "401 invalid_api_key" without asking
// the caller, but never the endpoint's message: servers quote the request back in it, and the
// request is the report. Neither does the caller's answer. The configured model name is
// logged, never the name the upstream gave.
func TestLogSaysWhatUpstreamSaid(t *testing.T) {
	const echoed = "总胆固醇 987.654" // report text, as an endpoint quoting the request writes it
	tests := []struct {
		name   string
		answer fakeopenai.Answer
		want   []string
	}{
		{"bad key", fakeopenai.Raw(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: [redacted] … `+echoed+`","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			[]string{`"upstreamStatus":401`, `"upstreamType":"invalid_request_error"`, `"upstreamCode":"invalid_api_key"`, `"code":"model_rejected"`, `"model":"test-vl"`}},
		{"image refused", fakeopenai.Raw(http.StatusBadRequest, `{"error":{"message":"You uploaded an unsupported image: `+echoed+`","type":"invalid_request_error","param":null,"code":"invalid_image_format"}}`),
			[]string{`"upstreamStatus":400`, `"upstreamCode":"invalid_image_format"`, `"code":"image_rejected"`}},
		{"server error", fakeopenai.Error(http.StatusInternalServerError, "failed on: "+echoed), []string{`"upstreamStatus":500`, `"code":"model_unavailable"`}},
		{"proxy page", fakeopenai.Raw(http.StatusBadGateway, "<html>"+echoed+"</html>"), []string{`"upstreamStatus":502`, `"upstreamReason":"its error answer was not JSON"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, options{tries: 1})
			e.model.Queue(tt.answer)
			rec := e.do(extractReq(t, page))
			line := grep(e.log.String(), `"msg":"request"`)
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("log line %s\nlacks %s", line, w)
				}
			}
			for _, where := range []string{e.log.String(), rec.Body.String()} {
				if strings.Contains(where, "987.654") || strings.Contains(where, "胆固醇") || strings.Contains(where, "Incorrect") || strings.Contains(where, "unsupported image") {
					t.Errorf("the upstream's message reached a log line or the answer: %s", where)
				}
			}
		})
	}

	e := newEnv(t, options{})
	e.model.Queue(fakeopenai.Complete(fakeopenai.Response{Content: lipid, Model: "总胆固醇 5.86 mmol/L"}))
	e.do(extractReq(t, page))
	if log := e.log.String(); strings.Contains(log, "5.86") || !strings.Contains(log, `"model":"test-vl"`) {
		t.Errorf("the log should name the configured model, not the upstream's: %s", log)
	}
}

// TestReplyExcerpt: a problem about an unusable reply quotes the reply's start in replyExcerpt,
// never in detail (which callers log), and not at all when the server is told not to.
func TestReplyExcerpt(t *testing.T) {
	const refusal = "抱歉，总胆固醇一栏太模糊，无法识别。"
	for _, off := range []bool{false, true} {
		e := newEnv(t, options{noModel: true, noReplyExcerpts: off})
		req := httptest.NewRequest("POST", "/v1/parse", strings.NewReader(refusal))
		req.Header.Set("Content-Type", "text/plain; charset=utf-8")
		rec := e.do(req)
		doc := problemOf(t, rec)
		if rec.Code != 422 || doc.Code != "reply_unparseable" || strings.Contains(doc.Detail, "总胆固醇") {
			t.Errorf("off=%v: %d %+v", off, rec.Code, doc)
		}
		if got := doc.ReplyExcerpt; off && got != "" || !off && got != refusal {
			t.Errorf("off=%v: replyExcerpt = %q", off, got)
		}
		if strings.Contains(e.log.String(), "总胆固醇") {
			t.Errorf("the excerpt reached the log: %s", e.log.String())
		}
	}
}
