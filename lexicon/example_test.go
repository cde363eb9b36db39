package lexicon_test

import (
	"fmt"

	"github.com/ocrdraft/ocrdraft/lexicon"
)

// A check finds the analyte of a row, its unit, and what is possible in that unit.
func Example() {
	l := lexicon.Default()
	a, u, _ := l.Find("血脂", "总胆固醇(TC)", "mmol/l")
	lo, hi, _ := u.Limits()
	fmt.Println(a.Key, a.Section, u.Name, lo, hi)
	mg, _ := a.Convert(5.2, "mmol/L", "mg/dL")
	fmt.Printf("5.2 mmol/L = %.1f mg/dL\n", mg)

	b, _ := l.Match("尿常规", "红细胞", "/HPF")
	c, _ := l.Match("", "紅血球計數", "×10⁹/L")
	fmt.Println(b.Key, c.Key)
	// Output:
	// total_cholesterol lipid mmol/L 0.5 50
	// 5.2 mmol/L = 201.1 mg/dL
	// urine_rbc rbc
}
