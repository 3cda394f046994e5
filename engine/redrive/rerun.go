package redrive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/executor"
	// The rerun's agent makes its model calls through the LLM gateway,
	// which engine/grpcapi registers on every engine's server.
	_ "github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/opx-dev/opx/replay/rerun"
)

// Replay mode re-drives a recorded session through a fresh engine and the
// real agent, and compares what it records with the record:
//
//   - The client messages are fed as recorded (same session id, message
//     ids, contents, modes and client names, in order) through the live
//     SendMessage path.
//   - The LLM gateway and the tier 2 evaluator run their live code, but
//     their provider (replayProvider) answers the Nth model call with the
//     recorded raw response body, parsed by the recorded provider's
//     Parse, after checking the request body is the recorded one byte
//     for byte.
//   - The pipeline runs live up to the execution: Shield re-evaluates
//     every proposal under the policy recorded in force (with the
//     recorded home, protected paths and proposal times, so path
//     resolution and the rate limit come out the same), escalations go
//     where they went, approvals keep their recorded ids (a denial's
//     answer quotes its id to the agent) and are answered as recorded,
//     by whoever answered (a human, the timeout, the engine). Then, instead
//     of a snapshot and an executor, the recorded snapshot and result are
//     recorded again and the recorded answer goes back to the agent.
//     Nothing reads or writes a workspace: the engine's workspace is an
//     empty temporary directory, and executors are never called.
//   - Sub-agents are re-driven too: the agent tools run live
//     (replayState.live), so spawn_agent starts a real sub-agent process
//     against the replay engine (same id: it derives from the session,
//     message and call) and agent_result waits for it. Each sub-agent's
//     model calls are served from its own thread of the record (the
//     provider matches each request body to the next recorded call of
//     one thread), its proposals judged and its results served as
//     recorded, its approvals answered as recorded for its call. The
//     answers that depend on timing (agent_status, list_agents,
//     agent_result without waiting) are served from the record, so the
//     parent's conversation stays the recorded one.
//   - Everything goes into a fresh temporary ledger; the investigated one
//     is only read.
//
// The engine stops itself when the last message is answered, or as soon
// as a message went off the record (a request body, a proposal or a
// verdict the record does not hold), since nothing after that point can
// be served. The comparison itself is rerun.Compare's.
//
// # Limits
//
// A session that spans engine runs is judged, encoded and limited by the
// run each message arrived under; its tool set and tier 2 evaluator are
// the first run's. Messages are fed one at a time, so a session whose
// messages overlapped when recorded diverges where they interleaved. What
// cannot be re-derived from the record diverges where it happened: an
// agent or engine crash, a tier 2 budget spent by other sessions. A
// sub-agent that was cancelled, timed out or was killed while it waited
// (for a model, a command, a human) is re-enacted there
// (subagents.go); what else hung on timing diverges: a cancel or a
// timeout between two steps, a follow-up (agent_message) that reached a
// sub-agent before or after it answered, a spawn refused because others
// were still running (agents.max_concurrent). The limits are the first
// run's, as engine.started recorded them.

// RerunConfig configures a rerun.
type RerunConfig struct {
	// Recording is the session to re-drive (rerun.Load); its ledger must
	// stay open until Rerun returns.
	Recording *rerun.Recording
	// SpawnAgent starts the real agent exactly as a live engine does.
	SpawnAgent func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error)
	// RequireSandbox refuses an agent whose sandbox is unavailable.
	RequireSandbox bool
	// Version is recorded in the rerun's engine.started.
	Version string
	// Logf reports what the replay engine does.
	Logf func(format string, args ...any)
	// TempDir holds the rerun's empty workspace and its ledger, removed
	// afterwards; default os.TempDir().
	TempDir string
	// LedgerPath, if set, is where the rerun's ledger is written and
	// kept (it must not exist); by default it goes with TempDir.
	LedgerPath string
}

// RerunReport is what a rerun found.
type RerunReport struct {
	*rerun.Result
	Session string `json:"session"`
	// Mode is the session's (normal, or mcp-proxy: re-driven without an
	// agent).
	Mode string `json:"mode,omitempty"`
	// Agent is the re-driven agent's sandbox status and summary, as its
	// canary reported them.
	Agent        string `json:"agent"`
	AgentSummary string `json:"agent_summary"`
	// SubAgentSandboxes are the re-driven sub-agents' sandbox statuses,
	// as their canaries reported them, by sub-agent id.
	SubAgentSandboxes map[string]string `json:"subagent_sandboxes,omitempty"`
	// Notes are what the replay engine noticed while serving the record
	// (where it went off the record first).
	Notes []string `json:"notes,omitempty"`
	// Recorded is the session's recorded wall time, Elapsed the rerun's
	// (engine start to stop).
	Recorded time.Duration `json:"-"`
	Elapsed  time.Duration `json:"-"`
}

// Rerun re-drives a recorded session with a fresh engine in replay mode
// and the real agent, and compares every entry it records in the session
// with the record. The error is for a rerun that could not run (no agent,
// an unreadable record); a divergence is a report, not an error.
func Rerun(ctx context.Context, cfg RerunConfig) (*RerunReport, error) {
	rec := cfg.Recording
	proxy := rec != nil && rec.Proxy != nil // an mcp-proxy session: no agent (engine/mcpproxy/replay.go)
	if rec == nil || (cfg.SpawnAgent == nil && !proxy) {
		return nil, errors.New("rerun: a recording and an agent are required")
	}
	if len(rec.Messages) == 0 && !proxy {
		return nil, fmt.Errorf("%w: session %s has no client message", rerun.ErrNotReplayable, rec.Session)
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "opx-rerun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace") // empty: the replay never reads the recorded one
	if err := os.Mkdir(ws, 0o700); err != nil {
		return nil, err
	}
	path := cfg.LedgerPath
	if path == "" {
		path = filepath.Join(dir, "ledger.db")
	}
	l, err := ledger.Create(path, ledger.Options{NoSync: true, Projections: projection.All()})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	s, opts, err := replayOptions(rec, ws, l)
	if err != nil {
		return nil, err
	}
	opts.SpawnAgent, opts.RequireSandbox, opts.Version, opts.Logf = cfg.SpawnAgent, cfg.RequireSandbox, cfg.Version, cfg.Logf
	if proxy {
		opts.SpawnAgent = nil
	}
	opts.RunDir = dir // the canary goes with the rerun's other files
	if opts.Version == "" {
		opts.Version = "rerun"
	}
	start := time.Now()
	e, err := engine.NewReplay(opts, s)
	if err != nil {
		return nil, err
	}
	runErr := e.Run(ctx)
	elapsed := time.Since(start)
	if runErr != nil {
		return nil, fmt.Errorf("replay engine: %w", runErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rerun interrupted: %w", err) // not a divergence
	}
	if err := s.failure(); err != nil {
		return nil, err
	}
	var produced []ledger.Entry
	h, err := l.Head()
	if err != nil {
		return nil, err
	}
	sandboxes := map[string]string{}
	err = l.Range(0, h.Seq, func(en ledger.Entry) error {
		if en.Session != rec.Session || en.Type == event.TypeNote || en.Type == event.TypeCheckpoint {
			return nil
		}
		produced = append(produced, en)
		if en.Type == event.TypeSandboxCanary {
			if p, err := event.Decode(en); err == nil {
				if c := p.(*event.SandboxCanary); c.SubAgentID != "" {
					sandboxes[c.SubAgentID] = c.Result.Status
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res, err := rerun.Compare(rec.Entries, produced)
	if err != nil {
		return nil, err
	}
	rep := &RerunReport{Result: res, Session: rec.Session, Mode: rec.Mode, Notes: s.notesCopy(), Recorded: rec.End.Sub(rec.Start), Elapsed: elapsed}
	if len(sandboxes) > 0 {
		rep.SubAgentSandboxes = sandboxes
	}
	rep.Agent, rep.AgentSummary = e.Canary()
	return rep, nil
}

// replayState is an engine's replay mode: the record it serves and what
// it noticed. Everything in it is guarded by mu: the pipeline, the
// gateway and the driver touch it from different goroutines.
type replayState struct {
	rec *rerun.Recording

	mu         sync.Mutex
	engine     *rerun.Engine  // the engine run in force for the message being fed
	message    *rerun.Message // the message being fed (nil before the first)
	gateway    *replayProvider
	tier2      *replayProvider
	evaluators map[*rerun.Engine]judge.Evaluator
	policy     ledger.Hash                  // of the evaluator used last
	clock      time.Time                    // the recorded time of the proposal being judged
	pending    map[string][]*rerun.Proposal // by callKey
	judged     map[string]*rerun.Proposal   // taken at evaluation, for execution
	approvals  map[string][]*rerun.Approval // not yet asked, by rerun.CallKey
	asked      map[string]*rerun.Approval   // by id, until answered
	ends       map[string]*subEnd           // sub-agents' recorded ends other than completion (subagents.go)
	eng        *engine.Engine               // the replay engine, once set up
	notes      []string
	offRecord  bool
	err        error
}

// replayOptions builds the Options of an engine that re-drives rec on the
// empty workspace ws, recording into l.
func replayOptions(rec *rerun.Recording, ws string, l *ledger.Ledger) (*replayState, engine.Options, error) {
	first := rec.FirstEngine()
	if first == nil {
		return nil, engine.Options{}, fmt.Errorf("%w: no engine.started precedes session %s", rerun.ErrNotReplayable, rec.Session)
	}
	s := &replayState{rec: rec, engine: first, evaluators: map[*rerun.Engine]judge.Evaluator{}, pending: map[string][]*rerun.Proposal{},
		judged: map[string]*rerun.Proposal{}, approvals: map[string][]*rerun.Approval{}, asked: map[string]*rerun.Approval{}}
	for _, p := range rec.Proposals {
		k := callKey(p.SubAgentID, p.MessageID, p.CallID)
		s.pending[k] = append(s.pending[k], p)
	}
	for _, a := range rec.Approvals {
		k := rerun.CallKey(a.Requested.SubAgentID, a.Requested.CallID)
		s.approvals[k] = append(s.approvals[k], a)
	}
	s.ends = newSubEnds(rec)
	s.gateway = newReplayProvider(s, "model call", rec.Calls, func(en *rerun.Engine) (string, string, int64) {
		return en.Started.Provider, en.Started.Model, en.Started.ProviderMaxTokens
	})
	s.tier2 = newReplayProvider(s, "tier 2 model call", rec.Tier2, func(en *rerun.Engine) (string, string, int64) {
		return en.Started.Tier2Provider, en.Started.Tier2Model, en.Started.ProviderMaxTokens
	})
	// Every engine run's policy must be at hand before anything runs.
	for _, en := range rec.Engines() {
		if _, err := s.evaluatorFor(en); err != nil {
			return nil, engine.Options{}, err
		}
	}
	ev, _ := s.evaluatorFor(first)
	s.policy = ev.PolicyHash()
	text, _ := policyText(first)
	agents, err := agentsConfig(first)
	if err != nil {
		return nil, engine.Options{}, err
	}
	tok, err := auth.NewToken()
	if err != nil {
		return nil, engine.Options{}, err
	}
	opts := engine.Options{
		Workspace: ws, Ledger: l, Provider: s.gateway, Evaluator: &replayEvaluator{s: s},
		Retry:       llm.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
		ConfigHash:  ledger.Sum(nil),
		Policy:      first.Started.Policy,
		PolicyText:  text,
		ShieldEnv:   first.Started.Shield,
		ClientToken: tok, Stdout: io.Discard,
		MaxToolCalls:      first.Started.MaxToolCalls,
		ApprovalTimeout:   approvalTimeout(rec, first),
		ProviderMaxTokens: first.Started.ProviderMaxTokens,
		Agents:            agents,
	}
	// The tools offered to the session: the same executors, over the
	// empty workspace, never run (Handle returns before they would).
	var offered []string
	if len(rec.Messages) > 0 {
		offered = rec.Messages[0].Tools
	}
	for _, name := range offered {
		switch {
		case name == "execute_command" && opts.Shell == nil:
			opts.Shell = &executor.ShellConfig{}
		case strings.HasPrefix(name, "git_") && opts.Git == nil:
			opts.Git = &executor.GitConfig{}
		case name == "http_request" && opts.HTTP == nil:
			opts.HTTP = &executor.HTTPConfig{AllowHost: func(string) bool { return false }}
		}
	}
	return s, opts, nil
}

// approvalTimeout is the recorded approval timeout: engine.started's, or
// the first approval.requested's for older ledgers.
func approvalTimeout(rec *rerun.Recording, en *rerun.Engine) time.Duration {
	if ms := en.Started.ApprovalTimeoutMS; ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	if len(rec.Approvals) > 0 {
		return time.Duration(rec.Approvals[0].Requested.TimeoutMS) * time.Millisecond
	}
	return 0
}

// approvalID names an approval as the record named the next one asked
// for the same call of the same thread (parallel sub-agents ask in an
// order that depends on scheduling).
func (s *replayState) approvalID(p judge.Proposal) string {
	k := rerun.CallKey(p.SubAgentID, p.CallID)
	s.mu.Lock()
	var rec *rerun.Approval
	if q := s.approvals[k]; len(q) > 0 {
		rec, s.approvals[k] = q[0], q[1:]
	}
	s.mu.Unlock()
	if rec == nil {
		s.offRecordf("approval for call %s%s: the record has no further approval for it", p.CallID, threadName(p.SubAgentID))
		tok, _ := auth.NewToken()
		return "apr_" + tok[:16]
	}
	s.mu.Lock()
	s.asked[rec.Requested.ApprovalID] = rec
	s.mu.Unlock()
	return rec.Requested.ApprovalID
}

// answer resolves approval id as the record answered it. One the record
// shows answered after its sub-agent's end (by the end's denial) is left
// to the rerun's end of that sub-agent: the sub-agent is held there.
func (s *replayState) answer(a *engine.Approvals, id string) {
	s.mu.Lock()
	rec := s.asked[id]
	delete(s.asked, id)
	s.mu.Unlock()
	if rec != nil && rec.Requested.SubAgentID != "" && s.heldAt(rec.Requested.SubAgentID, rec.ResolvedSeq) {
		go s.hold(rec.Requested.SubAgentID)
		return
	}
	if rec != nil && rec.Resolved == nil {
		s.offRecordf("approval %s (entry %d): the record holds no answer", id, rec.Seq)
	}
	if rec == nil || rec.Resolved == nil {
		_, _ = a.Resolve(id, false, "engine", "opx replay: no recorded answer")
		return
	}
	r := rec.Resolved
	_, _ = a.Resolve(id, r.Approved, r.By, r.Reason)
}

// offRecordf notes where the replay left the record; the driver feeds no
// further message.
func (s *replayState) offRecordf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offRecord = true
	if len(s.notes) < 20 {
		s.notes = append(s.notes, fmt.Sprintf(format, args...))
	}
}

func (s *replayState) isOffRecord() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offRecord
}

func (s *replayState) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *replayState) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *replayState) notesCopy() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}

func (s *replayState) current() *rerun.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.engine
}

// callKey identifies a proposal: call ids are unique within a thread's
// message only.
func callKey(subagent, messageID, callID string) string {
	return subagent + "\x00" + messageID + "\x00" + callID
}
