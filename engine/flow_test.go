package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// flowTranscript reads a file the policy marks secret, then makes a
// request with a query string; in the second message, a credential read
// that Shield blocks, then the same request.
const flowTranscript = `{"model": "flow-test-1", "turns": [
 {"match": "(?i)config", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"config/secrets.yml\"}"}]},
  {"tool_calls": [{"name": "http_request", "arguments": "{\"url\": \"https://docs.example.com/search?q=yaml\"}"}]},
  {"text": "Done: {{.LastResult}}"}
 ]}
]}`

// flowPolicy is the default policy with config/secrets.yml marked secret.
var flowPolicy = strings.Replace(string(fixtures.DefaultPolicy), "\ndeny:\n", "\nsecrets: [\"config/secrets.yml\"]\ndeny:\n", 1)

// TestFlow_TaintRecordedAndReplayed: a session that read a file the policy
// marks secret has its next request with a query string asked about
// (flow:tainted-egress, naming the read); the read is recorded as
// sensitive, the request's proposal records the taint it was judged with,
// and a rerun reproduces both. A session that did not read it is not
// asked.
func TestFlow_TaintRecordedAndReplayed(t *testing.T) {
	if !strings.Contains(flowPolicy, "secrets: [") {
		t.Fatal("the test policy does not mark the secret")
	}
	r := recordSession(t, recordSpec{transcript: flowTranscript, policy: flowPolicy, approve: false,
		files:    map[string]string{"config/secrets.yml": "db_password: hunter2\n", "README.md": "# flow\n"},
		messages: []string{"check the config"}})
	l, err := ledger.OpenReadOnly(r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, _ := l.Head()
	var props []event.ToolProposed
	var verdicts []event.ShieldVerdict
	l.Range(1, h.Seq, func(e ledger.Entry) error {
		switch e.Type {
		case event.TypeToolProposed:
			var p event.ToolProposed
			json.Unmarshal(e.Data, &p)
			props = append(props, p)
		case event.TypeShieldVerdict:
			var v event.ShieldVerdict
			json.Unmarshal(e.Data, &v)
			verdicts = append(verdicts, v)
		}
		return nil
	})
	if len(props) != 2 {
		t.Fatalf("proposals %+v, want the read and the request", props)
	}
	if len(props[0].Sensitive) != 1 || !strings.Contains(props[0].Sensitive[0], "config/secrets.yml") {
		t.Errorf("the read's sensitive: %q, want the secret file", props[0].Sensitive)
	}
	if len(props[1].Taint) != 1 || props[1].Taint[0].CallID != props[0].CallID || !strings.Contains(props[1].Taint[0].What, "secrets.yml") {
		t.Errorf("the request's taint: %+v, want the read (call %s)", props[1].Taint, props[0].CallID)
	}
	found := false
	for _, v := range verdicts {
		if v.CallID == props[1].CallID && v.Rule == "flow:tainted-egress" && v.Decision == event.Escalate && strings.Contains(v.Reason, "secrets.yml") {
			found = true
		}
	}
	if !found {
		t.Errorf("verdicts %+v, want flow:tainted-egress on the request", verdicts)
	}
	if rep := rerunSession(t, r.path, r.session); !rep.Identical {
		d := rep.Divergence
		t.Fatalf("rerun diverged at seq %d (%s, %s): %s", d.Seq, d.Type, d.Kind, d.Diff)
	}

	// Without the read, the same request is a plain read of the web.
	clean := recordSession(t, recordSpec{transcript: strings.Replace(flowTranscript, `config/secrets.yml\"}"}]},`, `README.md\"}"}]},`, 1),
		policy: flowPolicy, files: map[string]string{"config/secrets.yml": "db_password: hunter2\n", "README.md": "# flow\n"},
		messages: []string{"check the config"}})
	cl, err := ledger.OpenReadOnly(clean.path)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	h, _ = cl.Head()
	cl.Range(1, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeShieldVerdict && strings.Contains(string(e.Data), "flow:") {
			t.Errorf("a session that read no secret: %s", e.Data)
		}
		if e.Type == event.TypeToolProposed && strings.Contains(string(e.Data), `"taint"`) {
			t.Errorf("a session that read no secret recorded taint: %s", e.Data)
		}
		return nil
	})
}
