package lexicon

import (
	"strings"
	"testing"
)

// englishLabs are names as UK (NHS), Australian (RCPA), US, Singapore and Hong Kong labs print
// them, long and short, with their commas ("Glucose, Fasting"), and the short names of a
// urine table; each must find its analyte.
var englishLabs = []struct{ group, name, unit, want string }{
	// UK, Australia, Hong Kong, Singapore: full blood count.
	{"Full Blood Count", "White cell count", "x10^9/L", "wbc"},
	{"FBC", "WCC", "10^9/L", "wbc"},
	{"", "Total white cell count", "", "wbc"},
	{"", "Total white count", "", "wbc"},
	{"", "Leucocytes", "×10^9/L", "wbc"},
	{"Full Blood Count", "Red cell count", "x10^12/L", "rbc"},
	{"", "RCC", "", "rbc"},
	{"", "Haemoglobin", "g/L", "hgb"},
	{"", "Packed cell volume", "L/L", "hct"},
	{"", "Haematocrit (PCV)", "", "hct"},
	{"", "Mean cell volume", "fL", "mcv"},
	{"", "Mean cell haemoglobin", "pg", "mch"},
	{"", "Mean corpuscular haemoglobin", "pg", "mch"},
	{"", "Mean cell haemoglobin concentration", "g/L", "mchc"},
	{"", "Mean corpuscular haemoglobin concentration", "g/dL", "mchc"},
	{"", "Platelet count", "x10^9/L", "plt"},
	{"", "Platelets", "", "plt"},
	{"", "Red cell distribution width", "%", "rdw_cv"},
	{"", "Neutrophils", "x10^9/L", "neut_abs"},
	{"", "Neutrophils", "%", "neut_pct"},
	{"", "Absolute neutrophils", "", "neut_abs"},
	{"", "Neutrophils, Absolute", "", "neut_abs"},
	{"", "Lymphocytes", "x10^9/L", "lymph_abs"},
	{"", "Lymphocytes, Absolute", "", "lymph_abs"},
	{"", "Monocytes, Absolute", "", "mono_abs"},
	{"", "Eosinophils, Absolute", "", "eo_abs"},
	{"", "Basophils, Absolute", "", "baso_abs"},
	{"", "Reticulocyte count", "", "ret_abs"},
	{"", "Erythrocyte sedimentation rate", "mm/hr", "esr"},
	{"", "Sed rate", "mm/h", "esr"},
	// Liver, kidney, lipids, glucose.
	{"Liver Function Tests", "Bilirubin", "umol/L", "tbil"},
	{"LFT", "Alk Phos", "U/L", "alp"},
	{"", "Alk Phos", "", "alp"},
	{"", "Alkaline phosphatase", "IU/L", "alp"},
	{"", "Gamma GT", "U/L", "ggt"},
	{"", "Gamma glutamyltransferase", "", "ggt"},
	{"", "Alanine transaminase", "", "alt"},
	{"", "Aspartate transaminase", "", "ast"},
	{"", "Bilirubin, Total", "mg/dL", "tbil"},
	{"", "Bilirubin, Direct", "mg/dL", "dbil"},
	{"", "Bilirubin, Indirect", "", "ibil"},
	{"", "Bilirubin Direct", "", "dbil"},
	{"", "Protein, Total", "g/dL", "tp"},
	{"", "Globulin", "g/L", "glb"},
	{"", "A:G ratio", "", "ag_ratio"},
	{"", "Albumin/Globulin Ratio", "", "ag_ratio"},
	{"", "Urate", "mmol/L", "uric_acid"},
	{"", "BUN", "mg/dL", "bun"},
	{"", "Urea Nitrogen, Blood", "mg/dL", "bun"},
	{"", "Creatinine, Serum", "mg/dL", "creatinine"},
	{"", "Cholesterol, Total", "mg/dL", "total_cholesterol"},
	{"", "Cholesterol, HDL", "mg/dL", "hdl_c"},
	{"", "Cholesterol, LDL (calculated)", "mg/dL", "ldl_c"},
	{"", "Triglycerides, Fasting", "", "triglycerides"},
	{"", "Glucose, Fasting", "mg/dL", "glucose"},
	{"", "Glucose Fasting", "mmol/L", "glucose"},
	{"", "Glucose, Random", "", "glucose"},
	{"", "Fasting blood sugar", "", "glucose"},
	{"", "Haemoglobin A1c", "%", "hba1c"},
	{"", "Glycated haemoglobin", "", "hba1c"},
	// Electrolytes, thyroid, iron, others.
	{"", "Calcium, Ionized", "", "ionized_calcium"},
	{"", "Phosphate", "mmol/L", "phosphorus"},
	{"", "Thyroxine, Free", "", "ft4"},
	{"", "T4, Free", "", "ft4"},
	{"", "Thyroid peroxidase antibodies", "IU/mL", "tpoab"},
	{"", "Iron, Serum", "", "serum_iron"},
	{"", "Iron saturation", "%", "tsat"},
	{"", "Vitamin D, 25-Hydroxy", "ng/mL", "vitd25"},
	{"", "25-OH Vitamin D", "nmol/L", "vitd25"},
	{"", "Luteinising hormone", "IU/L", "lh"},
	{"", "Oestradiol", "pmol/L", "estradiol"},
	{"", "PSA, Total", "", "tpsa"},
	{"", "PSA, Free", "", "fpsa"},
	{"", "CK, Total", "U/L", "ck"},
	{"", "High sensitivity troponin T", "ng/L", "ctnt"},
	{"", "High sensitivity C-reactive protein", "mg/L", "hscrp"},
	{"", "ASO titre", "IU/mL", "aso"},
	{"", "Systolic BP", "mmHg", "sbp"},
	{"", "Pulse rate", "/min", "heart_rate"},
	// A urine table's short names, under the group an English report prints.
	{"Urinalysis", "SG", "", "urine_sg"},
	{"URINE DIPSTICK", "PH", "", "urine_ph"},
	{"Urine Dipstick", "PRO", "", "urine_protein"},
	{"Urine Routine", "GLU", "", "urine_glucose"},
	{"Urine Chemistry", "BLD", "", "urine_bld"},
	{"Urine Microscopy", "LEU", "", "urine_leu"},
	{"Urinalysis", "Leucocytes", "", "urine_leu"},
	{"Urinalysis", "Blood", "", "urine_bld"},
	{"Urinalysis", "Protein", "", "urine_protein"},
	{"Urinalysis", "Glucose", "", "urine_glucose"},
	{"Urine Microscopy", "RBC", "/HPF", "urine_rbc"},
	{"Urine Dipstick Screen", "SG", "", "urine_sg"},
	{"Routine urine examination", "PH", "", "urine_ph"},
	{"Faecal examination", "RBC", "", "stool_rbc"},
	// Chinese analysers' own codes (Roche cobas, Mindray, Sysmex) as LIS printouts copy them.
	{"生化", "ALTL", "U/L", "alt"},
	{"生化", "ASTL", "U/L", "ast"},
	{"生化", "CREJ2", "μmol/L", "creatinine"},
	{"生化", "GLUC3", "mmol/L", "glucose"},
	{"生化", "TRIGL", "mmol/L", "triglycerides"},
	{"生化", "HDLC3", "mmol/L", "hdl_c"},
	{"生化", "LDLC3", "mmol/L", "ldl_c"},
	{"生化", "UREAL", "mmol/L", "urea"},
	{"生化", "BILT3", "μmol/L", "tbil"},
	{"生化", "BILD2", "μmol/L", "dbil"},
	{"血常规", "Gran#", "10^9/L", "neut_abs"},
	{"尿常规", "MA", "mg/L", "urine_microalbumin"},
	{"尿常规", "CRE", "mmol/L", "urine_creatinine"},
	// Labcorp's CBC differential, and US specimen qualifiers after a comma.
	{"", "Lymphs", "%", "lymph_pct"},
	{"", "Lymphs (Absolute)", "x10E3/uL", "lymph_abs"},
	{"", "Basos", "%", "baso_pct"},
	{"", "Monos (Absolute)", "x10E3/uL", "mono_abs"},
	{"", "pCO2, Arterial", "mmHg", "pco2"},
	{"", "pO2, Arterial", "mmHg", "po2"},
	{"", "Bicarbonate, Arterial", "mmol/L", "hco3"},
	{"", "Sodium, Whole Blood", "mmol/L", "sodium"},
	{"", "Creatinine, Random Urine", "mg/dL", "urine_creatinine"},
	{"", "Albumin, Random Urine", "mg/dL", "urine_microalbumin"},
	{"", "Albumin/Creatinine Ratio, Random Urine", "mg/g", "urine_acr"},
	{"", "Ionised calcium", "mmol/L", "ionized_calcium"},
	{"", "Carbon Dioxide, Total", "mmol/L", "co2"},
	{"", "LDL Chol Calc (NIH)", "mg/dL", "ldl_c"},
	{"", "计算LDL-C", "mmol/L", "ldl_c"},
	{"", "LDL-C calc.", "mmol/L", "ldl_c"},
	{"", "Calc. LDL", "mmol/L", "ldl_c"},
	{"", "Calculated globulin", "g/L", "glb"},
	{"", "Prostate Specific Ag, Serum", "ng/mL", "tpsa"},
	{"", "% Free PSA", "%", "fpsa_tpsa"},
	{"", "VLDL Cholesterol Cal", "mg/dL", "vldl_c"},
	{"", "Thyroid Peroxidase (TPO) Ab", "IU/mL", "tpoab"},
	{"", "Fibrinogen Activity", "mg/dL", "fib"},
	{"Urinalysis", "Occult Blood", "", "urine_bld"}, // Quest's urinalysis: the urine's blood
	{"Stool", "Occult Blood", "", "stool_ob"},
	// A bracket that names the item or its specimen: the part that says what it is wins.
	{"", "Cholesterol (HDL)", "mmol/L", "hdl_c"},
	{"", "Cholesterol (LDL)", "mmol/L", "ldl_c"},
	{"", "Creatinine (urine)", "mmol/L", "urine_creatinine"},
	{"", "Albumin (urine)", "mg/L", "urine_microalbumin"},
	{"Urinalysis", "Creatinine", "mmol/L", "urine_creatinine"},
	{"", "Bilirubin (Direct)", "mg/dL", "dbil"},
	// Values labs compute from others (issue 20's second blind set): adjusted calcium, eAG,
	// cholesterol ratios; their names hold a known one, which must not win.
	{"", "Adjusted calcium", "mmol/L", "adjusted_calcium"},
	{"", "Corrected calcium", "mmol/L", "adjusted_calcium"},
	{"", "Calcium, Corrected", "mg/dL", "adjusted_calcium"},
	{"", "Calcium (adjusted)", "mmol/L", "adjusted_calcium"},
	{"", "Albumin-adjusted calcium", "mmol/L", "adjusted_calcium"},
	{"", "Adj Ca", "mmol/L", "adjusted_calcium"},
	{"", "Calcium (albumin corrected)", "mmol/L", "adjusted_calcium"},
	{"", "Ca (corr)", "mmol/L", "adjusted_calcium"},
	{"生化", "钙(校正)", "mmol/L", "adjusted_calcium"},
	{"生化", "校正钙", "mmol/L", "adjusted_calcium"},
	{"", "校正鈣", "mmol/L", "adjusted_calcium"},
	{"", "Calcium", "mmol/L", "calcium"},
	{"", "Estimated average glucose", "mg/dL", "eag"},
	{"", "Est. average glucose", "mmol/L", "eag"},
	{"", "eAG", "mg/dL", "eag"},
	{"糖化", "估算平均血糖", "mmol/L", "eag"},
	{"", "Chol/HDL Ratio", "", "tc_hdl_ratio"},
	{"", "Cholesterol/HDL Ratio", "", "tc_hdl_ratio"},
	{"", "TC/HDL-C", "", "tc_hdl_ratio"},
	{"", "TC:HDL ratio", "", "tc_hdl_ratio"},
	{"", "T. Chol/HDL Ratio", "", "tc_hdl_ratio"},
	{"血脂", "总胆固醇/高密度脂蛋白比值", "", "tc_hdl_ratio"},
	{"", "總膽固醇/高密度脂蛋白比值", "", "tc_hdl_ratio"},
	{"", "LDL/HDL Ratio", "", "ldl_hdl_ratio"},
	{"", "LDL-C/HDL-C", "", "ldl_hdl_ratio"},
	{"", "Cholesterol, Total", "mg/dL", "total_cholesterol"},
	{"", "BUN/Creatinine Ratio", "", "bun_cr_ratio"},
	{"", "BUN/Creat Ratio", "", "bun_cr_ratio"},
	{"", "Urea Nitrogen/Creatinine Ratio", "", "bun_cr_ratio"},
	{"", "BUN/Cr", "", "bun_cr_ratio"},
	{"", "尿素氮/肌酸酐比值", "", "bun_cr_ratio"},
	{"", "BUN", "mg/dL", "bun"},
	{"", "Creatinine", "mg/dL", "creatinine"},
	{"", "Beta-hydroxybutyrate", "mmol/L", "bhb"},
	{"", "Beta-Hydroxybutyrate", "mg/dL", "bhb"},
	{"", "BHB", "mmol/L", "bhb"},
	{"", "3-Hydroxybutyrate", "mmol/L", "bhb"},
	{"血糖", "β-羟丁酸", "mmol/L", "bhb"},
	{"", "β-羥丁酸", "mmol/L", "bhb"},
	{"", "α-羟丁酸脱氢酶", "U/L", "hbdh"},
	{"", "Kappa free light chain", "mg/L", "flc_kappa"},
	{"", "Free Kappa Light Chains", "mg/L", "flc_kappa"},
	{"", "Kappa Light Chain, Free", "mg/dL", "flc_kappa"},
	{"", "游离轻链κ", "mg/L", "flc_kappa"},
	{"", "Lambda free light chain", "mg/L", "flc_lambda"},
	{"", "Lambda Light Chain, Free", "mg/dL", "flc_lambda"},
	{"", "游離λ輕鏈", "mg/L", "flc_lambda"},
	{"", "Free kappa/lambda ratio", "", "flc_ratio"},
	{"", "Kappa/Lambda Ratio, Free", "", "flc_ratio"},
	{"", "FLC ratio", "", "flc_ratio"},
	{"", "游离轻链κ/λ比值", "", "flc_ratio"},
}

func TestEnglishLabs(t *testing.T) {
	l := Default()
	for _, c := range englishLabs {
		a, ok := l.Match(c.group, c.name, c.unit)
		got := ""
		if ok {
			got = a.Key
		}
		if got != c.want {
			t.Errorf("Match(%q, %q, %q) = %q, want %q", c.group, c.name, c.unit, got, c.want)
		}
	}
}

// TestNear: names Match does not know, and the analytes Near finds them close to.
func TestNear(t *testing.T) {
	l := Default()
	for _, c := range []struct {
		name string
		want []string
	}{
		{"CRP=26", []string{"crp"}},                        // a known abbreviation inside
		{"(白CEP）=26", []string{"cea", "c_peptide", "crp"}}, // one letter off three of them
		{"谷丙转氨梅", []string{"alt"}},
		{"MCVV", []string{"mcv"}},
		{"尿微量白旦白", []string{"urine_microalbumin"}},
		// Near nothing.
		{"某某指数", nil},
		{"IgG4", nil}, // a subclass, not a misreading
		{"Osmolality", nil},
		// Names of words that hold a known name are other items built on it (a ratio, a
		// corrected or calculated value), not misreadings of it.
		{"Urea/Creatinine ratio", nil},
		{"Calcium/Creatinine ratio", nil},
		{"Corrected sodium", nil},
		{"Non-HDL/HDL ratio", nil},
		{"Mean plasma glucose", nil},
		{"XY", nil},
	} {
		if _, ok := l.Lookup(c.name); ok {
			t.Errorf("%q is known: Near is for names that are not", c.name)
		}
		var got []string
		for _, a := range l.Near(c.name) {
			got = append(got, a.Key)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("Near(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}
