package mcp

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Bounds of what a server's stderr costs.
const (
	// maxLogLine is the longest stderr line written to the log; the rest
	// of a longer line is dropped (the log line says how much).
	maxLogLine = 1 << 10
	// logBurst and logPerSecond bound the rate of a server's lines in the
	// log: a burst, then this many a second; the lines in between are
	// counted and the count logged.
	logBurst     = 200
	logPerSecond = 20
	// logBudget bounds what one start of a server writes to the log in
	// all; past it, its lines are only counted (the count is logged when
	// it ends).
	logBudget = 4 << 20
	// StderrTailBytes is how much of the end of a server's stderr is
	// kept for mcp.server_exited and mcp.server_failed.
	StderrTailBytes = 2 << 10
)

// serverLog writes a server's stderr (and its log notifications) to the
// engine log, each line prefixed with the server's name, at a bounded
// rate and line length, and keeps the tail of its stderr.
type serverLog struct {
	prefix string
	w      io.Writer // nil: discard

	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int
	written    int64
	tail       []byte // ring of the last StderrTailBytes bytes, in order
}

func newServerLog(w io.Writer, name string, instance int) *serverLog {
	return &serverLog{prefix: fmt.Sprintf("mcp %s#%d: ", name, instance), w: w, tokens: logBurst, last: time.Now()}
}

// pump reads r (the server's stderr) until it ends.
func (l *serverLog) pump(r io.Reader) {
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		chunk, err := br.ReadSlice('\n')
		l.keepTail(chunk)
		if len(chunk) > 0 {
			// The line is rendered only if it is to be logged: a flood
			// costs a count, not a copy of each line.
			var text string
			logged := l.allow()
			if logged {
				text = strings.TrimRight(string(chunk), "\r\n")
			}
			dropped := 0
			for err == bufio.ErrBufferFull {
				// The rest of a long line: kept in the tail, counted, not logged.
				var more []byte
				more, err = br.ReadSlice('\n')
				l.keepTail(more)
				dropped += len(more)
			}
			if logged {
				if dropped > 0 {
					text += fmt.Sprintf(" [%d more bytes of this line not logged]", dropped)
				}
				l.write(text)
			}
		}
		if err != nil {
			l.flush()
			return
		}
	}
}

// logf writes one line, unless the rate is spent.
func (l *serverLog) logf(format string, args ...any) {
	if l.allow() {
		l.write(fmt.Sprintf(format, args...))
	}
}

// allow takes one line from the rate, or counts the line as not logged.
func (l *serverLog) allow() bool {
	if l.w == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.tokens = min(logBurst, l.tokens+now.Sub(l.last).Seconds()*logPerSecond)
	l.last = now
	if l.tokens < 1 || l.written >= logBudget {
		if l.written >= logBudget && l.written < logBudget+1 {
			l.written++ // said once
			fmt.Fprintf(l.w, "%s[over %d bytes logged: the rest of its lines are only counted]\n", l.prefix, logBudget)
		}
		l.suppressed++
		return false
	}
	l.tokens--
	return true
}

// write writes a line allow allowed, after the count of those it did not.
func (l *serverLog) write(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.suppressed > 0 {
		fmt.Fprintf(l.w, "%s[%d lines not logged: too many]\n", l.prefix, l.suppressed)
		l.suppressed = 0
	}
	n, _ := fmt.Fprintf(l.w, "%s%s\n", l.prefix, strings.ToValidUTF8(text, "\uFFFD"))
	l.written += int64(n)
}

// flush logs the count of lines not logged, at the end.
func (l *serverLog) flush() {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.suppressed > 0 {
		fmt.Fprintf(l.w, "%s[%d lines not logged: too many]\n", l.prefix, l.suppressed)
		l.suppressed = 0
	}
}

func (l *serverLog) keepTail(b []byte) {
	if len(b) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(b) >= StderrTailBytes {
		l.tail = append(l.tail[:0], b[len(b)-StderrTailBytes:]...)
		return
	}
	if over := len(l.tail) + len(b) - StderrTailBytes; over > 0 {
		l.tail = append(l.tail[:0], l.tail[over:]...)
	}
	l.tail = append(l.tail, b...)
}

// Tail is the end of the server's stderr so far, as valid UTF-8 (a
// character cut at the start is dropped).
func (l *serverLog) Tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.tail
	for i := 0; i < 3 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// clip cuts s to at most n bytes at a character boundary, as valid UTF-8,
// marking the cut.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// clipAny renders v for a message, clipped.
func clipAny(v any) string { return clip(fmt.Sprint(v), 80) }
