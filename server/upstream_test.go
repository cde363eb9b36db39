package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

// TestLogSaysWhatUpstreamSaid: a failed model call's log line carries the endpoint's status and
// its short reason, so that an operator sees "401 Incorrect API key" without asking the caller;
// the configured model name is logged, never the name the upstream gave.
func TestLogSaysWhatUpstreamSaid(t *testing.T) {
	tests := []struct {
		name   string
		answer fakeopenai.Answer
		want   []string
	}{
		{"bad key", fakeopenai.Unauthorized(), []string{`"upstreamStatus":401`, `Incorrect API key provided`, `"code":"model_rejected"`, `"model":"test-vl"`}},
		{"image refused", fakeopenai.Raw(http.StatusBadRequest, `{"error":{"message":"You uploaded an unsupported image. Please make sure your image is valid.","type":"invalid_request_error","param":null,"code":"invalid_image_format"}}`),
			[]string{`"upstreamStatus":400`, `unsupported image`, `"code":"image_rejected"`}},
		{"server error", fakeopenai.ServerError(), []string{`"upstreamStatus":500`, `"code":"model_unavailable"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, options{tries: 1})
			e.model.Queue(tt.answer)
			e.do(extractReq(t, page))
			line := grep(e.log.String(), `"msg":"request"`)
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("log line %s\nlacks %s", line, w)
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
