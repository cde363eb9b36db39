package parse

import (
	"slices"
	"testing"
)

// TestUnstream: a streamed body passed on whole is its pieces joined, reasoning left out; text
// that is not every line a chunk is left as it is.
func TestUnstream(t *testing.T) {
	for _, c := range []struct {
		name, reply, want, path string
		ok                      bool
	}{
		{"openai sse", "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
			"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"{\\\"title\\\":\\\"肝\"}}]}\n\n" +
			"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"功能\\\"}\"}}]}\n\n" +
			"data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"total_tokens\":9}}\n\ndata: [DONE]\n",
			`{"title":"肝功能"}`, "stream: choices[0].delta.content", true},
		{"ollama generate", "{\"response\":\"{\\\"a\\\":\",\"done\":false}\n{\"response\":\"1}\",\"done\":false}\n{\"response\":\"\",\"done\":true}\n",
			`{"a":1}`, "stream: response", true},
		{"ollama chat", "{\"message\":{\"role\":\"assistant\",\"content\":\"[1,\"}}\n{\"message\":{\"role\":\"assistant\",\"content\":\"2]\"}}\n",
			`[1,2]`, "stream: message.content", true},
		{"gemini, thought left out", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"66?\",\"thought\":true}]}}]}\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"{}\"}]}}]}\n",
			`{}`, "stream: candidates[0].content.parts[].text", true},
		{"anthropic, thinking left out", "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"{}\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"[1]\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n",
			`[1]`, "stream: delta.text", true},
		// Not streams: drafts one per line, one chunk alone, a chunk beside prose.
		{"drafts one per line", "{\"title\":\"A\",\"indicators\":[]}\n{\"title\":\"B\",\"indicators\":[]}\n", "", "", false},
		{"one chunk", "data: {\"choices\":[{\"delta\":{\"content\":\"{}\"}}]}\n", "", "", false},
		{"prose beside chunks", "Here:\ndata: {\"choices\":[{\"delta\":{\"content\":\"{\"}}]}\ndata: {\"choices\":[{\"delta\":{\"content\":\"}\"}}]}\n", "", "", false},
	} {
		got, path, ok := unstream(c.reply)
		if ok != c.ok || got != c.want || path != c.path {
			t.Errorf("%s: unstream = %q, %q, %v; want %q, %q, %v", c.name, got, path, ok, c.want, c.path, c.ok)
		}
	}
}

// TestChunkNames: the prefilter knows every member a chunk is read by, and a draft's own
// lines are not taken for chunks.
func TestChunkNames(t *testing.T) {
	for _, k := range []string{`"choices"`, `"object"`, `"response"`, `"message"`, `"candidates"`, `"type"`, `"delta"`} {
		if !slices.Contains(chunkNames, k) {
			t.Errorf("chunkNames lacks %s: %v", k, chunkNames)
		}
	}
	if chunkKeys(`{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L"}`) {
		t.Error("a row is taken for a chunk")
	}
}
