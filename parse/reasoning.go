package parse

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Reasoning is never data. A reasoning model writes its thinking before its answer, and its
// thinking may hold a draft it then corrects ("Wait, PaO2 is 86, not 66"): only the answer is
// read. Some wrap their thinking in tags (reasoningTags), others mark where the answer starts,
// or where they correct themselves (markers). Both are tables: a new model's spelling is one row.

// reasoningTags are the pairs reasoning models wrap their thinking in (DeepSeek-R1, Qwen3 and
// QwQ, GLM-4.1V-Thinking <think>; Kimi-VL ◁think▷; others <thinking>, <reasoning>).
var reasoningTags = [][2]string{
	{"<think>", "</think>"}, {"<thinking>", "</thinking>"}, {"◁think▷", "◁/think▷"},
	{"<reasoning>", "</reasoning>"}, {"<|begin_of_thought|>", "<|end_of_thought|>"},
}

// markKind is what a marker says of the text after it.
type markKind uint8

const (
	// finalMark: the answer follows (up to the marker's end, if it has one); the last one that
	// JSON follows is the answer, and everything before it is reasoning.
	finalMark markKind = iota + 1
	// analysisMark: reasoning follows, up to a final marker; with none, the model never
	// answered (as with an unclosed <think>).
	analysisMark
	// correctionMark: the model corrects what it wrote before; when JSON stands before and
	// after it, the JSON after the last one is the answer, and the draft it corrects is not.
	correctionMark
)

// markers are the untagged ways models mark their answer, their reasoning and their
// corrections, as written (the spellings are listed, not folded: "answer:" in a sentence is
// not a marker). A marker counts only outside JSON strings ("最终结果" in a title is data).
var markers = []struct {
	text string
	kind markKind
	end  string // where the answer ends, if the marker has an end ("" for the reply's end)
}{
	// Pixtral, Mistral's reasoning prompts, and models told to answer that way.
	{"[BEGIN FINAL RESPONSE]", finalMark, "[END FINAL RESPONSE]"},
	// OpenAI's harmony format (gpt-oss): <|channel|>analysis<|message|>…<|end|>, then
	// <|start|>assistant<|channel|>final<|message|>…<|return|>.
	{"<|channel|>final", finalMark, "<|return|>"},
	{"<|channel|>analysis", analysisMark, ""},
	{"Final answer:", finalMark, ""}, {"Final Answer:", finalMark, ""}, {"FINAL ANSWER:", finalMark, ""},
	{"Final answer", finalMark, ""}, {"Final Answer", finalMark, ""}, {"**Final Answer**", finalMark, ""},
	{"**Answer**", finalMark, ""}, {"**Answer:**", finalMark, ""}, {"Answer:", finalMark, ""},
	{"最终答案", finalMark, ""}, {"最终结果", finalMark, ""}, {"最终回答", finalMark, ""}, {"最終答案", finalMark, ""}, {"最終結果", finalMark, ""},
	{"Here are my reasoning steps", analysisMark, ""}, {"Here is my reasoning", analysisMark, ""},
	{"Wait,", correctionMark, ""}, {"Wait ", correctionMark, ""}, {"Actually,", correctionMark, ""},
	{"更正：", correctionMark, ""}, {"更正:", correctionMark, ""}, {"纠正：", correctionMark, ""}, {"等等，", correctionMark, ""},
}

// The details of a reply whose model stopped inside its reasoning.
const (
	unclosedThink = "the model stopped inside its reasoning (an unclosed <think>) and never answered; only its unfinished thinking holds data"
	analysisOnly  = "the model wrote only its reasoning (an analysis channel, no final one) and never answered; only its thinking holds data"
)

// answer drops what reasoning models write before their answer and returns the answer. With
// tags: the thinking in <think>…</think> is dropped, and an <answer>…</answer> is kept alone when
// there is one; a model that stopped inside its reasoning (no closing tag) has not answered, and
// only what stands before its opening tag is kept, with unfinished saying so. With markers, see
// marked.
func answer(reply string) (text, unfinished string) {
	reply, open := tagged(reply)
	if open {
		return reply, unclosedThink
	}
	if text, open = marked(reply); open {
		return text, analysisOnly
	}
	return text, ""
}

// tagged applies reasoningTags and <answer>.
func tagged(reply string) (text string, unfinished bool) {
	if !strings.Contains(reply, "think") && !strings.Contains(reply, "reasoning>") && !strings.Contains(reply, "_of_thought") && !strings.Contains(reply, "<answer>") {
		return reply, false // the common case, found by the fast forward search
	}
	for _, t := range reasoningTags {
		if i := strings.LastIndex(reply, t[1]); i >= 0 {
			reply = reply[i+len(t[1]):]
		}
		if i := strings.Index(reply, t[0]); i >= 0 {
			reply, unfinished = reply[:i], true
		}
	}
	if _, after, ok := strings.Cut(reply, "<answer>"); ok {
		inner, _, _ := strings.Cut(after, "</answer>")
		if strings.ContainsAny(inner, "{[") {
			reply = inner
		}
	}
	return reply, unfinished
}

// mark is one marker found in a reply.
type mark struct {
	at, end int // where the marker starts and where the text after it starts
	m       int // its row in markers
}

// marked applies markers: the answer is the text after the last final marker that JSON
// follows, up to its end marker; failing one, after the last correction that stands between two
// JSON values. Reasoning marked as such (an analysis channel) with no final marker after it is
// not an answer: what stood before it is kept, unfinished true.
func marked(reply string) (text string, unfinished bool) {
	found := findMarks(reply)
	if len(found) == 0 {
		return reply, false
	}
	holdsJSON := func(s string) bool { return strings.ContainsAny(s, "{[") }
	for i := len(found) - 1; i >= 0; i-- {
		f := found[i]
		if markers[f.m].kind != finalMark {
			continue
		}
		rest := reply[f.end:]
		if e := markers[f.m].end; e != "" {
			if j := strings.Index(rest, e); j >= 0 {
				rest = rest[:j]
			}
		}
		if holdsJSON(rest) {
			return rest, false
		}
	}
	for i := len(found) - 1; i >= 0; i-- {
		f := found[i]
		switch markers[f.m].kind {
		case analysisMark:
			if strings.HasPrefix(markers[f.m].text, "<|") {
				return reply[:f.at], true // a harmony analysis channel, and no final one
			}
		case correctionMark:
			if holdsJSON(reply[:f.at]) && holdsJSON(reply[f.end:]) {
				return reply[f.end:], false
			}
		}
	}
	return reply, false
}

// markGroup is the markers that begin with one character, so that a reply is searched once for
// each first character rather than once for each marker ("Final answer:" and "Final Answer"
// begin alike).
type markGroup struct {
	first   string
	markers []int // rows of markers
}

// markGroups groups markers by their first character, in the table's order.
var markGroups = func() (gs []markGroup) {
	for i, m := range markers {
		_, n := utf8.DecodeRuneInString(m.text)
		k := slices.IndexFunc(gs, func(g markGroup) bool { return g.first == m.text[:n] })
		if k < 0 {
			k = len(gs)
			gs = append(gs, markGroup{first: m.text[:n]})
		}
		gs[k].markers = append(gs[k].markers, i)
	}
	return gs
}()

// findMarks returns the markers in reply outside JSON strings, in order.
func findMarks(reply string) []mark {
	var found []mark
	for _, g := range markGroups {
		for from := 0; from < len(reply); {
			j := strings.Index(reply[from:], g.first)
			if j < 0 {
				break
			}
			at := from + j
			for _, i := range g.markers {
				if strings.HasPrefix(reply[at:], markers[i].text) {
					found = append(found, mark{at: at, end: at + len(markers[i].text), m: i})
				}
			}
			from = at + len(g.first)
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b mark) int { return cmp.Or(a.at-b.at, a.m-b.m) })
	// Drop those inside a JSON string, and those inside a longer marker ("Answer:" in "Final
	// Answer:"), by one string-aware scan.
	out := found[:0]
	k, depth, inString := 0, 0, false
	for i := 0; i < len(reply) && k < len(found); i++ {
		for k < len(found) && found[k].at == i {
			if !inString && (len(out) == 0 || found[k].at >= out[len(out)-1].end) {
				out = append(out, found[k])
			}
			k++
		}
		switch c := reply[i]; {
		case inString && c == '\\':
			i++
		case inString && c == '"':
			inString = false
		case c == '"' && depth > 0:
			inString = true
		case c == '{' || c == '[':
			depth++
		case (c == '}' || c == ']') && depth > 0:
			depth--
		}
	}
	return out
}
