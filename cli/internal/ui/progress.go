package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
)

const (
	// progressDelay is how long work runs before a bar appears: quick
	// commands never flicker one.
	progressDelay = time.Second
	// progressEvery throttles redraws.
	progressEvery = 100 * time.Millisecond
	progressWidth = 30
)

// Progress draws a one-line bar on stderr for verify, export and import.
// It draws only when stderr is a terminal and only once the work has run
// for progressDelay; otherwise it stays quiet. Its Update method is a
// ledger Progress callback and is safe for concurrent use (verify calls it
// from every hashing goroutine).
type Progress struct {
	w     io.Writer
	label string
	now   func() time.Time

	mu    sync.Mutex
	on    bool
	start time.Time
	last  time.Time
	done  uint64 // largest count seen; workers may report out of order
	width int    // length of the line drawn, 0 when none is shown
}

// NewProgress starts the clock for a bar labelled label on c's ErrWriter.
func NewProgress(c *cli.Context, label string) *Progress {
	return &Progress{w: c.App.ErrWriter, label: label, now: time.Now,
		on: isTerminal(c.App.ErrWriter), start: time.Now()}
}

// Update records that done of total entries are processed (total 0 when
// unknown) and redraws the bar when it is due.
func (p *Progress) Update(done, total uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on || done < p.done {
		return
	}
	p.done = done
	t := p.now()
	if t.Sub(p.start) < progressDelay {
		return
	}
	if p.width > 0 && t.Sub(p.last) < progressEvery && done != total {
		return
	}
	p.last = t
	line := p.line(done, total)
	pad := ""
	if n := p.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.width = len(line)
}

func (p *Progress) line(done, total uint64) string {
	if total == 0 || done > total {
		return fmt.Sprintf("%s %d entries", p.label, done)
	}
	fill := int(done * progressWidth / total)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", progressWidth-fill)
	return fmt.Sprintf("%s [%s] %3d%% %d/%d entries", p.label, bar, done*100/total, done, total)
}

// Finish erases the bar, if one is shown, so that what follows starts on
// a clean line, and ignores any later Update.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
	p.on = false
}
