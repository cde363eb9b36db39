package vision

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// typical is a completion as OpenAI writes it, of a page's usual size.
var typical = `{"id":"chatcmpl-1","object":"chat.completion","created":1733000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":` +
	strings.Repeat(`"{\"indicators\":[{\"itemName\":\"总胆固醇\",\"valueNum\":5.86,\"unit\":\"mmol/L\"}]}"`, 1) +
	`,"refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1289,"completion_tokens":412,"total_tokens":1701,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"system_fingerprint":"fp_1"}`

// TestLenientKeepsPlainBodies: a completion of plain integers is passed on byte for byte.
func TestLenientKeepsPlainBodies(t *testing.T) {
	for _, b := range []string{typical, `not JSON`, `{"choices":[]}`, `[1,2]`} {
		if got := string(lenient([]byte(b))); got != b {
			t.Errorf("lenient(%.40q) = %.40q, want it unchanged", b, got)
		}
	}
}

// FuzzLenient: whatever the body, lenient never loses a reply that go-openai could read, and
// whatever it rewrites still decodes, with the same choices' content.
func FuzzLenient(f *testing.F) {
	f.Add(typical)
	f.Add(`{"choices":[{"index":1.0,"message":{"content":"x"}}],"usage":{"prompt_tokens":1e3}}`)
	f.Add(`{"created":"x","usage":{"completion_tokens_details":{"reasoning_tokens":-2.5}}}`)
	f.Fuzz(func(t *testing.T, body string) {
		out := lenient([]byte(body))
		var before, after openai.ChatCompletionResponse
		errBefore := json.Unmarshal([]byte(body), &before)
		errAfter := json.Unmarshal(out, &after)
		if errBefore == nil && errAfter != nil {
			t.Fatalf("a body go-openai reads no longer decodes: %v\n%s", errAfter, out)
		}
		if errAfter != nil {
			return
		}
		if errBefore == nil {
			if len(before.Choices) != len(after.Choices) {
				t.Fatalf("choices: %d, then %d", len(before.Choices), len(after.Choices))
			}
			for i := range before.Choices {
				b, a := before.Choices[i], after.Choices[i]
				if !reflect.DeepEqual(b.Message, a.Message) || b.FinishReason != a.FinishReason {
					t.Fatalf("choice %d changed:\n%+v\n%+v", i, b, a)
				}
			}
		}
		for _, n := range []int{after.Usage.PromptTokens, after.Usage.CompletionTokens, after.Usage.TotalTokens} {
			if n < 0 || n > MaxTokens {
				t.Fatalf("usage %+v is not clamped", after.Usage)
			}
		}
	})
}

// BenchmarkLenient: the check on a plain body, what every reply pays.
func BenchmarkLenient(b *testing.B) {
	long := strings.Replace(typical, `"content":"`, `"content":"`+strings.Repeat(`{\"itemName\":\"x\"},`, 256<<10/16), 1)
	for _, bc := range []struct{ name, body string }{{"typical", typical}, {"256KiB", long}} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(bc.body)
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				lenient(body)
			}
		})
	}
}
