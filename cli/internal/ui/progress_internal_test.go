package ui

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProgress returns a bar on a buffer that believes it is a terminal,
// and a function to move its clock.
func fakeProgress(tty bool) (*Progress, *bytes.Buffer, func(time.Duration)) {
	var buf bytes.Buffer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	p := &Progress{w: &buf, label: "verify", on: tty, start: t0, now: func() time.Time { return now }}
	return p, &buf, func(d time.Duration) { now = now.Add(d) }
}

func TestProgress_QuietForFirstSecond(t *testing.T) {
	p, buf, advance := fakeProgress(true)
	p.Update(10, 100)
	advance(999 * time.Millisecond)
	p.Update(50, 100)
	p.Finish()
	if buf.Len() != 0 {
		t.Errorf("drew before a second had passed: %q", buf.String())
	}
}

func TestProgress_QuietWhenNotTerminal(t *testing.T) {
	p, buf, advance := fakeProgress(false)
	advance(5 * time.Second)
	p.Update(50, 100)
	p.Finish()
	if buf.Len() != 0 {
		t.Errorf("drew on a non-terminal: %q", buf.String())
	}
}

func TestProgress_DrawsAndClears(t *testing.T) {
	p, buf, advance := fakeProgress(true)
	advance(1500 * time.Millisecond)
	p.Update(50, 200)
	if got := buf.String(); !strings.Contains(got, "\rverify [=======") || !strings.Contains(got, " 25% 50/200 entries") {
		t.Fatalf("bar %q", got)
	}
	buf.Reset()
	p.Update(60, 200) // within progressEvery of the last draw
	if buf.Len() != 0 {
		t.Errorf("redrew too soon: %q", buf.String())
	}
	p.Update(200, 200) // the end is always drawn
	if !strings.Contains(buf.String(), "100% 200/200") {
		t.Errorf("final bar %q", buf.String())
	}
	buf.Reset()
	p.Finish()
	if got := buf.String(); !strings.HasPrefix(got, "\r ") || !strings.HasSuffix(got, "\r") || strings.TrimSpace(got) != "" {
		t.Errorf("finish wrote %q, want the line blanked", got)
	}
	buf.Reset()
	advance(time.Second)
	p.Update(300, 400)
	if buf.Len() != 0 {
		t.Errorf("drew after finish: %q", buf.String())
	}
}

func TestProgress_UnknownTotal(t *testing.T) {
	p, buf, advance := fakeProgress(true)
	advance(2 * time.Second)
	p.Update(4096, 0)
	if got := buf.String(); got != "\rverify 4096 entries" {
		t.Errorf("bar %q", got)
	}
}

func TestProgress_Concurrent(t *testing.T) {
	p, _, advance := fakeProgress(true)
	advance(2 * time.Second)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				p.Update(uint64(w*100+i), 800)
			}
		}(w)
	}
	wg.Wait()
	p.Finish()
}
