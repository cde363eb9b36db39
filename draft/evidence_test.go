package draft

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
)

// evidenceTests are rules about what the report printed beside a value: the abnormality mark
// (printedFlag), the range as printed (refText), results written as objects or as one string,
// and the analyte the row names. in is one item of the reply's indicators list, as in
// indicatorTests.
var evidenceTests = []struct {
	name string
	in   string
	want string
	warn []string
}{
	// Marks after the number.
	{name: "↑ after", in: `{"itemName":"TC","value":"5.86↑","unit":"mmol/L"}`, want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","printedFlag":"high"}`},
	{name: "↓ after a space", in: `{"itemName":"HDL","结果":"0.90 ↓"}`, want: `{"itemName":"HDL","valueNum":0.90,"printedFlag":"low"}`},
	{name: "↑↑ after", in: `{"itemName":"TG","value":"8.2↑↑"}`, want: `{"itemName":"TG","valueNum":8.2,"printedFlag":"high"}`},
	{name: "↓↓ after", in: `{"itemName":"K","value":"2.1↓↓"}`, want: `{"itemName":"K","valueNum":2.1,"printedFlag":"low"}`},
	{name: "HH after", in: `{"itemName":"GLU","value":"25.3 HH"}`, want: `{"itemName":"GLU","valueNum":25.3,"printedFlag":"high"}`},
	{name: "LL unspaced", in: `{"itemName":"PLT","value":"12LL"}`, want: `{"itemName":"PLT","valueNum":12,"printedFlag":"low"}`},
	{name: "H after", in: `{"itemName":"ALT","value":"5.86 H"}`, want: `{"itemName":"ALT","valueNum":5.86,"printedFlag":"high"}`},
	{name: "L after a unit", in: `{"itemName":"HGB","value":"98 g/L L"}`, want: `{"itemName":"HGB","valueNum":98,"unit":"g/L","printedFlag":"low"}`},
	{name: "(H) after", in: `{"itemName":"ALT","value":"5.86 (H)"}`, want: `{"itemName":"ALT","valueNum":5.86,"printedFlag":"high"}`},
	{name: "(↑) unspaced", in: `{"itemName":"CRE","value":"1.92(↑)"}`, want: `{"itemName":"CRE","valueNum":1.92,"printedFlag":"high"}`},
	{name: "（高） full-width", in: `{"itemName":"UA","value":"356（高）"}`, want: `{"itemName":"UA","valueNum":356,"printedFlag":"high"}`},
	{name: "[L] after", in: `{"itemName":"ALB","value":"32.1 [L]"}`, want: `{"itemName":"ALB","valueNum":32.1,"printedFlag":"low"}`},
	{name: "【↓】 after", in: `{"itemName":"ALB","value":"32.1【↓】"}`, want: `{"itemName":"ALB","valueNum":32.1,"printedFlag":"low"}`},
	{name: "* after", in: `{"itemName":"LDL-C","value":"3.75*"}`, want: `{"itemName":"LDL-C","valueNum":3.75,"printedFlag":"abnormal"}`},
	{name: "! after", in: `{"itemName":"CK","value":"520!"}`, want: `{"itemName":"CK","valueNum":520,"printedFlag":"abnormal"}`},
	{name: "偏高 after", in: `{"itemName":"TC","value":"6.1偏高"}`, want: `{"itemName":"TC","valueNum":6.1,"printedFlag":"high"}`},
	{name: "偏低 after a space", in: `{"itemName":"HDL","value":"0.8 偏低"}`, want: `{"itemName":"HDL","valueNum":0.8,"printedFlag":"low"}`},
	{name: "(偏高) in brackets", in: `{"itemName":"TC","value":"6.1 (偏高)"}`, want: `{"itemName":"TC","valueNum":6.1,"printedFlag":"high"}`},
	{name: "↑ and * agree on high", in: `{"itemName":"TC","value":"6.1↑*"}`, want: `{"itemName":"TC","valueNum":6.1,"printedFlag":"high"}`},
	{name: "↑ between number and unit", in: `{"itemName":"TC","value":"5.86↑ mmol/L"}`, want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","printedFlag":"high"}`},
	{name: "H between number and unit", in: `{"itemName":"TC","value":"5.86 H mmol/L"}`, want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","printedFlag":"high"}`},
	{name: "(L) after a unit", in: `{"itemName":"HGB","value":"98g/L(L)"}`, want: `{"itemName":"HGB","valueNum":98,"unit":"g/L","printedFlag":"low"}`},
	{name: "full-width ↑ and digits", in: `{"itemName":"TC","value":"６．２０↑"}`, want: `{"itemName":"TC","valueNum":6.20,"printedFlag":"high"}`},

	{name: "a mark and a range in brackets", in: `{"itemName":"K","value":"2.1 ↓ (3.5-5.3)"}`,
		want: `{"itemName":"K","valueNum":2.1,"printedFlag":"low","refText":"3.5-5.3","refLow":3.5,"refHigh":5.3}`},
	{name: "HH glued to a unit is not a mark", in: `{"itemName":"x","value":"5 mmol/LHH"}`, want: `{"itemName":"x","valueNum":5,"unit":"mmol/LHH"}`},

	// Marks before the number.
	{name: "↑ before", in: `{"itemName":"TC","value":"↑5.86"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},
	{name: "↓ before a space", in: `{"itemName":"HDL","value":"↓ 0.90"}`, want: `{"itemName":"HDL","valueNum":0.90,"printedFlag":"low"}`},
	{name: "H before", in: `{"itemName":"ALT","value":"H 82.3"}`, want: `{"itemName":"ALT","valueNum":82.3,"printedFlag":"high"}`},
	{name: "L before, unspaced", in: `{"itemName":"HGB","value":"L98","unit":"g/L"}`, want: `{"itemName":"HGB","valueNum":98,"unit":"g/L","printedFlag":"low"}`},
	{name: "(H) before", in: `{"itemName":"ALT","value":"(H) 82.3 U/L"}`, want: `{"itemName":"ALT","valueNum":82.3,"unit":"U/L","printedFlag":"high"}`},
	{name: "* before", in: `{"itemName":"ALT","value":"*82.3"}`, want: `{"itemName":"ALT","valueNum":82.3,"printedFlag":"abnormal"}`},
	{name: "↓ before a negative number", in: `{"itemName":"BE","value":"↓-4.2"}`, want: `{"itemName":"BE","valueNum":-4.2,"printedFlag":"low"}`},

	// Marks in valueText beside a number, and in flag columns.
	{name: "↑ in valueText beside valueNum", in: `{"itemName":"TC","valueNum":5.86,"valueText":"↑"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},
	{name: "偏低 in valueText beside valueNum", in: `{"itemName":"HDL","valueNum":0.96,"valueText":"偏低"}`, want: `{"itemName":"HDL","valueNum":0.96,"printedFlag":"low"}`},
	{name: "a mark in valueNum beside a number in value", in: `{"itemName":"TC","valueNum":"↑","value":"5.86"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},
	{name: "a word in valueNum alone stays text", in: `{"itemName":"尿酮体","valueNum":"偏高"}`, want: `{"itemName":"尿酮体","valueText":"偏高"}`},
	{name: "another number in valueText keeps its mark in the text", in: `{"itemName":"TC","valueNum":5.86,"valueText":"6.0↑"}`, want: `{"itemName":"TC","valueNum":5.86,"valueText":"6.0↑"}`},
	{name: "the same number twice, the mark in the text", in: `{"itemName":"TC","valueNum":5.86,"valueText":"5.86↑"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},
	{name: "a word result alone stays text", in: `{"itemName":"尿酮体","valueText":"高"}`, want: `{"itemName":"尿酮体","valueText":"高"}`},
	{name: "flag H", in: `{"itemName":"ALT","valueNum":82.3,"flag":"H"}`, want: `{"itemName":"ALT","valueNum":82.3,"printedFlag":"high"}`},
	{name: "flag ↓", in: `{"itemName":"HGB","result":"98","flag":"↓"}`, want: `{"itemName":"HGB","valueNum":98,"printedFlag":"low"}`},
	{name: "提示 偏高", in: `{"项目":"尿酸","结果":"452","提示":"偏高"}`, want: `{"itemName":"尿酸","valueNum":452,"printedFlag":"high"}`},
	{name: "标志 ↑", in: `{"项目名称":"甘油三酯","检验结果":2.31,"标志":"↑"}`, want: `{"itemName":"甘油三酯","valueNum":2.31,"printedFlag":"high"}`},
	{name: "异常标志 L", in: `{"项目":"白蛋白","结果":"32","异常标志":"L"}`, want: `{"itemName":"白蛋白","valueNum":32,"printedFlag":"low"}`},
	{name: "abnormal true", in: `{"name":"HBsAg","value":"阳性","abnormal":true}`, want: `{"itemName":"HBsAg","valueText":"阳性","printedFlag":"abnormal"}`},
	{name: "abnormal false", in: `{"name":"ALT","value":20,"abnormal":false}`, want: `{"itemName":"ALT","valueNum":20}`},
	{name: "H/L column", in: `{"test":"K","result":3.1,"H/L":"L"}`, want: `{"itemName":"K","valueNum":3.1,"printedFlag":"low"}`},
	{name: "状态 正常", in: `{"项目":"钠","结果":"141","状态":"正常"}`, want: `{"itemName":"钠","valueNum":141}`},
	{name: "flag N", in: `{"itemName":"Na","valueNum":141,"flag":"N"}`, want: `{"itemName":"Na","valueNum":141}`},
	{name: "flag the contract's word", in: `{"itemName":"TC","valueNum":6.2,"printedFlag":"high"}`, want: `{"itemName":"TC","valueNum":6.2,"printedFlag":"high"}`},
	{name: "printedFlag Low in capitals", in: `{"itemName":"HDL","valueNum":0.8,"printedFlag":"Low"}`, want: `{"itemName":"HDL","valueNum":0.8,"printedFlag":"low"}`},
	{name: "flag 阳性 in a flag column", in: `{"itemName":"抗HCV","valueText":"1.20 S/CO","flag":"阳性"}`, want: `{"itemName":"抗HCV","valueNum":1.20,"unit":"S/CO","printedFlag":"abnormal"}`},
	{name: "flag (H) in a flag column", in: `{"itemName":"ALT","valueNum":82,"flag":"(H)"}`, want: `{"itemName":"ALT","valueNum":82,"printedFlag":"high"}`},
	{name: "Flag HIGH in capitals", in: `{"Test":"ALT","Result":"82","Units":"U/L","Flag":"HIGH"}`, want: `{"itemName":"ALT","valueNum":82,"unit":"U/L","printedFlag":"high"}`},
	{name: "abnormal_flag A", in: `{"test_name":"Urine Glucose","result":"Positive","abnormal_flag":"A"}`, want: `{"itemName":"Urine Glucose","valueText":"Positive","printedFlag":"abnormal"}`},
	{name: "abnormal 是", in: `{"项目":"尿隐血","结果":"2+","abnormal":"是"}`, want: `{"itemName":"尿隐血","valueText":"2+","printedFlag":"abnormal"}`},
	{name: "abnormal 否", in: `{"项目":"尿隐血","结果":"阴性","abnormal":"否"}`, want: `{"itemName":"尿隐血","valueText":"阴性"}`},
	{name: "a flag column of marks", in: `{"itemName":"TG","valueNum":8.2,"flag":"↑↑"}`, want: `{"itemName":"TG","valueNum":8.2,"printedFlag":"high"}`},
	{name: "a Traditional flag column word", in: `{"itemName":"B型肝炎表面抗原","value":"12.5","flag":"陽性"}`, want: `{"itemName":"B型肝炎表面抗原","valueNum":12.5,"printedFlag":"abnormal"}`},
	{name: "異常 after a number", in: `{"itemName":"x","value":"12.5 異常"}`, want: `{"itemName":"x","valueNum":12.5,"printedFlag":"abnormal"}`},
	{name: "flag null", in: `{"itemName":"ALT","valueNum":20,"flag":null}`, want: `{"itemName":"ALT","valueNum":20}`},
	{name: "the flag column wins over the value's mark", in: `{"itemName":"ALT","value":"82*","flag":"H"}`, want: `{"itemName":"ALT","valueNum":82,"printedFlag":"high"}`},
	{name: "a flag column that says nothing keeps the value's mark", in: `{"itemName":"ALT","value":"82↑","flag":""}`, want: `{"itemName":"ALT","valueNum":82,"printedFlag":"high"}`},
	{name: "a remark in a report's flag column is no flag, and no warning", in: `{"itemName":"ALT","valueNum":82,"提示":"正常，无需复查"}`, want: `{"itemName":"ALT","valueNum":82}`},
	{name: "a number in a flag column is not a flag", in: `{"itemName":"ALT","valueNum":82,"flag":1}`, want: `{"itemName":"ALT","valueNum":82}`},
	{name: "printedFlag that is not a mark is null, warned", in: `{"itemName":"ALT","valueNum":82,"printedFlag":"see note"}`, want: `{"itemName":"ALT","valueNum":82}`,
		warn: []string{"invalid_value@indicators[0].printedFlag"}},
	{name: "printedFlag a number is null, warned", in: `{"itemName":"ALT","valueNum":82,"printedFlag":2}`, want: `{"itemName":"ALT","valueNum":82}`,
		warn: []string{"invalid_value@indicators[0].printedFlag"}},

	// Not marks: qualitative results and units stay as printed.
	{name: "阳性(+) is the result", in: `{"itemName":"尿糖","value":"阳性(+)"}`, want: `{"itemName":"尿糖","valueText":"阳性(+)"}`},
	{name: "+ is the result", in: `{"itemName":"尿蛋白","value":"+"}`, want: `{"itemName":"尿蛋白","valueText":"+"}`},
	{name: "2+ is the result", in: `{"itemName":"尿蛋白","value":"2+"}`, want: `{"itemName":"尿蛋白","valueText":"2+"}`},
	{name: "阴性(-) is the result", in: `{"itemName":"尿酮体","value":"阴性(-)"}`, want: `{"itemName":"尿酮体","valueText":"阴性(-)"}`},
	{name: "<0.5 stays text", in: `{"itemName":"CRP","value":"<0.5"}`, want: `{"itemName":"CRP","valueText":"<0.5"}`},
	{name: "mmol/L keeps its L", in: `{"itemName":"GLU","value":"5.6mmol/L"}`, want: `{"itemName":"GLU","valueNum":5.6,"unit":"mmol/L"}`},
	{name: "L/min is a unit", in: `{"itemName":"流量","value":"5 L/min"}`, want: `{"itemName":"流量","valueNum":5,"unit":"L/min"}`},
	{name: "*10^9/L is a unit", in: `{"itemName":"WBC","value":"6.5*10^9/L"}`, want: `{"itemName":"WBC","valueNum":6.5,"unit":"*10^9/L"}`},
	{name: "H2O is text, not H and a number", in: `{"itemName":"x","value":"H2O"}`, want: `{"itemName":"x","valueText":"H2O"}`},
	{name: "L5 with a unit glued is text", in: `{"itemName":"x","value":"L5/S1"}`, want: `{"itemName":"x","valueText":"L5/S1"}`},
	{name: "a mark after the range", in: `{"itemName":"TC","value":"5.86 mmol/L (3.1-5.2) ↑"}`,
		want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","printedFlag":"high","refText":"3.1-5.2","refLow":3.1,"refHigh":5.2}`},
	{name: "a mark and a range after a label", in: `{"itemName":"ALT","结果":"H 82 U/L 参考范围: 9-50"}`,
		want: `{"itemName":"ALT","valueNum":82,"unit":"U/L","printedFlag":"high","refText":"9-50","refLow":9,"refHigh":50}`},
	{name: "HBsAg is a name, not H", in: `{"itemName":"x","value":"HBsAg"}`, want: `{"itemName":"x","valueText":"HBsAg"}`},
	{name: "a mark alone is no number: the text as printed", in: `{"itemName":"x","value":"↑"}`, want: `{"itemName":"x","valueText":"↑"}`},

	// Ranges as printed: refText, and the bounds code splits from it.
	{name: "refText is the range as written", in: `{"itemName":"GLU","refRange":"3.9-6.1"}`, want: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "refText keeps full-width forms", in: `{"itemName":"GLU","参考范围":"３．９～６．１"}`, want: `{"itemName":"GLU","refText":"３．９～６．１","refLow":3.9,"refHigh":6.1}`},
	{name: "in brackets", in: `{"itemName":"GLU","refRange":"(3.9-6.1)"}`, want: `{"itemName":"GLU","refText":"(3.9-6.1)","refLow":3.9,"refHigh":6.1}`},
	{name: "in full-width brackets", in: `{"itemName":"CRE","参考值":"（0.56-1.70）"}`, want: `{"itemName":"CRE","refText":"（0.56-1.70）","refLow":0.56,"refHigh":1.70}`},
	{name: "a list in square brackets", in: `{"itemName":"TC","reference":"[2.8, 5.2]"}`, want: `{"itemName":"TC","refText":"[2.8, 5.2]","refLow":2.8,"refHigh":5.2}`},
	{name: "a list in square brackets, unspaced", in: `{"itemName":"TC","reference":"[2.8,5.2]"}`, want: `{"itemName":"TC","refText":"[2.8,5.2]","refLow":2.8,"refHigh":5.2}`},
	{name: "至 with spaces", in: `{"itemName":"GLU","参考区间":"3.9 至 6.1"}`, want: `{"itemName":"GLU","refText":"3.9 至 6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "到", in: `{"itemName":"WBC","参考范围":"3.1到8.0"}`, want: `{"itemName":"WBC","refText":"3.1到8.0","refLow":3.1,"refHigh":8.0}`},
	{name: "scientific notation", in: `{"itemName":"WBC","refRange":"3.5E+09~9.5E+09"}`, want: `{"itemName":"WBC","refText":"3.5E+09~9.5E+09","refLow":3500000000,"refHigh":9500000000}`},
	{name: "scientific notation, lower case, dashed", in: `{"itemName":"WBC","refRange":"3.5e9-9.5e9"}`, want: `{"itemName":"WBC","refText":"3.5e9-9.5e9","refLow":3500000000,"refHigh":9500000000}`},
	{name: "a power of ten on both bounds", in: `{"itemName":"WBC","valueNum":6.5,"unit":"×10^9/L","refRange":"4.0×10^9-10.0×10^9"}`,
		want: `{"itemName":"WBC","valueNum":6.5,"unit":"×10^9/L","refText":"4.0×10^9-10.0×10^9","refLow":4.0,"refHigh":10.0}`},
	{name: "a power of ten on one bound only is not read", in: `{"itemName":"WBC","refRange":"4.0×10^9-10.0"}`, want: `{"itemName":"WBC","refText":"4.0×10^9-10.0"}`,
		warn: []string{"invalid_value@indicators[0].refLow"}},
	{name: "one-sided", in: `{"itemName":"TC","refRange":"<5.2"}`, want: `{"itemName":"TC","refText":"<5.2","refHigh":5.2}`},
	{name: "qualitative", in: `{"itemName":"尿蛋白","valueText":"阴性","参考值":"阴性(-)"}`, want: `{"itemName":"尿蛋白","valueText":"阴性","refText":"阴性(-)"}`},
	{name: "a titre", in: `{"itemName":"ANA","valueText":"1:320","参考值":"<1:100"}`, want: `{"itemName":"ANA","valueText":"1:320","refText":"<1:100"}`},
	{name: "a label before the range stays in refText", in: `{"itemName":"ALB","refRange":"参考值：40-55"}`, want: `{"itemName":"ALB","refText":"参考值：40-55","refLow":40,"refHigh":55}`},
	{name: "numbers only: no refText", in: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`, want: `{"itemName":"GLU","refText":null,"refLow":3.9,"refHigh":6.1}`},
	{name: "numeric strings only: no refText", in: `{"itemName":"GLU","refLow":"3.90","refHigh":"6.10"}`, want: `{"itemName":"GLU","refText":null,"refLow":3.90,"refHigh":6.10}`},
	{name: "a range in refLow is the printed range", in: `{"itemName":"GLU","refLow":"3.9-6.1"}`, want: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "the printed range's bounds beat the model's split", in: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.6,"refHigh":6.1}`,
		want: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "an unreadable printed range leaves the model's bounds", in: `{"itemName":"GLU","refText":"见说明 3.9","refLow":3.9,"refHigh":6.1}`,
		want: `{"itemName":"GLU","refText":"见说明 3.9","refLow":3.9,"refHigh":6.1}`},
	{name: "an unreadable range alone is warned", in: `{"itemName":"GLU","refText":"3.9 or 6.1"}`, want: `{"itemName":"GLU","refText":"3.9 or 6.1"}`,
		warn: []string{"invalid_value@indicators[0].refLow"}},

	{name: "a null refText does not hide a range under another key", in: `{"itemName":"GLU","refText":null,"参考范围":"3.9-6.1"}`,
		want: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "a null unit does not hide a unit under another key", in: `{"itemName":"GLU","单位":"mmol/L","unit":null}`, want: `{"itemName":"GLU","unit":"mmol/L"}`},

	// Ranges by sex: refText kept, no bounds picked.
	{name: "男 and 女", in: `{"itemName":"HGB","valueNum":135,"unit":"g/L","参考范围":"男：130-175；女：115-150"}`,
		want: `{"itemName":"HGB","valueNum":135,"unit":"g/L","refText":"男：130-175；女：115-150"}`},
	{name: "男性 and 女性, the model's split is not taken", in: `{"itemName":"HCT","refText":"男性 40-50 女性 35-45","refLow":40,"refHigh":50}`,
		want: `{"itemName":"HCT","refText":"男性 40-50 女性 35-45"}`},
	{name: "Male and Female", in: `{"test_name":"Creatinine","result":"88","reference_range":"Male: 59-104; Female: 45-84"}`,
		want: `{"itemName":"Creatinine","valueNum":88,"refText":"Male: 59-104; Female: 45-84"}`},
	{name: "M and F", in: `{"name":"UA","value":"390","range":"M: 208-428 F: 155-357"}`,
		want: `{"itemName":"UA","valueNum":390,"refText":"M: 208-428 F: 155-357"}`},
	{name: "a range per phase", in: `{"itemName":"FSH","valueNum":6.2,"unit":"IU/L","参考范围":"卵泡期 3.5-12.5 排卵期 4.7-21.5 黄体期 1.7-7.7 绝经期 25.8-134.8"}`,
		want: `{"itemName":"FSH","valueNum":6.2,"unit":"IU/L","refText":"卵泡期 3.5-12.5 排卵期 4.7-21.5 黄体期 1.7-7.7 绝经期 25.8-134.8"}`},
	{name: "a range per age", in: `{"itemName":"ALP","refRange":"成人：45-125；儿童：<500"}`, want: `{"itemName":"ALP","refText":"成人：45-125；儿童：<500"}`},
	{name: "a range per age, in English", in: `{"itemName":"ALP","refRange":"Adult 45-125, Child <500"}`, want: `{"itemName":"ALP","refText":"Adult 45-125, Child <500"}`},
	{name: "one labelled range is not read at a guess: the checks decide", in: `{"itemName":"GLU","refRange":"空腹 3.9-6.1"}`, want: `{"itemName":"GLU","refText":"空腹 3.9-6.1"}`},
	{name: "the sex in brackets after each range", in: `{"itemName":"HGB","refRange":"130-175(M) 115-150(F)","refLow":130,"refHigh":175}`, want: `{"itemName":"HGB","refText":"130-175(M) 115-150(F)"}`},
	{name: "a plain range beside one per sex in refLow: the printed range's bounds", in: `{"itemName":"GLU","refRange":"3.9-6.1","refLow":"男：3.9-6.1；女：3.5-5.5"}`,
		want: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "males and females in words", in: `{"itemName":"CK","refRange":"Males 30-500; Females 15-200"}`, want: `{"itemName":"CK","refText":"Males 30-500; Females 15-200"}`},
	{name: "Men and Women", in: `{"test":"Ferritin","result":"120","reference_range":"Men: 30-400; Women: 13-150"}`,
		want: `{"itemName":"Ferritin","valueNum":120,"refText":"Men: 30-400; Women: 13-150"}`},
	{name: "the sex after each range", in: `{"itemName":"RBC","refRange":"4.3-5.8(男) 3.8-5.1(女)"}`, want: `{"itemName":"RBC","refText":"4.3-5.8(男) 3.8-5.1(女)"}`},
	{name: "one sex only", in: `{"itemName":"HGB","参考范围":"男 130-175"}`, want: `{"itemName":"HGB","refText":"男 130-175"}`},

	// Ranges as objects and lists.
	{name: "low and high", in: `{"itemName":"GLU","range":{"low":3.9,"high":6.1}}`, want: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "min and max as strings", in: `{"itemName":"GLU","referenceRange":{"min":"3.90","max":"6.10"}}`, want: `{"itemName":"GLU","refText":"3.90-6.10","refLow":3.90,"refHigh":6.10}`},
	{name: "lower and upper with a unit", in: `{"itemName":"Na","reference_range":{"lower":137,"upper":147,"unit":"mmol/L"}}`,
		want: `{"itemName":"Na","unit":"mmol/L","refText":"137-147","refLow":137,"refHigh":147}`},
	{name: "下限 and 上限", in: `{"项目":"钾","结果":"4.1","参考范围":{"下限":3.5,"上限":5.3}}`, want: `{"itemName":"钾","valueNum":4.1,"refText":"3.5-5.3","refLow":3.5,"refHigh":5.3}`},
	{name: "a high bound only", in: `{"itemName":"TC","range":{"low":null,"high":5.2}}`, want: `{"itemName":"TC","refText":"≤5.2","refHigh":5.2}`},
	{name: "a range object with its text", in: `{"itemName":"TC","range":{"text":"<5.2","high":5.2}}`, want: `{"itemName":"TC","refText":"≤5.2","refHigh":5.2}`},
	{name: "a two-number list", in: `{"itemName":"GLU","refRange":[3.9,6.1]}`, want: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "a two-string list", in: `{"itemName":"GLU","refRange":["3.9","6.1"]}`, want: `{"itemName":"GLU","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "a list with a null", in: `{"itemName":"HDL","refRange":[1.04,null]}`, want: `{"itemName":"HDL","refText":"≥1.04","refLow":1.04}`},
	{name: "an object of no bounds is not a range", in: `{"itemName":"GLU","range":{"a":1}}`, want: `{"itemName":"GLU"}`,
		warn: []string{"invalid_value@indicators[0].refLow"}},

	// Results written as objects.
	{name: "value and unit", in: `{"itemName":"TC","result":{"value":5.86,"unit":"mmol/L"}}`, want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L"}`},
	{name: "value, unit, flag and range", in: `{"name":"ALT","value":{"value":"82","unit":"U/L","flag":"H","range":{"min":9,"max":50}}}`,
		want: `{"itemName":"ALT","valueNum":82,"unit":"U/L","printedFlag":"high","refText":"9-50","refLow":9,"refHigh":50}`},
	{name: "数值 and 单位", in: `{"项目":"血糖","结果":{"数值":"6.8↑","单位":"mmol/L","参考范围":"3.9-6.1"}}`,
		want: `{"itemName":"血糖","valueNum":6.8,"unit":"mmol/L","printedFlag":"high","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "the item's own unit wins over the object's", in: `{"itemName":"TC","unit":"mmol/L","result":{"value":5.86,"unit":"mg/dL"}}`,
		want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L"}`},
	{name: "a text result in an object", in: `{"itemName":"尿蛋白","result":{"valueText":"阴性(-)"}}`, want: `{"itemName":"尿蛋白","valueText":"阴性(-)"}`},

	// One string holding value, unit and range.
	{name: "range in brackets", in: `{"itemName":"TC","value":"5.86 mmol/L (3.1-5.2)"}`,
		want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","refText":"3.1-5.2","refLow":3.1,"refHigh":5.2}`},
	{name: "参考 label", in: `{"itemName":"TC","结果":"5.86 mmol/L 参考 3.1-5.2"}`,
		want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","refText":"3.1-5.2","refLow":3.1,"refHigh":5.2}`},
	{name: "参考值： label", in: `{"itemName":"ALT","结果":"82 U/L 参考值：9-50"}`,
		want: `{"itemName":"ALT","valueNum":82,"unit":"U/L","refText":"9-50","refLow":9,"refHigh":50}`},
	{name: "a mark and a range", in: `{"itemName":"TC","value":"5.86↑ mmol/L (3.1-5.2)"}`,
		want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","printedFlag":"high","refText":"3.1-5.2","refLow":3.1,"refHigh":5.2}`},
	{name: "ref: in English", in: `{"test":"Glucose","result":"6.8 mmol/L (ref: 3.9-6.1)"}`,
		want: `{"itemName":"Glucose","valueNum":6.8,"unit":"mmol/L","refText":"3.9-6.1","refLow":3.9,"refHigh":6.1}`},
	{name: "a bare range after the unit", in: `{"itemName":"Na","value":"141 mmol/L 137-147"}`,
		want: `{"itemName":"Na","valueNum":141,"unit":"mmol/L","refText":"137-147","refLow":137,"refHigh":147}`},
	{name: "a one-sided range in brackets", in: `{"itemName":"CEA","value":"2.1 ng/mL (<5.0)"}`,
		want: `{"itemName":"CEA","valueNum":2.1,"unit":"ng/mL","refText":"<5.0","refHigh":5.0}`},
	{name: "a range key beats the range in the string", in: `{"itemName":"TC","value":"5.86 mmol/L (3.1-5.2)","refRange":"<5.2"}`,
		want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","refText":"<5.2","refHigh":5.2}`},
	{name: "a number and a range with no unit stay text", in: `{"itemName":"x","value":"5 3-5"}`, want: `{"itemName":"x","valueText":"5 3-5"}`},
	{name: "a range as the result stays text", in: `{"itemName":"红细胞","value":"0-2"}`, want: `{"itemName":"红细胞","valueText":"0-2"}`},

	// The analyte the row names, from the lexicon; null when the name is unknown.
	{name: "analyte from a Chinese name", in: `{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.2,"unit":"mmol/L"}`,
		want: `{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.2,"unit":"mmol/L","analyte":"total_cholesterol"}`},
	{name: "analyte from an abbreviation in brackets", in: `{"itemName":"丙氨酸氨基转移酶(ALT)","valueNum":20,"unit":"U/L"}`,
		want: `{"itemName":"丙氨酸氨基转移酶(ALT)","valueNum":20,"unit":"U/L","analyte":"alt"}`},
	{name: "no analyte for an unknown name", in: `{"itemName":"ZZ独特指标","valueNum":1}`, want: `{"itemName":"ZZ独特指标","valueNum":1,"analyte":null}`},
}

func TestRuleEvidence(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range evidenceTests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"indicators":[` + tt.in + `]}`
			res := b.Build(decodeValue(t, in))
			want := `{"indicators":[]}`
			if tt.want != "" {
				want = `{"indicators":[` + tt.want + `]}`
			}
			checkResult(t, in, res, want, tt.warn)
		})
	}
}

// TestWarningParams: a warning names its page and the facts its message speaks of, numbers as
// printed.
func TestWarningParams(t *testing.T) {
	b := New(lexicon.Default())
	res := b.Build(decodeValue(t, `{"checkupDate":"2026-02-30","indicators":[
		{"itemName":"GLU","refLow":6.10,"refHigh":3.9},
		{"itemName":"TC","value":"98 mg/dL","unit":"mmol/L"},
		{"itemName":"ALT","valueNum":"abc"}]}`))
	want := map[string]map[string]string{
		"checkupDate":             {"value": "2026-02-30"},
		"indicators[0].refLow":    {"itemName": "GLU", "refLow": "6.10", "refHigh": "3.9"},
		"indicators[1].valueNum":  {"itemName": "TC", "value": "98 mg/dL", "valueUnit": "mg/dL", "unit": "mmol/L"},
		"indicators[2].valueText": nil,
	}
	seen := 0
	for _, w := range res.Warnings {
		if w.Page == nil || *w.Page != 1 {
			t.Errorf("%s: page %v, want 1", w.Code, w.Page)
		}
		p, ok := want[*w.Path]
		if !ok || p == nil {
			continue
		}
		seen++
		for k, v := range p {
			if w.Params[k] != v {
				t.Errorf("%s %s: params[%s] = %q, want %q (all %v)", w.Code, *w.Path, k, w.Params[k], v, w.Params)
			}
		}
	}
	if seen != 3 {
		t.Errorf("saw %d of the 3 warnings: %s", seen, warningDump(res.Warnings))
	}
	if !strings.Contains(warningDump(res.Warnings), "valueNum") {
		t.Errorf("no warning about the unreadable valueNum: %s", warningDump(res.Warnings))
	}
}

// FuzzEvidence: whatever a value or range string holds, reading it never panics, a number read
// from it is written in it (never guessed), and the draft rebuilds unchanged.
func FuzzEvidence(f *testing.F) {
	for _, tt := range evidenceTests {
		f.Add(tt.in)
	}
	for _, s := range []string{"↑5.86", "5.86 (H)", "356（高）", "H 82.3", "5.86 mmol/L (3.1-5.2) ↑", "男：40-50；女：35-45", "[2.8, 5.2]", "4.0×10^9-10.0×10^9", "((((H))))", "↑↑↑↑↑↑", "H H H 1"} {
		f.Add(s)
	}
	b := New(lexicon.Default())
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // the JSON decoder has mended it before a draft sees it
		}
		in := parse.Value{Kind: parse.Object, Members: []parse.Member{{Key: "indicators", Value: parse.Value{Kind: parse.Array, Elems: []parse.Value{
			{Kind: parse.Object, Members: []parse.Member{
				{Key: "itemName", Value: parse.Value{Kind: parse.String, Text: "x"}},
				{Key: "value", Value: parse.Value{Kind: parse.String, Text: s}},
				{Key: "flag", Value: parse.Value{Kind: parse.String, Text: s}},
			}}}}}}}
		res := b.Build(in)
		for _, ind := range res.Draft.Indicators {
			if ind.ValueNum != nil && !strings.ContainsAny(s, "eE") {
				digits := strings.TrimLeft(strings.TrimPrefix(ind.ValueNum.String(), "-"), "0.")
				if !strings.Contains(strings.ReplaceAll(lexicon.Narrow(s), ",", ""), digits) {
					t.Fatalf("%q read as %s: a number not written in it", s, ind.ValueNum)
				}
			}
		}
		draftJSON := mustJSON(res.Draft)
		v, err := parse.Decode(draftJSON)
		if err != nil {
			t.Fatal(err)
		}
		if again := mustJSON(b.build(v, confirmedRows{}, false).Draft); again != draftJSON {
			t.Fatalf("rebuilding changed the draft:\n%s\n%s", draftJSON, again)
		}
	})
}

// TestRangeReading: the row keeps the lexicon's reading of its range, and a reading that is
// not plain gives no bounds and no warning here: which span applies is the checks' to say.
func TestRangeReading(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range []struct{ in, spans string }{
		{`"refRange":"3.9-6.1 mmol/L"`, "3.9-6.1//"},
		{`"refRange":"男性 130-175"`, "130-175/male/"},
		{`"value":"140 g/L (男 130-175 女 115-150)"`, "130-175/male/ 115-150/female/"},
		{`"refRange":"成人：45-125；儿童：<500"`, "45-125//成人 -500//儿童"},
	} {
		res := b.Build(decodeValue(t, `{"indicators":[{"itemName":"x",`+tt.in+`}]}`))
		ind := res.Draft.Indicators[0]
		var got []string
		if ind.Range != nil {
			for _, sp := range ind.Range.Spans {
				lo, hi := "", ""
				if sp.HasLow {
					lo = sp.Low.String()
				}
				if sp.HasHigh {
					hi = sp.High.String()
				}
				got = append(got, lo+"-"+hi+"/"+string(sp.Sex)+"/"+sp.Cond)
			}
		}
		if g := strings.Join(got, " "); g != tt.spans {
			t.Errorf("%s: spans %q, want %q", tt.in, g, tt.spans)
		}
		if len(ind.Range.Spans) > 1 || ind.Range.Spans[0].Sex != "" {
			if ind.RefLow != nil || ind.RefHigh != nil || len(res.Warnings) != 0 {
				t.Errorf("%s: bounds %v–%v, warnings %v: the reader decided", tt.in, ind.RefLow, ind.RefHigh, res.Warnings)
			}
		}
	}
}
