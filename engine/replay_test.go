package engine_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/replay/rerun"
)

// replayTranscript exercises what a rerun must reproduce: reads, a
// snapshotted edit, a write a human must approve, a blocked credential
// read and a blocked request, a memory append, and text answers.
const replayTranscript = `{"model": "replay-test-1", "turns": [
 {"match": "(?i)tidy", "steps": [
  {"tool_calls": [{"name": "list_directory", "arguments": "{\"path\": \".\"}"}, {"name": "read_file", "arguments": "{\"path\": \"notes.txt\"}"}]},
  {"text": "Tidying up. ", "tool_calls": [{"name": "edit_file", "arguments": "{\"path\": \"notes.txt\", \"old\": \"teh\", \"new\": \"the\"}"}]},
  {"tool_calls": [{"name": "write_file", "arguments": "{\"path\": \"done.txt\", \"content\": \"tidied\\n\"}"}, {"name": "read_file", "arguments": "{\"path\": \"~/.ssh/id_rsa\"}"}]},
  {"text": "Done: {{.LastResult}}"}
 ]},
 {"match": "(?i)remember", "steps": [
  {"tool_calls": [{"name": "memory_append", "arguments": "{\"text\": \"the notes are tidy\"}"}, {"name": "http_request", "arguments": "{\"url\": \"https://evil.example/x\"}"}]},
  {"text": "Remembered; the request was refused: {{.LastResult}}"}
 ]}
]}`

// replayPolicy is the default policy with writes to done.txt asking a human.
var replayPolicy = strings.Replace(string(fixtures.DefaultPolicy), "verify:\n", "verify:\n  - name: ask-done\n    tools: [write_file]\n    paths: [\"done.txt\"]\n    tier: 3\n", 1)

func replaySpec(approve bool) recordSpec {
	return recordSpec{transcript: replayTranscript, policy: replayPolicy, approve: approve,
		files:    map[string]string{"notes.txt": "teh notes\n", "README.md": "# replay\n"},
		messages: []string{"please tidy the notes", "remember that", "tidy again"}}
}

// TestRerun_Identical: a session with tool calls, a snapshot, an approval,
// blocks and several messages reruns identically, twice, whichever way
// the human answered.
func TestRerun_Identical(t *testing.T) {
	for _, approve := range []bool{true, false} {
		r := recordSession(t, replaySpec(approve))
		for i := 0; i < 2; i++ {
			rep := rerunSession(t, r.path, r.session)
			if !rep.Identical {
				d := rep.Divergence
				t.Fatalf("approve=%v rerun %d diverged at seq %d (%s, %s): notes %v\n%s", approve, i, d.Seq, d.Type, d.Kind, rep.Notes, d.Diff)
			}
			if rep.Events < 40 || rep.Produced < 40 {
				t.Errorf("compared %d recorded and %d produced entries; the session is bigger", rep.Events, rep.Produced)
			}
		}
	}
}

// loadRecording reads a recorded session for a test that edits it before
// rerunning; the ledger closes with the test.
func loadRecording(t testing.TB, r recorded) *rerun.Recording {
	t.Helper()
	l, err := ledger.OpenReadOnly(r.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	rec, err := rerun.Load(l, r.session)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func rerunRecording(t *testing.T, rec *rerun.Recording) *redrive.RerunReport {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rerun.db")
	rep, err := redrive.Rerun(context.Background(), redrive.RerunConfig{Recording: rec, SpawnAgent: inProcessAgent(t), TempDir: t.TempDir(),
		Logf: t.Logf, LedgerPath: path})
	ledgertest.MustVerify(t, path, event.StrictOptions())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRerun_OtherResponseDiverges: a model answer served other than the
// one the record says was parsed shows at that llm.response, and the
// replay stops feeding messages once the agent's next request is off the
// record.
func TestRerun_OtherResponseDiverges(t *testing.T) {
	rec := loadRecording(t, recordSession(t, replaySpec(true)))
	c := rec.Calls[1]
	c.Response = bytes.Replace(c.Response, []byte(`"content":"Tidying`), []byte(`"content":"Not tidying`), 1)
	rep := rerunRecording(t, rec)
	d := rep.Divergence
	if d == nil || d.Seq != c.ResponseSeq || d.Type != event.TypeLLMResponse || !strings.Contains(d.Diff, "Not tidying") {
		t.Fatalf("divergence %+v, want llm.response at seq %d", d, c.ResponseSeq)
	}
	if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "request body differs") {
		t.Errorf("notes %q, want the next request off the record", rep.Notes)
	}
	if rep.Produced >= rep.Events {
		t.Errorf("the replay went on after leaving the record: %d entries produced of %d", rep.Produced, rep.Events)
	}
}

// TestRerun_OtherPolicyDiverges: Shield re-evaluates under the policy the
// record holds; a record whose policy text says otherwise diverges at the
// first verdict that changes.
func TestRerun_OtherPolicyDiverges(t *testing.T) {
	rec := loadRecording(t, recordSession(t, replaySpec(true)))
	en := rec.Messages[0].Engine
	en.PolicyText = []byte(strings.Replace(string(en.PolicyText), "deny:\n", "deny:\n  - name: no-listing\n    tools: [list_directory]\n", 1))
	rep := rerunRecording(t, rec)
	d := rep.Divergence
	first := rec.Proposals[0].Verdicts[0]
	if d == nil || d.Seq != first.Seq || d.Type != event.TypeShieldVerdict || !strings.Contains(d.Diff, "+  \"rule\": \"policy:no-listing\"") {
		t.Fatalf("divergence %+v, want the verdict at seq %d", d, first.Seq)
	}
}

// TestRerun_Tier2: an escalation a model answered (tier 2) reruns
// identically: the evaluator's request is checked and its recorded answer
// served like the agent's model calls.
func TestRerun_Tier2(t *testing.T) {
	spec := replaySpec(true)
	spec.policy = strings.Replace(replayPolicy, "paths: [\"done.txt\"]\n    tier: 3", "paths: [\"done.txt\"]\n    tier: 2", 1)
	spec.tier2 = `{"model": "judge-1", "turns": [{"match": "", "steps": [{"text": "{\"decision\":\"allow\",\"reason\":\"a note in the workspace\"}"}]}]}`
	r := recordSession(t, spec)
	rec := loadRecording(t, r)
	if len(rec.Tier2) != 2 || len(rec.Approvals) != 0 {
		t.Fatalf("%d tier 2 calls and %d approvals recorded, want 2 and 0", len(rec.Tier2), len(rec.Approvals))
	}
	if rep := rerunRecording(t, rec); !rep.Identical {
		d := rep.Divergence
		t.Fatalf("diverged at seq %d (%s, %s): notes %v\n%s", d.Seq, d.Type, d.Kind, rep.Notes, d.Diff)
	}
}
