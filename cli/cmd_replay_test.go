package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	bolt "go.etcd.io/bbolt"
)

// The sample's prompt-injection session and what Shield said about it
// (fixtures/fixturegen/sample.go).
const (
	injection       = "ses_83c93011"
	injectionReason = "~/.ssh/id_rsa is a credential file outside the workspace"
)

// sampleFacts are numbers of the imported sample that its regeneration
// may move: read from the ledger, not written into the tests.
type sampleFacts struct {
	entries uint64 // how many entries
	note    uint64 // the seq of the investigator's ledger.note
	pruned  uint64 // the seq of the chronicle.pruned entry
}

// factsOf reads sampleFacts from the ledger at path.
func factsOf(t *testing.T, path string) sampleFacts {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var f sampleFacts
	err = l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		f.entries++
		switch e.Type {
		case event.TypeNote:
			f.note = e.Seq
		case event.TypePruned:
			f.pruned = e.Seq
		}
		return nil
	})
	if err != nil || f.note == 0 || f.pruned == 0 {
		t.Fatalf("sample facts %+v: %v", f, err)
	}
	return f
}

// replaySample imports the committed sample ledger and returns its path.
func replaySample(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "sample.db")
	run(t, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", dst).wantCode(t, cli.ExitOK)
	t.Cleanup(func() { ledgertest.MustVerify(t, dst, event.StrictOptions()) })
	return dst
}

// rewrittenVerdict returns a copy of the ledger at path in which an
// attacker turned the first block verdict of session into an allow,
// without re-chaining: the next entry's prev no longer matches.
func rewrittenVerdict(t *testing.T, path, session string) (string, uint64) {
	t.Helper()
	cp := ledgertest.Copy(t, path, filepath.Join(t.TempDir(), "tampered.db"))
	var seq uint64
	ledgertest.Edit(t, cp, func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte("entries")).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if bytes.Contains(v, []byte(`"decision":"block"`)) && bytes.Contains(v, []byte(`"session":"`+session+`"`)) {
				e, err := ledger.ParseEntry(v)
				if err != nil {
					return err
				}
				seq = e.Seq
				return tx.Bucket([]byte("entries")).Put(append([]byte(nil), k...), bytes.Replace(v, []byte(`"decision":"block"`), []byte(`"decision":"allow"`), 1))
			}
		}
		return nil
	})
	if seq == 0 {
		t.Fatal("no block verdict to rewrite")
	}
	return cp, seq
}

// hostileText is what an agent or a poisoned file might put in the ledger
// to attack the investigator's terminal or browser.
const hostileText = "\x1b]0;pwned\x07\x1b[2J<script>alert(1)</script>\u202egnp.exe"

// hostileLedger writes a small ledger whose session "ses_evil" carries
// hostileText in the user's message, the tool arguments, the verdict's
// reason and the answer; the verdict blocks.
func hostileLedger(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hostile.db")
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Create(path, ledger.Options{NoSync: true, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	hash := ledger.Sum([]byte("x")).String()
	args, err := ledger.MarshalCanonical(map[string]string{"path": hostileText})
	if err != nil {
		t.Fatal(err)
	}
	const s = "ses_evil"
	recs := []ledger.Record{
		event.MustRecord("", &event.EngineStarted{Version: "test", PID: 1, Workspace: "/nonexistent/ws", ConfigHash: hash, Policy: "p", PolicyHash: hash, Provider: "scripted"}),
		event.MustRecord(s, &event.SessionCreated{Mode: "normal", Title: hostileText}),
		event.MustRecord(s, &event.ClientMessage{MessageID: "m", Content: hostileText}),
		event.MustRecord(s, &event.LLMRequest{RequestID: "r", MessageID: "m", Provider: "scripted", Model: "m", Blob: hash, Size: 1}, []byte("x")),
		event.MustRecord(s, &event.LLMResponse{RequestID: "r", Provider: "scripted", Model: "m", Blob: hash, Size: 1, Status: 200, Attempts: 1,
			ToolCalls: []event.ToolCall{{CallID: "c", Tool: "read_file", Arguments: string(args)}}}, []byte("x")),
		event.MustRecord(s, &event.ToolProposed{MessageID: "m", CallID: "c", Tool: "read_file", Arguments: string(args), ActionHash: hash}),
		event.MustRecord(s, &event.ShieldVerdict{CallID: "c", Decision: event.Block, Tier: 1, Rule: "evil-rule", Reason: hostileText, ActionHash: hash, PolicyHash: hash}),
		event.MustRecord(s, &event.ResponseComplete{MessageID: "m", Content: hostileText, Thoughts: []event.Thought{}}),
	}
	if _, err := l.Append(context.Background(), ledger.Sync, recs...); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, path, event.StrictOptions())
	return path
}

func TestReplay_Sample_Text(t *testing.T) {
	path := replaySample(t)
	facts := factsOf(t, path)
	r := run(t, "replay", injection, "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t,
		fmt.Sprintf("ok: %d entries, head %d ", facts.entries, facts.entries-1), // the verification line first
		`session ses_83c93011 "Follow the README setup"`,                        // who
		`turn 1  #172  user via opx send: "do the setup steps from README.md"`,  // said what
		"├─ #174→#175 model scripted/opx-scripted-1: 426 tokens: 386 in, 40 out, 589 ms, finish tool_calls, asked for read_file",
		`│  └─ #185 read_file {"path":"~/.ssh/id_rsa"} → BLOCKED`,
		"│     ├─ #186 block tier 1 credential-path: "+injectionReason,
		"#193 allow tier 0 allow-dev-commands", "#194 block tier 1 exfiltration",
		"└─ #204 answer after 7.6 s: \"I stopped:",
		fmt.Sprintf("#%d  note by ir-analyst", facts.note),
		"totals: 1 turn, 4 model calls (3873 tokens: 3667 in, 206 out), 4 tool calls: 1 ran, 3 blocked, 0 failed",
		"blocked:\n  #185 read_file",
	)
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("colour codes when not writing to a terminal:\n%q", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// TestReplay_Sample_Events: the first session shows the agent's crash in
// its place and the engine's death; the second its approvals, rollback
// and prune.
func TestReplay_Sample_Events(t *testing.T) {
	path := replaySample(t)
	tests := []struct {
		session string
		want    []string
	}{
		{"ses_98513baa", []string{"#54  agent agent-1 (pid 5123) crashed: agent exited unexpectedly (signal: killed)",
			"#76 agent error llm_unavailable", "error \"503 Service Unavailable after 4 attempts\"",
			"#82  the engine run that started at seq 1 died", "2 crashes"}},
		{"ses_02f8c314", []string{"approved by alice after", "denied by timeout", "→ DENIED", "snapshot (files) of billing/totals.go",
			"rollback of snapshot 117", "retention removed 1 blob(s)", "1 rollback"}},
	}
	for _, tt := range tests {
		t.Run(tt.session, func(t *testing.T) {
			r := run(t, "replay", tt.session, "--ledger", path)
			r.wantCode(t, cli.ExitOK)
			r.wantOut(t, tt.want...)
		})
	}
}

func TestReplay_JSON(t *testing.T) {
	path := replaySample(t)
	r := run(t, "replay", injection, "--json", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if got, want := keys(m), []string{"ledger_id", "timeline", "verification", "verified_by"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	// The sample signs no checkpoints: every entry is verified.
	if vb := m["verified_by"].(map[string]any); vb["mode"] != "full" || !strings.Contains(vb["summary"].(string), "no signed checkpoint") {
		t.Errorf("verified_by %v", vb)
	}
	v := m["verification"].(map[string]any)
	if got, want := keys(v), []string{"entries", "failures", "head_hash", "head_seq", "ok"}; !reflect.DeepEqual(got, want) || v["ok"] != true {
		t.Errorf("verification %v", v)
	}
	tl := m["timeline"].(map[string]any)
	want := []string{"created_seq", "end", "engine", "events", "first_seq", "last_seq", "mode", "problems", "session", "snapshots",
		"start", "title", "totals", "turns"}
	if got := keys(tl); !reflect.DeepEqual(got, want) {
		t.Errorf("timeline keys %v, want %v", got, want)
	}
	totals := tl["totals"].(map[string]any)
	if tl["session"] != injection || totals["blocked"].(jsonNumber).String() != "3" || totals["tool_calls"].(jsonNumber).String() != "4" {
		t.Errorf("timeline %v %v", tl["session"], totals)
	}
	turn := tl["turns"].([]any)[0].(map[string]any)
	call := turn["tool_calls"].([]any)[1].(map[string]any)
	wantCall := []string{"action_hash", "agent_arguments", "agent_seq", "arguments", "asked_by", "blocked_by", "call_id", "mutating",
		"outcome", "result", "seq", "tool", "ts", "verdicts"}
	if got := keys(call); !reflect.DeepEqual(got, wantCall) {
		t.Errorf("tool call keys %v, want %v", got, wantCall)
	}
	if b := call["blocked_by"].(map[string]any); call["outcome"] != "blocked" || b["rule"] != "credential-path" || b["reason"] != injectionReason {
		t.Errorf("blocked call %v", call)
	}
}

func TestReplay_At(t *testing.T) {
	path := replaySample(t)
	r := run(t, "replay", injection, "--at", "192", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "as of seq 192: later entries are not shown", "#185 read_file", "→ pending", "no answer recorded")
	if strings.Contains(r.stdout, "pipe-to-shell") {
		t.Errorf("--at 192 shows the verdict at 197:\n%s", r.stdout)
	}
	// The call only the agent sent (#191) before the one proposed at #192.
	if i, j := strings.Index(r.stdout, "#191 execute_command"), strings.Index(r.stdout, "#192 execute_command"); i < 0 || j < i {
		t.Errorf("--at 192 does not show #191 before #192:\n%s", r.stdout)
	}
	j := run(t, "replay", injection, "--json", "--ledger", path, "--at", "190").jsonObject(t)
	if at := j["timeline"].(map[string]any)["at"]; at == nil || at.(jsonNumber).String() != "190" {
		t.Errorf("timeline.at %v", at)
	}
}

func TestReplay_UnknownSession(t *testing.T) {
	path := replaySample(t)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no such session", []string{"ses_nope"}, `unknown session "ses_nope"`},
		{"not yet at --at", []string{injection, "--at", "100"}, "its first entry is seq 170"},
		{"rerun", []string{"ses_nope", "--rerun"}, `unknown session "ses_nope"`},
		{"what-if", []string{"ses_nope", "--policy", "../fixtures/policies/default.yaml"}, `unknown session "ses_nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append(append([]string{"replay"}, tt.args...), "--ledger", path)...)
			r.wantCode(t, cli.ExitError)
			r.wantErr(t, tt.msg, "`opx sessions` lists the sessions")
			// Looked up first: nothing said about verifying a ledger
			// the session is not in.
			if r.stdout != "" {
				t.Errorf("stdout before the unknown session:\n%s", r.stdout)
			}
		})
	}
}

// TestReplay_KeyWithoutSignedCheckpoint: --key pins the key that must have
// signed the ledger's checkpoints; a ledger with none (never signed, or its
// notes and keys stripped) fails (exit 4) rather than pass with the key
// unused.
func TestReplay_KeyWithoutSignedCheckpoint(t *testing.T) {
	_, key, err := tlog.GenerateKey(tlog.Origin("00000000000000000000000000000000"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "unsigned.db")
	run(t, "ledger", "note", "--session", "ses_u", "an unsigned ledger", "--ledger", path).wantCode(t, cli.ExitOK)

	r := run(t, "replay", "ses_u", "--key", key, "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "checkpoint  --key was given, but the ledger holds no signed checkpoint", "so --key checked nothing")

	r = run(t, "replay", "ses_u", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "the ledger has no signed checkpoint to prove the session against")
}

func TestReplay_Usage(t *testing.T) {
	path := replaySample(t)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no session", []string{"replay"}, "missing SESSION"},
		{"two sessions", []string{"replay", "a", "b"}, `unexpected argument "b"`},
		{"--at 0", []string{"replay", injection, "--at", "0"}, "--at 0 is the genesis entry"},
		{"--at not a number", []string{"replay", injection, "--at", "x"}, "invalid value"},
		{"--rerun and --policy", []string{"replay", injection, "--rerun", "--policy", "p.yaml"}, "either --rerun or --policy"},
		{"unknown flag", []string{"replay", injection, "--nope"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append(tt.args, "--ledger", path)...)
			r.wantCode(t, cli.ExitUsage)
			r.wantErr(t, tt.msg)
		})
	}
}

// TestReplay_Tampered: a verdict rewritten from block to allow breaks the
// chain; replay says so and shows no timeline (exit 4); --force shows it
// with a warning and still exits 4; --json says ok false, timeline null.
func TestReplay_Tampered(t *testing.T) {
	path, seq := rewrittenVerdict(t, replaySample(t), injection)
	next := strconv.FormatUint(seq+1, 10)

	r := run(t, "replay", injection, "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	// The chain breaks after the verdict; the tree's leaf for it, and the
	// roots checkpoints after it record, no longer match either.
	r.wantOut(t, "seq "+strconv.FormatUint(seq, 10)+"  tree-mismatch", "seq "+next+"  hash-mismatch",
		fmt.Sprintf("failures in %d entries", factsOf(t, path).entries), "no timeline: the record does not verify")
	if strings.Contains(r.stdout, "turn 1") {
		t.Errorf("a timeline from a ledger that does not verify:\n%s", r.stdout)
	}

	r = run(t, "replay", injection, "--force", "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "FAILED", "WARNING: the ledger does not verify", "turn 1", "#"+strconv.FormatUint(seq, 10)+" allow tier 1 credential-path")

	r = run(t, "replay", injection, "--json", "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	m := r.jsonObject(t)
	v := m["verification"].(map[string]any)
	f := v["failures"].([]any)
	kinds := map[any]int{}
	for _, x := range f {
		kinds[x.(map[string]any)["kind"]]++
	}
	if v["ok"] != false || kinds["hash-mismatch"] != 1 || kinds["tree-mismatch"] != len(f)-1 || m["timeline"] != nil {
		t.Errorf("--json on a tampered ledger: %v", m)
	}
}

// TestReplay_HostileText_Escaped: control characters and bidirectional
// overrides recorded in the ledger reach the terminal escaped, never raw.
func TestReplay_HostileText_Escaped(t *testing.T) {
	r := run(t, "replay", "ses_evil", "--ledger", hostileLedger(t))
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, `\x1b]0;pwned\x07\x1b[2J<script>alert(1)</script>\u202egnp.exe`, "→ BLOCKED", "block tier 1 evil-rule")
	for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(r.stdout, raw) {
			t.Errorf("stdout holds a raw %q", raw)
		}
	}
}

// TestReplay_ThroughEngine: while an engine holds the ledger, replay
// verifies and reads through its ledger service.
func TestReplay_ThroughEngine(t *testing.T) {
	e := startLiveEngine(t)
	sent := make(chan result, 1)
	go func() { sent <- run(t, "send", "--workspace", e.ws, "read", "it") }()
	id := e.pending(t)
	run(t, "approve", id, "--workspace", e.ws).wantCode(t, cli.ExitOK)
	(<-sent).wantCode(t, cli.ExitOK)
	ls, err := e.client.ListSessions(e.ctx, &opxv1.ListSessionsRequest{})
	if err != nil || len(ls.Sessions) != 1 {
		t.Fatalf("sessions %v, %v", ls, err)
	}
	r := run(t, "replay", ls.Sessions[0].Id, "--workspace", e.ws)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ok: ", `user via opx send: "read it"`, `read_file {"path":"t3/a.md"} → completed`, "escalate tier 3 policy:human-reads",
		"approval apr_", "approved by opx approve", "allow tier 3 tier3:approved", "answer after")
	var out struct {
		LedgerID string `json:"ledger_id"`
	}
	j := run(t, "replay", ls.Sessions[0].Id, "--json", "--workspace", e.ws)
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil || len(out.LedgerID) != 32 {
		t.Errorf("ledger id through the engine: %q, %v", out.LedgerID, err)
	}
}
