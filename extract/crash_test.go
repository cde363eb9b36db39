package extract_test

import (
	"context"
	"github.com/ocrdraft/ocrdraft/check"
	"net/http"
	"testing"

	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/metrics"
	"github.com/ocrdraft/ocrdraft/vision"
	"github.com/ocrdraft/ocrdraft/vision/modelcall"
)

type anyPage struct{}

func (anyPage) Prepare(_ context.Context, data []byte) (intake.Page, error) {
	return intake.Page{MIME: "image/png", Data: data, BytesIn: len(data), BytesOut: len(data)}, nil
}

// TestUpstreamCounts: the reply that once ended the process — negative completion tokens, or
// counts that overflow when summed across a re-ask and pages — goes through the real client,
// the limiter and the real metrics as the server wires them, and the request is answered.
func TestUpstreamCounts(t *testing.T) {
	completion := func(content, usage string) fakeopenai.Answer {
		return fakeopenai.Raw(http.StatusOK, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop",`+
			`"message":{"role":"assistant","content":`+content+`}}],"usage":`+usage+`}`)
	}
	good := `"{\"indicators\":[{\"itemName\":\"TC\",\"valueNum\":5.6}]}"`
	tests := []struct {
		name  string
		queue []fakeopenai.Answer
	}{
		{"negative completion tokens", []fakeopenai.Answer{
			completion(good, `{"prompt_tokens":10,"completion_tokens":-1}`)}},
		{"the least int", []fakeopenai.Answer{
			completion(good, `{"prompt_tokens":-9223372036854775808,"completion_tokens":-9223372036854775808}`)}},
		{"counts as floats, exponents and beyond int64", []fakeopenai.Answer{
			completion(good, `{"prompt_tokens":1289.0,"completion_tokens":1e3,"total_tokens":99999999999999999999}`)}},
		{"huge counts summed across a re-ask", []fakeopenai.Answer{
			completion(`"no JSON here"`, `{"prompt_tokens":9223372036854775807,"completion_tokens":9223372036854775807}`),
			completion(good, `{"prompt_tokens":9223372036854775807,"completion_tokens":9223372036854775807}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Queue(tt.queue...)
			f.Default(tt.queue[len(tt.queue)-1])
			c, err := vision.New(vision.Config{BaseURL: f.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			m := metrics.New()
			s := extract.New(extract.Config{Model: modelcall.New(c, modelcall.Options{Observer: m}), Prep: anyPage{}, Observer: m})
			res, err := s.Extract(t.Context(), []*budget.Bytes{budget.NewBytes([]byte("page 1"), nil, 0), budget.NewBytes([]byte("page 2"), nil, 0)}, check.Context{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Draft.Indicators) != 1 {
				t.Errorf("the reply's indicators were lost: %+v", res.Draft)
			}
			if u := res.Meta.Usage; u.PromptTokens < 0 || u.CompletionTokens < 0 || u.PromptTokens > 4*vision.MaxTokens {
				t.Errorf("usage = %+v", u)
			}
		})
	}
}
