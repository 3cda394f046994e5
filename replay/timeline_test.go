package replay_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/replay/replaytest"
)

func mustBuild(t *testing.T, src replay.Source, session string, opts replay.Options) *replay.Timeline {
	t.Helper()
	tl, err := replay.Build(src, session, opts)
	if err != nil {
		t.Fatalf("Build(%s): %v", session, err)
	}
	return tl
}

func callByID(t *testing.T, tl *replay.Timeline, id string) *replay.ToolCall {
	t.Helper()
	for _, tc := range tl.ToolCalls() {
		if tc.CallID == id {
			return tc
		}
	}
	t.Fatalf("no tool call %s", id)
	return nil
}

// TestScene_CoversEveryEntryType keeps the hand-built ledgers honest:
// between them (the scene and replaytest's sub-agent, MCP and hook scenes) they hold
// every type of the taxonomy (but ledger.checkpoint and
// ledger.tree_built, which the ledger package writes for projections and
// the Merkle tree, and ledger.key, which the engine writes about the
// ledger's signing key: never about a session).
func TestScene_CoversEveryEntryType(t *testing.T) {
	sc := buildScene(t)
	have := map[string]bool{}
	if err := sc.l.Range(0, ^uint64(0), func(e ledger.Entry) error { have[e.Type] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, s := range slices.Concat(replaytest.SubAgentScene(), replaytest.MCPScene(), replaytest.HookScene()) {
		have[s.Payload.Type()] = true
	}
	for _, typ := range event.Types() {
		// Entries about the ledger itself, in no session: no timeline
		// shows them. ledger.cosigned is a witness's cosignature of a
		// checkpoint (fleet/ship records it); fleet.* live in a
		// collector's own ledger (fleet/collector), never an engine's.
		if typ == ledger.TypeCheckpoint || typ == ledger.TypeTreeBuilt || typ == event.TypeKey ||
			typ == event.TypeCosigned || typ == event.TypeWitnessAlert || strings.HasPrefix(typ, "fleet.") {
			continue
		}
		if !have[typ] {
			t.Errorf("the hand-built ledger lacks %s: add it to buildScene and say where the timeline shows it", typ)
		}
	}
}

func TestBuild_HandBuilt_Session(t *testing.T) {
	sc := buildScene(t)
	tl := mustBuild(t, sc.l, handSession, replay.Options{})
	if tl.Title != "Hand-built session" || tl.Mode != "normal" || tl.CreatedSeq != sc.seq["created"] {
		t.Errorf("title %q mode %q created %d", tl.Title, tl.Mode, tl.CreatedSeq)
	}
	// The note, written later, does not stretch the span.
	if tl.FirstSeq != sc.seq["created"] || tl.LastSeq != sc.seq["m3.tokens"] {
		t.Errorf("span %d..%d, want %d..%d", tl.FirstSeq, tl.LastSeq, sc.seq["created"], sc.seq["m3.tokens"])
	}
	if tl.Engine == nil || tl.Engine.Seq != sc.seq["engine.started"] || tl.Engine.PolicyHash != policyHash {
		t.Errorf("engine %+v, want the engine.started at %d", tl.Engine, sc.seq["engine.started"])
	}
	if len(tl.Problems) != 0 {
		t.Errorf("problems: %v", tl.Problems)
	}
}

func TestBuild_HandBuilt_Turns(t *testing.T) {
	sc := buildScene(t)
	tl := mustBuild(t, sc.l, handSession, replay.Options{})
	tests := []struct {
		msg, content, client, status string
		end                          uint64
		models, calls, errors        int
		partial                      string
	}{
		{"m1", "fix a.txt and set up", "opx send", replay.TurnAnswered, sc.seq["m1.answer"], 3, 7, 1, ""},
		{"m2", "and now?", "opx chat", replay.TurnError, sc.seq["m2.error"], 1, 0, 1, ""},
		{"m3", "last one", "opx send", replay.TurnOpen, 0, 0, 0, 0, "I was say"},
	}
	if len(tl.Turns) != len(tests) {
		t.Fatalf("%d turns, want %d", len(tl.Turns), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			tn := tl.Turns[i]
			if tn.N != i+1 || tn.MessageID != tt.msg || tn.Seq != sc.seq[tt.msg] || tn.ProcessSeq != sc.seq[tt.msg+".process"] {
				t.Errorf("turn %d: n %d message %s seq %d process %d", i, tn.N, tn.MessageID, tn.Seq, tn.ProcessSeq)
			}
			if tn.Content != tt.content || tn.Client != tt.client || tn.Status != tt.status || tn.EndSeq != tt.end {
				t.Errorf("content %q client %q status %s end %d, want %q %q %s %d", tn.Content, tn.Client, tn.Status, tn.EndSeq,
					tt.content, tt.client, tt.status, tt.end)
			}
			if len(tn.ModelCalls) != tt.models || len(tn.ToolCalls) != tt.calls || len(tn.Errors) != tt.errors {
				t.Errorf("%d model calls, %d tool calls, %d errors; want %d, %d, %d", len(tn.ModelCalls), len(tn.ToolCalls), len(tn.Errors),
					tt.models, tt.calls, tt.errors)
			}
			if tn.Streamed.PartialText != tt.partial {
				t.Errorf("partial text %q, want %q", tn.Streamed.PartialText, tt.partial)
			}
		})
	}
	m1 := tl.Turns[0]
	if m1.Response == nil || m1.Response.Content != "Done; c2 was blocked." || m1.DurationMS <= 0 {
		t.Errorf("turn 1 response %+v, duration %d", m1.Response, m1.DurationMS)
	}
	if mc := m1.ModelCalls[1]; !mc.Evaluator || mc.Error == "" || mc.Attempts != 2 {
		t.Errorf("second model call %+v, want the failed tier 2 evaluator call", mc)
	}
	if mc := m1.ModelCalls[0]; mc.RequestSeq != sc.seq["r1.req"] || mc.ResponseSeq != sc.seq["r1.resp"] || len(mc.ToolCalls) != 7 ||
		mc.LatencyMS != 1200 || mc.FinishReason != "tool_calls" || mc.Usage.TotalTokens != 120 {
		t.Errorf("first model call %+v", mc)
	}
}

func TestBuild_HandBuilt_ToolCalls(t *testing.T) {
	sc := buildScene(t)
	tl := mustBuild(t, sc.l, handSession, replay.Options{})
	tests := []struct {
		id, tool, outcome string
		verdicts          int
		blockedRule       string
		snapshot          bool
		exec              string
	}{
		{"c1", "write_file", replay.OutcomeCompleted, 1, "", true, "completed"},
		{"c2", "read_file", replay.OutcomeBlocked, 2, "credential-path", false, ""},
		{"c3", "execute_command", replay.OutcomeCompleted, 1, "", true, "completed"},
		{"c4", "http_request", replay.OutcomeCompleted, 1, "", false, "completed"},
		{"c5", "execute_command", replay.OutcomeDenied, 1, "", false, ""},
		{"c6", "write_file", replay.OutcomeNotProposed, 0, "", false, ""},
		{"c7", "write_file", replay.OutcomeFailed, 1, "", true, "failed"},
	}
	calls := tl.ToolCalls()
	if len(calls) != len(tests) {
		t.Fatalf("%d tool calls, want %d", len(calls), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			tc := calls[i]
			if tc.CallID != tt.id || tc.Tool != tt.tool || tc.Outcome != tt.outcome || len(tc.Verdicts) != tt.verdicts {
				t.Errorf("call %s %s outcome %s, %d verdicts; want %s %s %s, %d", tc.CallID, tc.Tool, tc.Outcome, len(tc.Verdicts),
					tt.id, tt.tool, tt.outcome, tt.verdicts)
			}
			if tc.AskedBy != sc.seq["r1.resp"] {
				t.Errorf("asked by %d, want the llm.response at %d", tc.AskedBy, sc.seq["r1.resp"])
			}
			if got := tc.BlockedBy != nil; got != (tt.blockedRule != "") || got && tc.BlockedBy.Rule != tt.blockedRule {
				t.Errorf("blocked by %+v, want rule %q", tc.BlockedBy, tt.blockedRule)
			}
			if (tc.Snapshot != nil) != tt.snapshot {
				t.Errorf("snapshot %+v, want one: %v", tc.Snapshot, tt.snapshot)
			}
			status := ""
			if tc.Exec != nil {
				status = tc.Exec.Status
			}
			if status != tt.exec {
				t.Errorf("exec %q, want %q", status, tt.exec)
			}
		})
	}
	c2 := callByID(t, tl, "c2")
	if v := c2.BlockedBy; v.Tier != 1 || v.Reason != "~/.ssh/id_rsa holds credentials" || v.Seq != sc.seq["c2.verdict"] {
		t.Errorf("c2 blocked by %+v", v)
	}
	if c2.Result == nil || !c2.Result.IsError || c2.Result.Seq != sc.seq["c2.result"] {
		t.Errorf("c2 result %+v", c2.Result)
	}
	c4 := callByID(t, tl, "c4")
	if a := c4.Approval; a == nil || !a.Approved || a.By != "alice" || a.RequestedSeq != sc.seq["c4.asked"] || a.ResolvedSeq != sc.seq["c4.approved"] || a.WaitedMS != 250 {
		t.Errorf("c4 approval %+v", a)
	}
	if x := c4.Exec; x.ResultBlob != hashOf(bigOut) || x.Result != "" {
		t.Errorf("c4 exec %+v, want its result as a blob", x)
	}
	if a := callByID(t, tl, "c5").Approval; a == nil || a.Approved || a.By != "timeout" {
		t.Errorf("c5 approval %+v", a)
	}
	c1 := callByID(t, tl, "c1")
	if s := c1.Snapshot; s.Seq != sc.seq["c1.snapshot"] || !slices.Equal(s.Paths, []string{"a.txt"}) || !slices.Equal(s.RestoredBy, []uint64{sc.seq["rollback"]}) {
		t.Errorf("c1 snapshot %+v", s)
	}
	c3 := callByID(t, tl, "c3")
	if s := c3.Snapshot; s.Kind != event.KindWorkspace || !slices.Equal(s.Paths, []string{"c.txt"}) || s.PrunedBy != sc.seq["pruned"] {
		t.Errorf("c3 snapshot %+v, want the workspace snapshot of c.txt, pruned at %d", s, sc.seq["pruned"])
	}
	if c6 := callByID(t, tl, "c6"); c6.Seq != 0 || c6.AgentSeq != sc.seq["c6.agent"] || c6.AgentArguments != `{not json` {
		t.Errorf("c6 %+v", c6)
	}
	if got := tl.Blocked(); len(got) != 2 || got[0].CallID != "c2" || got[1].CallID != "c5" {
		t.Errorf("Blocked() = %v, want c2 and c5", got)
	}
}

// TestBuild_HandBuilt_Events checks where each event lands: in the turn
// it happened during, between turns, or not at all (other sessions,
// engine-wide entries outside the session's span).
func TestBuild_HandBuilt_Events(t *testing.T) {
	sc := buildScene(t)
	tl := mustBuild(t, sc.l, handSession, replay.Options{})
	where := map[uint64]string{}
	for _, ev := range tl.Events {
		where[ev.Seq] = "session"
	}
	for _, tn := range tl.Turns {
		for _, ev := range tn.Events {
			where[ev.Seq] = tn.MessageID
		}
	}
	tests := []struct{ entry, want string }{
		{"created", "session"},
		{"titled", "session"},
		{"crash", "m1"},
		{"respawned", "m1"},
		{"defs.req", "session"},
		{"defs", "session"},
		{"memory", "session"},
		{"shutdown", ""}, // after the session's last entry
		{"engine.crashed", "session"},
		{"rollback", "session"},
		{"pruned", "session"},
		{"note", "session"},
		{"spawned.before", ""},
		{"canary", ""},
		{"engine.started", ""},
		{"other.created", ""},
		{"other.msg", ""},
		{"rejected", ""},
		{"engine.restarted", ""},
		{"rollback.pre", ""},
		{"unrelated.rollback.pre", ""},
		{"stopped", ""},
		{"exited", ""},
	}
	for _, tt := range tests {
		if got := where[sc.seq[tt.entry]]; got != tt.want {
			t.Errorf("%s (seq %d) is in %q, want %q", tt.entry, sc.seq[tt.entry], got, tt.want)
		}
	}
	if e := tl.Turns[0].Errors; len(e) != 1 || e[0].Code != "malformed_event" {
		t.Errorf("turn 1 errors %+v, want the refused event", e)
	}
}

func TestBuild_HandBuilt_Totals(t *testing.T) {
	sc := buildScene(t)
	tt := mustBuild(t, sc.l, handSession, replay.Options{}).Totals
	want := replay.Totals{Turns: 3, ModelCalls: 4, EvaluatorCalls: 1, ModelErrors: 2, Usage: usage(450, 30), LatencyMS: 11300,
		ToolCalls: 7, Executed: 4, Completed: 3, Failed: 1, Blocked: 2, Escalations: 2, Approved: 1, Denied: 1, ExecMS: 944,
		Snapshots: 3, Rollbacks: 1, AgentErrors: 2, Crashes: 2}
	got := tt
	got.ByModel, got.ByTool, got.Verdicts, got.DurationMS = nil, nil, nil, 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("totals\n got %+v\nwant %+v", got, want)
	}
	if tt.DurationMS <= 0 {
		t.Errorf("duration %d", tt.DurationMS)
	}
	wantModels := []replay.ModelUsage{
		{Provider: "scripted", Model: "m-1", Calls: 3, Errors: 1, Usage: usage(400, 30), LatencyMS: 11000},
		{Provider: "scripted", Model: "m-eval", Calls: 1, Errors: 1, Usage: usage(50, 0), LatencyMS: 300},
	}
	if !reflect.DeepEqual(tt.ByModel, wantModels) {
		t.Errorf("by model %+v", tt.ByModel)
	}
	wantVerdicts := []replay.VerdictCount{
		{Tier: 0, Rule: "allow-dev-commands", Decision: "allow", Count: 1},
		{Tier: 0, Rule: "allow-read-only", Decision: "allow", Count: 1},
		{Tier: 0, Rule: "allow-workspace-writes", Decision: "allow", Count: 2},
		{Tier: 0, Rule: "verify-git-push", Decision: "escalate", Count: 1},
		{Tier: 0, Rule: "verify-network", Decision: "escalate", Count: 1},
		{Tier: 1, Rule: "credential-path", Decision: "block", Count: 1},
	}
	if !reflect.DeepEqual(tt.Verdicts, wantVerdicts) {
		t.Errorf("verdicts %+v", tt.Verdicts)
	}
	if i := slices.IndexFunc(tt.ByTool, func(u replay.ToolUsage) bool { return u.Tool == "execute_command" }); i < 0 ||
		tt.ByTool[i] != (replay.ToolUsage{Tool: "execute_command", Calls: 2, Executed: 1, Blocked: 1, TotalMS: 900, MaxMS: 900}) {
		t.Errorf("by tool %+v", tt.ByTool)
	}
}

func TestBuild_HandBuilt_Steps(t *testing.T) {
	sc := buildScene(t)
	tl := mustBuild(t, sc.l, handSession, replay.Options{})
	var got []string
	for _, st := range tl.Turns[0].Steps() {
		switch {
		case st.Model != nil:
			got = append(got, fmt.Sprintf("model %s with %d calls", st.Model.RequestID, len(st.Calls)))
		case st.Event != nil:
			got = append(got, st.Event.Type)
		case st.Error != nil:
			got = append(got, "error "+st.Error.Code)
		case st.Response != nil:
			got = append(got, "answer")
		default:
			got = append(got, "call "+st.Calls[0].CallID)
		}
	}
	want := []string{"model r1 with 7 calls", event.TypeAgentCrashed, event.TypeAgentSpawned, "model tier2_ab with 0 calls",
		"error malformed_event", "model r3 with 0 calls", "answer"}
	if !slices.Equal(got, want) {
		t.Errorf("steps\n got %q\nwant %q", got, want)
	}
	var items []uint64
	for _, it := range tl.Items() {
		items = append(items, it.Seq)
	}
	if !slices.IsSorted(items) || len(items) != len(tl.Turns)+len(tl.Events) {
		t.Errorf("items %v not in seq order", items)
	}
}

// TestBuild_SeqsNameTheirEntries checks that every seq a timeline keeps
// names an entry of the type it stands for, on the hand-built ledger and
// on every session of the sample.
func TestBuild_SeqsNameTheirEntries(t *testing.T) {
	sc := buildScene(t)
	sample := importSample(t)
	check := func(t *testing.T, l *ledger.Ledger, tl *replay.Timeline) {
		want := func(seq uint64, types ...string) {
			t.Helper()
			if seq == 0 {
				return
			}
			e, err := l.Get(seq)
			if err != nil {
				t.Errorf("seq %d: %v", seq, err)
				return
			}
			if !slices.Contains(types, e.Type) {
				t.Errorf("seq %d is %s, want %v", seq, e.Type, types)
			}
			if e.Session != tl.Session && e.Session != "" {
				t.Errorf("seq %d belongs to session %q", seq, e.Session)
			}
		}
		want(tl.CreatedSeq, event.TypeSessionCreated)
		for _, ev := range tl.Events {
			want(ev.Seq, ev.Type)
		}
		for _, tn := range tl.Turns {
			want(tn.Seq, event.TypeClientMessage, event.TypeProcessRequest)
			want(tn.ProcessSeq, event.TypeProcessRequest)
			want(tn.EndSeq, event.TypeResponseComplete, event.TypeAgentError)
			for _, mc := range tn.ModelCalls {
				want(mc.RequestSeq, event.TypeLLMRequest)
				want(mc.ResponseSeq, event.TypeLLMResponse)
			}
			for _, ev := range tn.Events {
				want(ev.Seq, ev.Type)
			}
			for _, e := range tn.Errors {
				want(e.Seq, event.TypeAgentError)
			}
			if tn.Response != nil {
				want(tn.Response.Seq, event.TypeResponseComplete)
			}
			for _, tc := range tn.ToolCalls {
				want(tc.Seq, event.TypeToolProposed)
				want(tc.AgentSeq, event.TypeAgentToolCall)
				want(tc.AskedBy, event.TypeLLMResponse)
				for _, v := range tc.Verdicts {
					want(v.Seq, event.TypeShieldVerdict)
				}
				if a := tc.Approval; a != nil {
					want(a.RequestedSeq, event.TypeApprovalRequested)
					want(a.ResolvedSeq, event.TypeApprovalResolved)
				}
				if s := tc.Snapshot; s != nil {
					want(s.Seq, event.TypeSnapshot)
					for _, r := range s.RestoredBy {
						want(r, event.TypeRollback)
					}
				}
				if x := tc.Exec; x != nil {
					want(x.StartedSeq, event.TypeExecStarted)
					want(x.EndSeq, event.TypeExecCompleted, event.TypeExecFailed)
				}
				if r := tc.Result; r != nil {
					want(r.Seq, event.TypeToolResult)
				}
			}
		}
	}
	t.Run("hand-built", func(t *testing.T) { check(t, sc.l, mustBuild(t, sc.l, handSession, replay.Options{})) })
	for _, s := range sampleSessions(t, sample) {
		t.Run(s, func(t *testing.T) { check(t, sample, mustBuild(t, sample, s, replay.Options{})) })
	}
}

// sampleSessions returns every session id of a ledger, in order.
func sampleSessions(t *testing.T, l *ledger.Ledger) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	if err := l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Session != "" && !seen[e.Session] {
			seen[e.Session] = true
			out = append(out, e.Session)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBuild_At(t *testing.T) {
	sc := buildScene(t)
	tests := []struct {
		name, at    string
		turns       int
		c3, c4      string // outcomes; "" when the call is not there yet
		rollbacks   int
		firstStatus string
	}{
		{"before c3 ends", "c3.started", 1, replay.OutcomeRunning, "", 0, replay.TurnOpen},
		{"c4 escalated", "c4.asked", 1, replay.OutcomeCompleted, replay.OutcomeEscalated, 0, replay.TurnOpen},
		{"turn 1 answered", "m1.answer", 1, replay.OutcomeCompleted, replay.OutcomeCompleted, 0, replay.TurnAnswered},
		{"after the rollback", "rollback", 3, replay.OutcomeCompleted, replay.OutcomeCompleted, 1, replay.TurnAnswered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := sc.seq[tt.at]
			tl := mustBuild(t, sc.l, handSession, replay.Options{At: at})
			if tl.At != at || tl.LastSeq > at || len(tl.Turns) != tt.turns || tl.Totals.Rollbacks != tt.rollbacks {
				t.Errorf("at %d: last seq %d, %d turns, %d rollbacks", tl.At, tl.LastSeq, len(tl.Turns), tl.Totals.Rollbacks)
			}
			if tl.Turns[0].Status != tt.firstStatus {
				t.Errorf("turn 1 %s, want %s", tl.Turns[0].Status, tt.firstStatus)
			}
			outcome := func(id string) string {
				for _, tc := range tl.ToolCalls() {
					if tc.CallID == id {
						return tc.Outcome
					}
				}
				return ""
			}
			if outcome("c3") != tt.c3 || outcome("c4") != tt.c4 {
				t.Errorf("c3 %q c4 %q, want %q %q", outcome("c3"), outcome("c4"), tt.c3, tt.c4)
			}
		})
	}
}

func TestBuild_UnknownSession(t *testing.T) {
	sc := buildScene(t)
	tests := []struct {
		name, session string
		at            uint64
		msg           string
	}{
		{"no such id", "ses_nope", 0, "no entry of the ledger belongs to it"},
		{"empty id", "", 0, "empty session id"},
		{"before it starts", handSession, sc.seq["canary"], fmt.Sprintf("its first entry is seq %d", sc.seq["created"])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := replay.Build(sc.l, tt.session, replay.Options{At: tt.at})
			if !errors.Is(err, replay.ErrUnknownSession) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err %v, want ErrUnknownSession saying %q", err, tt.msg)
			}
		})
	}
}

// TestBuild_Deterministic builds each timeline twice, from two opens of
// the ledger, and compares the JSON byte for byte.
func TestBuild_Deterministic(t *testing.T) {
	sc := buildScene(t)
	again, err := ledger.OpenReadOnly(sc.path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	a, _ := json.Marshal(mustBuild(t, sc.l, handSession, replay.Options{}))
	b, _ := json.Marshal(mustBuild(t, again, handSession, replay.Options{}))
	if !bytes.Equal(a, b) {
		t.Error("two builds of the same session differ")
	}
	sample := importSample(t)
	for _, s := range sampleSessions(t, sample)[:3] {
		a, _ := json.Marshal(mustBuild(t, sample, s, replay.Options{}))
		b, _ := json.Marshal(mustBuild(t, sample, s, replay.Options{}))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two builds differ", s)
		}
	}
}

// TestBuild_JSONKeys pins the top-level JSON of a timeline, which
// `opx replay --json` prints.
func TestBuild_JSONKeys(t *testing.T) {
	sc := buildScene(t)
	b, err := json.Marshal(mustBuild(t, sc.l, handSession, replay.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"created_seq", "end", "engine", "events", "first_seq", "last_seq", "mode", "problems", "session", "snapshots",
		"start", "title", "totals", "turns"}
	if !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
}
