package parse

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// unstream reads a streamed API body passed on whole as the reply: server-sent events
// ("data: {…}" lines, OpenAI's chat-completion chunks, Anthropic's content deltas) or JSON lines
// (Ollama's /api/generate and /api/chat, Gemini's streamGenerateContent), each chunk holding a
// piece of the model's answer. The pieces are the reply, joined in order: a draft split across
// chunks ("{\"title\":\"肝" then "功能\"…") is in no one chunk, and read chunk by chunk its
// fields would be lost. Reasoning pieces (reasoning_content, Gemini's thought parts, Anthropic's
// thinking deltas) are not the answer and are left out. It answers ok only when every line
// that is not an event's bookkeeping (event:, id:, a comment, [DONE]) is such a chunk and there
// are at least two; path names where the pieces were. One pass, one decode per line.
func unstream(reply string) (text, path string, ok bool) {
	if t := strings.TrimSpace(reply); !strings.Contains(t, "\n") || !strings.Contains(t, "{") {
		return "", "", false // one line: no stream, which is two chunks at least
	}
	var b strings.Builder
	chunks := 0
	for line := range strings.Lines(reply) {
		line = strings.TrimSpace(line)
		if rest, isData := strings.CutPrefix(line, "data:"); isData {
			line = strings.TrimSpace(rest)
		}
		switch {
		case line == "", line == "[DONE]", strings.HasPrefix(line, "event:"), strings.HasPrefix(line, "id:"),
			strings.HasPrefix(line, "retry:"), strings.HasPrefix(line, ":"):
			continue
		case line[0] != '{':
			return "", "", false
		}
		if !chunkKeys(line) {
			return "", "", false
		}
		var c streamChunk
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return "", "", false
		}
		piece, where, isChunk := c.piece()
		if !isChunk {
			return "", "", false
		}
		if path == "" {
			path = where
		}
		b.WriteString(piece)
		chunks++
	}
	if chunks < 2 {
		return "", "", false
	}
	return b.String(), "stream: " + path, true
}

// chunkKeys reports whether a line may be a streamed chunk: it names one of streamChunk's own
// members (chunkNames), as a chunk of every API that streams does. A row of a draft does not,
// and is not decoded by reflection here.
func chunkKeys(line string) bool {
	for _, k := range chunkNames {
		if strings.Contains(line, k) {
			return true
		}
	}
	return false
}

// chunkNames are streamChunk's members' names, quoted as JSON writes them.
var chunkNames = func() (names []string) {
	t := reflect.TypeFor[streamChunk]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if !slices.Contains(names, `"`+name+`"`) {
			names = append(names, `"`+name+`"`)
		}
	}
	return names
}()

// streamChunk is the part of a streamed chunk that may hold a piece of the answer, in each API
// that streams.
type streamChunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta *struct {
			Content *string `json:"content"`
		} `json:"delta"`
		Text *string `json:"text"` // completions
	} `json:"choices"`
	Response *string `json:"response"` // Ollama /api/generate
	Message  *struct {
		Content *string `json:"content"`
	} `json:"message"` // Ollama /api/chat
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text    string `json:"text"`
				Thought bool   `json:"thought"`
			} `json:"parts"`
		} `json:"content"`
	} `json:"candidates"` // Gemini
	Type  string `json:"type"` // Anthropic's events
	Delta *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
}

// piece is the chunk's piece of the answer, where it was, and whether the value is a chunk at
// all (a chunk may carry no piece: a role, a finish reason, usage).
func (c *streamChunk) piece() (text, where string, ok bool) {
	switch {
	case len(c.Choices) > 0:
		var b strings.Builder
		for _, ch := range c.Choices[:1] {
			switch {
			case ch.Delta != nil && ch.Delta.Content != nil:
				b.WriteString(*ch.Delta.Content)
			case ch.Text != nil:
				b.WriteString(*ch.Text)
			}
		}
		return b.String(), "choices[0].delta.content", true
	case c.Object == "chat.completion.chunk": // the last chunk may carry only usage
		return "", "choices[0].delta.content", true
	case c.Response != nil:
		return *c.Response, "response", true
	case c.Message != nil && c.Message.Content != nil:
		return *c.Message.Content, "message.content", true
	case len(c.Candidates) > 0:
		var b strings.Builder
		for _, p := range c.Candidates[0].Content.Parts {
			if !p.Thought {
				b.WriteString(p.Text)
			}
		}
		return b.String(), "candidates[0].content.parts[].text", true
	case strings.HasPrefix(c.Type, "message_") || strings.HasPrefix(c.Type, "content_block_") || c.Type == "ping":
		if c.Type == "content_block_delta" && c.Delta != nil && c.Delta.Type == "text_delta" {
			return c.Delta.Text, "delta.text", true
		}
		return "", "delta.text", true
	}
	return "", "", false
}
