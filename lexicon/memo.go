package lexicon

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// memoSlots bounds the memo: 16384 answers, whatever callers send. Each name has two slots it may
// live in (so that two common names rarely evict each other); when both are taken, one is
// overwritten, so hostile names cost memory once per slot, never more.
const memoSlots = 1 << 14

// memo remembers Match's answers, because the same few hundred names come back report after
// report and a name that misses the fast path costs about half a microsecond to fold. Slots are
// atomic pointers to immutable entries, so readers take no lock.
type memo struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoEntry]
}

type memoEntry struct {
	group, name, unit string
	a                 *Analyte
	u                 *Unit
}

func newMemo() *memo { return &memo{seed: maphash.MakeSeed()} }

// slots returns the two slots a name may live in.
func (m *memo) slots2(group, name, unit string) (x, y *atomic.Pointer[memoEntry]) {
	h := maphash.String(m.seed, name)
	h = h*0x9E3779B97F4A7C15 ^ maphash.String(m.seed, group)
	h = h*0x9E3779B97F4A7C15 ^ maphash.String(m.seed, unit)
	return &m.slots[h&(memoSlots-1)], &m.slots[(h>>32)&(memoSlots-1)]
}

// get returns the remembered answer; ok is false when there is none.
func (m *memo) get(group, name, unit string) (a *Analyte, u *Unit, ok bool) {
	x, y := m.slots2(group, name, unit)
	for _, s := range [2]*atomic.Pointer[memoEntry]{x, y} {
		if e := s.Load(); e != nil && e.name == name && e.group == group && e.unit == unit {
			return e.a, e.u, true
		}
	}
	return nil, nil, false
}

// put remembers an answer, with copies of the strings so that no caller's buffer is kept alive:
// in an empty slot of the two if there is one, else in the first.
func (m *memo) put(group, name, unit string, a *Analyte, u *Unit) {
	x, y := m.slots2(group, name, unit)
	e := &memoEntry{strings.Clone(group), strings.Clone(name), strings.Clone(unit), a, u}
	if x.Load() != nil && y.Load() == nil {
		x = y
	}
	x.Store(e)
}
