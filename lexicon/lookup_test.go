package lexicon

import (
	"strconv"
	"strings"
	"testing"

	"github.com/longbridgeapp/opencc"
)

// Names as printed on real reports and as vision models copy them: brackets of both widths,
// spaces, Traditional characters, English, abbreviations, qualifiers.
var printed = []struct{ group, name, unit, want string }{
	// 血常规
	{"血常规", "白细胞计数(WBC)", "×10^9/L", "wbc"},
	{"血常规", "WBC", "10^9/L", "wbc"},
	{"", "白细胞", "", "wbc"},
	{"血常規", "白血球計數", "", "wbc"},
	{"", "红细胞计数（RBC）", "×10^12/L", "rbc"},
	{"血常规", "*红细胞", "", "rbc"},
	{"", "血红蛋白(HGB)", "g/L", "hgb"},
	{"", "Hemoglobin 血红蛋白", "g/dL", "hgb"},
	{"", "血色素", "", "hgb"},
	{"血常规", "红细胞压积(HCT)", "%", "hct"},
	{"", "紅血球容積比", "", "hct"},
	{"", "平均红细胞体积 MCV", "fL", "mcv"},
	{"", "平均红细胞血红蛋白量(MCH)", "pg", "mch"},
	{"", "平均红细胞血红蛋白浓度(MCHC)", "g/L", "mchc"},
	{"", "血小板计数(PLT)", "10*9/L", "plt"},
	{"", "ＰＬＴ", "", "plt"},
	{"", "红细胞分布宽度-CV(RDW-CV)", "%", "rdw_cv"},
	{"", "RDW-SD", "fL", "rdw_sd"},
	{"", "平均血小板体积(MPV)", "fL", "mpv"},
	{"血常规", "血小板压积(PCT)", "%", "plateletcrit"},
	{"", "PCT", "%", "plateletcrit"},
	{"", "血小板分布宽度 PDW", "fL", "pdw"},
	{"", "中性粒细胞百分比(NEUT%)", "%", "neut_pct"},
	{"", "中性粒细胞绝对值(NEUT#)", "×10^9/L", "neut_abs"},
	{"", "中性粒细胞", "%", "neut_pct"},
	{"", "中性粒细胞", "×10^9/L", "neut_abs"},
	{"", "淋巴细胞百分比(LYMPH%)", "%", "lymph_pct"},
	{"", "淋巴细胞数", "", "lymph_abs"},
	{"", "LYM#", "", "lymph_abs"},
	{"", "单核细胞百分比 MONO%", "%", "mono_pct"},
	{"", "嗜酸性粒细胞百分比(EO%)", "%", "eo_pct"},
	{"", "嗜酸性粒细胞绝对值", "", "eo_abs"},
	{"", "嗜碱性粒细胞百分比", "", "baso_pct"},
	{"", "嗜鹼性球", "%", "baso_pct"},
	{"", "网织红细胞百分比", "%", "ret_pct"},
	// 尿常规
	{"尿常规", "比重", "", "urine_sg"},
	{"尿常规", "尿比重(SG)", "", "urine_sg"},
	{"", "Specific Gravity 比重", "", "urine_sg"},
	{"尿常规", "酸碱度(pH)", "", "urine_ph"},
	{"尿液分析", "pH", "", "urine_ph"},
	{"尿常规", "尿蛋白(PRO)", "", "urine_protein"},
	{"", "Urine Protein 尿蛋白", "", "urine_protein"},
	{"尿常规", "蛋白质", "", "urine_protein"},
	{"尿常规", "尿糖(GLU)", "", "urine_glucose"},
	{"尿常规", "葡萄糖", "mmol/L", "urine_glucose"},
	{"", "尿葡萄糖", "", "urine_glucose"},
	{"尿常规", "酮体", "", "urine_ketone"},
	{"", "尿酮体", "", "urine_ketone"},
	{"尿常规", "胆红素(BIL)", "", "urine_bilirubin"},
	{"", "尿胆原", "", "urine_urobilinogen"},
	{"尿常规", "亚硝酸盐", "", "urine_nitrite"},
	{"尿常规", "潜血(BLD)", "", "urine_bld"},
	{"", "尿潜血", "", "urine_bld"},
	{"尿常规", "红细胞(镜检)", "/HP", "urine_rbc"},
	{"尿常规", "红细胞", "个/μL", "urine_rbc"},
	{"", "红细胞计数", "个/μL", "urine_rbc"},
	{"", "白细胞", "个/μL", "urine_wbc"},
	{"", "白细胞", "×10^9/L", "wbc"},
	{"", "红细胞(尿)", "", "urine_rbc"},
	{"", "尿红细胞", "", "urine_rbc"},
	{"尿沉渣", "白细胞", "/HPF", "urine_wbc"},
	{"", "尿白细胞(LEU)", "", "urine_wbc"},
	{"尿常规", "白细胞酯酶", "", "urine_leu"},
	{"尿常规", "上皮细胞", "", "urine_epithelial"},
	{"尿常规", "管型", "/LP", "urine_casts"},
	{"", "尿微量白蛋白", "mg/L", "urine_microalbumin"},
	{"", "尿微量白蛋白/肌酐", "mg/g", "urine_acr"},
	{"", "尿肌酐", "", "urine_creatinine"},
	// 粪便
	{"粪便常规", "隐血", "", "stool_ob"},
	{"", "大便潜血", "", "stool_ob"},
	{"粪便常规", "红细胞", "", "stool_rbc"},
	// 肝功能
	{"肝功能", "丙氨酸氨基转移酶(ALT)", "U/L", "alt"},
	{"", "ALT(谷丙转氨酶)", "", "alt"},
	{"", "谷丙转氨酶（ALT）", "", "alt"},
	{"", "ALT 谷丙转氨酶", "", "alt"},
	{"", "丙胺酸轉胺酶(GPT)", "", "alt"},
	{"", "天门冬氨酸氨基转移酶(AST)", "U/L", "ast"},
	{"", "AST 谷草转氨酶", "", "ast"},
	{"", "SGOT", "", "ast"},
	{"", "γ-谷氨酰转移酶(GGT)", "", "ggt"},
	{"", "γ-穀氨醯轉移酶", "", "ggt"},
	{"", "r-GT", "", "ggt"},
	{"", "碱性磷酸酶", "", "alp"},
	{"", "鹼性磷酸酶(ALP)", "", "alp"},
	{"", "总胆红素(TBIL)", "μmol/L", "tbil"},
	{"", "Total Bilirubin 总胆红素", "", "tbil"},
	{"", "總膽紅素", "", "tbil"},
	{"", "直接胆红素(DBIL)", "", "dbil"},
	{"", "间接胆红素", "", "ibil"},
	{"", "总蛋白 TP", "g/L", "tp"},
	{"", "血清白蛋白", "g/L", "alb"},
	{"", "Albumin 白蛋白", "", "alb"},
	{"", "球蛋白", "", "glb"},
	{"", "白球比(A/G)", "", "ag_ratio"},
	{"", "总胆汁酸", "", "tba"},
	{"", "胆碱酯酶", "", "che"},
	// 肾功能
	{"肾功能", "肌酐(Cr)", "μmol/L", "creatinine"},
	{"", "血肌酐", "umol/l", "creatinine"},
	{"", "肌酸酐", "", "creatinine"},
	{"", "尿素(Urea)", "mmol/L", "urea"},
	{"", "尿素氮 BUN", "", "bun"},
	{"", "尿酸(UA)", "", "uric_acid"},
	{"", "胱抑素C", "mg/L", "cysc"},
	{"", "估算肾小球滤过率(eGFR)", "mL/min/1.73m²", "egfr"},
	{"", "β2-微球蛋白", "", "b2mg"},
	{"", "B2-MG", "", "b2mg"},
	// 血脂
	{"血脂", "总胆固醇(TC)", "mmol/L", "total_cholesterol"},
	{"", "血清总胆固醇", "", "total_cholesterol"},
	{"", "總膽固醇", "", "total_cholesterol"},
	{"", "CHOL", "", "total_cholesterol"},
	{"", "甘油三酯(TG)", "", "triglycerides"},
	{"", "三酸甘油酯", "", "triglycerides"},
	{"", "高密度脂蛋白胆固醇(HDL-C)", "", "hdl_c"},
	{"", "高密度脂蛋白", "", "hdl_c"},
	{"", "低密度脂蛋白胆固醇（LDL-C）", "", "ldl_c"},
	{"", "载脂蛋白A1", "", "apoa1"},
	{"", "载脂蛋白B", "g/L", "apob"},
	{"", "脂蛋白(a)", "mg/L", "lpa"},
	{"", "Lp(a)", "", "lpa"},
	// 血糖
	{"血糖", "空腹血糖(GLU)", "mmol/L", "glucose"},
	{"", "Glucose (GLU)", "", "glucose"},
	{"", "葡萄糖", "", "glucose"},
	{"生化", "葡萄糖", "", "glucose"},
	{"", "餐后2小时血糖", "", "glucose_2h"},
	{"", "糖化血红蛋白(HbA1c)", "%", "hba1c"},
	{"", "醣化血色素", "", "hba1c"},
	// 电解质
	{"电解质", "钾(K)", "mmol/L", "potassium"},
	{"", "血钾", "", "potassium"},
	{"", "鈉", "", "sodium"},
	{"", "氯(Cl)", "", "chloride"},
	{"", "钙", "", "calcium"},
	{"", "镁", "", "magnesium"},
	{"", "磷", "", "phosphorus"},
	{"", "二氧化碳结合力", "", "co2"},
	// 甲状腺
	{"甲功", "促甲状腺激素(TSH)", "μIU/mL", "tsh"},
	{"Thyroid", "Free T4", "pmol/L", "ft4"},
	{"", "游离T3(FT3)", "", "ft3"},
	{"", "游离三碘甲状腺原氨酸(FT3)", "", "ft3"},
	{"", "甲状腺过氧化物酶抗体(TPOAb)", "IU/mL", "tpoab"},
	{"", "甲状腺球蛋白抗体(TgAb)", "", "tgab"},
	{"", "TRAb", "", "trab"},
	{"甲功", "TG", "ng/mL", "thyroglobulin"},
	{"", "TG(甲状腺球蛋白)", "", "thyroglobulin"},
	// 肿瘤标志物
	{"", "甲胎蛋白(AFP)", "ng/mL", "afp"},
	{"", "癌胚抗原(CEA)", "", "cea"},
	{"", "糖类抗原125(CA125)", "U/mL", "ca125"},
	{"", "糖类抗原19-9(CA19-9)", "", "ca199"},
	{"", "CA 19-9", "", "ca199"},
	{"", "糖类抗原15-3", "", "ca153"},
	{"", "CA72-4", "", "ca724"},
	{"", "总前列腺特异性抗原(tPSA)", "ng/mL", "tpsa"},
	{"", "游离前列腺特异性抗原", "", "fpsa"},
	{"", "细胞角蛋白19片段(CYFRA21-1)", "", "cyfra211"},
	{"", "神经元特异性烯醇化酶(NSE)", "", "nse"},
	{"", "鳞状细胞癌抗原", "", "scc"},
	// 凝血
	{"凝血四项", "凝血酶原时间(PT)", "秒", "pt"},
	{"", "国际标准化比值", "", "inr"},
	{"", "PT-INR", "", "inr"},
	{"", "活化部分凝血活酶时间(APTT)", "s", "aptt"},
	{"", "凝血酶时间", "", "tt"},
	{"", "纤维蛋白原(FIB)", "g/L", "fib"},
	{"", "D-二聚体", "mg/L FEU", "d_dimer"},
	// 心肌
	{"心肌酶", "肌酸激酶(CK)", "U/L", "ck"},
	{"", "肌酸激酶同工酶(CK-MB)", "U/L", "ck_mb"},
	{"", "CK-MB", "ng/mL", "ck_mb_mass"},
	{"", "乳酸脱氢酶", "", "ldh"},
	{"", "α-羟丁酸脱氢酶", "", "hbdh"},
	{"", "高敏肌钙蛋白T", "ng/L", "ctnt"},
	{"", "肌钙蛋白I(cTnI)", "", "ctni"},
	{"", "肌红蛋白", "", "myoglobin"},
	{"", "NT-proBNP", "pg/mL", "nt_probnp"},
	{"", "脑钠肽", "", "bnp"},
	// 乙肝五项
	{"乙肝五项", "乙肝表面抗原(HBsAg)", "IU/mL", "hbsag"},
	{"", "HBsAg定量", "", "hbsag"},
	{"乙肝五项", "表面抗体", "", "hbsab"},
	{"", "乙肝表面抗体(HBsAb)", "mIU/mL", "hbsab"},
	{"", "抗-HBs", "", "hbsab"},
	{"", "HBeAg", "", "hbeag"},
	{"", "乙肝e抗体", "", "hbeab"},
	{"", "乙肝核心抗体", "", "hbcab"},
	{"", "乙型肝炎病毒DNA(HBV-DNA)", "IU/mL", "hbv_dna"},
	{"", "B型肝炎表面抗原", "", "hbsag"},
	// others
	{"", "同型半胱氨酸", "μmol/L", "homocysteine"},
	{"", "維生素B12", "", "b12"},
	{"", "叶酸", "", "folate"},
	{"", "25-羟基维生素D", "ng/mL", "vitd25"},
	{"", "皮质醇", "", "cortisol"},
	{"性激素六项", "睾酮", "", "testosterone"},
	{"", "雌二醇(E2)", "", "estradiol"},
	{"", "孕酮", "", "progesterone"},
	{"", "泌乳素(PRL)", "", "prolactin"},
	{"", "黄体生成素", "", "lh"},
	{"", "卵泡刺激素", "", "fsh"},
	{"", "Insulin", "μIU/mL", "insulin"},
	{"", "C肽", "", "c_peptide"},
	{"炎症", "C反应蛋白", "mg/L", "crp"},
	{"", "超敏C反应蛋白(hs-CRP)", "", "hscrp"},
	{"", "血沉", "mm/h", "esr"},
	{"", "降钙素原", "ng/mL", "procalcitonin"},
	{"炎症", "PCT", "", "procalcitonin"},
	{"", "PCT", "ng/mL", "procalcitonin"},
	{"铁代谢", "铁蛋白", "ng/mL", "ferritin"},
	{"", "血清铁", "", "serum_iron"},
	{"", "总铁结合力", "", "tibc"},
	{"", "转铁蛋白", "", "transferrin"},
	{"血气分析", "pH", "", "bg_ph"},
	{"血气分析", "PaCO2", "mmHg", "pco2"},
	{"", "HCO3-", "", "hco3"},
	{"", "乳酸(Lac)", "", "lactate"},
	{"", "淀粉酶", "", "amylase"},
	// vital signs: T, P, R are not testosterone, phosphorus
	{"一般检查", "T", "℃", "body_temperature"},
	{"一般检查", "P", "次/分", "heart_rate"},
	{"", "P", "次/分", "heart_rate"},
	{"", "T", "°C", "body_temperature"},
	{"", "P", "mmol/L", "phosphorus"},
	{"", "T", "nmol/L", "testosterone"},
	{"一般检查", "收缩压", "mmHg", "sbp"},
	// row numbers and marks
	{"血常规", "1.白细胞", "", "wbc"},
	{"", "12、血糖", "", "glucose"},
	{"", "★谷丙转氨酶 (ALT)*", "", "alt"},
	{"", "25-羟基维生素D3", "", "vitd25"},
}

func TestLookupPrinted(t *testing.T) {
	l := Default()
	for _, tc := range printed {
		a, ok := l.Match(tc.group, tc.name, tc.unit)
		if !ok || a.Key != tc.want {
			t.Errorf("Match(%q, %q, %q) = %s, want %s", tc.group, tc.name, tc.unit, keyOf(a), tc.want)
		}
	}
	if len(printed) < 80 {
		t.Errorf("%d printed names, want at least 80", len(printed))
	}
}

// Near misses: a name that is close to another analyte's must not match it. want "" means no
// match at all.
func TestLookupNearMiss(t *testing.T) {
	l := Default()
	for _, tc := range []struct{ group, name, unit, want string }{
		{"", "HDL", "", "hdl_c"},
		{"", "LDL", "", "ldl_c"},
		{"", "VLDL", "", "vldl_c"},
		{"", "非高密度脂蛋白胆固醇", "", "non_hdl_c"},
		{"", "直接胆红素", "", "dbil"},
		{"", "间接胆红素", "", "ibil"},
		{"", "总胆红素", "", "tbil"},
		{"", "尿葡萄糖", "", "urine_glucose"},
		{"", "葡萄糖", "", "glucose"},
		{"尿常规", "葡萄糖", "", "urine_glucose"},
		{"血常规", "红细胞", "", "rbc"},
		{"尿常规", "红细胞", "", "urine_rbc"},
		{"", "红细胞", "", "rbc"},
		{"尿常规", "白细胞", "", "urine_wbc"},
		{"血常规", "白细胞", "", "wbc"},
		{"", "尿肌酐", "", "urine_creatinine"},
		{"", "尿蛋白", "", "urine_protein"},
		{"", "总蛋白", "", "tp"},
		{"", "尿微量白蛋白", "", "urine_microalbumin"},
		{"", "白蛋白", "", "alb"},
		{"", "前白蛋白", "", "prealbumin"},
		{"", "游离T4", "", "ft4"},
		{"", "T4", "", "t4"},
		{"", "FT3", "", "ft3"},
		{"", "游离PSA", "", ""},
		{"", "fPSA", "", "fpsa"},
		{"", "tPSA", "", "tpsa"},
		{"", "超敏C反应蛋白", "", "hscrp"},
		{"", "C反应蛋白", "", "crp"},
		{"", "TG", "", "triglycerides"},
		{"", "TgAb", "", "tgab"},
		{"", "TT", "", "tt"},
		{"", "TT3", "", "t3"},
		{"", "PT", "", "pt"},
		{"", "PTA", "", "pta"},
		{"", "PTH", "", "pth"},
		{"", "尿素", "", "urea"},
		{"", "尿素氮", "", "bun"},
		{"", "尿酸", "", "uric_acid"},
		{"", "血酮体", "", ""},
		{"", "酮体", "", ""},
		{"", "pH", "", ""},
		{"", "胆红素", "", ""},
		{"", "餐后2小时血糖", "", "glucose_2h"},
		{"", "糖化白蛋白", "", "glycated_albumin"},
		{"", "肌酸激酶", "", "ck"},
		{"", "肌酸激酶同工酶", "", "ck_mb"},
		{"", "CK-MB质量", "", "ck_mb_mass"},
		{"", "肌钙蛋白T", "", "ctnt"},
		{"", "肌钙蛋白I", "", "ctni"},
		{"", "乙肝表面抗原", "", "hbsag"},
		{"", "乙肝表面抗体", "", "hbsab"},
		{"", "乙肝e抗原", "", "hbeag"},
		{"", "乙肝e抗体", "", "hbeab"},
		{"", "血压", "", "blood_pressure"},
		{"", "收缩压", "", "sbp"},
		{"", "身高", "", "height"},
		{"", "视力", "", ""},
		{"", "尿量", "", ""},
		{"", "备注", "", ""},
		{"", "血小板", "", "plt"},
		{"", "血小板压积", "", "plateletcrit"},
		{"", "平均血小板体积", "", "mpv"},
		{"", "血红蛋白", "", "hgb"},
		{"", "平均红细胞血红蛋白量", "", "mch"},
		{"", "平均红细胞血红蛋白浓度", "", "mchc"},
		{"", "糖化血红蛋白", "", "hba1c"},
		{"", "镁", "", "magnesium"},
		{"", "钙离子", "", "ionized_calcium"},
		{"", "钙", "", "calcium"},
		{"", "铁", "", "serum_iron"},
		{"", "铁蛋白", "", "ferritin"},
		{"", "转铁蛋白饱和度", "", "tsat"},
		{"", "", "", ""},
		{"", "()", "", ""},
		{"", "（", "", ""},
	} {
		a, ok := l.Match(tc.group, tc.name, tc.unit)
		if got := keyOf(a); (tc.want == "" && ok) || (tc.want != "" && got != tc.want) {
			t.Errorf("Match(%q, %q, %q) = %s, want %s", tc.group, tc.name, tc.unit, got, tc.want)
		}
	}
}

func TestSection(t *testing.T) {
	l := Default()
	for _, tc := range []struct{ group, want string }{
		{"血常规", "cbc"}, {"血常規", "cbc"}, {"血常规(五分类)", "cbc"}, {"CBC", "cbc"},
		{"尿常规", "urine"}, {"尿液分析", "urine"}, {"尿沉渣定量", "urine"}, {"尿常规+沉渣", "urine"},
		{"粪便常规+隐血", "stool"}, {"肝功能", "liver"}, {"肾功能", "kidney"}, {"血脂四项", "lipid"},
		{"甲功", "thyroid"}, {"甲状腺功能", "thyroid"}, {"Thyroid", "thyroid"}, {"肿瘤标志物", "tumor"},
		{"凝血四项", "coag"}, {"心肌酶谱", "cardiac"}, {"乙肝五项", "hbv"}, {"血气分析", "bloodgas"},
		{"生化", "other"}, {"", ""}, {"一般检查", "vitals"}, {"检验报告", ""}, {"尿素肌酐血", ""},
	} {
		s, _ := l.Section(tc.group)
		if s.Key != tc.want {
			t.Errorf("Section(%q) = %q, want %q", tc.group, s.Key, tc.want)
		}
	}
}

// Units match whatever way they are printed.
func TestUnits(t *testing.T) {
	l := Default()
	for _, tc := range []struct{ analyte, printed, want string }{
		{"wbc", "×10^9/L", "×10^9/L"},
		{"wbc", "x10^9/L", "×10^9/L"},
		{"wbc", "10^9/L", "×10^9/L"},
		{"wbc", "10*9/L", "×10^9/L"},
		{"wbc", "10**9/L", "×10^9/L"},
		{"wbc", "×10⁹/L", "×10^9/L"},
		{"wbc", "10E9/L", "×10^9/L"},
		{"wbc", "×109/L", "×10^9/L"},
		{"wbc", "*10^9/l", "×10^9/L"},
		{"wbc", "× 10^9 / L", "×10^9/L"},
		{"wbc", "G/L", "G/L"},
		{"wbc", "×10³/μL", "×10^3/μL"},
		{"urine_rbc", "个/μL", "个/μL"},
		{"urine_wbc", "个/HP", "/HP"},
		{"rbc", "×10^12/L", "×10^12/L"},
		{"rbc", "10*12/L", "×10^12/L"},
		{"rbc", "×10¹²/L", "×10^12/L"},
		{"glucose", "mmol/L", "mmol/L"},
		{"glucose", "mmol/l", "mmol/L"},
		{"glucose", "MMOL/L", "mmol/L"},
		{"glucose", "ｍｍｏｌ／Ｌ", "mmol/L"},
		{"glucose", "mg/dl", "mg/dL"},
		{"creatinine", "μmol/L", "μmol/L"},
		{"creatinine", "umol/L", "μmol/L"},
		{"creatinine", "µmol/L", "μmol/L"},
		{"creatinine", "umol/l", "μmol/L"},
		{"hgb", "g/L", "g/L"},
		{"hgb", "ｇ／Ｌ", "g/L"},
		{"hgb", "g/dL", "g/dL"},
		{"tsh", "μIU/mL", "μIU/mL"},
		{"tsh", "uIU/ml", "μIU/mL"},
		{"tsh", "mIU/L", "mIU/L"},
		{"tsh", "μU/mL", "μU/mL"},
		{"urine_rbc", "/HPF", "/HP"},
		{"urine_rbc", "个/HP", "/HP"},
		{"urine_rbc", "cells/HPF", "/HP"},
		{"urine_casts", "/LPF", "/LP"},
		{"pt", "秒", "s"},
		{"pt", "S", "s"},
		{"neut_pct", "％", "%"},
		{"inr", "", ""},
		{"egfr", "mL/min/1.73m²", "mL/min/1.73m²"},
		{"egfr", "ml/min/1.73m2", "mL/min/1.73m²"},
		{"egfr", "mL/min/1.73 m^2", "mL/min/1.73m²"},
		{"bmi", "kg/m^2", "kg/m²"},
		{"urine_rbc", "个/HPF", "/HP"},
		{"hbv_dna", "×10^3 IU/mL", "×10^3 IU/mL"},
		{"d_dimer", "mg/L FEU", "mg/L FEU"},
		{"d_dimer", "μg/mL FEU", "μg/mL FEU"},
	} {
		a, _ := l.Analyte(tc.analyte)
		u, ok := a.Unit(tc.printed)
		if !ok || u.Name != tc.want {
			got := "none"
			if ok {
				got = u.Name
			}
			t.Errorf("%s.Unit(%q) = %s, want %s", tc.analyte, tc.printed, got, tc.want)
		}
	}
	for _, tc := range []struct{ analyte, printed string }{
		{"glucose", "g/L/s"}, {"glucose", "%"}, {"wbc", "个/μL"}, {"wbc", "×10^12/L"}, {"rbc", "×10^9/L"}, {"hgb", "mg/L"},
	} {
		a, _ := l.Analyte(tc.analyte)
		if u, ok := a.Unit(tc.printed); ok {
			t.Errorf("%s.Unit(%q) = %s, want none", tc.analyte, tc.printed, u.Name)
		}
	}
}

// The limits catch the misreads the issue names: a lost decimal point, a range of another unit.
func TestLimitsCatchMisreads(t *testing.T) {
	l := Default()
	for _, tc := range []struct {
		analyte, unit string
		v             float64
		inside        bool
	}{
		{"total_cholesterol", "mmol/L", 586, false},
		{"total_cholesterol", "mmol/L", 5.86, true},
		{"total_cholesterol", "mg/dL", 226, true},
		{"glucose", "mmol/L", 110, true},
		{"glucose", "mmol/L", 0.1, false},
		{"glucose", "mg/dL", 3000, false},
		{"hgb", "g/L", 1350, false},
		{"hgb", "g/dL", 13.5, true},
		{"potassium", "mmol/L", 42, false},
		{"sodium", "mmol/L", 14.0, false},
		{"creatinine", "μmol/L", 0.8, false},
		{"creatinine", "mg/dL", 0.8, true},
		{"wbc", "×10^9/L", 6500, false},
		{"wbc", "/μL", 6500, true},
	} {
		a, _ := l.Analyte(tc.analyte)
		lo, hi, ok := a.Limits(tc.unit)
		if !ok {
			t.Errorf("%s %s: no limits", tc.analyte, tc.unit)
			continue
		}
		if in := tc.v >= lo && tc.v <= hi; in != tc.inside {
			t.Errorf("%s %g %s inside %g..%g = %v, want %v", tc.analyte, tc.v, tc.unit, lo, hi, in, tc.inside)
		}
	}
}

// Computing an answer allocates nothing (a lexicon from Parse has no memo), and neither does a
// remembered one. The remembered answers are asked one name at a time: the memo has two slots per
// name under a random seed, so a run of many names may evict one of them by another (and pay
// its entry again) in an unlucky process; what must hold is that an answer once remembered
// costs nothing.
func TestLookupAllocs(t *testing.T) {
	cold, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, tc := range printed {
			if a, ok := cold.Match(tc.group, tc.name, tc.unit); ok {
				a.Unit(tc.unit)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("computed: %v allocations per run of %d lookups, want 0", allocs, len(printed))
	}
	warm := Default()
	for _, tc := range printed {
		allocs := testing.AllocsPerRun(20, func() {
			if a, ok := warm.Match(tc.group, tc.name, tc.unit); ok {
				a.Unit(tc.unit)
			}
		})
		if allocs != 0 {
			t.Errorf("remembered %q: %v allocations per lookup, want 0", tc.name, allocs)
		}
	}
}

// A remembered answer is the computed one, for every name, and a full memo stays bounded.
func TestMemoAgrees(t *testing.T) {
	cold, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	warm, _ := Parse(data)
	warm.memo = newMemo()
	for round := 0; round < 2; round++ {
		for _, tc := range printed {
			a, ua, _ := cold.Find(tc.group, tc.name, tc.unit)
			b, ub, _ := warm.Find(tc.group, tc.name, tc.unit)
			if a != nil && b != nil && a.Key != b.Key || (a == nil) != (b == nil) {
				t.Errorf("Find(%q, %q, %q): memo %s, computed %s", tc.group, tc.name, tc.unit, keyOf(b), keyOf(a))
			}
			if (ua == nil) != (ub == nil) || ua != nil && ua.Name != ub.Name {
				t.Errorf("Find(%q, %q, %q): memo unit %v, computed %v", tc.group, tc.name, tc.unit, ub, ua)
			}
		}
	}
	// Far more distinct names than slots: the memo keeps at most one entry per slot.
	for i := 0; i < 3*memoSlots; i++ {
		warm.Match("", "x"+strconv.Itoa(i), "")
	}
	n := 0
	for i := range warm.memo.slots {
		if warm.memo.slots[i].Load() != nil {
			n++
		}
	}
	if n > memoSlots {
		t.Errorf("%d entries", n)
	}
	if a, ok := warm.Match("", "总胆固醇", ""); !ok || a.Key != "total_cholesterol" {
		t.Errorf("after churn: %s", keyOf(a))
	}
}

// The fast path gives the answer the full way gives, for every name of the table under every
// group, and for the printed names.
func TestFastPathAgrees(t *testing.T) {
	l := Default()
	groups := []string{""}
	for _, s := range l.Sections() {
		groups = append(groups, s.Name)
	}
	check := func(group, name, unit string) {
		sec := l.sectionIndex(group)
		u := lazyUnit{s: unit}
		fast := l.fast(sec, name, &u)
		if fast == nil {
			return
		}
		u = lazyUnit{s: unit}
		if full, _ := l.full(sec, name, &u); full != fast {
			t.Errorf("Match(%q, %q, %q): fast path %s, full way %s", group, name, unit, fast.Key, keyOf(full))
		}
	}
	for _, a := range l.Analytes() {
		for _, g := range groups {
			for _, n := range append(append([]string{}, a.Names...), a.SectionNames...) {
				units := []string{""}
				if len(a.Units) > 0 {
					units = append(units, a.Units[0].Name, a.Units[len(a.Units)-1].Name)
				}
				for _, u := range units {
					check(g, n, u)
				}
				if g != "" && g != "尿常规" && g != "血常规" {
					continue
				}
				for _, b := range []string{"ALT", "红细胞", "尿"} {
					check(g, n+"("+b+")", "")
					check(g, b+"（"+n+"）", "")
				}
			}
		}
	}
	for _, tc := range printed {
		check(tc.group, tc.name, tc.unit)
	}
}

func FuzzMatch(f *testing.F) {
	for _, tc := range printed {
		f.Add(tc.group, tc.name, tc.unit)
	}
	f.Add("", strings.Repeat("（", 300), "")
	f.Add("尿", "~", "×10^")
	f.Add("", "1.", "10**")
	f.Fuzz(func(t *testing.T, group, name, unit string) {
		l := Default()
		a, ok := l.Match(group, name, unit)
		if ok != (a != nil) {
			t.Fatalf("Match(%q, %q, %q) = %v, %v", group, name, unit, a, ok)
		}
		if ok {
			a.Unit(unit)
			a.Limits(unit)
			if c := a.Canonical(); c != nil {
				a.Convert(1, unit, c.Name)
			}
		}
	})
}

// A long hostile name costs no more than a name of the longest length that can match.
func TestLongInput(t *testing.T) {
	l := Default()
	long := strings.Repeat("总胆固醇(", 100000)
	if a, ok := l.Match(long, long, long); ok {
		t.Errorf("matched %s", a.Key)
	}
}

// Each printed name still matches when written in full-width characters, in Traditional
// characters, in the other case, or with spaces around it.
func TestLookupVariants(t *testing.T) {
	s2t, err := opencc.New("s2t")
	if err != nil {
		t.Fatal(err)
	}
	l := Default()
	for _, tc := range printed {
		trad, _ := s2t.Convert(tc.name)
		for _, v := range []string{fullWidth(tc.name), trad, strings.ToUpper(tc.name), strings.ToLower(tc.name), "  " + tc.name + " "} {
			if a, ok := l.Match(tc.group, v, tc.unit); !ok || a.Key != tc.want {
				t.Errorf("Match(%q, %q, %q) = %s, want %s", tc.group, v, tc.unit, keyOf(a), tc.want)
			}
		}
	}
}

func fullWidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > ' ' && r <= '~' {
			r += 0xFEE0
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Concurrent callers share the memo safely (run with -race).
func TestMemoConcurrent(t *testing.T) {
	l, _ := Parse(data)
	l.memo = newMemo()
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- true }()
			for i := 0; i < 3; i++ {
				for _, tc := range printed {
					if a, _, ok := l.Find(tc.group, tc.name, tc.unit); !ok || a.Key != tc.want {
						t.Errorf("Find(%q, %q, %q) = %s, want %s", tc.group, tc.name, tc.unit, keyOf(a), tc.want)
						return
					}
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
