package hooks

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/zeebo/blake3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Bounds.
const (
	// MaxSessions bounds the agent sessions an engine keeps open; past
	// it the ended ones are forgotten first (their record stays), then a
	// new one is refused.
	MaxSessions = 256
	// MaxOpenCalls bounds the calls of one session between their
	// allowance and their end.
	MaxOpenCalls = 64
	// MaxPrompt bounds the user's prompt as recorded (client.message
	// carries it inline): the rest is cut, and the record says so.
	MaxPrompt = 256 << 10
	// MaxTranscript bounds a transcript as stored.
	MaxTranscript = 32 << 20
)

// Modes maps each agent to the mode of its sessions.
var Modes = map[hookproto.Agent]string{hookproto.Claude: event.ModeClaudeCode, hookproto.Codex: event.ModeCodex, hookproto.Gemini: event.ModeGeminiCLI}

// agentNames are the agents as people name them.
var agentNames = map[hookproto.Agent]string{hookproto.Claude: "Claude Code", hookproto.Codex: "Codex CLI", hookproto.Gemini: "Gemini CLI"}

// SessionID is the opx session of agent's session agentSession: derived,
// so every hook of the session and every engine that serves it name the
// same one.
func SessionID(agent hookproto.Agent, agentSession string) string {
	h := blake3.New()
	_, _ = h.Write([]byte("opx hook session\x00" + string(agent) + "\x00" + agentSession))
	return "ses_" + hex.EncodeToString(h.Sum(nil)[:8])
}

// sessions are the hook sessions of one engine (engine.Hooks).
type sessions struct {
	e *engine.Engine

	mu     sync.Mutex
	byID   map[string]*session
	closed string // why no more are served (the engine stops)
	// running counts the pipeline runs in flight (Stop waits for them).
	running sync.WaitGroup
	// uploads bounds the transcripts received at once.
	uploads chan struct{}
	// pids tells when an agent's process exits.
	pids pidWatch
}

func newSessions() *sessions {
	return &sessions{byID: map[string]*session{}, uploads: make(chan struct{}, 2)}
}

// session is one agent session.
type session struct {
	id           string
	agent        hookproto.Agent
	agentSession string

	initOnce sync.Once
	initErr  error

	mu      sync.Mutex
	open    map[string]*call // by tool-use id: allowed, not ended
	ended   bool
	titled  bool
	prompts int
	pid     int // the agent's process, watched (0: none)
}

// config is the workspace's hooks configuration (as the engine's
// configuration file says now; the defaults when it does not parse).
func (h *sessions) config() config.Hooks {
	c, err := config.Load(h.e.Options().Workspace)
	if err != nil {
		return config.Default().Hooks
	}
	return c.Hooks
}

// event answers one hook event.
func (h *sessions) event(ctx context.Context, req *opxv1.HookEventRequest) (*opxv1.HookEventReply, error) {
	agent, err := hookproto.ParseAgent(req.Agent)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if len(req.ProjectDir) > hookproto.MaxPathBytes || len(req.AgentVersion) > hookproto.MaxNameBytes {
		return nil, status.Error(codes.InvalidArgument, "project_dir or agent_version is too long")
	}
	env := hookproto.ProjectDirEnv[agent]
	ev, err := hookproto.Parse(agent, req.Event, func(k string) string {
		if k == env && env != "" {
			return req.ProjectDir
		}
		return ""
	})
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ws := h.e.Options().Workspace
	if !within(ev.Cwd, ws) && (ev.ProjectDir == "" || !within(ev.ProjectDir, ws)) {
		return nil, status.Errorf(codes.FailedPrecondition, "the agent works in %s, outside this engine's workspace %s", textclip.Cut(ev.Cwd, 256), ws)
	}
	s, err := h.session(ctx, agent, ev, textclip.Cut(strings.ToValidUTF8(req.AgentVersion, "?"), 64))
	if err != nil {
		return nil, err
	}
	if req.AgentPid > 0 {
		h.watchAgent(s, int(req.AgentPid))
	}
	reply := &opxv1.HookEventReply{Decision: string(hookproto.Allow), SessionId: s.id}
	switch ev.Kind {
	case hookproto.KindPreTool:
		return h.preTool(ctx, s, ev, reply, time.Duration(req.DeadlineMs)*time.Millisecond)
	case hookproto.KindPostTool:
		return h.postTool(ctx, s, ev, reply)
	case hookproto.KindPrompt:
		h.prompt(ctx, s, ev)
	case hookproto.KindStop:
		h.record(ctx, ledger.Sync, s.id, &event.HookEvent{Name: ev.Name, Kind: string(ev.Kind), Reason: ev.Reason}, ev.Response)
	case hookproto.KindSessionEnd:
		h.end(ctx, s, ev)
		reply.TranscriptPath = ev.TranscriptPath
	case hookproto.KindSessionStart:
		// Recorded by session (hook.session).
	default:
		h.record(ctx, ledger.Async, s.id, &event.HookEvent{Name: ev.Name, Kind: string(ev.Kind)}, "")
	}
	return reply, nil
}

// within reports whether dir is ws or under it.
func within(dir, ws string) bool {
	return dir != "" && (dir == ws || strings.HasPrefix(dir, strings.TrimSuffix(ws, "/")+"/"))
}

// session returns the session ev belongs to, recording it the first
// time any engine sees it (session.created, hook.session); a session that
// starts again (resumed) is recorded again (hook.session).
func (h *sessions) session(ctx context.Context, agent hookproto.Agent, ev *hookproto.Event, version string) (*session, error) {
	id := SessionID(agent, ev.SessionID)
	h.mu.Lock()
	if h.closed != "" {
		h.mu.Unlock()
		return nil, status.Errorf(codes.Unavailable, "the engine is stopping: %s", h.closed)
	}
	s := h.byID[id]
	if s == nil {
		if len(h.byID) >= MaxSessions {
			for k, o := range h.byID {
				o.mu.Lock()
				idle := o.ended && len(o.open) == 0
				o.mu.Unlock()
				if idle {
					delete(h.byID, k)
				}
			}
		}
		if len(h.byID) >= MaxSessions {
			h.mu.Unlock()
			return nil, status.Errorf(codes.ResourceExhausted, "%d agent sessions are open in this engine, the most it keeps", MaxSessions)
		}
		s = &session{id: id, agent: agent, agentSession: ev.SessionID, open: map[string]*call{}}
		h.byID[id] = s
	}
	h.mu.Unlock()
	s.initOnce.Do(func() { s.initErr = h.open(ctx, s, ev, version) })
	if s.initErr != nil {
		return nil, s.initErr
	}
	s.mu.Lock()
	again := s.ended && ev.Kind != hookproto.KindSessionEnd
	s.ended = s.ended && !again
	s.mu.Unlock()
	if again || (ev.Kind == hookproto.KindSessionStart && ev.Source != "" && ev.Source != "startup") {
		// Resumed, or started again after its end: who it is now.
		h.record(ctx, ledger.Async, s.id, hookSession(agent, ev, version), "")
	}
	return s, nil
}

// open records a session the ledger does not hold yet.
func (h *sessions) open(ctx context.Context, s *session, ev *hookproto.Event, version string) error {
	_, ok, err := h.e.ReadSession(ctx, s.id)
	if err != nil {
		return status.Errorf(codes.Internal, "read session %s: %v", s.id, err)
	}
	if ok {
		s.titled = true
		return nil
	}
	title := fmt.Sprintf("%s in %s", agentNames[s.agent], filepath.Base(ev.Cwd))
	h.record(ctx, ledger.Async, s.id, &event.SessionCreated{Mode: Modes[s.agent], Title: textclip.Cut(title, 120)}, "")
	if h.record(ctx, ledger.Sync, s.id, hookSession(s.agent, ev, version), "") == 0 {
		return status.Error(codes.Internal, "opx: the ledger failed; nothing more is recorded")
	}
	return nil
}

// hookSession is what ev says of the agent.
func hookSession(agent hookproto.Agent, ev *hookproto.Event, version string) *event.HookSession {
	return &event.HookSession{Agent: string(agent), AgentVersion: version, AgentSessionID: ev.SessionID, Model: ev.Model, Cwd: ev.Cwd,
		ProjectDir: ev.ProjectDir, TranscriptPath: ev.TranscriptPath, PermissionMode: ev.PermissionMode, Source: ev.Source}
}

// prompt records the user's prompt as the session's user message, and
// the first one as its title.
func (h *sessions) prompt(ctx context.Context, s *session, ev *hookproto.Event) {
	text := ev.Prompt
	if text == "" {
		h.record(ctx, ledger.Async, s.id, &event.HookEvent{Name: ev.Name, Kind: string(ev.Kind), Detail: "an empty prompt"}, "")
		return
	}
	if len(text) > MaxPrompt {
		text = textclip.Cut(text, MaxPrompt) + fmt.Sprintf("\n[opx: the prompt was %d bytes; the rest is in the transcript]", len(ev.Prompt))
	}
	s.mu.Lock()
	s.prompts++
	n, titled := s.prompts, s.titled
	s.titled = true
	s.mu.Unlock()
	id := ev.PromptID
	if id == "" {
		id = ev.TurnID
	}
	if id == "" {
		id = fmt.Sprintf("prompt-%d", n)
	}
	h.record(ctx, ledger.Sync, s.id, &event.ClientMessage{MessageID: id, Content: text, Client: "opx hook " + string(s.agent)}, "")
	if !titled {
		line, _, _ := strings.Cut(strings.TrimSpace(ev.Prompt), "\n")
		if line = strings.TrimSpace(line); line != "" {
			h.record(ctx, ledger.Async, s.id, &event.SessionTitled{Title: textclip.Cut(agentNames[s.agent]+": "+line, 120)}, "")
		}
	}
}

// watchAgent watches the session's agent process (the first one a hook
// names, or a new one once that exited): when it exits, the calls it left
// open are closed as interrupted and, unless the session ended, the end
// is recorded as the agent's death.
func (h *sessions) watchAgent(s *session, pid int) {
	s.mu.Lock()
	if s.pid != 0 {
		s.mu.Unlock()
		return
	}
	s.pid = pid
	s.mu.Unlock()
	err := h.pids.watch(pid, func() {
		s.mu.Lock()
		s.pid = 0
		ended := s.ended
		s.ended = true
		open := make([]*call, 0, len(s.open))
		for _, c := range s.open {
			open = append(open, c)
		}
		s.mu.Unlock()
		why := fmt.Sprintf("the agent's process (pid %d) exited before it reported the end of this call", pid)
		for _, c := range open {
			c.interrupt(why)
		}
		for _, c := range open {
			<-c.done
		}
		if !ended && h.isClosed() == "" {
			h.record(context.Background(), ledger.Sync, s.id, &event.HookEvent{Name: "opx:agent-exited", Kind: string(hookproto.KindSessionEnd),
				Detail: fmt.Sprintf("the %s process (pid %d) exited without ending its session (killed or crashed)", agentNames[s.agent], pid)}, "")
		}
	})
	if err != nil {
		s.mu.Lock()
		s.pid = 0
		s.mu.Unlock()
	}
}

// end records the session's end, after closing its open calls as
// interrupted.
func (h *sessions) end(ctx context.Context, s *session, ev *hookproto.Event) {
	s.mu.Lock()
	s.ended = true
	open := make([]*call, 0, len(s.open))
	for _, c := range s.open {
		open = append(open, c)
	}
	s.mu.Unlock()
	for _, c := range open {
		c.interrupt("the agent's session ended before it reported the end of this call")
	}
	for _, c := range open {
		<-c.done
	}
	h.record(ctx, ledger.Sync, s.id, &event.HookEvent{Name: ev.Name, Kind: string(ev.Kind), Reason: ev.Reason,
		Detail: fmt.Sprintf("the %s session ended", agentNames[s.agent])}, "")
}

// record records p in session with text (if any) inline or as a blob in
// p's text member (event.HookEvent), returning its seq (0: the ledger
// failed and the engine stops).
func (h *sessions) record(ctx context.Context, d ledger.Durability, session string, p event.Payload, text string) uint64 {
	var blobs [][]byte
	if he, ok := p.(*event.HookEvent); ok && text != "" {
		inline, hash, blob := event.Inline(text)
		he.Text, he.TextBlob, he.Size = inline, hash, int64(len(text))
		if blob != nil {
			blobs = append(blobs, blob)
		}
	}
	return h.e.Record(ctx, d, session, p, blobs...)
}
