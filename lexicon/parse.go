package lexicon

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a lexicon table (the format of analytes.tsv, described at its top). It rejects a
// table in which a name or a group would mean two things, so that a lookup never depends on
// row order.
func Parse(b []byte) (*Lexicon, error) {
	l := &Lexicon{
		byKey:  make(map[string]*Analyte, 256),
		global: make(names, 4096),
		secOf:  make(map[string]int, 256),
		secRaw: make(map[string]int, 256),
		secIdx: make(map[string]int, 32),
	}
	// Normalised names and units are interned in one buffer: no name is longer folded than
	// written, so the table's size bounds them and the builder never grows.
	l.arena.Grow(len(b))
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Split(text, "\t")
		var err error
		switch f[0] {
		case "key":
			continue // the header
		case "section":
			err = l.addSection(f)
		case "relation":
			err = l.addRelation(f)
		default:
			err = l.addAnalyte(f)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i, m := range l.local {
		if len(m) > 0 {
			l.withLocal = append(l.withLocal, i)
		}
	}
	return l, nil
}

// section	key	name	groups (|)	source
func (l *Lexicon) addSection(f []string) error {
	if len(f) != 5 {
		return fmt.Errorf("section row has %d fields, want 5", len(f))
	}
	s := Section{Key: f[1], Name: f[2], Groups: splitNames(f[3]), Source: f[4]}
	if _, dup := l.secIdx[s.Key]; dup {
		return fmt.Errorf("section %s twice", s.Key)
	}
	if len(l.sections) == 32 {
		return fmt.Errorf("more than 32 sections")
	}
	for _, h := range hintPrefixes {
		s.hint = s.hint || h.section == s.Key
	}
	i := len(l.sections)
	l.sections = append(l.sections, s)
	l.local = append(l.local, names{})
	l.secIdx[s.Key] = i
	for j := -1; j < len(s.Groups); j++ {
		g := s.Name
		if j >= 0 {
			g = s.Groups[j]
		}
		l.secRaw[g] = i
		var k key
		normName(&k, g)
		if j, dup := l.secOf[string(k.bytes())]; dup && j != i {
			return fmt.Errorf("group %q means sections %s and %s", g, l.sections[j].Key, s.Key)
		}
		l.secOf[string(k.bytes())] = i
	}
	return nil
}

// key	section	kind	units	limits	ref	names (|)	section names (|)
func (l *Lexicon) addAnalyte(f []string) error {
	if len(f) != 8 {
		return fmt.Errorf("analyte row has %d fields, want 8", len(f))
	}
	a := &Analyte{Key: f[0], Section: f[1], Names: splitNames(f[6]), SectionNames: splitNames(f[7])}
	if _, dup := l.byKey[a.Key]; dup {
		return fmt.Errorf("analyte %s twice", a.Key)
	}
	sec, ok := l.secIdx[a.Section]
	if !ok {
		return fmt.Errorf("%s: unknown section %q", a.Key, a.Section)
	}
	switch f[2] {
	case "quant":
		a.Kind = Quant
	case "semi":
		a.Kind = Semi
	case "qual":
		a.Kind = Qual
	default:
		return fmt.Errorf("%s: kind %q", a.Key, f[2])
	}
	a.Quantitative = a.Kind == Quant
	var err error
	if f[3] != "" {
		if a.Units, err = l.parseUnits(f[3]); err != nil {
			return fmt.Errorf("%s: %w", a.Key, err)
		}
	} else if a.Kind != Qual {
		return fmt.Errorf("%s: only a qualitative analyte may have no unit", a.Key)
	}
	if f[4] != "" {
		if a.low, a.high, err = parseRange(f[4]); err != nil {
			return fmt.Errorf("%s: limits: %w", a.Key, err)
		}
	} else if a.Kind == Quant {
		return fmt.Errorf("%s: a quantitative analyte needs limits", a.Key)
	}
	if f[5] != "" {
		if a.refLow, a.refHigh, err = parseRange(f[5]); err != nil {
			return fmt.Errorf("%s: ref: %w", a.Key, err)
		}
		a.hasRef = true
	}
	if len(a.Names) == 0 {
		return fmt.Errorf("%s: no names", a.Key)
	}
	for i := range a.Units {
		a.Units[i].a = a
	}
	for _, n := range a.Names {
		if err := l.claim(l.global, n, a); err != nil {
			return err
		}
	}
	for _, n := range a.SectionNames {
		if err := l.claim(l.local[sec], n, a); err != nil {
			return err
		}
	}
	for i, n := range a.Names {
		a.Names[i] = strings.TrimPrefix(n, "~")
	}
	for i, n := range a.SectionNames {
		a.SectionNames[i] = strings.TrimPrefix(n, "~")
	}
	l.byKey[a.Key] = a
	l.analytes = append(l.analytes, a)
	return nil
}

// claim enters a name: a plain name must be new; ~name shares a name already entered, with
// units disjoint from every analyte that has it, so that Match can tell them apart.
func (l *Lexicon) claim(m names, name string, a *Analyte) error {
	shared := strings.HasPrefix(name, "~")
	var k key
	normName(&k, strings.TrimPrefix(name, "~"))
	if k.over || k.n == 0 {
		return fmt.Errorf("%s: name %q is empty or too long", a.Key, name)
	}
	s := l.intern(k.bytes())
	c := m[s]
	if !shared {
		if c.first != nil && c.first != a {
			return fmt.Errorf("name %q (%s) means both %s and %s", name, s, c.first.Key, a.Key)
		}
		c.first = a
		m[s] = c
		return nil
	}
	for _, b := range append([]*Analyte{c.first}, c.more...) {
		if b == nil {
			continue
		}
		if b == a {
			return fmt.Errorf("%s: name %q twice", a.Key, name)
		}
		for i := range a.Units {
			for j := range b.Units {
				if a.Units[i].norm == b.Units[j].norm {
					return fmt.Errorf("~%s: %s and %s share unit %s", s, a.Key, b.Key, a.Units[i].Name)
				}
			}
		}
	}
	c.more = append(c.more, a)
	m[s] = c
	return nil
}

// parseUnits reads "mmol/L,mg/dL=18.016,mg/dL=/88.4,COI=?0..1000": the first unit is
// canonical; =N multiplies the canonical value, =/N divides it, =? has no fixed factor and may
// carry its own limits.
func (l *Lexicon) parseUnits(s string) ([]Unit, error) {
	us := make([]Unit, 0, strings.Count(s, ",")+1)
	for i, part := range strings.Split(s, ",") {
		name, fac, hasFac := strings.Cut(part, "=")
		u := Unit{Name: name, Factor: 1}
		if name == "1" {
			u.Name = "" // a ratio or a dimensionless number
		}
		switch {
		case i == 0 && hasFac:
			return nil, fmt.Errorf("canonical unit %q takes no factor", part)
		case !hasFac && i > 0:
			return nil, fmt.Errorf("unit %q needs a factor (=N, =/N or =?)", part)
		case strings.HasPrefix(fac, "?"):
			u.Factor = 0
			if fac != "?" {
				lo, hi, err := parseRange(fac[1:])
				if err != nil {
					return nil, fmt.Errorf("unit %q: limits: %w", part, err)
				}
				u.low, u.high, u.hasLimits = lo, hi, true
			}
		case strings.HasPrefix(fac, "/"):
			d, err := strconv.ParseFloat(fac[1:], 64)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("unit %q: bad divisor", part)
			}
			u.Factor = 1 / d
		case hasFac:
			m, err := strconv.ParseFloat(fac, 64)
			if err != nil || m <= 0 {
				return nil, fmt.Errorf("unit %q: bad factor", part)
			}
			u.Factor = m
		}
		var k key
		normUnit(&k, name)
		if k.over {
			return nil, fmt.Errorf("unit %q too long", name)
		}
		u.norm = l.intern(k.bytes())
		if rest, ok := strings.CutPrefix(name, "×"); ok && strings.HasPrefix(rest, "10") {
			u.bare = rest // ×10^9/L printed as 10^9/L: the same after normalising
		}
		for _, v := range us {
			if v.norm == u.norm {
				return nil, fmt.Errorf("units %q and %q are the same after normalising", v.Name, name)
			}
		}
		us = append(us, u)
	}
	return us, nil
}

// intern returns b as a string that shares the lexicon's buffer.
func (l *Lexicon) intern(b []byte) string {
	start := l.arena.Len()
	l.arena.Write(b)
	return l.arena.String()[start:]
}

// parseRange reads "lo..hi".
func parseRange(s string) (float64, float64, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not lo..hi", s)
	}
	lo, err1 := strconv.ParseFloat(a, 64)
	hi, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil || lo > hi {
		return 0, 0, fmt.Errorf("%q is not lo..hi", s)
	}
	return lo, hi, nil
}

func splitNames(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, "|")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
