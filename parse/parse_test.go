package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// fence is a Markdown code fence; raw strings cannot hold one.
const fence = "```"

// cand is the part of a Candidate a test pins down: the value as canonical JSON (json.Number keeps
// its digits, so 1.020 must stay 1.020), the stage, and whether it was cut. An empty stage in a
// want means any stage.
type cand struct {
	Value     string
	Stage     schema.ParseStage
	Truncated bool
}

var replyTests = []struct {
	name string
	in   string
	want []cand
}{
	// Stage 1: the whole trimmed reply is JSON.
	{name: "object", in: `{"itemName":"血糖","valueNum":5.6}`,
		want: []cand{{`{"itemName":"血糖","valueNum":5.6}`, Strict, false}}},
	{name: "array", in: `[{"itemName":"血糖"},{"itemName":"ALT"}]`,
		want: []cand{{`[{"itemName":"血糖"},{"itemName":"ALT"}]`, Strict, false}}},
	{name: "digits as written", in: `{"a":1.020,"b":6.0,"c":5.60,"d":-0.50}`,
		want: []cand{{`{"a":1.020,"b":6.0,"c":5.60,"d":-0.50}`, Strict, false}}},
	{name: "surrounding white space", in: " \n\t{\"a\":1}\n\n ",
		want: []cand{{`{"a":1}`, Strict, false}}},
	{name: "byte order mark", in: "\uFEFF{\"a\":1}",
		want: []cand{{`{"a":1}`, Strict, false}}},
	{name: "byte order mark and white space", in: "\uFEFF\r\n{\"a\":1}\r\n",
		want: []cand{{`{"a":1}`, Strict, false}}},
	{name: "CRLF line ends", in: "{\r\n  \"itemName\": \"血糖\",\r\n  \"valueNum\": 5.6\r\n}\r\n",
		want: []cand{{`{"itemName":"血糖","valueNum":5.6}`, Strict, false}}},
	{name: "empty object is still a candidate", in: `{}`,
		want: []cand{{`{}`, Strict, false}}},
	{name: "double-encoded document", in: `"{\"itemName\":\"血糖\",\"valueNum\":5.60}"`,
		want: []cand{{`{"itemName":"血糖","valueNum":5.60}`, "", false}}},
	{name: "double-encoded array with white space", in: `" [{\"itemName\":\"血糖\"}] "`,
		want: []cand{{`[{"itemName":"血糖"}]`, "", false}}},

	// Stage 2: fences.
	{name: "json fence with chatter", in: "好的，以下是识别结果：\n" + fence + "json\n{\"itemName\":\"血糖\",\"valueNum\":5.6}\n" + fence + "\n如有疑问请告诉我。",
		want: []cand{{`{"itemName":"血糖","valueNum":5.6}`, Fenced, false}}},
	{name: "JSON fence upper case", in: "Here is the result:\n" + fence + "JSON\n{\"a\":1}\n" + fence + "\nLet me know.",
		want: []cand{{`{"a":1}`, Fenced, false}}},
	{name: "bare fence", in: fence + "\n[{\"a\":1}]\n" + fence,
		want: []cand{{`[{"a":1}]`, Fenced, false}}},
	{name: "tilde fence", in: "结果：\n~~~\n{\"a\":1}\n~~~\n",
		want: []cand{{`{"a":1}`, Fenced, false}}},
	{name: "tilde fence with info string", in: "~~~json\n{\"a\":1}\n~~~",
		want: []cand{{`{"a":1}`, Fenced, false}}},
	{name: "fence on one line", in: "结果：" + fence + "json {\"a\":1}" + fence,
		want: []cand{{`{"a":1}`, Fenced, false}}},
	{name: "fence with CRLF and BOM", in: "\uFEFF结果如下：\r\n" + fence + "json\r\n{\r\n\"a\": 1\r\n}\r\n" + fence + "\r\n",
		want: []cand{{`{"a":1}`, Fenced, false}}},
	{name: "fence with digits", in: fence + "json\n{\"v\":1.020}\n" + fence,
		want: []cand{{`{"v":1.020}`, Fenced, false}}},
	{name: "two fences in order, and joined as rows", in: "格式示例：\n" + fence + "json\n{\"example\":true}\n" + fence + "\n识别结果：\n" + fence + "json\n{\"answer\":1}\n" + fence,
		want: []cand{{`{"example":true}`, Fenced, false}, {`{"answer":1}`, Fenced, false}, {`[{"example":true},{"answer":1}]`, Fenced, false}}},
	{name: "one row per fence", in: "1.\n" + fence + "json\n{\"itemName\":\"TSH\"}\n" + fence + "\n2.\n" + fence + "json\n{'itemName': 'FT3',}\n" + fence,
		want: []cand{{`{"itemName":"TSH"}`, Fenced, false}, {`{"itemName":"FT3"}`, Repaired, false}, {`[{"itemName":"TSH"},{"itemName":"FT3"}]`, Repaired, false}}},
	{name: "fence holding chatter and JSON", in: fence + "\n结果：{\"a\":1}\n" + fence,
		want: []cand{{`{"a":1}`, Extracted, false}}},
	{name: "double-encoded document in a fence", in: fence + "json\n\"{\\\"a\\\":1}\"\n" + fence,
		want: []cand{{`{"a":1}`, "", false}}},

	// Stage 2: balanced spans in chatter.
	{name: "chatter before and after", in: "以下是结果：{\"a\":1} 希望对您有帮助。",
		want: []cand{{`{"a":1}`, Extracted, false}}},
	{name: "array in chatter", in: "结果：[{\"a\":1}] 完毕",
		want: []cand{{`[{"a":1}]`, Extracted, false}}},
	{name: "English chatter", in: "Sure! Here's the JSON:\n{\"a\":[1,2]}\nHope this helps.",
		want: []cand{{`{"a":[1,2]}`, Extracted, false}}},
	{name: "braces and brackets in strings", in: `说明：{"itemName":"a}b{c","x":"[y]]"} 结束`,
		want: []cand{{`{"itemName":"a}b{c","x":"[y]]"}`, Extracted, false}}},
	{name: "escaped quote before a brace in a string", in: `结果 {"a":"he said \"}\" ok"} 完`,
		want: []cand{{`{"a":"he said \"}\" ok"}`, Extracted, false}}},
	{name: "two objects in order, and joined as lines", in: `示例：{"a":1} 答案：{"b":2}`,
		want: []cand{{`{"a":1}`, Extracted, false}, {`{"b":2}`, Extracted, false}, {`[{"a":1},{"b":2}]`, Extracted, false}}},
	{name: "flat objects one per line", in: "{\"itemName\":\"TSH\",\"valueNum\":1.86}\n{\"itemName\":\"FT3\",\"valueNum\":5.1}",
		want: []cand{{`{"itemName":"TSH","valueNum":1.86}`, Extracted, false}, {`{"itemName":"FT3","valueNum":5.1}`, Extracted, false},
			{`[{"itemName":"TSH","valueNum":1.86},{"itemName":"FT3","valueNum":5.1}]`, Extracted, false}}},
	{name: "objects with lists are never joined", in: `示例：{"indicators":[{"a":1}]} 答案：{"indicators":[{"b":2}]}`,
		want: []cand{{`{"indicators":[{"a":1}]}`, Extracted, false}, {`{"indicators":[{"b":2}]}`, Extracted, false}}},
	{name: "thinking is dropped", in: "<think>草稿 {\"a\":1}</think>\n{\"b\":2}",
		want: []cand{{`{"b":2}`, Strict, false}}},
	{name: "the answer tag is kept", in: "<think>{\"a\":1}</think><answer>{\"b\":2}</answer>",
		want: []cand{{`{"b":2}`, Strict, false}}},
	{name: "an answer before an unclosed think is kept", in: "{\"b\":2}\n<think>再检查一下 {\"a\":1}",
		want: []cand{{`{"b":2}`, Strict, false}}},
	{name: "the answer after a closing tag alone", in: "先看标题 {\"a\":1}\n</think>\n{\"b\":2}",
		want: []cand{{`{"b":2}`, Strict, false}}},
	{name: "thinking tags of other models", in: "<thinking>{\"a\":1}</thinking>◁think▷{\"c\":3}◁/think▷{\"b\":2}",
		want: []cand{{`{"b":2}`, Strict, false}}},

	// Stage 3: repaired.
	{name: "trailing commas", in: `{"a":1,"b":[1,2,],}`,
		want: []cand{{`{"a":1,"b":[1,2]}`, Repaired, false}}},
	{name: "trailing comma in chatter", in: "结果：{\"a\":1,} 完",
		want: []cand{{`{"a":1}`, Repaired, false}}},
	{name: "single quotes", in: `{'itemName': '血糖', 'unit': 'mmol/L'}`,
		want: []cand{{`{"itemName":"血糖","unit":"mmol/L"}`, Repaired, false}}},
	{name: "unquoted keys", in: `{itemName: "血糖", valueNum: 5.6}`,
		want: []cand{{`{"itemName":"血糖","valueNum":5.6}`, Repaired, false}}},
	{name: "line comments", in: "{\n  \"a\": 1, // 注释\n  \"b\": 2 // 另一个\n}",
		want: []cand{{`{"a":1,"b":2}`, Repaired, false}}},
	{name: "block comments", in: `{"a": 1, /* 注释 */ "b": 2}`,
		want: []cand{{`{"a":1,"b":2}`, Repaired, false}}},
	{name: "comment holding a URL-like string", in: "{\"a\": \"http://x/y\", // c\n\"b\": 2}",
		want: []cand{{`{"a":"http://x/y","b":2}`, Repaired, false}}},
	{name: "Python literals", in: `{'a': None, 'b': True, 'c': False}`,
		want: []cand{{`{"a":null,"b":true,"c":false}`, Repaired, false}}},
	{name: "Python literals in a fence", in: "```python\n[{'itemName': '血糖', 'valueText': None}]\n```",
		want: []cand{{`[{"itemName":"血糖","valueText":null}]`, Repaired, false}}},
	{name: "full-width punctuation", in: `｛"a"：1，"b"：［1，2］｝`,
		want: []cand{{`{"a":1,"b":[1,2]}`, Repaired, false}}},
	{name: "full-width punctuation inside strings kept", in: `{"a"："1，2：3［｛"}`,
		want: []cand{{`{"a":"1，2：3［｛"}`, Repaired, false}}},
	{name: "curly quotes", in: `{“itemName”: “血糖”, "valueNum": 5.6}`,
		want: []cand{{`{"itemName":"血糖","valueNum":5.6}`, Repaired, false}}},
	{name: "curly quotes and full-width punctuation", in: `［｛“itemName”：“血糖”，“unit”：“mmol/L”｝］`,
		want: []cand{{`[{"itemName":"血糖","unit":"mmol/L"}]`, Repaired, false}}},
	{name: "curly quotes inside a string kept", in: `{"a": "他说“好”", }`,
		want: []cand{{`{"a":"他说“好”"}`, Repaired, false}}},
	{name: "digits survive repair", in: `{'v': 1.020, 'w': 6.0,}`,
		want: []cand{{`{"v":1.020,"w":6.0}`, Repaired, false}}},
	{name: "double-encoded document in chatter", in: `结果："{\"a\":1}"`,
		want: []cand{{`{"a":1}`, "", false}}},
	{name: "double-encoded document needing repair", in: `"{'a': 1,}"`,
		want: []cand{{`{"a":1}`, Repaired, false}}},
	{name: "everything at once", in: "好的！\n" + fence + "json\n{\n  // 血脂\n  indicators: [{'itemName': '总胆固醇', 'valueNum': 5.60, 'refLow': None,},],\n}\n" + fence + "\n以上。",
		want: []cand{{`{"indicators":[{"itemName":"总胆固醇","valueNum":5.60,"refLow":null}]}`, Repaired, false}}},

	// Truncation: the item open at the cut is dropped, never completed.
	{name: "cut in a number", in: `{"indicators":[{"itemName":"A","valueNum":1.5},{"itemName":"B","valueNum":4.`,
		want: []cand{{`{"indicators":[{"itemName":"A","valueNum":1.5}]}`, Repaired, true}}},
	{name: "cut in a string", in: `[{"itemName":"A"},{"itemName":"总胆`,
		want: []cand{{`[{"itemName":"A"}]`, Repaired, true}}},
	{name: "cut after a comma", in: `[{"itemName":"A"},`,
		want: []cand{{`[{"itemName":"A"}]`, Repaired, true}}},
	{name: "cut in a key", in: `[{"itemName":"A"},{"item`,
		want: []cand{{`[{"itemName":"A"}]`, Repaired, true}}},
	{name: "cut after a complete value of the open item", in: `[{"itemName":"A"},{"itemName":"B","valueNum":4.5`,
		want: []cand{{`[{"itemName":"A"}]`, Repaired, true}}},
	{name: "cut after the last complete item", in: `[{"itemName":"A"},{"itemName":"B"}`,
		want: []cand{{`[{"itemName":"A"},{"itemName":"B"}]`, Repaired, true}}},
	{name: "cut in a group keeps its complete items", in: `{"indicators":[{"group":"血常规","items":[{"itemName":"A"},{"itemName":"B","val`,
		want: []cand{{`{"indicators":[{"group":"血常规","items":[{"itemName":"A"}]}]}`, Repaired, true}}},
	{name: "cut keeps the draft's fields", in: `{"title":"血脂四项","indicators":[{"itemName":"A","valueNum":4.`,
		want: []cand{{`{"title":"血脂四项","indicators":[]}`, Repaired, true}}},
	{name: "cut in a fence", in: "结果：\n" + fence + "json\n{\"indicators\":[{\"itemName\":\"A\"},{\"itemName\":\"B\",\"valueNum\":4.",
		want: []cand{{`{"indicators":[{"itemName":"A"}]}`, Repaired, true}}},
	{name: "cut after chatter", in: `好的：{"indicators":[{"itemName":"A"},{"itemName":"B`,
		want: []cand{{`{"indicators":[{"itemName":"A"}]}`, Repaired, true}}},
	{name: "cut with trailing commas before it", in: `[{"itemName":"A",},{"itemName":"B`,
		want: []cand{{`[{"itemName":"A"}]`, Repaired, true}}},
	{name: "cut in full-width text", in: `［｛“itemName”：“A”｝，｛“itemName”：“B`,
		want: []cand{{`[{"itemName":"A"}]`, Repaired, true}}},
	{name: "cut in a Python literal", in: `[{'itemName': 'A', 'v': None}, {'itemName': 'B', 'v': No`,
		want: []cand{{`[{"itemName":"A","v":null}]`, Repaired, true}}},
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	// Sort keys the way encoding/json does for maps, keeping numbers as written.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatalf("re-decode %s: %v", b, err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

// canonJSON re-encodes a JSON literal with sorted keys and its numbers as written.
func canonJSON(t *testing.T, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad want %s: %v", s, err)
	}
	return canon(t, v)
}

func TestReply(t *testing.T) {
	for _, tt := range replyTests {
		t.Run(tt.name, func(t *testing.T) {
			cands, err := Reply(tt.in)
			if err != nil {
				t.Fatalf("Reply(%q): %v", tt.in, err)
			}
			var got, want []cand
			for i, c := range cands {
				g := cand{canon(t, c.Value), c.Stage, c.Truncated}
				if i < len(tt.want) && tt.want[i].Stage == "" {
					g.Stage = ""
				}
				got = append(got, g)
			}
			for _, w := range tt.want {
				want = append(want, cand{canonJSON(t, w.Value), w.Stage, w.Truncated})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Reply(%q) candidates (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestReplyProseBraces: braces in prose after the answer ("注意：{总胆固醇} 偏高") do not confuse
// the scan; the answer is the first candidate, whole, and nothing else is a candidate with data
// the prose never held as JSON.
func TestReplyProseBraces(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "after bare JSON", in: `{"itemName":"总胆固醇","valueNum":6.2}` + "\n注意：{总胆固醇} 偏高，请复查。",
			want: `{"itemName":"总胆固醇","valueNum":6.2}`},
		{name: "after a fence", in: fence + "json\n{\"itemName\":\"总胆固醇\",\"valueNum\":6.2}\n" + fence + "\n注意：{总胆固醇} 偏高",
			want: `{"itemName":"总胆固醇","valueNum":6.2}`},
		{name: "square brackets in prose", in: `{"itemName":"ALT","valueNum":41}` + "\n参见[1]和[注]。",
			want: `{"itemName":"ALT","valueNum":41}`},
		{name: "unbalanced brace in prose", in: `{"itemName":"ALT","valueNum":41}` + "\n提示：} 结束 {",
			want: `{"itemName":"ALT","valueNum":41}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cands, err := Reply(tt.in)
			if err != nil {
				t.Fatalf("Reply(%q): %v", tt.in, err)
			}
			if len(cands) == 0 {
				t.Fatalf("Reply(%q): no candidates", tt.in)
			}
			if got, want := canon(t, cands[0].Value), canonJSON(t, tt.want); got != want {
				t.Errorf("Reply(%q)[0] = %s, want %s", tt.in, got, want)
			}
			if cands[0].Truncated {
				t.Errorf("Reply(%q)[0] is marked truncated", tt.in)
			}
			for _, c := range cands[1:] {
				if c.Value.Kind == Object {
					if _, ok := c.Value.Get("总胆固醇"); ok {
						t.Errorf("Reply(%q): prose became a candidate: %s (%s)", tt.in, canon(t, c.Value), c.Stage)
					}
				}
			}
		})
	}
}

var replyErrorTests = []struct {
	name string
	in   string
}{
	// Refusals and prose.
	{name: "refusal", in: "抱歉，图片太模糊，无法识别"},
	{name: "English refusal", in: "I'm sorry, but I can't read this image."},
	{name: "prose with a colon list", in: "总胆固醇：5.6 mmol/L\n甘油三酯：1.2 mmol/L"},
	{name: "long refusal", in: strings.Repeat("抱歉，图片太模糊，无法识别。", 20)},
	{name: "long refusal with BOM and white space", in: "\uFEFF  " + strings.Repeat("a", 300) + "  "},

	// Nothing at all.
	{name: "empty", in: ""},
	{name: "white space", in: " \r\n\t "},
	{name: "BOM only", in: "\uFEFF"},
	{name: "empty fence", in: fence + "json\n" + fence},

	// JSON that is not a container.
	{name: "bare number", in: "42"},
	{name: "bare literal", in: "true"},
	{name: "bare null", in: "null"},
	{name: "bare string", in: `"抱歉，无法识别"`},
	{name: "fenced refusal", in: fence + "\n抱歉，图片太模糊，无法识别\n" + fence},

	// Only reasoning: a draft inside it is not the answer.
	{name: "unclosed think", in: "<think>草稿 {\"a\":1} 是 ± 还是 +？"},
	{name: "cut inside think", in: "<think>\n{\"indicators\":[{\"itemName\":\"ALT\",\"valueNum\":4"},
	{name: "closed think, prose after", in: "<think>{\"a\":1}</think>无法确定，请重新拍摄。"},
	{name: "unclosed Kimi think", in: "◁think▷{\"a\":1}"},
}

func TestReplyError(t *testing.T) {
	for _, tt := range replyErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			cands, err := Reply(tt.in)
			if err == nil {
				var got []string
				for _, c := range cands {
					got = append(got, fmt.Sprintf("%s %s", c.Stage, canon(t, c.Value)))
				}
				t.Fatalf("Reply(%q) = %v, want error %s", tt.in, got, problem.ModelOutputUnparseable)
			}
			var pe *problem.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Reply(%q) error %T %v, want *problem.Error", tt.in, err, err)
			}
			if pe.Code != problem.ModelOutputUnparseable {
				t.Errorf("Reply(%q) code = %s, want %s", tt.in, pe.Code, problem.ModelOutputUnparseable)
			}
			checkQuote(t, tt.in, pe)
		})
	}
}

// checkQuote: the problem quotes the reply's start in its excerpt, at most 120 characters, and
// never in its detail, which must stay safe to log.
func checkQuote(t *testing.T, reply string, pe *problem.Error) {
	t.Helper()
	r := []rune(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(reply), "\uFEFF")))
	if len(r) == 0 {
		return
	}
	n := min(len(r), 120)
	head := string(r[:n])
	if !strings.HasPrefix(pe.Excerpt, head) {
		t.Errorf("excerpt %q does not hold the reply's first %d characters %q", pe.Excerpt, n, head)
	}
	if len(r) > 120 && strings.HasPrefix(pe.Excerpt, string(r[:121])) {
		t.Errorf("excerpt %q holds more than 120 characters of the reply", pe.Excerpt)
	}
	if n >= 6 && strings.Contains(pe.Detail, head) {
		t.Errorf("detail %q quotes the reply: it must stay safe to log", pe.Detail)
	}
}

func ExampleReply() {
	reply := "好的，这是识别结果：\n" +
		"```json\n" +
		`{"indicators": [{"itemName": "尿比重", "valueNum": 1.020}]}` + "\n" +
		"```\n" +
		"如有疑问请告诉我。"
	cands, err := Reply(reply)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cands {
		b, _ := json.Marshal(c.Value)
		fmt.Println(c.Stage, c.Truncated, string(b))
	}
	// Output:
	// fenced false {"indicators":[{"itemName":"尿比重","valueNum":1.020}]}
}
