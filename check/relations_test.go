package check

import (
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// relCase is a draft for one relation: a misread it must warn about (want: the rows warned, by
// index, each with params.relation naming it; other rules may warn too) or a near miss that
// must get no warning at all (want nil).
type relCase struct {
	name string
	ctx  Context
	rows []schema.OcrIndicator
	want []int
	// reason, when set, is the reason of the first inconsistent_values warning.
	reason string
}

var bg, ur = group("血气分析"), group("尿常规")

// relCases holds, for every relation of the lexicon, at least one misread and one near miss
// (TestEveryRelation fails a relation without both).
var relCases = map[string][]relCase{
	"hdl_in_tc": {
		{name: "HDL-C above TC: which one cannot be told", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.8", "", ""), in("HDL-C", "mmol/L", "6.1", "", "")}, want: []int{0, 1}},
		{name: "HDL-C 5.4 far out of its range beside a TC within its own", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "4.8", "3.1", "5.2"), in("高密度脂蛋白胆固醇", "mmol/L", "5.4", "1.04", "1.55")}, want: []int{1}, reason: "part"},
		{name: "near: HDL-C 1.3", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.8", "", ""), in("HDL-C", "mmol/L", "1.3", "", "")}},
	},
	"ldl_in_tc": {
		{name: "LDL-C above TC", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "4.50", "", ""), in("低密度脂蛋白胆固醇", "mmol/L", "5.90", "", "")}, want: []int{0, 1}},
		{name: "near: LDL-C 2.90", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "4.50", "", ""), in("低密度脂蛋白胆固醇", "mmol/L", "2.90", "", "")}},
	},
	"non_hdl_in_tc": {
		{name: "non-HDL-C above TC", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.50", "", ""), in("non-HDL-C", "mmol/L", "5.20", "", "")}, want: []int{0, 1}},
		{name: "near: non-HDL-C 3.20", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.50", "", ""), in("non-HDL-C", "mmol/L", "3.20", "", "")}},
	},
	"vldl_in_tc": {
		{name: "VLDL-C above TC", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.50", "", ""), in("VLDL-C", "mmol/L", "5.10", "", "")}, want: []int{0, 1}},
		{name: "near: VLDL-C 0.51", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.50", "", ""), in("VLDL-C", "mmol/L", "0.51", "", "")}},
	},
	"non_hdl": {
		{name: "non-HDL-C 3.09 for 3.69", rows: []schema.OcrIndicator{in("TC", "mmol/L", "5.01", "", ""), in("HDL-C", "mmol/L", "1.32", "", ""), in("non-HDL-C", "mmol/L", "3.09", "", "")}, want: []int{0, 1, 2}, reason: "formula"},
		{name: "near: 3.69", rows: []schema.OcrIndicator{in("TC", "mmol/L", "5.01", "", ""), in("HDL-C", "mmol/L", "1.32", "", ""), in("non-HDL-C", "mmol/L", "3.69", "", "")}},
	},
	"friedewald": {
		{name: "calculated LDL-C 1.20 for 3.22", rows: []schema.OcrIndicator{in("TC", "mmol/L", "5.20", "", ""), in("HDL-C", "mmol/L", "1.30", "", ""), in("TG", "mmol/L", "1.50", "", ""), in("LDL-C (calculated)", "mmol/L", "1.20", "", "")}, want: []int{0, 1, 2, 3}},
		{name: "calculated LDL-C in mg/dL, 74 for 124", rows: []schema.OcrIndicator{in("Cholesterol", "mg/dL", "201", "", ""), in("HDL", "mg/dL", "50", "", ""), in("Triglycerides", "mg/dL", "133", "", ""), in("LDL-C(计算)", "mg/dL", "74", "", "")}, want: []int{0, 1, 2, 3}},
		{name: "near: Friedewald's own, in mg/dL", rows: []schema.OcrIndicator{in("Cholesterol", "mg/dL", "201", "", ""), in("HDL", "mg/dL", "50", "", ""), in("Triglycerides", "mg/dL", "133", "", ""), in("LDL-C(计算)", "mg/dL", "124", "", "")}},
		{name: "near: Martin–Hopkins' in mmol/L, low TG", rows: []schema.OcrIndicator{in("TC", "mmol/L", "5.20", "", ""), in("HDL-C", "mmol/L", "1.30", "", ""), in("TG", "mmol/L", "0.60", "", ""), in("LDL-C (calculated)", "mmol/L", "3.68", "", "")}},
		{name: "near: a measured LDL-C is not the formula", rows: []schema.OcrIndicator{in("TC", "mmol/L", "5.20", "", ""), in("HDL-C", "mmol/L", "1.30", "", ""), in("TG", "mmol/L", "1.50", "", ""), in("LDL-C", "mmol/L", "2.40", "", "")}},
		{name: "near: TG 6.2, where Friedewald does not apply", rows: []schema.OcrIndicator{in("TC", "mmol/L", "7.90", "", ""), in("HDL-C", "mmol/L", "0.80", "", ""), in("TG", "mmol/L", "6.20", "", ""), in("LDL-C (calculated)", "mmol/L", "2.10", "", "")}},
	},
	"dbil_in_tbil": {
		{name: "DBIL above TBIL", rows: []schema.OcrIndicator{in("总胆红素", "μmol/L", "12.0", "", ""), in("直接胆红素", "μmol/L", "18.0", "", "")}, want: []int{0, 1}},
		{name: "near: DBIL 4.0", rows: []schema.OcrIndicator{in("总胆红素", "μmol/L", "12.0", "", ""), in("直接胆红素", "μmol/L", "4.0", "", "")}},
	},
	"ibil_in_tbil": {
		{name: "IBIL above TBIL", rows: []schema.OcrIndicator{in("TBIL", "μmol/L", "12.0", "", ""), in("IBIL", "μmol/L", "15.0", "", "")}, want: []int{0, 1}},
		{name: "near: IBIL 8.0", rows: []schema.OcrIndicator{in("TBIL", "μmol/L", "12.0", "", ""), in("IBIL", "μmol/L", "8.0", "", "")}},
	},
	"ibil": {
		{name: "IBIL 1.1 for 11.1: the decimal point", rows: []schema.OcrIndicator{in("TBIL", "μmol/L", "15.2", "", ""), in("DBIL", "μmol/L", "4.1", "", ""), in("IBIL", "μmol/L", "1.1", "", "")}, want: []int{2}, reason: "decimal"},
		{name: "near: IBIL 11.1", rows: []schema.OcrIndicator{in("TBIL", "μmol/L", "15.2", "", ""), in("DBIL", "μmol/L", "4.1", "", ""), in("IBIL", "μmol/L", "11.1", "", "")}},
	},
	"alb_in_tp": {
		{name: "ALB above TP: 680 is beyond TP's limits", rows: []schema.OcrIndicator{in("TP", "g/L", "68", "", ""), in("ALB", "g/L", "72", "", "")}, want: []int{1}, reason: "decimal"},
		{name: "near: ALB 45", rows: []schema.OcrIndicator{in("TP", "g/L", "68", "", ""), in("ALB", "g/L", "45", "", "")}},
	},
	"glb_in_tp": {
		{name: "GLB above TP: 680 is beyond TP's limits, 7.2 not GLB's", rows: []schema.OcrIndicator{in("TP", "g/L", "68", "", ""), in("GLB", "g/L", "72", "", "")}, want: []int{1}, reason: "decimal"},
		{name: "near: GLB 25", rows: []schema.OcrIndicator{in("TP", "g/L", "68", "", ""), in("GLB", "g/L", "25", "", "")}},
	},
	"globulin": {
		{name: "GLB 6.5 for 65.0", rows: []schema.OcrIndicator{in("总蛋白", "g/L", "95.0", "", ""), in("白蛋白", "g/L", "30.0", "", ""), in("球蛋白", "g/L", "6.5", "", "")}, want: []int{2}, reason: "decimal"},
		{name: "near: myeloma's globulin", rows: []schema.OcrIndicator{in("总蛋白", "g/L", "105.2", "65", "85", flag(schema.FlagHigh)), in("白蛋白", "g/L", "30.1", "40", "55", flag(schema.FlagLow)), in("球蛋白", "g/L", "75.1", "20", "40", flag(schema.FlagHigh))}},
	},
	"ag_ratio": {
		{name: "A/G 1.5 for 2.25", rows: []schema.OcrIndicator{in("白蛋白", "g/L", "45", "", ""), in("球蛋白", "g/L", "20", "", ""), in("白球比", "", "1.5", "", "")}, want: []int{0, 1, 2}},
		{name: "near: myeloma's A/G 0.40", rows: []schema.OcrIndicator{in("白蛋白", "g/L", "30.1", "", ""), in("球蛋白", "g/L", "75.1", "", ""), in("A/G", "", "0.40", "", "")}},
	},
	"de_ritis": {
		{name: "AST/ALT 0.67 for 1.5", rows: []schema.OcrIndicator{in("AST", "U/L", "30", "", ""), in("ALT", "U/L", "20", "", ""), in("AST/ALT", "", "0.67", "", "")}, want: []int{0, 1, 2}},
		{name: "near: 1.50", rows: []schema.OcrIndicator{in("AST", "U/L", "30", "", ""), in("ALT", "U/L", "20", "", ""), in("AST/ALT", "", "1.50", "", "")}},
	},
	"fpsa_in_tpsa": {
		{name: "fPSA above tPSA", rows: []schema.OcrIndicator{in("tPSA", "ng/mL", "1.82", "", ""), in("fPSA", "ng/mL", "4.1", "", "")}, want: []int{0, 1}},
		{name: "near: fPSA 0.41", rows: []schema.OcrIndicator{in("tPSA", "ng/mL", "1.82", "", ""), in("fPSA", "ng/mL", "0.41", "", "")}},
	},
	"fpsa_ratio": {
		{name: "f/t 55 % for 22.5", rows: []schema.OcrIndicator{in("tPSA", "ng/mL", "1.82", "", ""), in("fPSA", "ng/mL", "0.41", "", ""), in("fPSA/tPSA", "%", "55", "", "")}, want: []int{0, 1, 2}},
		{name: "near: 22.5 %", rows: []schema.OcrIndicator{in("tPSA", "ng/mL", "1.82", "", ""), in("fPSA", "ng/mL", "0.41", "", ""), in("fPSA/tPSA", "%", "22.5", "", "")}},
	},
	"apob_apoa1": {
		{name: "ApoB/ApoA1 6.0 for 0.60, the parts within their ranges", rows: []schema.OcrIndicator{in("ApoB", "g/L", "0.90", "0.6", "1.1"), in("ApoA1", "g/L", "1.50", "1.0", "1.6"), in("ApoB/ApoA1", "", "6.0", "", "")}, want: []int{2}, reason: "decimal"},
		{name: "near: 0.60", rows: []schema.OcrIndicator{in("ApoB", "g/L", "0.90", "", ""), in("ApoA1", "g/L", "1.50", "", ""), in("ApoB/ApoA1", "", "0.60", "", "")}},
	},
	"neut_in_wbc":  partCases("NEUT#"),
	"lymph_in_wbc": partCases("LYMPH#"),
	"mono_in_wbc":  partCases("MONO#"),
	"eo_in_wbc":    partCases("EO#"),
	"baso_in_wbc":  partCases("BASO#"),
	"wbc_sum": {
		{name: "LYMPH# 0.21 for 2.09", rows: wbcRows("0.21"), want: []int{2}, reason: "decimal"},
		{name: "near: 2.09", rows: wbcRows("2.09")},
	},
	"differential": {
		{name: "LYMPH% 3.21 for 32.1", rows: diffRows("58.3", "3.21"), want: []int{1}, reason: "decimal"},
		{name: "117 %: which one cannot be told", rows: diffRows("75.0", "30.0"), want: []int{0, 1, 2, 3, 4}, reason: "percent"},
		{name: "near: 100 %", rows: diffRows("58.3", "32.1")},
	},
	"mcv": {
		{name: "MCV 69.6 for 89.6", rows: []schema.OcrIndicator{in("HCT", "%", "44.1", "", ""), in("RBC", "10^12/L", "4.92", "", ""), in("MCV", "fL", "69.6", "", "")}, want: []int{0, 1, 2}},
		{name: "near: 89.6", rows: []schema.OcrIndicator{in("HCT", "%", "44.1", "", ""), in("RBC", "10^12/L", "4.92", "", ""), in("MCV", "fL", "89.6", "", "")}},
	},
	"mch": {
		{name: "MCH 20.0 for 30.0", rows: []schema.OcrIndicator{in("HGB", "g/L", "150", "", ""), in("RBC", "10^12/L", "5.00", "", ""), in("MCH", "pg", "20.0", "", "")}, want: []int{0, 1, 2}},
		{name: "MCH 20.0 beside its range, the report marking values", rows: []schema.OcrIndicator{in("HGB", "g/L", "150", "130", "175"), in("RBC", "10^12/L", "5.00", "4.3", "5.8"), in("MCH", "pg", "20.0", "27", "34"), in("PLT", "10^9/L", "400", "125", "350", flag(schema.FlagHigh))}, want: []int{2}, reason: "formula"},
		{name: "near: 30.0", rows: []schema.OcrIndicator{in("HGB", "g/L", "150", "", ""), in("RBC", "10^12/L", "5.00", "", ""), in("MCH", "pg", "30.0", "", "")}},
	},
	"mchc": {
		{name: "MCHC 236 for 336", rows: []schema.OcrIndicator{in("HGB", "g/L", "148", "", ""), in("HCT", "%", "44.1", "", ""), in("MCHC", "g/L", "236", "", "")}, want: []int{0, 1, 2}},
		{name: "near: 336", rows: []schema.OcrIndicator{in("HGB", "g/L", "148", "", ""), in("HCT", "%", "44.1", "", ""), in("MCHC", "g/L", "336", "", "")}},
	},
	"mchc_indices": {
		{name: "MCHC 236 beside MCH and MCV", rows: []schema.OcrIndicator{in("MCH", "pg", "30.1", "", ""), in("MCV", "fL", "89.6", "", ""), in("MCHC", "g/L", "236", "", "")}, want: []int{0, 1, 2}},
		{name: "near: 336", rows: []schema.OcrIndicator{in("MCH", "pg", "30.1", "", ""), in("MCV", "fL", "89.6", "", ""), in("MCHC", "g/L", "336", "", "")}},
	},
	"iron_in_tibc": {
		{name: "iron above TIBC", rows: []schema.OcrIndicator{in("TIBC", "μmol/L", "55", "", ""), in("血清铁", "μmol/L", "62", "", "")}, want: []int{1}, reason: "decimal"},
		{name: "near: 18", rows: []schema.OcrIndicator{in("TIBC", "μmol/L", "55", "", ""), in("血清铁", "μmol/L", "18", "", "")}},
	},
	"uibc": {
		{name: "UIBC 4.2 for 42.0", rows: []schema.OcrIndicator{in("TIBC", "μmol/L", "60.0", "", ""), in("血清铁", "μmol/L", "18.0", "", ""), in("UIBC", "μmol/L", "4.2", "", "")}, want: []int{2}, reason: "decimal"},
		{name: "near: 42.0", rows: []schema.OcrIndicator{in("TIBC", "μmol/L", "60.0", "", ""), in("血清铁", "μmol/L", "18.0", "", ""), in("UIBC", "μmol/L", "42.0", "", "")}},
	},
	"tsat": {
		{name: "TSAT 3.0 for 30", rows: []schema.OcrIndicator{in("血清铁", "μmol/L", "18.0", "7.8", "32.2"), in("TIBC", "μmol/L", "60.0", "", ""), in("TSAT", "%", "3.0", "", "")}, want: []int{2}, reason: "decimal"},
		{name: "near: 30", rows: []schema.OcrIndicator{in("血清铁", "μmol/L", "18.0", "", ""), in("TIBC", "μmol/L", "60.0", "", ""), in("TSAT", "%", "30", "", "")}},
	},
	"tsat_transferrin": {
		{name: "TSAT 70 beside transferrin 2.40", rows: []schema.OcrIndicator{in("血清铁", "μmol/L", "18.0", "", ""), in("转铁蛋白", "g/L", "2.40", "", ""), in("TSAT", "%", "70", "", "")}, want: []int{0, 1, 2}},
		{name: "near: 30", rows: []schema.OcrIndicator{in("血清铁", "μmol/L", "18.0", "", ""), in("转铁蛋白", "g/L", "2.40", "", ""), in("TSAT", "%", "30", "", "")}},
		{name: "near: with TIBC printed the lab computes from it", rows: []schema.OcrIndicator{in("血清铁", "μmol/L", "18.0", "", ""), in("转铁蛋白", "g/L", "1.90", "", ""), in("TIBC", "μmol/L", "60.0", "", ""), in("TSAT", "%", "30", "", "")}},
	},
	"ionized_in_calcium": {
		{name: "iCa above Ca", rows: []schema.OcrIndicator{in("钙", "mmol/L", "2.30", "", ""), in("离子钙", "mmol/L", "2.80", "", "")}, want: []int{1}, reason: "decimal"},
		{name: "near: 1.20", rows: []schema.OcrIndicator{in("钙", "mmol/L", "2.30", "", ""), in("离子钙", "mmol/L", "1.20", "", "")}},
	},
	"anion_gap": {
		{name: "AG 21 for 12", rows: []schema.OcrIndicator{in("Na", "mmol/L", "140", "", ""), in("Cl", "mmol/L", "104", "", ""), in("CO2", "mmol/L", "24", "", ""), in("AG", "mmol/L", "21", "", "")}, want: []int{0, 1, 2, 3}},
		{name: "AG 1.2 for 12", rows: []schema.OcrIndicator{in("Na", "mmol/L", "140", "", ""), in("Cl", "mmol/L", "104", "", ""), in("CO2", "mmol/L", "24", "", ""), in("AG", "mmol/L", "1.2", "", "")}, want: []int{3}, reason: "decimal"},
		{name: "near: 12 without K", rows: []schema.OcrIndicator{in("Na", "mmol/L", "140", "", ""), in("Cl", "mmol/L", "104", "", ""), in("CO2", "mmol/L", "24", "", ""), in("AG", "mmol/L", "12", "", "")}},
		{name: "near: 16 with K printed", rows: []schema.OcrIndicator{in("Na", "mmol/L", "140", "", ""), in("K", "mmol/L", "4.0", "", ""), in("Cl", "mmol/L", "104", "", ""), in("CO2", "mmol/L", "24", "", ""), in("AG", "mmol/L", "16", "", "")}},
		{name: "near: 12 with K printed", rows: []schema.OcrIndicator{in("Na", "mmol/L", "140", "", ""), in("K", "mmol/L", "4.0", "", ""), in("Cl", "mmol/L", "104", "", ""), in("HCO3-", "mmol/L", "24.0", "", ""), in("AG", "mmol/L", "12", "", "")}},
		{name: "near: DKA's gap of 31", rows: []schema.OcrIndicator{in("Na", "mmol/L", "132", "", ""), in("Cl", "mmol/L", "96", "", ""), in("CO2", "mmol/L", "5", "", ""), in("AG", "mmol/L", "31", "", "")}},
	},
	"henderson_hasselbalch": {
		{name: "pH 7.14 for 7.41, the one out of its range", rows: []schema.OcrIndicator{in("pH", "", "7.14", "7.35", "7.45", bg), in("PaCO2", "mmHg", "40", "35", "45", bg), in("HCO3-", "mmol/L", "24.0", "22", "26", bg)}, want: []int{0}, reason: "formula"},
		{name: "pCO2 83 for 38, no range", rows: []schema.OcrIndicator{in("pH", "", "7.41", "", "", bg), in("PaCO2", "mmHg", "83.2", "", "", bg), in("HCO3-", "mmol/L", "22.6", "", "", bg)}, want: []int{0, 1, 2}},
		{name: "near: DKA", rows: []schema.OcrIndicator{in("pH", "", "7.05", "7.35", "7.45", bg, flag(schema.FlagLow)), in("PaCO2", "mmHg", "18", "35", "45", bg, flag(schema.FlagLow)), in("HCO3-", "mmol/L", "4.8", "22", "26", bg, flag(schema.FlagLow))}},
		{name: "near: pCO2 in kPa", rows: []schema.OcrIndicator{in("pH", "", "7.40", "", "", bg), in("PaCO2", "kPa", "5.33", "", "", bg), in("HCO3-", "mmol/L", "24.0", "", "", bg)}},
	},
	"hba1c_units": {
		{name: "58 mmol/mol beside 6.5 %", rows: []schema.OcrIndicator{in("HbA1c", "%", "6.5", "", ""), in("HbA1c", "mmol/mol", "58", "", "")}, want: []int{0, 1}},
		{name: "near: 48 mmol/mol", rows: []schema.OcrIndicator{in("HbA1c", "%", "6.5", "", ""), in("HbA1c", "mmol/mol", "48", "", "")}},
		{name: "near: 10.2 % and 88", rows: []schema.OcrIndicator{in("糖化血红蛋白", "%", "10.2", "4", "6", flag(schema.FlagHigh)), in("糖化血红蛋白", "mmol/mol", "88", "", "")}},
	},
	"egfr": {
		{name: "creatinine 315 beside an eGFR of 79", rows: []schema.OcrIndicator{in("肌酐", "μmol/L", "315", "", ""), in("eGFR", "mL/min/1.73m²", "79", "", "")}, want: []int{0, 1}},
		{name: "eGFR 79 unmarked below its range", rows: []schema.OcrIndicator{in("肌酐", "μmol/L", "315", "57", "111", flag(schema.FlagHigh)), in("eGFR", "mL/min/1.73m²", "79", "90", "")}, want: []int{1}, reason: "formula"},
		{name: "near: CKD", rows: []schema.OcrIndicator{in("肌酐", "μmol/L", "412", "57", "111", flag(schema.FlagHigh)), in("eGFR", "mL/min/1.73m²", "12", "90", "", flag(schema.FlagLow))}},
		{name: "near: a young man's 120", ctx: Context{Sex: Male}, rows: []schema.OcrIndicator{in("Creatinine", "mg/dL", "0.80", "", ""), in("eGFR", "mL/min/1.73m²", "120", "", "")}},
		{name: "near: an eGFR from cystatin C", rows: []schema.OcrIndicator{in("肌酐", "μmol/L", "315", "", ""), in("eGFR(CysC)", "mL/min/1.73m²", "79", "", "")}},
	},
	"acr": {
		{name: "ACR 2.65 for 26.5, or albumin 30 for 3.0: which cannot be told", rows: []schema.OcrIndicator{in("尿微量白蛋白", "mg/L", "30", "0", "30", ur), in("尿肌酐", "mmol/L", "10.0", "", "", ur), in("尿白蛋白/肌酐比值", "mg/g", "2.65", "", "", ur)}, want: []int{0, 1, 2}},
		{name: "ACR 2.65 marked high beside 0–30", rows: []schema.OcrIndicator{in("尿微量白蛋白", "mg/L", "30", "0", "30", ur), in("尿肌酐", "mmol/L", "10.0", "", "", ur), in("尿白蛋白/肌酐比值", "mg/g", "2.65", "0", "30", ur, flag(schema.FlagHigh))}, want: []int{2}, reason: "formula"},
		{name: "near: 26.5 mg/g", rows: []schema.OcrIndicator{in("尿微量白蛋白", "mg/L", "30", "", "", ur), in("尿肌酐", "mmol/L", "10.0", "", "", ur), in("尿白蛋白/肌酐比值", "mg/g", "26.5", "", "", ur)}},
		{name: "near: 3.0 mg/mmol, creatinine in μmol/L", rows: []schema.OcrIndicator{in("尿微量白蛋白", "mg/L", "30", "", "", ur), in("尿肌酐", "μmol/L", "10000", "", "", ur), in("ACR", "mg/mmol", "3.0", "", "", ur)}},
	},
	"inr": {
		{name: "INR 3.2 beside a PT of 12.0 s", rows: []schema.OcrIndicator{in("PT", "s", "12.0", "", ""), in("INR", "", "3.2", "", "")}, want: []int{0, 1}},
		{name: "PT and APTT swapped", rows: []schema.OcrIndicator{in("PT", "s", "32.0", "11", "14"), in("INR", "", "1.00", "0.8", "1.2"), in("APTT", "s", "12.0", "25", "37")}, want: []int{0}, reason: "member"},
		{name: "near: warfarin", rows: []schema.OcrIndicator{in("PT", "s", "32.5", "11", "14", flag(schema.FlagHigh)), in("INR", "", "3.20", "0.8", "1.2", flag(schema.FlagHigh))}},
		{name: "near: a normal PT", rows: []schema.OcrIndicator{in("PT", "s", "12.1", "", ""), in("INR", "", "1.02", "", "")}},
	},
	"adjusted_calcium": {
		{name: "adjusted Ca 2.80 for 2.30", rows: []schema.OcrIndicator{in("Calcium", "mmol/L", "2.10", "", ""), in("Albumin", "g/L", "30", "", ""), in("Adjusted calcium", "mmol/L", "2.80", "", "")}, want: []int{0, 1, 2}},
		{name: "adjusted Ca 23.0 for 2.30: the decimal point", rows: []schema.OcrIndicator{in("Calcium", "mmol/L", "2.10", "2.20", "2.60"), in("Albumin", "g/L", "30", "35", "50"), in("Adjusted calcium", "mmol/L", "23.0", "2.20", "2.60")}, want: []int{2}, reason: "decimal"},
		{name: "corrected Ca 7.2 mg/dL for 9.2", rows: []schema.OcrIndicator{in("Calcium", "mg/dL", "8.4", "", ""), in("Albumin", "g/dL", "3.0", "", ""), in("Calcium, Corrected", "mg/dL", "7.2", "", "")}, want: []int{0, 1, 2}},
		{name: "near: Payne's 2.30", rows: []schema.OcrIndicator{in("Calcium", "mmol/L", "2.10", "", ""), in("Albumin", "g/L", "30", "", ""), in("Adjusted calcium", "mmol/L", "2.30", "", "")}},
		{name: "near: 0.025 × (42 − ALB), 2.40", rows: []schema.OcrIndicator{in("Calcium", "mmol/L", "2.10", "", ""), in("Albumin", "g/L", "30", "", ""), in("Corrected calcium", "mmol/L", "2.40", "", "")}},
		{name: "near: US 9.2 mg/dL", rows: []schema.OcrIndicator{in("Calcium", "mg/dL", "8.4", "", ""), in("Albumin", "g/dL", "3.0", "", ""), in("Calcium, Corrected", "mg/dL", "9.2", "", "")}},
		{name: "near: high albumin lowers it", rows: []schema.OcrIndicator{in("钙", "mmol/L", "2.55", "", ""), in("白蛋白", "g/L", "48", "", ""), in("校正钙", "mmol/L", "2.39", "", "")}},
	},
	"eag": {
		{name: "eAG 184 mg/dL for 154", rows: []schema.OcrIndicator{in("HbA1c", "%", "7.0", "", ""), in("Estimated average glucose", "mg/dL", "184", "", "")}, want: []int{0, 1}},
		{name: "eAG 15.4 mg/dL for 154: the decimal point", rows: []schema.OcrIndicator{in("HbA1c", "%", "7.0", "4.0", "5.6", flag(schema.FlagHigh)), in("Estimated average glucose", "mg/dL", "15.4", "", "")}, want: []int{1}, reason: "decimal"},
		{name: "near: 154 mg/dL", rows: []schema.OcrIndicator{in("HbA1c", "%", "7.0", "", ""), in("Estimated average glucose", "mg/dL", "154", "", "")}},
		{name: "near: 8.6 mmol/L", rows: []schema.OcrIndicator{in("糖化血红蛋白", "%", "7.0", "", ""), in("估算平均血糖", "mmol/L", "8.6", "", "")}},
		{name: "near: 12.0 % and 298 mg/dL", rows: []schema.OcrIndicator{in("HbA1c", "%", "12.0", "4.0", "5.6", flag(schema.FlagHigh)), in("eAG", "mg/dL", "298", "", "")}},
	},
	"eag_ifcc": {
		{name: "eAG 6.8 mmol/L beside 53 mmol/mol", rows: []schema.OcrIndicator{in("HbA1c", "mmol/mol", "53", "", ""), in("Est. average glucose", "mmol/L", "6.8", "", "")}, want: []int{0, 1}},
		{name: "near: 8.6 mmol/L", rows: []schema.OcrIndicator{in("HbA1c", "mmol/mol", "53", "", ""), in("Est. average glucose", "mmol/L", "8.6", "", "")}},
		{name: "near: both units and eAG", rows: []schema.OcrIndicator{in("HbA1c", "%", "7.0", "", ""), in("HbA1c", "mmol/mol", "53", "", ""), in("eAG", "mg/dL", "154", "", "")}},
	},
	"tc_hdl_ratio": {
		{name: "Chol/HDL 6.0 for 4.0", rows: []schema.OcrIndicator{in("Cholesterol, Total", "mg/dL", "201", "", ""), in("HDL Cholesterol", "mg/dL", "50", "", ""), in("Chol/HDL Ratio", "", "6.0", "", "")}, want: []int{0, 1, 2}},
		{name: "TC/HDL-C 40 for 4.0: the decimal point", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "5.20", "3.1", "5.2"), in("高密度脂蛋白胆固醇", "mmol/L", "1.30", "1.04", "1.55"), in("TC/HDL-C", "", "40", "", "")}, want: []int{2}, reason: "decimal"},
		{name: "near: 4.0 in mg/dL", rows: []schema.OcrIndicator{in("Cholesterol, Total", "mg/dL", "201", "", ""), in("HDL Cholesterol", "mg/dL", "50", "", ""), in("Chol/HDL Ratio", "", "4.0", "", "")}},
		{name: "near: 4.0 in mmol/L", rows: []schema.OcrIndicator{in("TC", "mmol/L", "5.2", "", ""), in("HDL-C", "mmol/L", "1.3", "", ""), in("TC:HDL ratio", "", "4.0", "", "")}},
		{name: "near: 3.9 truncated from 3.95", rows: []schema.OcrIndicator{in("Cholesterol, Total", "mg/dL", "198", "", ""), in("HDL Cholesterol", "mg/dL", "50", "", ""), in("Chol/HDL Ratio", "", "3.9", "", "")}},
	},
	"ldl_hdl_ratio": {
		{name: "LDL/HDL 5.2 for 2.5", rows: []schema.OcrIndicator{in("LDL Cholesterol Calc", "mg/dL", "124", "", ""), in("HDL Cholesterol", "mg/dL", "50", "", ""), in("LDL/HDL Ratio", "", "5.2", "", "")}, want: []int{0, 1, 2}},
		{name: "near: 2.5", rows: []schema.OcrIndicator{in("LDL Cholesterol Calc", "mg/dL", "124", "", ""), in("HDL Cholesterol", "mg/dL", "50", "", ""), in("LDL/HDL Ratio", "", "2.5", "", "")}},
		{name: "near: 2.0 in mmol/L", rows: []schema.OcrIndicator{in("LDL-C", "mmol/L", "2.60", "", ""), in("HDL-C", "mmol/L", "1.30", "", ""), in("LDL-C/HDL-C", "", "2.0", "", "")}},
	},
	"bun_cr_ratio": {
		{name: "BUN/Creatinine 71 for 17: digits swapped", rows: []schema.OcrIndicator{in("BUN", "mg/dL", "15", "", ""), in("Creatinine", "mg/dL", "0.90", "", ""), in("BUN/Creatinine Ratio", "", "71", "", "")}, want: []int{0, 1, 2}},
		{name: "creatinine 9.0 for 0.90 beside the ratio", rows: []schema.OcrIndicator{in("BUN", "mg/dL", "15", "6", "24"), in("Creatinine", "mg/dL", "9.0", "0.57", "1.00"), in("BUN/Creatinine Ratio", "", "17", "9", "23")}, want: []int{1}, reason: "decimal"},
		{name: "near: 17", rows: []schema.OcrIndicator{in("BUN", "mg/dL", "15", "", ""), in("Creatinine", "mg/dL", "0.90", "", ""), in("BUN/Creatinine Ratio", "", "17", "", "")}},
		{name: "near: 16, truncated from 16.7", rows: []schema.OcrIndicator{in("BUN", "mg/dL", "15", "", ""), in("Creatinine", "mg/dL", "0.90", "", ""), in("BUN/Creat Ratio", "", "16", "", "")}},
		{name: "near: CKD's 9 in SI units", rows: []schema.OcrIndicator{in("Urea nitrogen", "mmol/L", "25.0", "", ""), in("Creatinine", "μmol/L", "690", "", ""), in("BUN/Creatinine Ratio", "", "9", "", "")}},
	},
	"flc_ratio": {
		{name: "κ/λ 7.9 for 0.79", rows: []schema.OcrIndicator{in("Kappa free light chain", "mg/L", "12.3", "3.3", "19.4"), in("Lambda free light chain", "mg/L", "15.6", "5.7", "26.3"), in("Free kappa/lambda ratio", "", "7.90", "0.26", "1.65")}, want: []int{2}, reason: "decimal"},
		{name: "κ/λ 1.79 for 0.79, no ranges", rows: []schema.OcrIndicator{in("游离轻链κ", "mg/L", "12.3", "", ""), in("游离轻链λ", "mg/L", "15.6", "", ""), in("游离轻链κ/λ比值", "", "1.79", "", "")}, want: []int{0, 1, 2}},
		{name: "near: 0.79", rows: []schema.OcrIndicator{in("Kappa free light chain", "mg/L", "12.3", "", ""), in("Lambda free light chain", "mg/L", "15.6", "", ""), in("Free kappa/lambda ratio", "", "0.79", "", "")}},
		{name: "near: κ myeloma, 154.32", rows: []schema.OcrIndicator{in("Kappa free light chain", "mg/L", "1250", "3.3", "19.4", flag(schema.FlagHigh)), in("Lambda free light chain", "mg/L", "8.1", "5.7", "26.3"), in("Free kappa/lambda ratio", "", "154.32", "0.26", "1.65", flag(schema.FlagHigh))}},
		{name: "near: in mg/dL, 0.79", rows: []schema.OcrIndicator{in("Kappa Light Chain, Free", "mg/dL", "1.23", "", ""), in("Lambda Light Chain, Free", "mg/dL", "1.56", "", ""), in("Kappa/Lambda Ratio, Free", "", "0.79", "", "")}},
	},
	"ck_mb_in_ck": {
		{name: "CK-MB 150 U/L above CK 100", rows: []schema.OcrIndicator{in("CK", "U/L", "100", "", ""), in("CK-MB", "U/L", "150", "", "")}, want: []int{0, 1}},
		{name: "near: CK-MB 15 U/L", rows: []schema.OcrIndicator{in("CK", "U/L", "100", "", ""), in("CK-MB", "U/L", "15", "", "")}},
		{name: "near: CK-MB mass in ng/mL is not compared", rows: []schema.OcrIndicator{in("CK", "U/L", "40", "", ""), in("CK-MB", "ng/mL", "45", "", "")}},
	},
}

func partCases(name string) []relCase {
	return []relCase{
		{name: name + " above WBC", rows: []schema.OcrIndicator{in("WBC", "10^9/L", "6.5", "", ""), in(name, "10^9/L", "8.0", "", "")}, want: []int{0, 1}},
		{name: "near: " + name + " 0.30", rows: []schema.OcrIndicator{in("WBC", "10^9/L", "6.5", "", ""), in(name, "10^9/L", "0.30", "", "")}},
	}
}

func wbcRows(lymph string) []schema.OcrIndicator {
	return []schema.OcrIndicator{in("WBC", "10^9/L", "6.52", "", ""), in("NEUT#", "10^9/L", "3.80", "", ""), in("LYMPH#", "10^9/L", lymph, "", ""),
		in("MONO#", "10^9/L", "0.42", "", ""), in("EO#", "10^9/L", "0.17", "", ""), in("BASO#", "10^9/L", "0.04", "", "")}
}

func diffRows(neut, lymph string) []schema.OcrIndicator {
	return []schema.OcrIndicator{in("NEUT%", "%", neut, "", ""), in("LYMPH%", "%", lymph, "", ""), in("MONO%", "%", "6.4", "", ""), in("EO%", "%", "2.6", "", ""), in("BASO%", "%", "0.6", "", "")}
}

// TestEveryRelation runs every relation's cases: a misread warns on the rows it names, with the
// relation named in params, a near miss gets no warning at all; and every relation of the
// lexicon has both.
func TestEveryRelation(t *testing.T) {
	for _, rel := range lexicon.Default().Relations() {
		cs := relCases[rel.Key]
		misread, near := false, false
		for _, c := range cs {
			misread, near = misread || c.want != nil, near || c.want == nil
		}
		if !misread || !near {
			t.Errorf("relation %s: a misread and a near miss are needed (have %v, %v)", rel.Key, misread, near)
		}
	}
	formula := map[string]string{}
	for _, rel := range lexicon.Default().Relations() {
		formula[rel.Key] = rel.Formula
	}
	for key, cs := range relCases {
		if formula[key] == "" {
			t.Errorf("cases for %s, which is no relation", key)
		}
		for _, c := range cs {
			t.Run(key+"/"+c.name, func(t *testing.T) {
				d := &schema.OcrDraft{Indicators: slices.Clone(c.rows)}
				ws := Run(lexicon.Default(), d, c.ctx)
				var got []int
				reason := ""
				for _, w := range ws {
					if w.Code != schema.InconsistentValues {
						if c.want == nil { // a near miss is silent; a misread may get others too
							t.Errorf("%s %s: %s", w.Code, *w.Path, w.Message)
						}
						continue
					}
					if reason == "" {
						reason = w.Reason
					}
					var i int
					for i = range d.Indicators {
						if *w.Path == "indicators["+itoa(i)+"].valueNum" {
							break
						}
					}
					got = append(got, i)
					if w.Params["relation"] != formula[key] && c.want != nil {
						t.Errorf("%s: relation %q, want %q (%s)", *w.Path, w.Params["relation"], formula[key], w.Message)
					}
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("rows warned (-want +got):\n%s\n%v", diff, messages(ws))
				}
				if c.reason != "" && reason != c.reason {
					t.Errorf("reason %s, want %s: %v", reason, c.reason, messages(ws))
				}
			})
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
