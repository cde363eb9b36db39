package check

import (
	"context"
	"image"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/schema"
)

// pageShapes are text layers and drafts that made OnPage's work grow with the square of the
// page: n words and n rows each.
var pageShapes = []struct {
	name string
	page func(n int) ([]intake.Word, []schema.OcrIndicator)
}{
	// One number printed n times, and n rows of it under names not printed: each place was
	// chained by walking to the end of the number's places, and each row walked every word.
	{"zeros", func(n int) ([]intake.Word, []schema.OcrIndicator) {
		words := make([]intake.Word, n)
		for i := range words {
			words[i] = intake.Word{Text: "0", Box: image.Rect(40*(i%50), 20*(i/50), 40*(i%50)+30, 20*(i/50)+12)}
		}
		return words, gen(n, func(i int) schema.OcrIndicator { return in("项目"+strconv.Itoa(i), "", "0", "", "", page(1)) })
	}},
	// One line of names, each with its value: every row's name is printed, and each row read
	// the line's value of another (offRow), whose line walk looked at every word.
	{"one line", func(n int) ([]intake.Word, []schema.OcrIndicator) {
		words := make([]intake.Word, n)
		for i := range words {
			t := "N" + strconv.Itoa(i/2)
			if i%2 == 1 {
				t = strconv.Itoa(i / 2)
			}
			words[i] = intake.Word{Text: t, Box: image.Rect(40*i, 0, 40*i+30, 12)}
		}
		return words, gen(n, func(i int) schema.OcrIndicator {
			return in("N"+strconv.Itoa(i%(n/2)), "", strconv.Itoa((i+1)%(n/2)), "", "", page(1))
		})
	}},
	// Names held inside one long word, and every row's value printed twice: each name's
	// holder was searched through every word.
	{"held names", func(n int) ([]intake.Word, []schema.OcrIndicator) {
		words := make([]intake.Word, n)
		for i := range words {
			words[i] = intake.Word{Text: "x" + strconv.Itoa(i%(n/2)) + "y", Box: image.Rect(40*(i%50), 20*(i/50), 40*(i%50)+30, 20*(i/50)+12)}
		}
		return words, gen(n, func(i int) schema.OcrIndicator {
			return in("x"+strconv.Itoa(i%(n/2)), "", strconv.Itoa(i%(n/2)), "", "", page(1))
		})
	}},
}

// TestOnPageWork: OnPage's counted work is at most a constant times the page's text and the
// draft's numbers, whatever their shape.
func TestOnPageWork(t *testing.T) {
	for _, sh := range pageShapes {
		for _, n := range []int{100, 10000} {
			words, rows := sh.page(n)
			chars := 0
			for _, w := range words {
				chars += len(w.Text) + 1
			}
			_, _, work, err := onPage(nil, &schema.OcrDraft{Indicators: rows}, [][]intake.Word{words})
			if err != nil {
				t.Fatal(err)
			}
			// A few looks at each word (its text, its numbers, the numbers beside a name), one at
			// each character (the suffix array), and a few places for each number of the draft;
			// on a page of at most walkWords words, two walks of them for each number.
			limit := 4*n + chars + 8*len(rows)
			if n <= walkWords {
				limit += 2 * n * len(rows)
			}
			if work > limit {
				t.Errorf("%s/%d: work %d, over %d", sh.name, n, work, limit)
			}
		}
	}
}

// TestOnPageStops: past its deadline OnPageContext returns the deadline's error, nothing else.
func TestOnPageStops(t *testing.T) {
	words, rows := pageShapes[0].page(1000)
	ws, ev, err := OnPageContext(&ending{Context: context.Background(), after: 2}, &schema.OcrDraft{Indicators: rows}, [][]intake.Word{words})
	if err != context.DeadlineExceeded || ws != nil || ev != nil {
		t.Errorf("%d warnings, %d evidence, %v: want none, the deadline's error", len(ws), len(ev), err)
	}
}

// TestNameBoxWalk holds the indexed nameBox and numbersBeside to the walks of every word that
// a short page does, on random lines of short words.
func TestNameBoxWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{"K", "CK", "K+", "Cr", "12", "3.5", "KK", "10^9/L", "Cr(肌酐)", "肌酐"}
	for round := range 3000 {
		words := make([]intake.Word, 1+rng.IntN(12))
		for i := range words {
			x, y := rng.IntN(200), rng.IntN(60)
			words[i] = intake.Word{Text: texts[rng.IntN(len(texts))], Box: image.Rect(x, y, x+5+rng.IntN(40), y+5+rng.IntN(15))}
		}
		p := read(words)
		p.index() // as a page of more than walkWords words is
		for _, name := range []string{"K", "Cr", "肌酐", "C", "12"} {
			box, ok := p.nameBox(name)
			wbox, wok := walkNameBox(words, name)
			if ok != wok || ok && box != wbox {
				t.Fatalf("round %d %q: %v %v, walk %v %v (%v)", round, name, box, ok, wbox, wok, words)
			}
			if !ok {
				continue
			}
			want := false
			for _, w := range words {
				if !w.Box.Overlaps(box) && p.sameLine(box, w.Box) && plainNumber(w.Text) {
					want = true
				}
			}
			if got := p.numbersBeside(box); got != want {
				t.Fatalf("round %d %q: numbers beside %v, walk %v (%v)", round, name, got, want, words)
			}
		}
	}
}

// BenchmarkOnPageHostile: each page shape at 10,000 words (about maxTextChars' worth) and rows.
// go test ./check -run '^$' -bench OnPageHostile -benchtime 1x -cpu 1
func BenchmarkOnPageHostile(b *testing.B) {
	for _, sh := range pageShapes {
		words, rows := sh.page(10000)
		b.Run(sh.name, func(b *testing.B) {
			for b.Loop() {
				OnPage(&schema.OcrDraft{Indicators: rows}, [][]intake.Word{words})
			}
		})
	}
}

// TestOnPageListedCap: OnPage lists maxListed warnings and counts the rest in one more.
func TestOnPageListedCap(t *testing.T) {
	words, rows := pageShapes[0].page(1000)
	for i := range rows[500:] {
		v := schema.MustDecimal("7")
		rows[500+i].ValueNum = &v // printed nowhere on the page of zeros
	}
	ws, _ := OnPage(&schema.OcrDraft{Indicators: rows}, [][]intake.Word{words})
	if len(ws) != maxListed+1 || ws[maxListed].Path != nil || ws[maxListed].Params["count"] != strconv.Itoa(500-maxListed) {
		t.Fatalf("%d warnings, the last %+v: want %d and one counting %d", len(ws), ws[len(ws)-1], maxListed, 500-maxListed)
	}
}
