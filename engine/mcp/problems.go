package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Bounds of the recording of protocol errors: a burst, then one a
// problemEvery; those in between are counted in the next entry's
// Suppressed. A problem with an answer to a tool call (a call id) is
// always recorded: there is one per call at most.
const (
	problemBurst = 10
	problemEvery = 30 * time.Second
	// maxEarlyProblems bounds the problems kept before the server's
	// mcp.server_started is recorded.
	maxEarlyProblems = 10
)

// problemLog records a server's protocol errors as mcp.protocol_error,
// at a bounded rate, and logs them. Before the server has started (its
// mcp.server_started recorded) it holds them, so none precedes that
// entry; those of a server that never starts are dropped with it.
type problemLog struct {
	c *Conn

	mu         sync.Mutex
	started    bool
	early      []problem
	tokens     float64
	last       time.Time
	suppressed int
	lastKind   string
}

func newProblemLog(c *Conn) *problemLog {
	return &problemLog{c: c, tokens: problemBurst, last: time.Now()}
}

// add records p, or counts it when the rate is spent.
func (l *problemLog) add(p problem) {
	l.c.log.logf("protocol error (%s, %d bytes): %s", p.kind, p.size, p.detail)
	l.mu.Lock()
	if !l.started {
		if len(l.early) < maxEarlyProblems {
			l.early = append(l.early, p)
		} else {
			l.suppressed++
			l.lastKind = p.kind
		}
		l.mu.Unlock()
		return
	}
	now := time.Now()
	l.tokens = min(problemBurst, l.tokens+float64(now.Sub(l.last))/float64(problemEvery))
	l.last = now
	if p.callID == "" {
		if l.tokens < 1 {
			l.suppressed++
			l.lastKind = p.kind
			l.mu.Unlock()
			return
		}
		l.tokens--
	}
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	l.record(p, n)
}

// ready records the problems held until the server started.
func (l *problemLog) ready() {
	l.mu.Lock()
	early := l.early
	l.early, l.started = nil, true
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	for i, p := range early {
		if i < len(early)-1 {
			l.record(p, 0)
		} else {
			l.record(p, n)
		}
	}
}

// flush records the count of problems not recorded one by one, when the
// server has ended.
func (l *problemLog) flush() {
	l.mu.Lock()
	n, kind, started := l.suppressed, l.lastKind, l.started
	l.suppressed = 0
	l.mu.Unlock()
	if n > 0 && started {
		l.record(problem{kind: kind, detail: fmt.Sprintf("%d more protocol errors of this server were not recorded one by one", n)}, n)
	}
}

func (l *problemLog) record(p problem, suppressed int) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	e := &event.MCPProtocolError{
		Server: l.c.spec.Name, Instance: l.c.instance, Kind: p.kind, Size: p.size,
		Detail: clip(p.detail, 512), CallID: p.callID, Suppressed: suppressed,
	}
	if err := l.c.rec(ctx, ledger.Async, l.c.session, e); err != nil {
		l.c.log.logf("recording a protocol error: %v", err)
	}
}
