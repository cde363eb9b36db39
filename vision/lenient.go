package vision

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"

	openai "github.com/sashabaranov/go-openai"
)

// A chat completion is decoded by go-openai into Go ints, and one number that is not a Go int
// fails the whole decode: a good reply whose usage says "prompt_tokens": 1289.0 (Python servers
// that count in floats), 1e3, or a count beyond int64 would be a 502 "not a chat completion", and
// the page's draft lost. The numbers of a completion that are not the reply — the token counts,
// created, each choice's index — are only counts and stamps, so when go-openai's decode fails
// on a value's type, the body is read again leniently (reread): a count that is a number of any
// JSON form is its integer part, clamped to 0..MaxTokens; one that is not a number (a string, an
// object) is left out, as if the endpoint had not sent it. The reply itself is never touched, and
// a body that is still no chat completion after that is refused as before.
//
// The usual completion, plain integers throughout, pays nothing for this but the body being
// read whole before go-openai decodes it (keptBody): a second pass over a large reply costs as
// much as the first (7 ms for 256 KiB on the 2-CPU machine, BenchmarkLenient), so it is made
// only for a body that needs it.

// keptBody is a completion's body, read whole on the first Read (through the caps below it,
// whose error it returns as it came) and kept in *keep for reread.
type keptBody struct {
	src  io.Reader
	keep *[]byte
	r    *bytes.Reader
	err  error
}

func (k *keptBody) Read(p []byte) (int, error) {
	if k.r == nil && k.err == nil {
		b, err := io.ReadAll(k.src)
		if err != nil {
			k.err = err
			return 0, err
		}
		*k.keep = b
		k.r = bytes.NewReader(b)
	}
	if k.err != nil {
		return 0, k.err
	}
	return k.r.Read(p)
}

// reread decodes a kept completion body leniently, after go-openai's decode failed with err;
// ok is false when err is not about a value's type, or the body is no completion even so.
func reread(body []byte, err error) (resp openai.ChatCompletionResponse, ok bool) {
	var typErr *json.UnmarshalTypeError
	if body == nil || !errors.As(err, &typErr) {
		return resp, false
	}
	return resp, json.Unmarshal(lenient(body), &resp) == nil
}

// usageCounts are the counts of a usage object this service reads or go-openai decodes into
// ints; the details objects are counts too (go-openai's PromptTokensDetails and
// CompletionTokensDetails).
var (
	usageCounts   = []string{"prompt_tokens", "completion_tokens", "total_tokens"}
	detailsCounts = map[string][]string{
		"prompt_tokens_details":     {"audio_tokens", "cached_tokens"},
		"completion_tokens_details": {"audio_tokens", "reasoning_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens"},
	}
)

// lenient returns body with every count and stamp of the completion a Go int, or body itself
// when each already is (or when body is not a JSON object).
func lenient(body []byte) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body
	}
	changed := false
	if raw, ok := top["usage"]; ok {
		if u, ch := counts(raw, usageCounts, detailsCounts); ch {
			top["usage"], changed = u, true
		}
	}
	if raw, ok := top["created"]; ok && !isInt(raw, math.MaxInt64) {
		if n, ok := count(raw, math.MaxInt64); ok {
			top["created"] = n
		} else {
			delete(top, "created")
		}
		changed = true
	}
	if raw, ok := top["choices"]; ok {
		var choices []map[string]json.RawMessage
		if json.Unmarshal(raw, &choices) == nil {
			fixed := false
			for _, c := range choices {
				if idx, ok := c["index"]; ok && !isInt(idx, math.MaxInt32) {
					if n, ok := count(idx, math.MaxInt32); ok {
						c["index"] = n
					} else {
						delete(c, "index")
					}
					fixed = true
				}
			}
			if fixed {
				if b, err := json.Marshal(choices); err == nil {
					top["choices"], changed = b, true
				}
			}
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(top)
	if err != nil {
		return body
	}
	return out
}

// counts reads an object of counts (names) and of objects of counts (nested), and returns it
// rewritten with each count leniently read, and whether that changed anything. A usage that is
// not an object is dropped (null: no counts).
func counts(raw json.RawMessage, names []string, nested map[string][]string) (json.RawMessage, bool) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return raw, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return json.RawMessage("null"), true
	}
	changed := false
	for _, k := range names {
		v, ok := obj[k]
		if !ok || isInt(v, MaxTokens) {
			continue
		}
		if n, ok := count(v, MaxTokens); ok {
			obj[k] = n
		} else {
			delete(obj, k)
		}
		changed = true
	}
	for k, sub := range nested {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if d, ch := counts(v, sub, nil); ch {
			obj[k], changed = d, true
		}
	}
	if !changed {
		return raw, false
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return json.RawMessage("null"), true
	}
	return b, true
}

// isInt reports whether raw is a plain JSON integer in 0..most: what needs no rewriting. A
// negative one is rewritten too (to 0), so that no count below zero goes further.
func isInt(raw json.RawMessage, most int64) bool {
	s := string(bytes.TrimSpace(raw))
	if s == "" || len(s) > 19 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n <= most
}

// count reads raw as a count: a JSON number of any form (1289.0, 1e3, 1e400) is its integer
// part clamped to 0..most; anything else is no count (ok false).
func count(raw json.RawMessage, most int64) (json.RawMessage, bool) {
	s := bytes.TrimSpace(raw)
	var num json.Number
	if len(s) == 0 || s[0] != '-' && (s[0] < '0' || s[0] > '9') || json.Unmarshal(s, &num) != nil {
		return nil, false // a string, even "12", is no number
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil && !math.IsInf(f, 0) { // ParseFloat gives ±Inf with its range error
		return nil, false
	}
	n := int64(0)
	switch {
	case !(f > 0): // negative, or zero
	case f >= float64(most):
		n = most
	default:
		n = int64(f)
	}
	return json.RawMessage(strconv.FormatInt(n, 10)), true
}
