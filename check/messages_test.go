package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// checked is one draft the checks ran on and the warnings they gave.
type checked struct {
	name string
	d    *schema.OcrDraft
	ws   []schema.Warning
}

// everyChecked runs the checks on every draft the tests hold: each rule's cases, the testdata
// drafts (clean and misread), and the captured replies as draft reads them, each for no sex,
// male and female.
func everyChecked(t *testing.T) []checked {
	t.Helper()
	var out []checked
	lex := lexicon.Default()
	add := func(name string, d schema.OcrDraft, who Context) {
		d.Indicators = slices.Clone(d.Indicators)
		ws := Run(lex, &d, who)
		out = append(out, checked{name, &d, ws})
	}
	for code, cs := range cases {
		for _, c := range cs {
			add(string(code)+"/"+c.name, schema.OcrDraft{Indicators: c.rows}, c.ctx)
		}
	}
	files, _ := filepath.Glob("testdata/ck-*.json")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var td testDraft
		if err := json.Unmarshal(raw, &td); err != nil {
			t.Fatal(f, err)
		}
		for _, sex := range []Sex{td.Context.Sex, Male, Female} {
			add(filepath.Base(f), td.Draft, Context{Sex: sex, Confirmed: td.Context.Confirmed})
		}
	}
	replies, _ := filepath.Glob("../testdata/replies/*.txt")
	b := draft.New(lex)
	for _, f := range replies {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.FromReply(string(raw), strings.HasSuffix(f, ".length.txt"))
		if err != nil {
			continue
		}
		for _, sex := range []Sex{"", Male, Female} {
			add(filepath.Base(f), res.Draft, Context{Sex: sex})
		}
	}
	if len(files) == 0 || len(replies) == 0 {
		t.Fatal("no testdata drafts or replies")
	}
	return out
}

var rowPath = regexp.MustCompile(`^indicators\[(\d+)\]`)

// TestMessagesNameTheirItem: every warning the checks give names, in English and in Chinese,
// the row it is about (its params.itemName is that row's name), and a figure it quotes as a
// limit is a limit of that row's own item, so that no row gets a sentence of another item's
// rule (a creatinine told it "cannot be a specific gravity").
func TestMessagesNameTheirItem(t *testing.T) {
	lex := lexicon.Default()
	n := 0
	for _, c := range everyChecked(t) {
		for _, w := range c.ws {
			if w.Reason == "more" || w.Path == nil {
				continue
			}
			m := rowPath.FindStringSubmatch(*w.Path)
			if m == nil {
				t.Errorf("%s: %s %s: not a row's path", c.name, w.Code, *w.Path)
				continue
			}
			i, _ := strconv.Atoi(m[1])
			ind := c.d.Indicators[i]
			n++
			if w.Params["itemName"] != ind.ItemName {
				t.Errorf("%s: %s/%s at %s: params.itemName %q, the row is %q", c.name, w.Code, w.Reason, *w.Path, w.Params["itemName"], ind.ItemName)
			}
			for _, lang := range []string{msg.En, msg.Zh} {
				if text := msg.Text(w, lang); !strings.Contains(text, ind.ItemName) {
					t.Errorf("%s: %s/%s (%s) does not name its row %q: %s", c.name, w.Code, w.Reason, lang, ind.ItemName, text)
				}
			}
			lo, hi := w.Params["limitLow"], w.Params["limitHigh"]
			if w.Code != schema.ValueImplausible || lo == "" {
				continue
			}
			a, u, ok := lex.Find(str(ind.ItemGroup), ind.ItemName, str(ind.Unit))
			if ind.Analyte != nil {
				a, ok = lex.Analyte(*ind.Analyte)
				u, _ = a.Unit(str(ind.Unit))
			}
			if !ok {
				t.Errorf("%s: %s/%s about %q, which is no known item", c.name, w.Code, w.Reason, ind.ItemName)
				continue
			}
			if !ownLimits(a, u, lo, hi) {
				t.Errorf("%s: %s/%s about %s quotes limits %s–%s, which are not %s's", c.name, w.Code, w.Reason, ind.ItemName, lo, hi, a.Key)
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d warnings about rows looked at", n)
	}
}

// ownLimits reports whether lo–hi are analyte a's limits in unit u, or in any of its units, or
// the widest over them.
func ownLimits(a *lexicon.Analyte, u *lexicon.Unit, lo, hi string) bool {
	same := func(l, h float64) bool { return format(l) == lo && format(h) == hi }
	if u != nil {
		if l, h, ok := u.Limits(); ok && same(l, h) {
			return true
		}
	}
	if l, h, ok := anyLimits(a); ok && same(l, h) {
		return true
	}
	return false
}

// TestMessagesNameNoItem: no sentence of a check's row names an item of the lexicon outside its
// params: an item's name in a sentence ("cannot be a specific gravity", "比重") would be said of
// every row the reason is given to, whatever its item.
func TestMessagesNameNoItem(t *testing.T) {
	placeholder := regexp.MustCompile(`\{[^}]*\}`)
	var names []string
	for _, a := range lexicon.Default().Analytes() {
		for _, n := range append(slices.Clone(a.Names), a.SectionNames...) {
			n = strings.TrimPrefix(n, "~")
			if han(n) && utf8.RuneCountInString(n) >= 2 || !han(n) && len(n) >= 4 {
				names = append(names, strings.ToLower(n))
			}
		}
	}
	for _, row := range msg.Rows {
		if !slices.ContainsFunc(Rules, func(r Rule) bool { return r.Code == row.Code }) {
			continue
		}
		for _, text := range []string{row.En, row.Zh} {
			text = strings.ToLower(placeholder.ReplaceAllString(text, " "))
			for _, n := range names {
				if at := strings.Index(text, n); at >= 0 && (han(n) || wholeWord(text, at, len(n))) {
					t.Errorf("%s/%s names the item %q: %s", row.Code, row.Reason, n, text)
				}
			}
		}
	}
}

func han(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// wholeWord reports whether text[at:at+n] is a whole word.
func wholeWord(text string, at, n int) bool {
	isLetter := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	if at > 0 {
		if r, _ := utf8.DecodeLastRuneInString(text[:at]); isLetter(r) {
			return false
		}
	}
	if at+n < len(text) {
		if r, _ := utf8.DecodeRuneInString(text[at+n:]); isLetter(r) {
			return false
		}
	}
	return true
}
