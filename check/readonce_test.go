package check

import (
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestReadOnce: a printed range, read by draft and judged here, ends in the bounds that apply
// to the patient and at most one warning on its row, never two that contradict each other, and
// its bounds are never null without one. want is "low-high codes": "-" for null bounds, no
// codes for none. The model's own split (130-175) is given beside each, as models do.
func TestReadOnce(t *testing.T) {
	b := draft.New(lexicon.Default())
	for _, c := range []struct {
		ref  string
		sex  Sex
		want string
	}{
		{"130-175(M) 115-150(F)", Male, "130-175 range_sex_specific"},
		{"130-175(M) 115-150(F)", Female, "115-150 range_sex_specific"},
		{"130-175(M) 115-150(F)", "", "- range_sex_specific"},
		{"男性 130-175", Male, "130-175 range_sex_specific"},
		{"男性 130-175", Female, "- range_sex_specific"},
		{"男性 130-175", "", "- range_sex_specific"},
		{"Males 30-500; Females 15-200", Male, "30-500 range_sex_specific"},
		{"Males 30-500; Females 15-200", Female, "15-200 range_sex_specific"},
		{"Males 30-500; Females 15-200", "", "- range_sex_specific"},
		{"M: 130-175 F: 115-150", Female, "115-150 range_sex_specific"},
		{"男130～175/女115～150", Male, "130-175 range_sex_specific"},
		{"男：130-175\n女：115-150", Female, "115-150 range_sex_specific"},
		{"Male 4.0-5.5 x10^12/L", Male, "4.0-5.5 range_sex_specific"},
		{"Male 4.0-5.5 x10^12/L", Female, "- range_sex_specific"},
		{"(男)130-175 (女)115-150", Female, "115-150 range_sex_specific"},
		{"男(20-79岁) 130-175；女(20-79岁) 115-150", Male, "130-175 range_sex_specific"},
		{"男 <50岁 130-175，男 ≥50岁 120-170，女 115-150", Male, "- range_condition_specific"},
		{"男 <50岁 130-175，男 ≥50岁 120-170，女 115-150", Female, "115-150 range_sex_specific"},
		{"成人 130-175；儿童 110-160", Male, "- range_condition_specific"},
		{"孕早期 110-150；非孕期 115-150", Female, "- range_condition_specific"},
		{"卵泡期 110-150 黄体期 115-150", "", "- range_condition_specific"},
		{"成人：男 130-175 女 115-150", Female, "115-150 range_sex_specific"},
		{"Adult male 130-175; adult female 115-150", Male, "130-175 range_sex_specific"},
		{"成人：男 130-175 女 115-150；儿童：110-160", Female, "- range_condition_specific"},
		{"空腹 130-175", "", "- range_condition_specific"},
		{"130-175 (20-79岁)", "", "130-175 "},
		{"男：130-175；女：130-175", "", "130-175 "},
		{"男/女：130-175", Female, "130-175 "},
		{"130-175", Female, "130-175 "},
		{"130～175", "", "130-175 "},
		{"130－175 g/L", "", "130-175 "},
		{"≥130", "", "130- "},
		{"小于等于175", "", "-175 "},
	} {
		for _, split := range []string{"", `,"refLow":130,"refHigh":175`} {
			reply := `{"indicators":[{"itemName":"某项目","valueNum":140,"refText":` + quoteJSON(c.ref) + split + `}]}`
			res, err := b.FromReply(reply, false)
			if err != nil {
				t.Fatal(err)
			}
			ws := append(res.Warnings, Run(lexicon.Default(), &res.Draft, Context{Sex: c.sex})...)
			ind := res.Draft.Indicators[0]
			var codes []string
			for _, w := range ws {
				codes = append(codes, string(w.Code))
			}
			got := bound(ind.RefLow) + "-" + bound(ind.RefHigh) + " " + strings.Join(codes, ",")
			if got != c.want {
				t.Errorf("%q%s, sex %q: got %q, want %q", c.ref, split, c.sex, got, c.want)
			}
		}
	}
}

func bound(d *schema.Decimal) string {
	if d == nil {
		return ""
	}
	return d.String()
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
