package draft

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestBrokenRule: a draft's own field that breaks its contract rule is nulled with a warning
// whose reason and params its row speaks of. A reply cannot give a report year beyond 1900–2100
// (readYear refuses one, with not_year), so internal/msg's TestEveryReason cannot reach these
// reasons through the reply; this gives them.
func TestBrokenRule(t *testing.T) {
	for _, c := range []struct {
		year   int
		reason string
		limit  string
	}{{1800, "too_small", "1900"}, {2300, "too_large", "2100"}} {
		bd := build{b: New(lexicon.Default()), page: 1}
		bd.draft.ReportYear = &c.year
		bd.check()
		ws := bd.result().Warnings
		if bd.draft.ReportYear != nil || len(ws) != 1 {
			t.Fatalf("%d: year %v, warnings %v", c.year, bd.draft.ReportYear, ws)
		}
		w := ws[0]
		if w.Code != schema.InvalidValue || w.Reason != c.reason || w.Params["limit"] != c.limit {
			t.Errorf("%d: %s/%s %v, want invalid_value/%s limit %s", c.year, w.Code, w.Reason, w.Params, c.reason, c.limit)
		}
		for _, lang := range []string{msg.En, msg.Zh} {
			if s := msg.Text(w, lang); strings.Contains(s, "?") || !strings.Contains(s, c.limit) || s == string(w.Code) {
				t.Errorf("%d %s: %q", c.year, lang, s)
			}
		}
	}
}

// TestBrokenKnowsEveryTag: every rule the contract's fields carry has its reason in broken (max,
// gte, lte), but itemName's required, which item reads before validating; a rule added to the
// schema without its reason and row fails here, not as a wrong sentence.
func TestBrokenKnowsEveryTag(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[schema.OcrDraft](), reflect.TypeFor[schema.OcrIndicator]()} {
		for f := range typ.Fields() {
			for rule := range strings.SplitSeq(f.Tag.Get("validate"), ",") {
				tag, _, _ := strings.Cut(rule, "=")
				switch {
				case tag == "" || tag == "-" || tag == "omitempty" || tag == "max" || tag == "gte" || tag == "lte":
				case tag == "required" && f.Name == "ItemName":
				default:
					t.Errorf("%s.%s: rule %q has no reason in broken", typ.Name(), f.Name, tag)
				}
			}
		}
	}
}
