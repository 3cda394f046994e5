package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// The Manager's restart rules.
var (
	// minBackoff is the pause before the first restart; it doubles with
	// each failure in a row up to maxBackoff. (Variables for the tests.)
	minBackoff = 500 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// resetAfter: a server up this long is healthy again (its backoff and
// failure count start over when it next dies; its restarts within
// restartWindow are still counted).
var resetAfter = time.Minute

const (
	// MaxFailures is how many failures in a row (a start that failed, or
	// a server that died within resetAfter of starting) the Manager takes
	// before it gives up on a server: it stays "failed" until the engine
	// restarts.
	MaxFailures = 5
)

// Manager keeps the engine's configured servers running: each started in
// the background, restarted with backoff (500 ms doubling to 30 s, reset
// after a minute up) when it dies, given up after MaxFailures failures in
// a row or when it died more than 20 times within an hour, every start,
// failure and exit recorded (in no session); its listings share one
// ListingBudget. The
// engine runs on without a server that will not start.
type Manager struct {
	sb      Sandbox
	rec     Recorder
	names   []string
	servers map[string]*managed

	mu      sync.Mutex
	cancel  context.CancelFunc
	started bool
	wg      sync.WaitGroup
}

// managed is one configured server.
type managed struct {
	spec      Spec
	firstOnce sync.Once
	first     chan struct{} // closed once it started or failed the first time

	mu        sync.Mutex
	conn      *Conn
	instances int
	status    ServerStatus
}

// NewManager returns a Manager of specs (by Name; a later duplicate is
// ignored), not started.
func NewManager(sb Sandbox, specs []Spec, rec Recorder) *Manager {
	m := &Manager{sb: sb, rec: rec, servers: map[string]*managed{}}
	for _, s := range specs {
		if _, dup := m.servers[s.Name]; dup {
			continue
		}
		if s.ListingBudget == nil {
			s.ListingBudget = NewListingBudget()
		}
		ms := &managed{spec: s, first: make(chan struct{})}
		ms.status = ServerStatus{Name: s.Name, State: "stopped", Since: time.Now()}
		if s.Disabled {
			ms.status.State = "disabled"
			ms.markFirst()
		}
		m.servers[s.Name] = ms
		m.names = append(m.names, s.Name)
	}
	slices.Sort(m.names)
	return m
}

// Start starts every server that is not disabled in the background and
// returns at once. The servers live until Stop or the end of ctx.
func (m *Manager) Start(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return
	}
	m.started = true
	ctx, m.cancel = context.WithCancel(ctx)
	for _, name := range m.names {
		ms := m.servers[name]
		if ms.spec.Disabled {
			continue
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer ms.markFirst()
			m.run(ctx, ms)
		}()
	}
}

// WaitStarted waits until each server has started or failed at least
// once, or ctx ends.
func (m *Manager) WaitStarted(ctx context.Context) error {
	for _, name := range m.names {
		select {
		case <-m.servers[name].first:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// Tools are every running server's tools, sorted by Name.
func (m *Manager) Tools() []Tool {
	var out []Tool
	for _, name := range m.names {
		if c := m.servers[name].current(); c != nil {
			out = append(out, c.Tools()...)
		}
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Call calls the tool named name (mcp__<server>__<tool>). It fails with
// ErrUnknownTool for a name that is not an MCP tool of a configured
// server, ErrNotRunning when that server is not running, and otherwise as
// Conn.CallTool.
func (m *Manager) Call(ctx context.Context, callID, name string, args json.RawMessage) (Result, error) {
	server, tool, ok := SplitToolName(name)
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownTool, clip(name, 80))
	}
	ms, ok := m.servers[server]
	if !ok {
		return Result{}, fmt.Errorf("%w: no MCP server %q is configured", ErrUnknownTool, server)
	}
	c := ms.current()
	if c == nil {
		return Result{}, fmt.Errorf("%w: %s (%s)", ErrNotRunning, server, ms.state())
	}
	return c.CallTool(ctx, callID, tool, args)
}

// Spec returns the spec of the server named server.
func (m *Manager) Spec(server string) (Spec, bool) {
	ms, ok := m.servers[server]
	if !ok {
		return Spec{}, false
	}
	return ms.spec, true
}

// Status returns each configured server's state, sorted by Name.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.names))
	for _, name := range m.names {
		ms := m.servers[name]
		ms.mu.Lock()
		st := ms.status
		c := ms.conn
		ms.mu.Unlock()
		if c != nil {
			st.Tools = len(c.Tools())
		}
		out = append(out, st)
	}
	return out
}

// Stop ends every server and records its exit ("stopped", no restart),
// waiting for them until ctx ends.
func (m *Manager) Stop(ctx context.Context) {
	m.mu.Lock()
	cancel := m.cancel
	m.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// run keeps one server running until ctx ends.
func (m *Manager) run(ctx context.Context, ms *managed) {
	backoff := minBackoff
	failures := 0
	var restarted restarts
	code := "" // its code at its first start
	// retry decides the pause before the next start: 0 to give up.
	retry := func() time.Duration {
		if failures >= MaxFailures {
			return 0
		}
		d := backoff
		backoff = min(2*backoff, maxBackoff)
		return d
	}
	for {
		ms.set(func(st *ServerStatus) {
			if st.State != "restarting" {
				st.State = "starting"
			}
		})
		var c *Conn
		now, err := codeHash(ms.spec)
		switch {
		case err == nil && code != "" && now != code:
			// Not a failure to retry: what would run is not what started.
			why := m.codeChanged(ms, failures+1)
			ms.set(func(st *ServerStatus) { st.State, st.PID, st.LastError = "failed", 0, why })
			ms.markFirst()
			return
		case err == nil:
			c, err = Start(ctx, m.sb, ms.spec, ms.instances+1, "", m.rec)
		default:
			err = &StartError{Err: err}
		}
		if err == nil && code == "" {
			code = now
		}
		if ctx.Err() != nil {
			if c != nil {
				m.end(ms, c)
			}
			ms.set(func(st *ServerStatus) { st.State, st.PID = "stopped", 0 })
			return
		}
		if err != nil {
			failures++
			pause := retry()
			var se *StartError
			tail := ""
			if errors.As(err, &se) {
				tail = se.StderrTail
			}
			m.record(&event.MCPServerFailed{Server: ms.spec.Name, Attempt: failures, Error: clip(err.Error(), 1024),
				StderrTail: tail, RetryInMS: pause.Milliseconds()})
			ms.set(func(st *ServerStatus) {
				st.State, st.PID, st.LastError = "restarting", 0, clip(err.Error(), 1024)
				if pause == 0 {
					st.State = "failed"
				}
			})
			ms.markFirst()
			if pause == 0 || !sleep(ctx, pause) {
				m.stoppedUnlessFailed(ms)
				return
			}
			continue
		}
		up := time.Now()
		ms.mu.Lock()
		ms.instances++
		ms.conn = c
		if ms.instances > 1 {
			ms.status.Restarts++
		}
		ms.status.State, ms.status.PID, ms.status.Instance, ms.status.Since = "running", c.Started().PID, ms.instances, up
		ms.mu.Unlock()
		ms.markFirst()

		select {
		case <-c.Done():
		case <-ctx.Done():
			m.end(ms, c)
			ms.set(func(st *ServerStatus) { st.State, st.PID = "stopped", 0 })
			return
		}
		ex := c.Exit()
		if time.Since(up) >= resetAfter {
			backoff, failures = minBackoff, 0
		}
		failures++
		pause := retry()
		tooMany := pause > 0 && restarted.add(time.Now())
		if tooMany {
			pause = 0
		}
		moved := false
		if now, err := codeHash(ms.spec); pause > 0 && err == nil && now != code {
			// Known now: its exit says it is not restarted.
			pause, moved = 0, true
		}
		ex.RestartInMS = pause.Milliseconds()
		m.record(&ex)
		why := exitText(ex)
		if tooMany {
			// However long each instance lived: a server that keeps
			// dying would otherwise be restarted, and its starts and
			// listings recorded, without end.
			why = fmt.Sprintf("it died %d times within %v: given up (last: %s)", maxRestarts+1, restartWindow, why)
			m.record(&event.MCPServerFailed{Server: ms.spec.Name, Attempt: failures, Error: clip(why, 1024), StderrTail: ex.StderrTail})
		}
		if moved {
			// Its status says so at once: no reader sees it failed for
			// its crash first (its exit is recorded above, the refusal
			// next).
			why = m.codeChanged(ms, failures)
		}
		ms.mu.Lock()
		ms.conn = nil
		ms.status.State, ms.status.PID, ms.status.LastError, ms.status.Since = "restarting", 0, why, time.Now()
		if pause == 0 {
			ms.status.State = "failed"
		}
		ms.mu.Unlock()
		if pause == 0 || !sleep(ctx, pause) {
			m.stoppedUnlessFailed(ms)
			return
		}
	}
}

// codeChanged records that a server is not started again because its
// code changed since its first start, and returns why, for its status.
func (m *Manager) codeChanged(ms *managed, attempt int) string {
	err := fmt.Errorf("%w: not started again (restart the engine to run the new code)", ErrCodeChanged)
	m.record(&event.MCPServerFailed{Server: ms.spec.Name, Attempt: max(attempt, 1), Error: err.Error()})
	return err.Error()
}

// end closes a running server because the Manager stops, and records it.
func (m *Manager) end(ms *managed, c *Conn) {
	c.Close()
	ex := c.Exit()
	ex.RestartInMS = 0
	m.record(&ex)
	ms.mu.Lock()
	ms.conn = nil
	ms.mu.Unlock()
}

func (m *Manager) stoppedUnlessFailed(ms *managed) {
	ms.set(func(st *ServerStatus) {
		if st.State != "failed" {
			st.State = "stopped"
		}
	})
}

// record records one entry of a server's life; a failing ledger is
// logged (the engine finds out for itself).
func (m *Manager) record(p event.Payload) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := m.rec(ctx, ledger.Sync, "", p); err != nil && m.sb.Log != nil {
		fmt.Fprintf(m.sb.Log, "mcp: recording %s: %v\n", p.Type(), err)
	}
}

func exitText(ex event.MCPServerExited) string {
	s := fmt.Sprintf("%s: exit status %d", ex.Reason, ex.ExitCode)
	if ex.Signal != "" {
		s = fmt.Sprintf("%s: killed by %s", ex.Reason, ex.Signal)
	}
	if last := lastLine(ex.StderrTail); last != "" {
		s += " (stderr: " + clip(last, 300) + ")"
	}
	return s
}

// sleep waits d, or less if ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (ms *managed) markFirst() { ms.firstOnce.Do(func() { close(ms.first) }) }

func (ms *managed) current() *Conn {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.conn == nil || ms.conn.ended() {
		return nil
	}
	return ms.conn
}

func (ms *managed) state() string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.status.LastError != "" {
		return ms.status.State + ": " + ms.status.LastError
	}
	return ms.status.State
}

func (ms *managed) set(f func(*ServerStatus)) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	old := ms.status.State
	f(&ms.status)
	if ms.status.State != old {
		ms.status.Since = time.Now()
	}
}
