package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal, where a person waits and reads a progress line.
// A variable for the tests, which have no terminal.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine is ocrdraft extract's progress on stderr: one line, written over as the pages
// are read, and erased at the end, so that a terminal is left as it was. Off when stderr is not
// a terminal (a log, a pipe: no carriage returns in it) or with -q. Counts only, never a
// value or a file name.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	shown string
}

func newProgressLine(w io.Writer, quiet bool) *progressLine {
	return &progressLine{w: w, on: !quiet && isTerminal(w)}
}

// say shows s in place of the last line.
func (p *progressLine) say(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on || s == p.shown {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", s)
	p.shown = s
}

// pages shows pages done of total: extract.WithProgress's callback.
func (p *progressLine) pages(done, total int) {
	if total > 0 {
		p.say(fmt.Sprintf("page %d of %d read", done, total))
	}
}

// end erases the line.
func (p *progressLine) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on && p.shown != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = ""
	}
}
