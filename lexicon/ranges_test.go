package lexicon

import (
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/schema"
)

// show writes a reading compactly: each span as low-high (≥ ≤ > < for one bound), then
// @sex and #condition, then [unit]; spans joined by " | "; "!" when the reading failed.
func show(r schema.RefReading, ok bool) string {
	if !ok {
		return "!"
	}
	var parts []string
	for _, sp := range r.Spans {
		var b strings.Builder
		switch {
		case sp.HasLow && sp.HasHigh:
			b.WriteString(sp.Low.String() + "-" + sp.High.String())
		case sp.HasHigh && sp.HighOpen:
			b.WriteString("<" + sp.High.String())
		case sp.HasHigh:
			b.WriteString("≤" + sp.High.String())
		case sp.LowOpen:
			b.WriteString(">" + sp.Low.String())
		default:
			b.WriteString("≥" + sp.Low.String())
		}
		if sp.Sex != "" {
			b.WriteString(" @" + string(sp.Sex))
		}
		if sp.Cond != "" {
			b.WriteString(" #" + sp.Cond)
		}
		if sp.Age != "" {
			b.WriteString(" ^" + sp.Age)
		}
		if sp.Unit != "" {
			b.WriteString(" [" + sp.Unit + "]")
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, " | ")
}

func TestReadRange(t *testing.T) {
	l := Default()
	for _, c := range []struct{ in, want string }{
		// One span.
		{"3.9-6.1", "3.9-6.1"},
		{"3.90-6.10", "3.90-6.10"},
		{"(3.9-6.1)", "3.9-6.1"},
		{"[3.5-5.5]", "3.5-5.5"},
		{"【3.5-5.5】", "3.5-5.5"},
		{"[2.8, 5.2]", "2.8-5.2"},
		{"137-147 mmol/L", "137-147 [mmol/L]"},
		{"3.5-9.5 ×10^9/L", "3.5-9.5 [×10^9/L]"},
		{"4.0×10^9-10.0×10^9/L", "4.0-10.0 [×10^9/L]"},
		{"4.0×10^9-10.0", "!"},
		{"3.5E+09~9.5E+09", "3500000000-9500000000"},
		{"-3~3", "-3-3"},
		{"-3--1", "-3--1"},
		{"3.5--5.5", "3.5-5.5"},
		{"1,000-5,000", "1000-5000"},
		{"参考值：40-55", "40-55"},
		{"參考值：40-55", "40-55"},
		{"Reference: 40-55 U/L", "40-55 [U/L]"},
		{"１２．５－１５．０", "12.5-15.0"},
		{"2.8 mmol/L (空腹) ", "!"},
		{"3.9-6.1 mmol/L (空腹)", "3.9-6.1 #空腹 [mmol/L]"},
		{"成人 3.9-6.1", "3.9-6.1 #成人"},
		// Comparators.
		{"<5.2", "<5.2"}, {"＜5.2", "<5.2"}, {"<=5.2", "≤5.2"}, {"≤5.2", "≤5.2"}, {"≦5.2", "≤5.2"},
		{"小于5.2", "<5.2"}, {"小于等于5.2", "≤5.2"}, {"低于5.2", "<5.2"}, {"5.2以下", "≤5.2"},
		{">1.04", ">1.04"}, {">=1.04", "≥1.04"}, {"≥1.04", "≥1.04"}, {"≧1.04", "≥1.04"}, {"＞1.04", ">1.04"},
		{"大于1.04", ">1.04"}, {"大于等于1.04", "≥1.04"}, {"高于1.04", ">1.04"}, {"1.04以上", "≥1.04"},
		{"< 5.2 mmol/L", "<5.2 [mmol/L]"}, {"less than 200 mg/dL", "<200 [mg/dL]"},
		{"> OR = 40", "≥40"}, {"< OR = 1.0", "≤1.0"}, {">or=60 mL/min", "≥60 [mL/min]"},
		// Dashes a reply may print between the bounds (issue 19).
		{"3.5‒5.3", "3.5-5.3"}, {"3.5〜5.3", "3.5-5.3"}, {"3.5‐5.3", "3.5-5.3"}, {"125——350", "125-350"},
		{"3.5–5.3", "3.5-5.3"}, {"3.5﹣5.3", "3.5-5.3"}, {"3.5－5.3", "3.5-5.3"}, {"3.5 — 5.3", "3.5-5.3"},
		{"-3‐3", "-3-3"}, {".57-1.11", "0.57-1.11"}, {"-.5~.5", "-0.5-0.5"},
		// Qualitative, dilutions, lone numbers.
		{"阴性", ""}, {"", ""}, {"  ", ""}, {"-", ""}, {"<", ""}, {"<1:100", ""}, {"1:320", ""}, {"5.2", "!"}, {"5.2 mmol/L", "!"},
		{"3.9-6.1 5.5", "!"},
		// By sex: marks first.
		{"男：130-175；女：115-150", "130-175 @male | 115-150 @female"},
		{"男130～175/女115～150", "130-175 @male | 115-150 @female"},
		{"男性 130-175", "130-175 @male"},
		{"女性：115-150 g/L", "115-150 @female [g/L]"},
		{"M: 130-175 F: 115-150", "130-175 @male | 115-150 @female"},
		{"M 13.0-17.0; F 12.0-15.5 g/dL", "13.0-17.0 @male | 12.0-15.5 @female [g/dL]"},
		{"Males 30-500; Females 15-200", "30-500 @male | 15-200 @female"},
		{"Male 4.0-5.5 x10^12/L", "4.0-5.5 @male [x10^12/L]"},
		{"Male: <=60, Female: <=45", "≤60 @male | ≤45 @female"},
		{"男：130-175\n女：115-150", "130-175 @male | 115-150 @female"},
		{"男(130-175) 女(115-150)", "130-175 @male | 115-150 @female"},
		{"(男)130-175 (女)115-150", "130-175 @male | 115-150 @female"},
		// By sex: marks after.
		{"130-175(M) 115-150(F)", "130-175 @male | 115-150 @female"},
		{"4.3-5.8(男) 3.8-5.1(女)", "4.3-5.8 @male | 3.8-5.1 @female"},
		{"130-175 男性", "130-175 @male"},
		{"130-175；女 115-150", "130-175 | 115-150 @female"},
		{"130-175, (女) 115-150", "130-175 | 115-150 @female"},
		{"0.5-1.5 mg/dL (Male), 0.4-1.2 mg/dL (Female)", "0.5-1.5 @male [mg/dL] | 0.4-1.2 @female [mg/dL]"},
		{"男/女：0-40", "0-40"},
		{"0-40 (男、女)", "0-40"},
		// Not a sex.
		{"18.5-23.9 kg/m2", "18.5-23.9 [kg/m2]"},
		{"0-5 mmol/L", "0-5 [mmol/L]"},
		// Ages and conditions.
		{"男(20-79岁) 57-111；女(20-79岁) 41-81", "57-111 @male ^20-79岁 | 41-81 @female ^20-79岁"},
		{"成人 3.9-6.1；儿童 3.3-5.5", "3.9-6.1 #成人 | 3.3-5.5 #儿童"},
		{"卵泡期 3.5-12.5 黄体期 1.7-7.7", "3.5-12.5 #卵泡期 | 1.7-7.7 #黄体期"},
		{"非孕期 <5; 孕早期 5-50", "<5 #非孕期 | 5-50 #孕早期"},
		{"成人：男 40-50 女 35-45", "40-50 @male #成人 | 35-45 @female #成人"},
		{"男：成人 40-50 儿童 30-40；女：成人 35-45", "40-50 @male #成人 | 30-40 @male #儿童 | 35-45 @female #成人"},
		{"Adult 40-50; Child (<14 years) 30-40", "40-50 #Adult | 30-40 #Child ^<14 years"},
		{"3.9-6.1 (成人) 3.3-5.5 (儿童)", "3.9-6.1 #成人 | 3.3-5.5 #儿童"},
		{"男 130-175\n女 115-150\n儿童 110-160", "130-175 @male | 115-150 @female | 110-160 #儿童"},
		{"男（20-79岁）：57-111 女（20-79岁）：41-81", "57-111 @male ^20-79岁 | 41-81 @female ^20-79岁"},
		{"<50岁: 0-15; ≥50岁: 0-20", "0-15 ^<50岁 | 0-20 ^≥50岁"},
		{"妊娠早期 0.1-2.0; 妊娠中期 0.2-3.0", "0.1-2.0 #妊娠早期 | 0.2-3.0 #妊娠中期"},
		{"Male: 13.5-17.5 g/dL\nFemale: 12.0-15.5 g/dL", "13.5-17.5 @male [g/dL] | 12.0-15.5 @female [g/dL]"},
		{"0-15 mm/h (男) 0-20 mm/h (女)", "0-15 @male [mm/h] | 0-20 @female [mm/h]"},
		{"M130-175 F115-150", "130-175 @male | 115-150 @female"},
		{"男性130-175女性115-150", "130-175 @male | 115-150 @female"},
		{"男≤40 女≤35", "≤40 @male | ≤35 @female"},
		{"Pregnant (1st trimester): 5-50", "!"},
		{"Non-pregnant <5 mIU/mL", "<5 #Non-pregnant [mIU/mL]"},
		{"57-111 (20-79岁)", "57-111 ^20-79岁"},
		{">60岁 <8.0；<60岁 <6.0", "<8.0 ^>60岁 | <6.0 ^<60岁"},
		// Limits.
		{strings.Repeat("1-2 ", 10), "!"},
		{strings.Repeat("男", 200), "!"},
	} {
		if got := show(l.ReadRange(c.in)); got != c.want {
			t.Errorf("ReadRange(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRangeTables: every word of the vocabulary tables reads as what its table says, so that
// no entry is dead (shadowed by a longer one before it, or folded away before it is consulted).
func TestRangeTables(t *testing.T) {
	l := Default()
	for _, sep := range rangeSeparators {
		if sep == "--" {
			continue // tried only after -, for 3.5--5.5 (TestReadRange)
		}
		if got := show(l.ReadRange("3.5" + sep + "5.5")); got != "3.5-5.5" {
			t.Errorf("separator %q: 3.5%s5.5 reads %q", sep, sep, got)
		}
	}
	for _, c := range rangeComparators {
		in, want := c.word+" 5.2", "≤5.2"
		if c.after {
			in = "5.2" + c.word
		}
		switch {
		case !c.high && c.open:
			want = ">5.2"
		case !c.high:
			want = "≥5.2"
		case c.open:
			want = "<5.2"
		}
		if got := show(l.ReadRange(in)); got != want {
			t.Errorf("comparator %q: %q reads %q, want %q", c.word, in, got, want)
		}
	}
	for _, w := range rangeSexWords {
		if got, want := show(l.ReadRange(w.word+" 1-2")), "1-2 @"+string(w.sex); got != want {
			t.Errorf("sex word %q reads %q, want %q", w.word, got, want)
		}
	}
	for _, w := range rangeConditions {
		if got, want := show(l.ReadRange(w+" 1-2")), "1-2 #"+w; got != want {
			t.Errorf("condition %q reads %q, want %q", w, got, want)
		}
	}
	for _, a := range rangeAges {
		if got, want := show(l.ReadRange("1-2 (<14"+a+")")), "1-2 ^<14"+a; got != want {
			t.Errorf("age word %q reads %q, want %q", a, got, want)
		}
	}
	for _, w := range rangeLabels {
		if got := show(l.ReadRange(w + ": 1-2")); got != "1-2" {
			t.Errorf("label %q reads %q", w, got)
		}
	}
}

// FuzzReadRange: any text reads without panicking into at most maxRangeSpans spans, each with
// a bound; text past maxRangeLen is not read at all.
func FuzzReadRange(f *testing.F) {
	for _, s := range []string{"", " ", "男：130-175；女：115-150", "130-175(M) 115-150(F)", "成人：男 40-50 女 35-45", "<1:100", "4.0×10^9-10.0×10^9/L", "[2.8, 5.2]", "3.5--5.5"} {
		f.Add(s)
	}
	l := Default()
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := l.ReadRange(s)
		if len(r.Spans) > maxRangeSpans || !ok && len(r.Spans) > 0 || len(s) > maxRangeLen && ok {
			t.Fatalf("%q: %d spans, ok %v", s, len(r.Spans), ok)
		}
		for _, sp := range r.Spans {
			if !sp.HasLow && !sp.HasHigh {
				t.Fatalf("%q: a span without bounds", s)
			}
		}
	})
}

// BenchmarkReadRange reads the ranges of a typical report: plain ones, and one per sex.
// go test ./lexicon -run '^$' -bench ReadRange -benchmem -cpu 1
func BenchmarkReadRange(b *testing.B) {
	l := Default()
	var buf [8]schema.RefSpan
	for _, s := range []string{"3.5-9.5", "0.02-0.52", "<5.2", "137-147 mmol/L", "男：130-175；女：115-150", "4.3-5.8(男) 3.8-5.1(女)"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.ReadRangeInto(buf[:0], s)
			}
		})
	}
}

// TestNarrowRange: the range reader folds widths and signs as draft's values are folded (one
// Narrow), the tilde operator too.
func TestNarrowRange(t *testing.T) {
	for _, s := range []string{"３．５∼５．５", "3.5∼5.5", "３.５～５.５"} {
		r, ok := Default().ReadRange(s)
		if !ok || len(r.Spans) != 1 || !r.Spans[0].HasLow || r.Spans[0].Low.String() != "3.5" || !r.Spans[0].HasHigh || r.Spans[0].High.String() != "5.5" {
			t.Errorf("ReadRange(%q) = %+v, %v, want 3.5–5.5", s, r, ok)
		}
	}
}
