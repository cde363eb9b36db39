package jobs

import (
	"encoding/json"

	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// What a job stores between its steps, as JSON (then sealed). The contract's JSON leaves out
// what the finishing step still needs: a warning's reason (its message is rendered from it, in
// the caller's language, when the job is read) and a row's reading of its printed range (the
// checks choose the patient's span from it). They are kept beside, so that a page read in one
// process and finished in another gives exactly what /v1/extract gives.

// storedPage is a prepared page (extract.Prepared).
type storedPage struct {
	Data     []byte        `json:"data"`
	MIME     string        `json:"mime"`
	BytesIn  int           `json:"bytesIn"`
	BytesOut int           `json:"bytesOut"`
	Width    int           `json:"width"`
	Height   int           `json:"height"`
	Text     []intake.Word `json:"text"`
}

// storedRead is a page's reading (extract.PageRead) and its text layer, for the checks.
type storedRead struct {
	Result  *schema.Result  `json:"result"`
	Reasons []string        `json:"reasons"` // Result.Warnings[i].Reason
	Ranges  [][]storedSpan  `json:"ranges"`  // Result.Draft.Indicators[i].Range; nil when none
	Units   []string        `json:"units"`   // Result.Draft.Indicators[i].Range.Unit
	Meta    schema.PageMeta `json:"meta"`
	Model   string          `json:"model"`
	Err     *storedErr      `json:"err"`
	Text    []intake.Word   `json:"text"`
}

// storedErr is a page's failure: all draft.Merge and the finishing step read of it.
type storedErr struct {
	Code   problem.Code `json:"code"`
	Detail string       `json:"detail"`
}

// storedSpan is schema.RefSpan with its bounds as printed ("" when absent).
type storedSpan struct {
	Low, High         string
	HasLow, HasHigh   bool
	LowOpen, HighOpen bool
	Sex               schema.Sex
	Cond, Age, Unit   string
}

// storedResponse is the finished result: the body /v1/extract answers, and its warnings'
// reasons.
type storedResponse struct {
	Response extract.Response `json:"response"`
	Reasons  []string         `json:"reasons"`
}

func reasons(ws []schema.Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Reason
	}
	return out
}

func withReasons(ws []schema.Warning, rs []string) {
	for i := range ws {
		if i < len(rs) {
			ws[i].Reason = rs[i]
		}
	}
}

func encodeRead(r extract.PageRead, text []intake.Word) ([]byte, error) {
	st := storedRead{Result: r.Result, Meta: r.Meta, Model: r.Model, Text: text}
	if r.Err != nil {
		st.Err = &storedErr{Code: problem.CodeOf(r.Err)}
		if pe, ok := r.Err.(*problem.Error); ok {
			st.Err.Detail = pe.Detail
		}
	}
	if r.Result != nil {
		st.Reasons = reasons(r.Result.Warnings)
		st.Ranges = make([][]storedSpan, len(r.Result.Draft.Indicators))
		st.Units = make([]string, len(r.Result.Draft.Indicators))
		for i, ind := range r.Result.Draft.Indicators {
			if ind.Range == nil {
				continue
			}
			st.Units[i] = ind.Range.Unit
			st.Ranges[i] = []storedSpan{}
			for _, sp := range ind.Range.Spans {
				ss := storedSpan{HasLow: sp.HasLow, HasHigh: sp.HasHigh, LowOpen: sp.LowOpen, HighOpen: sp.HighOpen, Sex: sp.Sex, Cond: sp.Cond, Age: sp.Age, Unit: sp.Unit}
				if sp.HasLow {
					ss.Low = sp.Low.String()
				}
				if sp.HasHigh {
					ss.High = sp.High.String()
				}
				st.Ranges[i] = append(st.Ranges[i], ss)
			}
		}
	}
	return json.Marshal(st)
}

func decodeRead(b []byte) (extract.PageRead, []intake.Word, error) {
	var st storedRead
	if err := json.Unmarshal(b, &st); err != nil {
		return extract.PageRead{}, nil, err
	}
	r := extract.PageRead{Result: st.Result, Meta: st.Meta, Model: st.Model}
	if st.Err != nil {
		r.Err = &problem.Error{Code: st.Err.Code, Detail: st.Err.Detail}
	}
	if r.Result != nil {
		withReasons(r.Result.Warnings, st.Reasons)
		for i := range r.Result.Draft.Indicators {
			if i >= len(st.Ranges) || st.Ranges[i] == nil {
				continue
			}
			rd := &schema.RefReading{Unit: st.Units[i]}
			for _, ss := range st.Ranges[i] {
				sp := schema.RefSpan{HasLow: ss.HasLow, HasHigh: ss.HasHigh, LowOpen: ss.LowOpen, HighOpen: ss.HighOpen, Sex: ss.Sex, Cond: ss.Cond, Age: ss.Age, Unit: ss.Unit}
				var err error
				if ss.HasLow {
					if sp.Low, err = schema.ParseDecimal(ss.Low); err != nil {
						return extract.PageRead{}, nil, err
					}
				}
				if ss.HasHigh {
					if sp.High, err = schema.ParseDecimal(ss.High); err != nil {
						return extract.PageRead{}, nil, err
					}
				}
				rd.Spans = append(rd.Spans, sp)
			}
			r.Result.Draft.Indicators[i].Range = rd
		}
	}
	return r, st.Text, nil
}
