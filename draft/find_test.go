package draft

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
)

// draftJSON is a small draft as a model writes it.
const draftJSON = `{"title":"血脂","hospital":"协和","indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L"},{"itemName":"甘油三酯","valueNum":1.42,"unit":"mmol/L"}]}`

// tableJSON is a draft's rows as a table object of a header and rows, no report fields.
const tableJSON = `{"table":{"headers":["项目","结果","单位"],"rows":[["钠","141","mmol/L"],["钾","4.1","mmol/L"]]}}`

// quoted is s as a JSON string literal.
func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestFind: the draft is found by fit wherever a reply holds it, and Found says where; a
// value inside a draft, or a tool's name, is never taken for it.
func TestFind(t *testing.T) {
	tests := []struct {
		name, reply string
		found       string
		rows        []string // the indicators' names, in order
		title       string
	}{
		{name: "the reply is the draft", reply: draftJSON, rows: []string{"总胆固醇", "甘油三酯"}, title: "血脂"},
		{name: "a wrapper", reply: `{"code":0,"data":` + draftJSON + `}`, found: "data", rows: []string{"总胆固醇", "甘油三酯"}, title: "血脂"},
		{name: "chat completion", reply: `{"choices":[{"index":0,"message":{"role":"assistant","content":` + quoted("```json\n"+draftJSON+"\n```") + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`,
			found: "choices[0].message.content", rows: []string{"总胆固醇", "甘油三酯"}, title: "血脂"},
		{name: "a content that reasons", reply: `{"message":{"content":` + quoted("<think>"+strings.Replace(draftJSON, "5.86", "6.86", 1)+"</think>"+draftJSON) + `}}`,
			found: "message.content", rows: []string{"总胆固醇", "甘油三酯"}, title: "血脂"},
		{name: "tool call, arguments an object", reply: `[TOOL_CALLS][{"name":"record_lab_report","arguments":` + draftJSON + `}]`,
			found: "[0].arguments", rows: []string{"总胆固醇", "甘油三酯"}, title: "血脂"},
		{name: "tool call of one row", reply: `{"name":"record","arguments":{"indicators":[{"itemName":"ALT","valueNum":20}]}}`,
			found: "arguments", rows: []string{"ALT"}},
		{name: "tool call, arguments a string", reply: `{"name":"submit","arguments":` + quoted(draftJSON) + `}`,
			found: "arguments", rows: []string{"总胆固醇", "甘油三酯"}, title: "血脂"},
		{name: "key needing quotes", reply: `{"the answer":` + quoted(draftJSON) + `}`,
			found: `["the answer"]`, rows: []string{"总胆固醇", "甘油三酯"}, title: "血脂"},
		{name: "a list of lists under a report is the report's", reply: `{"title":"体检","indicators":[[{"itemName":"A","valueNum":1}]]}`,
			rows: []string{}, title: "体检"},
		{name: "a nested result is its row's", reply: `{"检验结果":[{"项目":"总胆固醇","检测结果":{"value":6.42,"unit":"mmol/L","flag":"H","range":"2.8-5.2"}}]}`,
			rows: []string{"总胆固醇"}},
		{name: "a string inside a draft is the draft's", reply: `{"title":"血脂","indicators":[{"itemName":"A","valueNum":1}],"note":` + quoted(`{"indicators":[{"itemName":"B","valueNum":2},{"itemName":"C","valueNum":3}]}`) + `}`,
			rows: []string{"A"}, title: "血脂"},
		{name: "pages keyed by number stay the reply's", reply: `{"page1":{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5}]},"page2":{"title":"血常规","indicators":[{"itemName":"ALT","valueNum":20}]}}`,
			rows: []string{"WBC", "ALT"}, title: "血常规"},
		// Rows in other clothes fit as rows: a table inside a body or a tool call is found.
		{name: "a table object in a chat completion", reply: `{"choices":[{"message":{"content":` + quoted(tableJSON) + `}}],"model":"m"}`,
			found: "choices[0].message.content", rows: []string{"钠", "钾"}},
		{name: "a table object in a tool call", reply: `[TOOL_CALLS][{"name":"record_report","arguments":` + tableJSON + `}]`,
			found: "[0].arguments", rows: []string{"钠", "钾"}},
		{name: "columns and data in tool call arguments", reply: `{"tool_calls":[{"function":{"name":"submit","arguments":` + quoted(`{"columns":["Test","Result","Units"],"data":[["Glucose","98","mg/dL"],["Sodium","140","mmol/L"]]}`) + `}}]}`,
			found: "tool_calls[0].function.arguments", rows: []string{"Glucose", "Sodium"}},
		{name: "status columns only", reply: `{"message":{"content":` + quoted(`[{"test":"Glucose","in_range":"98"},{"test":"LDL","out_of_range":"160 H"}]`) + `}}`,
			found: "message.content", rows: []string{"Glucose", "LDL"}},
		{name: "rows keyed by name in a group, in a tool call", reply: `[TOOL_CALLS][{"name":"record","arguments":{"血常规":{"WBC":{"结果":"6.5"},"HGB":{"结果":"135"}}}}]`,
			found: "[0].arguments", rows: []string{"WBC", "HGB"}},
		{name: "a two-column header in a body", reply: `{"response":` + quoted(`[["名称","结果","名称","结果"],["A","1","B","2"],["C","3","D","4"]]`) + `,"done":true}`,
			found: "response", rows: []string{"A", "C", "B", "D"}},
		{name: "several reports are pages", reply: `[{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5}]},{"title":"肝功能","indicators":[{"itemName":"ALT","valueNum":20}]}]`,
			rows: []string{"WBC", "ALT"}, title: "血常规"},
	}
	b := New(lexicon.Default())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := b.FromReply(tt.reply, false)
			if err != nil {
				t.Fatal(err)
			}
			if out.Found != tt.found {
				t.Errorf("found %q, want %q", out.Found, tt.found)
			}
			rows := []string{}
			for _, ind := range out.Draft.Indicators {
				rows = append(rows, ind.ItemName)
			}
			if diff := cmp.Diff(tt.rows, rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if got := deref(out.Draft.Title); got != tt.title {
				t.Errorf("title %q, want %q", got, tt.title)
			}
		})
	}
}

// envelopes wrap a reply as the bodies that carry one do.
var envelopes = map[string]func(string) string{
	"chat": func(s string) string {
		return `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":` + quoted(s) + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":20}}`
	},
	"responses": func(s string) string {
		return `{"id":"resp_1","object":"response","output":[{"type":"reasoning","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":` + quoted(s) + `}]}]}`
	},
	"gemini": func(s string) string {
		return `{"candidates":[{"content":{"parts":[{"text":` + quoted(s) + `}],"role":"model"},"finishReason":"STOP"}],"modelVersion":"gemini-2.0-flash"}`
	},
	"ollama": func(s string) string {
		return `{"model":"qwen2.5vl:7b","created_at":"2026-03-05T08:00:00Z","response":` + quoted(s) + `,"done":true,"context":[1,2,3]}`
	},
}

// FuzzEnvelope holds the finder to the reply: a reply carried in an API body is read as the
// same draft as the reply alone, within the work bound of the body's size. Seeded with the
// captured replies.
func FuzzEnvelope(f *testing.F) {
	files, _ := os.ReadDir("../testdata/replies")
	for _, e := range files {
		if b, err := os.ReadFile("../testdata/replies/" + e.Name()); err == nil && strings.HasSuffix(e.Name(), ".txt") && len(b) < 16<<10 {
			f.Add(string(b), uint8(len(e.Name())))
		}
	}
	f.Add(draftJSON, uint8(0))
	names := []string{"chat", "gemini", "ollama", "responses"}
	b := New(lexicon.Default())
	f.Fuzz(func(t *testing.T, reply string, which uint8) {
		if len(reply) > 32<<10 {
			return // the body's own length must stay within what the service reads
		}
		body := envelopes[names[int(which)%len(names)]](reply)
		out, err := b.FromReply(body, false)
		if name, ok := out.Work.Within(parse.Bound(len(body))); !ok {
			t.Fatalf("%s over its bound for %d bytes: %+v, bound %+v", name, len(body), out.Work, parse.Bound(len(body)))
		}
		alone, errAlone := b.FromReply(reply, false)
		if errAlone != nil || alone.Found != "" || alone.Work.Reread > 0 {
			return // the reply's own reading used up a level or a limit the body needs too
		}
		if err != nil {
			t.Fatalf("the reply alone is read, in a body it is not: %v", err)
		}
		if diff := cmp.Diff(alone.Result, out.Result); diff != "" {
			t.Fatalf("the body's draft differs from the reply's (-alone +body):\n%s", diff)
		}
	})
}
