package draft

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestQuickSound: whatever quick vouches for, the validator passes, for rows of every length
// about each limit, in one-byte and three-byte characters; and quick is in use for rows.
func TestQuickSound(t *testing.T) {
	if !rowRules.ok || len(rowRules.fields) == 0 {
		t.Fatal("quick knows none of the row's rules: every row goes to the validator")
	}
	b := New(lexicon.Default())
	rnd := rand.New(rand.NewPCG(1, 2))
	text := func() *string {
		if rnd.IntN(4) == 0 {
			return nil
		}
		unit := []string{"a", "血", "é"}[rnd.IntN(3)]
		n := []int{0, 1, 49, 50, 51, 66, 67, 199, 200, 201, 600}[rnd.IntN(11)]
		s := strings.Repeat(unit, n)
		return &s
	}
	vouched, judged := 0, 0
	for range 20000 {
		ind := schema.OcrIndicator{ItemGroup: text(), ValueText: text(), Unit: text(), RefText: text()}
		if s := text(); s != nil {
			ind.ItemName = *s
		}
		if !rowRules.keeps(reflect.ValueOf(&ind)) {
			judged++
			continue
		}
		vouched++
		if err := b.validate.Struct(ind); err != nil {
			t.Fatalf("quick vouched for a row the validator refuses (%v): %+v", err, ind)
		}
	}
	if vouched == 0 || judged == 0 {
		t.Errorf("vouched %d, judged %d: the cases do not reach both sides", vouched, judged)
	}
}

// TestQuickUnknownRules: a rule quick does not know leaves every value to the validator.
func TestQuickUnknownRules(t *testing.T) {
	type other struct {
		Year *int   `validate:"omitempty,gte=1900"`
		Name string `validate:"required,max=20"`
	}
	type email struct {
		A string `validate:"omitempty,email"`
	}
	type nested struct {
		In struct{ A string }
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[other](), reflect.TypeFor[email](), reflect.TypeFor[nested]()} {
		if q := quickRules(typ); q.ok {
			t.Errorf("%v: quick claims to know its rules", typ)
		}
	}
}
