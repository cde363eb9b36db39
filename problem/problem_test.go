package problem

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/internal/doctable"
)

func TestCodes(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range Codes {
		if seen[c.Code] {
			t.Errorf("code %s is in the table twice", c.Code)
		}
		seen[c.Code] = true
		if c.Status < 400 || c.Status > 599 || c.Title == "" || c.Meaning == "" {
			t.Errorf("row %+v is incomplete", c)
		}
	}
	if Lookup("no_such_code").Code != Internal {
		t.Errorf("an unknown code does not fall back to internal_error")
	}
}

func TestFrom(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:443: sk-secret")
	wrapped := fmt.Errorf("extract: %w", &Error{Code: ModelTimeout, Detail: "no answer in 120s", Err: secret})
	doc := From(wrapped)
	if doc.Code != ModelTimeout || doc.Status != http.StatusGatewayTimeout || doc.Detail != "no answer in 120s" || doc.Type != "urn:ocrdraft:problem:model_timeout" {
		t.Errorf("From(wrapped) = %+v", doc)
	}
	doc = From(secret)
	if doc.Code != Internal || strings.Contains(doc.Detail, "sk-secret") || strings.Contains(doc.Detail, "10.0.0.7") {
		t.Errorf("From(plain error) = %+v, want internal_error saying nothing of the cause", doc)
	}
	if CodeOf(wrapped) != ModelTimeout || CodeOf(secret) != Internal {
		t.Errorf("CodeOf is wrong")
	}
}

var update = flag.Bool("update", false, "rewrite the generated tables in docs/")

// TestDocs: docs/errors.md's table of problem codes is generated from Codes.
func TestDocs(t *testing.T) {
	var b strings.Builder
	b.WriteString(doctable.Row("code", "status", "title", "what to do"))
	b.WriteString("|---|---|---|---|\n")
	for _, c := range Codes {
		b.WriteString(doctable.Row("`"+string(c.Code)+"`", strconv.Itoa(c.Status), c.Title, c.Meaning))
	}
	doctable.Check(t, "../docs/errors.md", "problems", b.String(), *update)
}

// TestFromCapsFields: a draft broken in 63 000 places answers with MaxFields of them and a count
// of the rest, not with an error list many times the draft's size.
func TestFromCapsFields(t *testing.T) {
	for _, tt := range []struct{ n, listed, omitted int }{
		{0, 0, 0}, {MaxFields, MaxFields, 0}, {MaxFields + 1, MaxFields, 1}, {63000, MaxFields, 63000 - MaxFields},
	} {
		doc := From(&Error{Code: InvalidDraft, Detail: "x", Fields: make([]Field, tt.n)})
		if len(doc.Errors) != tt.listed || doc.Omitted != tt.omitted {
			t.Errorf("%d fields: listed %d, omitted %d; want %d, %d", tt.n, len(doc.Errors), doc.Omitted, tt.listed, tt.omitted)
		}
	}
}

// TestFromCapsDetail: a detail is cut to MaxDetail bytes, whole characters only.
func TestFromCapsDetail(t *testing.T) {
	for _, in := range []string{strings.Repeat("x", MaxDetail), strings.Repeat("x", MaxDetail+1), strings.Repeat("指", MaxDetail)} {
		got := From(&Error{Code: InvalidDraft, Detail: in}).Detail
		if len(got) > MaxDetail || !utf8.ValidString(got) || (len(in) > MaxDetail) != strings.HasSuffix(got, "…") {
			t.Errorf("%d bytes in: %d out, valid %v, ends %q", len(in), len(got), utf8.ValidString(got), got[len(got)-4:])
		}
	}
}

// TestFieldTextCapped: a field problem that quotes a huge value is cut, as detail is.
func TestFieldTextCapped(t *testing.T) {
	huge := "reportYear 1" + strings.Repeat("0", 100000) + " is out of range"
	fields := []Field{{Path: "reportYear", Message: huge}, {Path: "title", Message: "ok"}}
	d := From(&Error{Code: InvalidDraft, Detail: "d", Fields: fields})
	if len(d.Errors[0].Message) > MaxFieldText || d.Errors[1].Message != "ok" {
		t.Errorf("messages %d bytes and %q", len(d.Errors[0].Message), d.Errors[1].Message)
	}
	if fields[0].Message != huge {
		t.Error("From changed the caller's list")
	}
}
